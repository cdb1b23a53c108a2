//! Messages and logging: every finding becomes a short first line naming the severity, the
//! rule ID, the call, the argument at fault, what is wrong and what regcheck did, followed by
//! the application's call site (`    at f (file.c:12)`) and indented details: why, the fix, the
//! evidence, where to read more ([`layout`]); or, with `REGCHECK_LOG_FORMAT=json`, one JSON
//! object per line ([`json`]). Findings are grouped by rule and call site for the log's
//! collapsing of repeats and the exit summary ([`summary`]); known ones are silenced by
//! suppressions ([`suppress`]). Rejections are also kept
//! as the calling thread's last rejection, which `aclGetRecentErrMsg` returns until the
//! thread's next ACL or HIXL call.

pub mod findings;
pub mod json;
pub mod layout;
pub mod summary;
pub mod suppress;

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use crate::callsite::{self, Site, Stack};
use crate::config::{parse_filter, Config, LogFormat};
use crate::rules::decision::Why;
use crate::rules::{Action, Finding, RuleId, CATALOGUE};

/// What regcheck did with the call a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Rejected with this vendor code; the vendor was not called.
    Rejected(i64),
    /// Would have been rejected with this code, but `REGCHECK_MODE=report` forwards it.
    ReportOnly(i64),
    /// Logged and forwarded.
    Forwarded,
    /// Forwarded, and the vendor refused it with this code: the finding says why (a call whose
    /// every finding the vendor fails itself, with the same code, is left to the vendor).
    Refused(i64),
    /// Only a check: nothing was called (dry-run API).
    DryRun,
}

/// Format one finding's message (without the `regcheck: <level>:` prefix and the frames):
/// its first line, then its indented details ([`layout`]).
pub fn format_finding(call: &str, args: &str, f: &Finding, outcome: Outcome) -> String {
    format_finding_why(call, args, f, outcome, None)
}

/// [`format_finding`], with the sentence that says why the finding is not applied at its
/// severity ([`Why`]) among the details.
pub fn format_finding_why(call: &str, args: &str, f: &Finding, outcome: Outcome, why: Option<Why>) -> String {
    layout::message(call, args, f, outcome, why).text(&[])
}

static COUNTS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// Messages logged per rule (`REGCHECK_MAX_REPEATS` limits them).
static LOGGED: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// How many messages per rule are logged (0: all, and no collapsing of repeats from one call
/// site); set from `REGCHECK_MAX_REPEATS`.
static MAX_REPEATS: AtomicU64 = AtomicU64::new(crate::config::DEFAULT_MAX_REPEATS);

/// Findings raised at `error` level in this process (enforced or, in report mode, not).
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// `REGCHECK_LOG_FORMAT=json`.
static JSON: AtomicBool = AtomicBool::new(false);

/// Application frames shown per finding (`REGCHECK_STACK`).
static STACK: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_STACK);

/// The log target of lines that are JSON objects already.
const JSON_TARGET: &str = "regcheck::json";

/// How many error-level findings this process has had.
pub fn error_count() -> u64 {
    ERRORS.load(Ordering::Relaxed)
}

/// Set the per-rule message limit (0: unlimited).
pub fn set_max_repeats(n: u64) {
    MAX_REPEATS.store(n, Ordering::Relaxed);
}

/// Whether log lines are JSON objects (`REGCHECK_LOG_FORMAT=json`).
pub fn json_format() -> bool {
    JSON.load(Ordering::Relaxed)
}

fn level_of(action: Action) -> Option<log::Level> {
    match action {
        Action::Off => None,
        Action::Info => Some(log::Level::Info),
        Action::Warn => Some(log::Level::Warn),
        Action::Error => Some(log::Level::Error),
    }
}

/// The application frames of the finding in progress, captured once per call and
/// symbolised once, only when something is reported.
struct CallSite {
    call: u64,
    stack: Stack,
    sites: Option<Vec<Site>>,
}

thread_local! {
    static CURRENT_SITE: RefCell<Option<CallSite>> = const { RefCell::new(None) };
}

/// Frames captured per finding: those shown (`REGCHECK_STACK`), at least the call site (the
/// summary's groups), and those the suppressions look at.
fn capture_depth() -> usize {
    STACK.load(Ordering::Relaxed).max(1).max(suppress::depth()).min(crate::config::MAX_STACK)
}

fn with_current_site<R>(f: impl FnOnce(&mut CallSite) -> R) -> Option<R> {
    let call = callsite::calls_on_thread();
    CURRENT_SITE
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            if !matches!(c.as_ref(), Some(s) if s.call == call) {
                *c = Some(CallSite { call, stack: callsite::capture(capture_depth()), sites: None });
            }
            c.as_mut().map(f)
        })
        .ok()
        .flatten()
}

/// The current call's captured frames, symbolised (once per call).
fn captured_sites() -> Vec<Site> {
    with_current_site(|c| c.sites.get_or_insert_with(|| callsite::symbolize(&c.stack, capture_depth())).clone())
        .unwrap_or_default()
}

/// The current call's application frames to show (`REGCHECK_STACK`), symbolised.
fn current_sites() -> Vec<Site> {
    let n = STACK.load(Ordering::Relaxed);
    if n == 0 {
        return Vec::new();
    }
    let mut sites = captured_sites();
    sites.truncate(n);
    sites
}

/// `msg` followed by the frames, sanitizer style (`    at f (file.c:12)`, then `    by ...`).
pub fn with_frames(msg: &str, sites: &[Site]) -> String {
    let mut out = msg.to_string();
    for (i, s) in sites.iter().enumerate() {
        out.push_str(if i == 0 { "\n    at " } else { "\n    by " });
        out.push_str(&s.text());
    }
    out
}

/// Whether a suppression silences this finding of the current call: asked only when one
/// names its rule (one atomic load otherwise). Returns the suppression's name.
/// Whether some loaded suppression names `rule` (one atomic load): what decides whether a
/// call's findings are matched against the suppressions at all.
#[inline]
pub fn suppression_names(rule: crate::rules::RuleId) -> bool {
    suppress::names(rule)
}

pub fn suppressed(f: &Finding) -> Option<String> {
    if !suppress::names(f.rule) {
        return None;
    }
    let stack = with_current_site(|c| c.stack.clone()).unwrap_or_default();
    suppress::find(f.rule, &stack, captured_sites)
}

/// A call's argument text (`ptr=0x1000, size=4096`), written only where a sink shows it: a
/// finding that is neither logged nor rejected has it written straight into the findings log's
/// reused buffer, with no string of its own (a warned call's cost, docs/performance.md).
#[derive(Clone, Copy)]
pub enum Args<'a> {
    /// Already formatted.
    Text(&'a str),
    /// Written on demand, perhaps under the findings log's lock: pure formatting, never a
    /// call into the vendor or the loader.
    Write(&'a dyn Fn(&mut String)),
}

impl Args<'_> {
    /// Append the text to `out`.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Args::Text(t) => out.push_str(t),
            Args::Write(w) => w(out),
        }
    }

    /// The text, as a string of its own.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write_to(&mut s);
        s
    }
}

/// Append `name` and `value` in hexadecimal (`ptr=0x7f00`), without the formatting machinery:
/// the argument text of a warned call is written on every call.
pub fn write_hex(out: &mut String, name: &str, value: usize) {
    out.push_str(name);
    out.push_str("0x");
    let digits = (usize::BITS - value.leading_zeros()).div_ceil(4).max(1);
    for i in (0..digits).rev() {
        out.push(char::from(b"0123456789abcdef"[(value >> (4 * i)) & 0xf]));
    }
}

impl std::fmt::Display for Args<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Args::Text(t) => f.write_str(t),
            Args::Write(_) => f.write_str(&self.text()),
        }
    }
}

/// A finding a suppression silenced: counted as suppressed, logged at debug level only,
/// never rejected, not kept in the findings log.
pub fn emit_suppressed(call: &str, args: Args<'_>, f: &Finding, action: Action, by: &str) {
    let stack = with_current_site(|c| c.stack.clone()).unwrap_or_default();
    summary::note(f.rule, action, summary::Fate::Suppressed, &stack);
    if log::log_enabled!(target: "regcheck", log::Level::Debug) {
        let m = layout::message(call, &args.text(), f, Outcome::Forwarded, None);
        log::debug!(target: "regcheck", "suppressed by {by:?}: {}", m.text(&current_sites()));
    }
}

/// Whether `REGCHECK_GEN_SUPPRESSIONS` asks for a ready entry after each finding.
static GEN_SUPPRESSIONS: AtomicBool = AtomicBool::new(false);

/// Findings per rule past which (x [`MAX_REPEATS`]) the call site is no longer traced: the
/// summary groups them under an untraced call site, and an unlogged finding stays cheap.
const TRACE_FACTOR: u64 = 10;

/// Log a finding at the level its action asks for, count it (per rule, and per rule and call
/// site for the summary), keep it in the findings log, and keep rejections as the thread's
/// last rejection. The message is formatted only for a sink that shows it (the log, when it
/// takes this finding; the rejection's message); the findings log formats its copy when it is
/// read. The first [`summary::SITE_REPEATS`] findings of a rule from one call site are logged;
/// the next one says that the others are only counted.
pub fn emit(call: &str, args: Args<'_>, f: &Finding, action: Action, outcome: Outcome, why: Option<Why>) {
    let seen = COUNTS.get(f.rule.index()).map_or(1, |c| c.fetch_add(1, Ordering::Relaxed) + 1);
    if action == Action::Error {
        ERRORS.fetch_add(1, Ordering::Relaxed);
    }
    let limit = MAX_REPEATS.load(Ordering::Relaxed);
    let level = level_of(action);
    let logged_before = LOGGED.get(f.rule.index()).map_or(0, |c| c.load(Ordering::Relaxed));
    let log_on =
        (limit == 0 || logged_before < limit) && level.is_some_and(|l| log::log_enabled!(target: "regcheck", l));
    let traced = limit == 0 || seen <= limit.saturating_mul(TRACE_FACTOR) || findings::has_reader();
    let stack = if action != Action::Off && (traced || log_on) {
        with_current_site(|c| c.stack.clone()).unwrap_or_default()
    } else {
        Stack::EMPTY
    };
    let at_site =
        if action != Action::Off { summary::note(f.rule, action, summary::Fate::of(outcome), &stack) } else { 0 };
    let collapsed = limit != 0 && at_site > summary::SITE_REPEATS;
    let logged = log_on && !collapsed;
    let last_report = logged && limit != 0 && logged_before + 1 == limit;
    if logged {
        if let Some(c) = LOGGED.get(f.rule.index()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
    let rejected = matches!(outcome, Outcome::Rejected(_)) && action == Action::Error;
    let args_text = (logged || rejected).then(|| args.text());
    let msg = args_text.as_deref().map(|args| layout::message(call, args, f, outcome, why));
    let level = level.unwrap_or(log::Level::Error);
    if let (true, Some(msg)) = (logged, &msg) {
        summary::logged(f.rule, &stack);
        let sites = current_sites();
        let gen = GEN_SUPPRESSIONS.load(Ordering::Relaxed);
        if json_format() {
            let entry = suppress::generate(f.rule, &captured_sites());
            let line = json::finding(&json::FindingRecord {
                call,
                args: args_text.as_deref().unwrap_or_default(),
                finding: f,
                action,
                outcome,
                message: msg,
                why,
                sites: &sites,
                last_report,
                suppression: &entry,
            });
            log::log!(target: JSON_TARGET, level, "{line}");
        } else {
            let mut text = msg.text(&sites);
            if last_report {
                text.push_str(&format!(
                    "\n    note: last report of {} in this process (REGCHECK_MAX_REPEATS={limit}): later ones are still enforced and counted in the exit summary",
                    f.rule.name()
                ));
            }
            if gen {
                let entry = suppress::generate(f.rule, &captured_sites());
                text.push_str("\n    suppression (REGCHECK_SUPPRESSIONS file):\n");
                text.push_str(&entry.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n"));
            }
            log::log!(target: "regcheck", level, "{text}");
        }
    } else if log_on && at_site == summary::SITE_REPEATS + 1 {
        let sites = current_sites();
        let text = format!(
            "[{}] {call}: more findings from this call site (after {} logged) are counted, not logged; the exit summary gives the total (REGCHECK_MAX_REPEATS=0 logs every one)",
            f.rule.name(),
            summary::SITE_REPEATS
        );
        if json_format() {
            log::log!(target: "regcheck", level, "{text}");
        } else {
            log::log!(target: "regcheck", level, "{}", with_frames(&text, &sites));
        }
    }
    if action != Action::Off {
        // A logged finding has unwound already; an unlogged one only for a reader of the log.
        let kept = if logged || findings::has_reader() { stack } else { Stack::EMPTY };
        let args = args_text.as_deref().map_or(args, Args::Text);
        findings::record(findings::Found { call, args, finding: f, action, outcome, why }, kept);
    }
    if let (true, Some(msg)) = (rejected, &msg) {
        set_rejection(f.rule, msg);
    }
}

/// The calling thread's last rejection: the message, the rule, the stack, and the text
/// `aclGetRecentErrMsg` returns while it is the thread's latest news.
struct LastRejection {
    msg: String,
    rule: Option<RuleId>,
    /// `callsite::calls_on_thread()` when it was made.
    call: u64,
    stack: Stack,
    sites: Option<Vec<Site>>,
    /// NUL-terminated `regcheck: <msg>` for `aclGetRecentErrMsg`; its heap buffer is reused
    /// (or, when it must grow, the old one is kept alive) so that a pointer returned earlier
    /// never dangles.
    errmsg: Vec<u8>,
}

thread_local! {
    static LAST_REJECTION: RefCell<LastRejection> = const {
        RefCell::new(LastRejection {
            msg: String::new(),
            rule: None,
            call: 0,
            stack: Stack::EMPTY,
            sites: None,
            errmsg: Vec::new(),
        })
    };
}

fn set_rejection(rule: RuleId, message: &layout::Message) {
    let msg = message.text(&[]);
    let call = callsite::calls_on_thread();
    let (stack, sites) = with_current_site(|c| (c.stack.clone(), c.sites.clone())).unwrap_or_default();
    let _ = LAST_REJECTION.try_with(|l| {
        let Ok(mut l) = l.try_borrow_mut() else { return };
        if l.call == call && l.rule.is_some() && call != 0 {
            // The first error finding of a call is the one that rejected it.
            return;
        }
        l.msg.clear();
        l.msg.push_str(&msg);
        l.rule = Some(rule);
        l.call = call;
        l.stack = stack;
        l.sites = sites;
        let text = format!("regcheck: {}", message.short().replace('\0', " "));
        if l.errmsg.capacity() < text.len() + 1 {
            let old = std::mem::replace(&mut l.errmsg, Vec::with_capacity((text.len() + 1).max(1024)));
            std::mem::forget(old);
        }
        l.errmsg.clear();
        l.errmsg.extend_from_slice(text.as_bytes());
        l.errmsg.push(0);
    });
}

/// The calling thread's last rejection message ("" when none).
pub fn last_rejection() -> String {
    LAST_REJECTION.try_with(|l| l.try_borrow().map(|s| s.msg.clone()).unwrap_or_default()).unwrap_or_default()
}

/// The rule of the calling thread's last rejection.
pub fn last_rejection_rule() -> Option<RuleId> {
    LAST_REJECTION.try_with(|l| l.try_borrow().ok().and_then(|s| s.rule)).ok().flatten()
}

/// The application frames of the calling thread's last rejection (symbolised on first use).
pub fn last_rejection_sites() -> Vec<Site> {
    let n = STACK.load(Ordering::Relaxed).max(1);
    LAST_REJECTION
        .try_with(|l| {
            let Ok(mut l) = l.try_borrow_mut() else { return Vec::new() };
            if l.sites.is_none() {
                let sites = callsite::symbolize(&l.stack, n);
                l.sites = Some(sites);
            }
            l.sites.clone().unwrap_or_default()
        })
        .unwrap_or_default()
}

/// What `aclGetRecentErrMsg` returns on this thread: regcheck's message when regcheck
/// rejected the thread's latest ACL or HIXL call, else `None` (ask the vendor). The pointer
/// stays valid for the life of the thread.
pub fn recent_error_message() -> Option<*const std::ffi::c_char> {
    let now = callsite::calls_on_thread();
    LAST_REJECTION
        .try_with(|l| {
            let l = l.try_borrow().ok()?;
            (l.rule.is_some() && l.call == now && now != 0 && !l.errmsg.is_empty())
                .then(|| l.errmsg.as_ptr().cast::<std::ffi::c_char>())
        })
        .ok()
        .flatten()
}

/// How many findings each rule has raised in this process.
pub fn count(rule: RuleId) -> u64 {
    COUNTS.get(rule.index()).map_or(0, |c| c.load(Ordering::Relaxed))
}

/// `REGCHECK_LOG_FILE`, once opened. Behind regcheck's own mutex (not a logging library's) so
/// that the `fork()` handlers can hold it: a child must not inherit it locked by another thread.
static LOG_FILE: OnceLock<Mutex<std::fs::File>> = OnceLock::new();

/// The log file's lock, for the `fork()` handlers (`None` when logging to stderr).
pub fn lock_log_file() -> Option<MutexGuard<'static, std::fs::File>> {
    LOG_FILE.get().map(|m| m.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Write one line (with its newline) where the log goes, with one `write`: the log file
/// (under [`LOG_FILE`]'s lock) or stderr (under the standard library's stderr lock), the two
/// locks the `fork()` handlers take.
fn write_line(line: &str) {
    match LOG_FILE.get() {
        Some(file) => {
            let _ = file.lock().unwrap_or_else(PoisonError::into_inner).write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

/// regcheck's logger: one `regcheck: <level>: <message>` line per record, or with
/// `REGCHECK_LOG_FORMAT=json` one JSON object ([`json`]), written by [`write_line`].
struct Logger {
    filter: env_filter::Filter,
}

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        self.filter.enabled(metadata)
    }

    fn log(&self, rec: &log::Record<'_>) {
        if !self.filter.matches(rec) {
            return;
        }
        let level = match rec.level() {
            log::Level::Error => "error",
            log::Level::Warn => "warning",
            log::Level::Info => "info",
            log::Level::Debug => "debug",
            log::Level::Trace => "trace",
        };
        let line = if rec.target() == JSON_TARGET {
            format!("{}\n", rec.args())
        } else if json_format() {
            format!("{}\n", json::message(level, &rec.args().to_string()))
        } else {
            format!("regcheck: {level}: {}\n", rec.args())
        };
        write_line(&line);
    }

    fn flush(&self) {}
}

/// Install regcheck's logger, unless the process already has one (then messages go to it).
pub fn init_logger(cfg: &Config) {
    JSON.store(cfg.log_format == LogFormat::Json, Ordering::Relaxed);
    STACK.store(cfg.stack, Ordering::Relaxed);
    GEN_SUPPRESSIONS.store(cfg.gen_suppressions, Ordering::Relaxed);
    let filter = parse_filter(&cfg.log_filter)
        .unwrap_or_else(|_| parse_filter(crate::config::DEFAULT_LOG_FILTER).expect("the default filter parses"));
    if let Some(path) = &cfg.log_file {
        match std::fs::OpenOptions::new().create(true).append(true).open(path) {
            Ok(file) => {
                let _ = LOG_FILE.set(Mutex::new(file));
            }
            Err(e) => {
                let text = format!("REGCHECK_LOG_FILE={path}: {e}; logging to stderr");
                if json_format() {
                    eprintln!("{}", json::message("warning", &text));
                } else {
                    eprintln!("regcheck: warning: {text}");
                }
            }
        }
    }
    let level = filter.filter();
    if log::set_boxed_logger(Box::new(Logger { filter })).is_ok() {
        log::set_max_level(level);
    }
    if !cfg.suppressions.is_empty() {
        for e in suppress::load(&cfg.suppressions) {
            log::error!(target: "regcheck", "{e}");
        }
    }
}

/// The end-of-run summary's text: the totals by severity and by what became of the findings,
/// then each (rule, call site) with its count, most frequent first ([`summary`]).
pub fn summary_text() -> String {
    let lines = summary::text(&summary::snapshot(), &suppress::unused(), 0);
    format!("regcheck: {}", lines.join("\n"))
}

/// Append one JSON line where the log goes (`REGCHECK_LOG_FILE`, else stderr), outside the
/// logger (at exit).
fn write_json_line(line: &str) {
    write_line(&format!("{line}\n"));
}

/// A notice written outside the logger (at exit): `regcheck: <text>` on stderr, or a JSON
/// `message` line where the log goes.
pub fn write_notice(level: &str, text: &str) {
    if json_format() {
        write_json_line(&json::message(level, text));
    } else {
        let _ = writeln!(std::io::stderr(), "regcheck: {text}");
    }
}

/// Findings per rule, in catalogue order, rules with findings only.
pub fn counts() -> Vec<(RuleId, u64)> {
    CATALOGUE.iter().map(|r| (r.id, count(r.id))).filter(|(_, n)| *n > 0).collect()
}

/// Whether the exit summary has something to say: findings, or suppressions that matched
/// nothing.
pub fn summary_due() -> bool {
    !summary::snapshot().is_empty() || !suppress::unused().is_empty()
}

/// Write the exit summary: text on stderr, or (JSON format) one `summary` object where the
/// log goes. `live` is the number of host registrations never unregistered.
pub fn write_summary(live: usize) {
    if json_format() {
        write_json_line(&json::summary(live));
        return;
    }
    let lines = summary::text(&summary::snapshot(), &suppress::unused(), live);
    let mut text = String::new();
    for l in lines {
        text.push_str("regcheck: ");
        text.push_str(&l);
        text.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_rule_call_argument_fix_and_outcome() {
        let f = Finding::new(RuleId::AclHostregAlign, "ptr", "0x1010 is not aligned", "use posix_memalign");
        let m = format_finding("aclrtHostRegisterV2", "ptr=0x1010, size=4096, flag=0x2", &f, Outcome::Rejected(100000));
        assert_eq!(
            m.lines().next().unwrap(),
            "[ACL-HOSTREG-ALIGN] aclrtHostRegisterV2(ptr=0x1010, size=4096, flag=0x2): `ptr`: 0x1010 is not aligned \
             (rejected with 100000 ACL_ERROR_INVALID_PARAM)"
        );
        assert!(m.contains("\n    fix: use posix_memalign\n"), "{m}");
        let m = format_finding("c", "", &f, Outcome::ReportOnly(100000));
        assert!(m.contains("report mode"));
    }

    #[test]
    fn writes_hex_like_the_formatter() {
        for v in [0usize, 1, 0xf, 0x10, 0x7f00_dead_b000, usize::MAX] {
            let mut s = String::new();
            write_hex(&mut s, "ptr=", v);
            assert_eq!(s, format!("ptr=0x{v:x}"));
        }
        let text = |a: Args<'_>| (a.text(), a.to_string());
        assert_eq!(text(Args::Text("a=1")), ("a=1".to_string(), "a=1".to_string()));
        assert_eq!(text(Args::Write(&|o| o.push_str("b=2"))), ("b=2".to_string(), "b=2".to_string()));
    }

    #[test]
    fn last_rejection_is_per_thread() {
        let f = Finding::new(RuleId::AclHostregNull, "ptr", "is NULL", "x");
        emit("aclrtHostRegisterV2", Args::Text(""), &f, Action::Error, Outcome::Rejected(100000), None);
        assert!(last_rejection().contains("ACL-HOSTREG-NULL"));
        std::thread::spawn(|| assert_eq!(last_rejection(), "")).join().unwrap();
        assert!(count(RuleId::AclHostregNull) >= 1);
    }
}
