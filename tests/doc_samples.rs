//! The docs show what the code does (the way `trycmd`/`snapbox` check a CLI's docs):
//!
//! * every transcript of `$ regcheck explain ...` or `$ regcheck rules ...` in README.md and
//!   docs/*.md is that command's output, from the installed command (a line `...` stands for
//!   any lines; the install prefix reads `~/.local/regcheck`);
//! * the finding shown at the top of the README is the demo's first finding (examples-c's
//!   acl_demo.c built with `-g` against the installed simulator, under `LD_PRELOAD`), addresses
//!   and the offset past a page boundary aside; every `acl_demo.c:N` the docs show is its line;
//! * every `REGCHECK_*` name in the docs is a variable the library knows
//!   (`regcheck::config::VARIABLES`) or a macro of regcheck.h, and every variable it knows is
//!   documented.
//!
//! `REGCHECK_BLESS=1 cargo test --test doc_samples` rewrites the samples from the code's output
//! (after a change of the finding layout, say) instead of comparing.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// The prefix the docs show.
const DOC_PREFIX: &str = "~/.local/regcheck";

fn root() -> PathBuf {
    testkit::workspace_root()
}

/// README.md and docs/*.md, with their paths.
fn pages() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths.into_iter().map(|p| (p.clone(), fs::read_to_string(&p).unwrap())).collect()
}

fn bless() -> bool {
    std::env::var_os("REGCHECK_BLESS").is_some()
}

fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = testkit::target_dir().join("doc-samples").join("prefix");
        let _ = fs::remove_dir_all(&prefix);
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(root())
            .args(["run", "--quiet", "--package", "xtask", "--", "install", "--prefix"])
            .arg(&prefix);
        let out = testkit::output_within(&mut cmd, TIMEOUT).expect("cargo xtask install");
        assert!(out.status.success(), "cargo xtask install failed:\n{}", String::from_utf8_lossy(&out.stderr));
        prefix
    })
}

/// `cmd` without the variables that change what regcheck or the simulator does.
fn clean(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k == "LD_PRELOAD" || k == "LD_LIBRARY_PATH" || k.starts_with("REGCHECK_") || k.starts_with("ACLSIM_") {
            cmd.env_remove(&key);
        }
    }
    cmd
}

fn output(cmd: &mut Command) -> String {
    let shown = format!("{cmd:?}");
    let out = testkit::output_within(cmd, TIMEOUT).unwrap_or_else(|e| panic!("{shown}: {e}"));
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A fenced code block: its lines' indices in the file (the content, without the fences).
struct Block {
    first: usize,
    end: usize,
}

fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        if l.trim_start().starts_with("```") {
            match open.take() {
                Some(first) => out.push(Block { first, end: i }),
                None => open = Some(i + 1),
            }
        }
    }
    out
}

/// What varies from run to run and machine to machine: addresses, the offset of a heap
/// pointer past its page boundary, the install prefix.
fn mask(text: &str, prefix: &str) -> String {
    let text = if prefix.is_empty() { text.to_string() } else { text.replace(prefix, DOC_PREFIX) };
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let hex: String = rest[i + 2..].chars().take_while(char::is_ascii_hexdigit).collect();
        if hex.len() >= 8 {
            out.push_str("0xADDR");
        } else {
            out.push_str("0x");
            out.push_str(&hex);
        }
        rest = &rest[i + 2 + hex.len()..];
    }
    out.push_str(rest);
    let mut masked = String::new();
    let parts: Vec<&str> = out.split(" bytes past a boundary").collect();
    for (n, part) in parts.iter().enumerate() {
        if n > 0 {
            masked.push_str(" bytes past a boundary");
        }
        let before_marker = n + 1 < parts.len();
        let digits =
            if before_marker { part.len() - part.trim_end_matches(|c: char| c.is_ascii_digit()).len() } else { 0 };
        masked.push_str(&part[..part.len() - digits]);
        if digits > 0 {
            masked.push('N');
        }
    }
    masked
}

/// `want` (the doc's lines, `...` for any lines) matches `have`.
fn matches(want: &[String], have: &[String]) -> bool {
    match want.split_first() {
        None => have.is_empty(),
        Some((w, rest)) if w.trim() == "..." => (0..=have.len()).any(|k| matches(rest, &have[k..])),
        Some((w, rest)) => have.first().is_some_and(|h| h.trim_end() == w.trim_end()) && matches(rest, &have[1..]),
    }
}

/// The transcript blocks of `$ regcheck explain|rules ...`: compared with the installed
/// command's output, or rewritten (the lines before a `...` and after none).
#[test]
fn the_regcheck_transcripts_are_the_commands_output() {
    let regcheck = prefix().join("bin/regcheck");
    let pfx = prefix().canonicalize().unwrap().display().to_string();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (path, text) in pages() {
        let lines: Vec<&str> = text.lines().collect();
        let mut new_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        // each `$ ` line of a transcript block starts a command; its output runs to the next
        let mut segments = Vec::new();
        for b in blocks(&lines) {
            if !lines.get(b.first).is_some_and(|l| l.starts_with("$ ")) {
                continue;
            }
            let starts: Vec<usize> = (b.first..b.end).filter(|&i| lines[i].starts_with("$ ")).collect();
            for (k, &first) in starts.iter().enumerate() {
                segments.push(Block { first, end: starts.get(k + 1).copied().unwrap_or(b.end) });
            }
        }
        for b in segments.into_iter().rev() {
            let Some(cmd) = lines.get(b.first).and_then(|l| l.strip_prefix("$ regcheck ")) else { continue };
            let args: Vec<&str> = cmd.split_whitespace().collect();
            if !matches!(args.first(), Some(&"explain") | Some(&"rules")) {
                continue;
            }
            checked += 1;
            let have = output(clean(&mut Command::new(&regcheck)).args(&args));
            let have: Vec<String> = have.lines().map(|l| mask(l, &pfx)).collect();
            let mut want: Vec<String> = lines[b.first + 1..b.end].iter().map(|l| l.to_string()).collect();
            // the blank line between two commands of a block
            let gap =
                want.last().is_some_and(|l| l.is_empty()) && lines.get(b.end).is_some_and(|l| l.starts_with("$ "));
            if gap {
                want.pop();
            }
            if matches(&want, &have) {
                continue;
            }
            let name = path.strip_prefix(root()).unwrap().display().to_string();
            if bless() {
                let cut = want.iter().position(|l| l.trim() == "...");
                let mut fresh: Vec<String> = match cut {
                    Some(k) => have.iter().take(k).cloned().chain(want[k..].iter().cloned()).collect(),
                    None => have.clone(),
                };
                fresh.insert(0, lines[b.first].to_string());
                if gap {
                    fresh.push(String::new());
                }
                new_lines.splice(b.first..b.end, fresh);
            } else {
                wrong.push(format!(
                    "{name}:{}: `regcheck {cmd}` prints\n{}\n(REGCHECK_BLESS=1 rewrites the sample)",
                    b.first + 1,
                    have.join("\n")
                ));
            }
        }
        if bless() {
            fs::write(&path, new_lines.join("\n") + "\n").unwrap();
        }
    }
    assert!(checked >= 2, "only {checked} transcripts found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The demo's first finding (acl_demo.c, step 1) and the line of its call.
fn demo_finding() -> (Vec<String>, String) {
    let prefix = prefix();
    let dir = testkit::target_dir().join("doc-samples").join("demo");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::copy(root().join("examples-c/acl_demo.c"), dir.join("acl_demo.c")).unwrap();
    let sim = prefix.join("lib/regcheck/sim");
    let cc = std::env::var_os("CC").filter(|c| !c.is_empty()).unwrap_or_else(|| "cc".into());
    let built = output(
        clean(&mut Command::new(cc))
            .current_dir(&dir)
            .args(["-g", "-std=gnu11", "acl_demo.c", "-o", "acl_demo", "-lascendcl"])
            .arg(format!("-I{}", prefix.join("include/regcheck/sim").display()))
            .arg(format!("-L{}", sim.display()))
            .arg(format!("-Wl,-rpath,{}", sim.display())),
    );
    assert!(dir.join("acl_demo").is_file(), "{built}");
    let out = output(
        clean(&mut testkit::command(dir.join("acl_demo")))
            .current_dir(&dir)
            .env("LD_PRELOAD", prefix.join("lib/libregcheck.so"))
            .env("REGCHECK_KERNEL_RELEASE", "6.6.0")
            .env("ACLSIM_KERNEL_RELEASE", "6.6.0"),
    );
    let lines: Vec<&str> = out.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("regcheck: ")).unwrap_or_else(|| panic!("no finding:\n{out}"));
    let end = lines[start + 1..].iter().position(|l| !l.starts_with(' ')).map_or(lines.len(), |e| start + 1 + e);
    let finding: Vec<String> = lines[start..end].iter().map(|l| l.to_string()).collect();
    let site = finding
        .iter()
        .find_map(|l| l.split("(acl_demo.c:").nth(1))
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no acl_demo.c call site in {finding:#?}"))
        .to_string();
    (finding, site)
}

/// The README's first code block is the demo's first finding; every `acl_demo.c:N` of the docs
/// is the line the demo reports.
#[test]
fn the_readme_finding_and_the_call_sites_are_the_demos() {
    let (finding, line) = demo_finding();
    let pfx = prefix().canonicalize().unwrap().display().to_string();
    let mut wrong = Vec::new();
    for (path, text) in pages() {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        let mut new = text.clone();
        if name == "README.md" {
            let lines: Vec<&str> = text.lines().collect();
            let b = blocks(&lines).into_iter().next().expect("the README's first block");
            let want: Vec<String> = lines[b.first..b.end].iter().map(|l| mask(l, &pfx)).collect();
            let have: Vec<String> = finding.iter().map(|l| mask(l, &pfx)).collect();
            if bless() {
                let mut all: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                all.splice(b.first..b.end, finding.iter().cloned());
                new = all.join("\n") + "\n";
            } else if want != have {
                wrong.push(format!(
                    "README.md:{}: the demo's first finding is now\n{}",
                    b.first + 1,
                    finding.join("\n")
                ));
            }
        }
        for (i, part) in new.clone().split("acl_demo.c:").enumerate().skip(1) {
            let n: String = part.chars().take_while(char::is_ascii_digit).collect();
            if !n.is_empty() && n != line {
                if bless() {
                    new = new.replace(&format!("acl_demo.c:{n}"), &format!("acl_demo.c:{line}"));
                } else {
                    wrong.push(format!("{name}: acl_demo.c:{n} (occurrence {i}), the demo reports acl_demo.c:{line}"));
                }
            }
        }
        if bless() && new != text {
            fs::write(&path, new).unwrap();
        }
    }
    assert!(wrong.is_empty(), "{}\n(REGCHECK_BLESS=1 rewrites the samples)", wrong.join("\n\n"));
}

/// The `REGCHECK_*` names of `text`; a name ending in `_` is a glob (`REGCHECK_VERSION_*`).
fn names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("REGCHECK_") {
        let name: String =
            text[i..].chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
        out.insert(name);
    }
    out
}

/// Names the docs show on purpose that are no variable: (name, where, why).
const NOT_VARIABLES: &[(&str, &str)] = &[("REGCHECK_RULE", "docs/usage.md: doctor's answer to a misspelt name")];

#[test]
fn every_regcheck_variable_in_the_docs_is_known_and_every_known_one_documented() {
    let known: BTreeSet<String> = regcheck::config::VARIABLES.iter().map(|(n, _)| n.to_string()).collect();
    let header = fs::read_to_string(root().join("include/regcheck.h")).unwrap();
    // What the header defines: macros (with or without parameters) and enumerators.
    let macros: BTreeSet<String> = header
        .lines()
        .filter_map(|l| match l.strip_prefix("#define ") {
            Some(d) => d.split(|c: char| c.is_whitespace() || c == '(').next(),
            None => l.trim_start().split_once(" = ").map(|(name, _)| name).filter(|n| !n.contains(' ')),
        })
        .map(str::to_string)
        .collect();
    let mut unknown = Vec::new();
    let mut documented = BTreeSet::new();
    for (path, text) in pages() {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        for n in names(&text) {
            documented.insert(n.clone());
            let ok = known.contains(&n)
                || macros.contains(&n)
                || (n.ends_with('_') && macros.iter().any(|m| m.starts_with(&n)))
                || NOT_VARIABLES.iter().any(|(v, _)| *v == n);
            if !ok {
                unknown.push(format!("{name}: {n}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "the docs name REGCHECK_* variables the library does not know:\n{}",
        unknown.join("\n")
    );
    let undocumented: Vec<&String> = known.difference(&documented).collect();
    assert!(undocumented.is_empty(), "variables the library knows and the docs never name: {undocumented:?}");
}

#[test]
fn the_comparer_masks_what_varies_and_nothing_else() {
    let a = mask("ptr=0x5616cdccc1d0 (it is 464 bytes past a boundary) at /opt/x/lib", "/opt/x");
    let b = mask("ptr=0x55f7d8994ac0 (it is 2752 bytes past a boundary) at /opt/x/lib", "/opt/x");
    assert_eq!(a, b);
    assert_eq!(a, "ptr=0xADDR (it is N bytes past a boundary) at ~/.local/regcheck/lib");
    assert_ne!(mask("flag=0x2 size=4096", ""), mask("flag=0x3 size=4096", ""));
    assert_eq!(mask("field failure B6; size is 0", ""), "field failure B6; size is 0");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(matches(&s(&["a", "...", "d"]), &s(&["a", "b", "c", "d"])));
    assert!(matches(&s(&["a", "..."]), &s(&["a"])));
    assert!(!matches(&s(&["a", "...", "e"]), &s(&["a", "b"])));
    assert!(!matches(&s(&["a", "b"]), &s(&["a", "c"])));
    assert_eq!(
        names("x `REGCHECK_MODE=off` and REGCHECK_VERSION_* y"),
        BTreeSet::from(["REGCHECK_MODE".into(), "REGCHECK_VERSION_".into()])
    );
}
