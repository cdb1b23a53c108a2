//! Suppressions: known findings silenced by rule and call site, from files in valgrind's
//! format (`REGCHECK_SUPPRESSIONS=path[:path]`, `regcheck run --suppressions FILE`).
//!
//! ```text
//! # comments and blank lines are ignored
//! {
//!    kv-pool-unaligned-buffers          the entry's name (any text)
//!    regcheck:ACL-HOSTREG-ALIGN         the rule: an ID or a glob (ACL-HOSTREG-*)
//!    src:kv_pool.c:118                  then frames, innermost (the call site) first:
//!    fun:setup_pool                       fun:FUNCTION, src:FILE[:LINE], obj:OBJECT,
//!    ...                                  ... for any number of frames
//! }
//! ```
//!
//! Patterns take `*` (any characters) and `?` (one character). `src:` matches the file's
//! name or its full path; `obj:` the object's full path or its name. The frame lines match
//! the stack from the call site outwards; frames past the last line are not looked at. An
//! entry with no frame line matches every call site of its rules.
//!
//! A suppressed finding is counted as suppressed (the exit summary), never rejected, and
//! logged at debug level only. A file that does not parse is an error naming the file and
//! line, logged as the configuration is read; its entries are not used (nothing in it is
//! half-applied). Entries that matched nothing are listed in the exit summary.
//!
//! Cost: a clean call never comes here. A finding asks [`suppressed`] only when a suppression
//! names its rule (one atomic load otherwise); the answer is cached per (rule, stack).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::callsite::{Site, Stack};
use crate::rules::{self, RuleId};

/// One frame line of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Fun(String),
    Src {
        file: String,
        line: Option<u32>,
    },
    Obj(String),
    /// `...`: any number of frames.
    Any,
}

/// One entry of a suppressions file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    /// The rule pattern as written.
    pub rule: String,
    pub rules: Vec<RuleId>,
    pub frames: Vec<Frame>,
    /// `file:line` of the entry's `{`.
    pub origin: String,
}

/// `*` and `?` glob matching.
pub fn glob(pat: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pat.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Parse one file's text; `path` names it in errors (`path:line: what is wrong`).
pub fn parse(path: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut cur: Option<(usize, Vec<(usize, String)>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match (&mut cur, line) {
            (None, "{") => cur = Some((n, Vec::new())),
            (None, _) => return Err(format!("{path}:{n}: expected `{{` to start an entry, found {line:?}")),
            (Some(_), "{") => return Err(format!("{path}:{n}: `{{` inside an entry (a `}}` is missing above)")),
            (Some((start, lines)), "}") => {
                entries.push(entry(path, *start, lines)?);
                cur = None;
            }
            (Some((_, lines)), _) => lines.push((n, line.to_string())),
        }
    }
    if let Some((start, _)) = cur {
        return Err(format!("{path}:{start}: the entry started here has no closing `}}`"));
    }
    Ok(entries)
}

fn entry(path: &str, start: usize, lines: &[(usize, String)]) -> Result<Entry, String> {
    let mut it = lines.iter();
    let Some((_, name)) = it.next() else {
        return Err(format!("{path}:{start}: empty entry: it needs a name, then regcheck:RULE"));
    };
    let Some((n, rule_line)) = it.next() else {
        return Err(format!("{path}:{start}: entry {name:?} has no `regcheck:RULE` line"));
    };
    let Some(rule) = rule_line.strip_prefix("regcheck:").map(str::trim) else {
        return Err(format!(
            "{path}:{n}: expected `regcheck:RULE` (an ID or a glob) after the name, found {rule_line:?}"
        ));
    };
    let rules: Vec<RuleId> = rules::CATALOGUE.iter().map(|r| r.id).filter(|id| glob(rule, id.name())).collect();
    if rules.is_empty() {
        return Err(format!("{path}:{n}: {rule:?} matches no rule ID (regcheck rules lists them)"));
    }
    let mut frames = Vec::new();
    for (n, l) in it {
        let frame = if l == "..." {
            Frame::Any
        } else if let Some(f) = l.strip_prefix("fun:") {
            Frame::Fun(f.trim().to_string())
        } else if let Some(o) = l.strip_prefix("obj:") {
            Frame::Obj(o.trim().to_string())
        } else if let Some(s) = l.strip_prefix("src:") {
            let s = s.trim();
            match s.rsplit_once(':') {
                Some((file, line)) if line.chars().all(|c| c.is_ascii_digit()) => match line.parse() {
                    Ok(line) => Frame::Src { file: file.to_string(), line: Some(line) },
                    Err(_) => return Err(format!("{path}:{n}: {line:?} is not a line number")),
                },
                _ => Frame::Src { file: s.to_string(), line: None },
            }
        } else {
            return Err(format!("{path}:{n}: expected fun:, src:, obj: or ... (a frame), found {l:?}"));
        };
        frames.push(frame);
    }
    Ok(Entry { name: name.clone(), rule: rule.to_string(), rules, frames, origin: format!("{path}:{start}") })
}

fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn frame_matches(f: &Frame, s: &Site) -> bool {
    match f {
        Frame::Any => true,
        Frame::Fun(p) => s.function.as_deref().is_some_and(|n| glob(p, n)),
        Frame::Obj(p) => s.object.as_deref().is_some_and(|o| glob(p, o) || glob(p, base(o))),
        Frame::Src { file, line } => {
            s.file.as_deref().is_some_and(|f| glob(file, f) || glob(file, base(f)))
                && line.is_none_or(|l| s.line == Some(l))
        }
    }
}

fn frames_match(pat: &[Frame], sites: &[Site]) -> bool {
    match pat.split_first() {
        None => true,
        Some((Frame::Any, rest)) => (0..=sites.len()).any(|i| frames_match(rest, &sites[i..])),
        Some((f, rest)) => sites.split_first().is_some_and(|(s, more)| frame_matches(f, s) && frames_match(rest, more)),
    }
}

impl Entry {
    /// Whether the entry silences a finding of `rule` from the stack `sites` (call site first).
    pub fn matches(&self, rule: RuleId, sites: &[Site]) -> bool {
        self.rules.contains(&rule) && frames_match(&self.frames, sites)
    }

    /// How many frames it needs to see (at most [`crate::config::MAX_STACK`]).
    pub fn depth(&self) -> usize {
        if self.frames.contains(&Frame::Any) {
            crate::config::MAX_STACK.min(16)
        } else {
            self.frames.len()
        }
    }
}

/// A ready entry for a finding of `rule` from `sites` (call site first): valgrind's
/// `--gen-suppressions`. The call site is named by `src:file:line` when known, else by its
/// function or object; the frames after it (`REGCHECK_STACK`) by function.
pub fn generate(rule: RuleId, sites: &[Site]) -> String {
    let mut out = String::from("{\n");
    let at = sites.first().and_then(|s| s.function.clone()).unwrap_or_else(|| "unknown call site".into());
    out.push_str(&format!("   {} at {at}\n   regcheck:{}\n", rule.name(), rule.name()));
    for (i, s) in sites.iter().enumerate() {
        let line = match (&s.file, s.line, &s.function, &s.object) {
            (Some(f), Some(l), _, _) if i == 0 => format!("src:{}:{l}", base(f)),
            (_, _, Some(fun), _) => format!("fun:{fun}"),
            (_, _, _, Some(o)) => format!("obj:*{}", base(o)),
            _ => "...".to_string(),
        };
        out.push_str(&format!("   {line}\n"));
    }
    out.push('}');
    out
}

struct Loaded {
    entries: Vec<Entry>,
    used: Vec<u64>,
    /// (rule, the stack's addresses) -> the matching entry.
    cache: HashMap<(RuleId, Vec<usize>), Option<usize>>,
}

static LOADED: Mutex<Option<Loaded>> = Mutex::new(None);
crate::platform::atfork::hold_across_fork!(static HANDLERS = LOADED, Option<Loaded>);

/// Rules some suppression names (bit per rule index, in words of 64): the one load a finding
/// pays when no suppression names its rule.
static RULES: [AtomicU64; RULE_WORDS] = [const { AtomicU64::new(0) }; RULE_WORDS];
/// Words of [`RULES`]: room for 256 rules (a unit test proves the catalogue fits).
const RULE_WORDS: usize = 4;

/// The word and bit of `rule` in [`RULES`].
fn rule_bit(rule: RuleId) -> (usize, u64) {
    let i = rule.index();
    (i / 64 % RULE_WORDS, 1u64 << (i % 64))
}
/// Frames a suppression needs.
static DEPTH: AtomicU64 = AtomicU64::new(0);

/// Read the files (`REGCHECK_SUPPRESSIONS`); returns one error per file that could not be
/// read or parsed (that file's entries are not used).
pub fn load(paths: &[String]) -> Vec<String> {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        match std::fs::read_to_string(p) {
            Ok(text) => match parse(p, &text) {
                Ok(mut e) => entries.append(&mut e),
                Err(e) => errors.push(format!("REGCHECK_SUPPRESSIONS: {e}; no entry of {p} is used")),
            },
            Err(e) => errors.push(format!("REGCHECK_SUPPRESSIONS: cannot read {p}: {e}")),
        }
    }
    install(entries);
    errors
}

/// Use these entries (replacing any loaded before).
pub fn install(entries: Vec<Entry>) {
    let mut mask = [0u64; RULE_WORDS];
    for e in &entries {
        for r in &e.rules {
            let (w, b) = rule_bit(*r);
            mask[w] |= b;
        }
    }
    DEPTH.store(entries.iter().map(Entry::depth).max().unwrap_or(0) as u64, Ordering::Relaxed);
    let used = vec![0; entries.len()];
    HANDLERS.ensure();
    *LOADED.lock().unwrap_or_else(PoisonError::into_inner) = Some(Loaded { entries, used, cache: HashMap::new() });
    for (word, m) in RULES.iter().zip(mask) {
        word.store(m, Ordering::Release);
    }
}

/// Whether some suppression names `rule` (one atomic load).
#[inline]
pub fn names(rule: RuleId) -> bool {
    let (w, b) = rule_bit(rule);
    RULES[w].load(Ordering::Relaxed) & b != 0
}

/// Frames the loaded suppressions need to see.
pub fn depth() -> usize {
    DEPTH.load(Ordering::Relaxed) as usize
}

fn with_loaded<R>(f: impl FnOnce(&mut Loaded) -> R) -> Option<R> {
    HANDLERS.ensure();
    LOADED.lock().unwrap_or_else(PoisonError::into_inner).as_mut().map(f)
}

/// The entry that silences a finding of `rule` from `stack`, if any; `symbolize` gives the
/// stack's frames, and is called (with no lock held) only when the cache has no answer.
pub fn find(rule: RuleId, stack: &Stack, symbolize: impl FnOnce() -> Vec<Site>) -> Option<String> {
    if !names(rule) {
        return None;
    }
    let key = (rule, stack.ips().collect::<Vec<_>>());
    let cached = with_loaded(|l| l.cache.get(&key).copied()).flatten();
    let hit = match cached {
        Some(hit) => hit,
        None => {
            let sites = symbolize();
            let entries = with_loaded(|l| l.entries.clone()).unwrap_or_default();
            let hit = entries.iter().position(|e| e.matches(rule, &sites));
            with_loaded(|l| l.cache.insert(key, hit));
            hit
        }
    };
    let i = hit?;
    with_loaded(|l| {
        if let Some(u) = l.used.get_mut(i) {
            *u += 1;
        }
        l.entries.get(i).map(|e| e.name.clone())
    })
    .flatten()
}

/// Entries that matched nothing: `name (file:line)`.
pub fn unused() -> Vec<String> {
    with_loaded(|l| {
        l.entries
            .iter()
            .zip(&l.used)
            .filter(|(_, n)| **n == 0)
            .map(|(e, _)| format!("{} ({})", e.name, e.origin))
            .collect()
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(function: &str, file: &str, line: u32) -> Site {
        Site {
            address: 0x1000,
            function: Some(function.into()),
            file: Some(format!("/src/{file}")),
            line: Some(line),
            object: Some("/opt/app/bin/app".into()),
            offset: 0x100,
        }
    }

    #[test]
    fn every_rule_has_a_bit_of_its_own() {
        assert!(RuleId::ALL.len() <= RULE_WORDS * 64, "RULES needs more words");
        let bits: std::collections::HashSet<(usize, u64)> = RuleId::ALL.iter().map(|r| rule_bit(*r)).collect();
        assert_eq!(bits.len(), RuleId::ALL.len());
    }

    #[test]
    fn globs() {
        assert!(glob("ACL-HOSTREG-*", "ACL-HOSTREG-ALIGN"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*pool*", "kv::Pool::add_pool_x"));
        assert!(!glob("ACL-*", "HIXL-REG-NULL"));
    }

    #[test]
    fn entries_parse_and_match_by_rule_and_frames() {
        let text = "# kv pool\n{\n  kv-align\n  regcheck:ACL-HOSTREG-ALIGN\n  src:kv_pool.c:118\n  ...\n  fun:main\n}\n\n{\n any site\n regcheck:HIXL-*\n}\n";
        let e = parse("s.supp", text).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].name, "kv-align");
        assert_eq!(e[0].origin, "s.supp:2");
        let stack = [site("register", "kv_pool.c", 118), site("setup", "kv_pool.c", 200), site("main", "main.c", 9)];
        assert!(e[0].matches(RuleId::AclHostregAlign, &stack));
        assert!(!e[0].matches(RuleId::AclHostregNull, &stack), "another rule");
        let other_line = [site("register", "kv_pool.c", 119), site("main", "main.c", 9)];
        assert!(!e[0].matches(RuleId::AclHostregAlign, &other_line), "another call site");
        assert!(!e[0].matches(RuleId::AclHostregAlign, &stack[..1]), "main must be on the stack");
        assert!(e[1].matches(RuleId::HixlRegCount, &[]));
    }

    #[test]
    fn mistakes_name_the_file_and_line() {
        for (text, want) in [
            ("junk\n", "f:1: expected `{`"),
            ("{\n x\n regcheck:NOPE-*\n}\n", "f:3: \"NOPE-*\" matches no rule"),
            ("{\n x\n rule:ACL-*\n}\n", "f:3: expected `regcheck:RULE`"),
            ("{\n x\n regcheck:ACL-*\n fn:main\n}\n", "f:4: expected fun:, src:, obj:"),
            ("\n{\n x\n regcheck:ACL-*\n", "f:2: the entry started here has no closing"),
            ("{\n}\n", "f:1: empty entry"),
            ("{\n x\n}\n", "f:1: entry \"x\" has no `regcheck:RULE` line"),
        ] {
            let e = parse("f", text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_generated_entry_parses_and_matches_its_call_site() {
        let stack = [site("register", "kv_pool.c", 118), site("main", "main.c", 9)];
        let text = generate(RuleId::AclHostregAlign, &stack);
        assert!(text.contains("src:kv_pool.c:118") && text.contains("fun:main"), "{text}");
        let e = parse("gen", &text).unwrap();
        assert!(e[0].matches(RuleId::AclHostregAlign, &stack));
        let moved = [site("register", "kv_pool.c", 120), site("main", "main.c", 9)];
        assert!(!e[0].matches(RuleId::AclHostregAlign, &moved));
    }
}
