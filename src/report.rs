//! Messages and logging: every finding becomes one line naming the severity, the rule ID,
//! the call with its arguments, the argument at fault, what is wrong, the fix, and what
//! regcheck did, followed by the application's call site (`    at f (file.c:12)`); or, with
//! `REGCHECK_LOG_FORMAT=json`, one JSON object per line ([`json`]). Rejections are also kept
//! as the calling thread's last rejection, which `aclGetRecentErrMsg` returns until the
//! thread's next ACL or HIXL call.

pub mod findings;
pub mod json;

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
    /// Only a check: nothing was called (dry-run API).
    DryRun,
}

/// Format one finding as a message line (without the `regcheck: <level>:` prefix).
pub fn format_finding(call: &str, args: &str, f: &Finding, outcome: Outcome) -> String {
    format_finding_why(call, args, f, outcome, None)
}

/// [`format_finding`], with the sentence that says why the finding is not applied at its
/// severity ([`Why`]) after the problem.
pub fn format_finding_why(call: &str, args: &str, f: &Finding, outcome: Outcome, why: Option<Why>) -> String {
    let what = match outcome {
        Outcome::Rejected(code) => {
            format!("rejected with {code} ({}); the vendor was not called", crate::codes::name(code))
        }
        Outcome::ReportOnly(code) => {
            format!("report mode: forwarded anyway (enforce mode would return {code} {})", crate::codes::name(code))
        }
        Outcome::Forwarded => "forwarded".to_string(),
        Outcome::DryRun => "dry run".to_string(),
    };
    let subject = if f.arg.starts_with('(') { String::new() } else { format!("`{}`: ", f.arg) };
    match why {
        None => format!("[{}] {call}({args}): {subject}{}. Fix: {}. ({what})", f.rule.name(), f.problem, f.fix),
        Some(why) => format!(
            "[{}] {call}({args}): {subject}{}; {}. Fix: {}. ({what})",
            f.rule.name(),
            f.problem,
            why.text(f.reject_code()),
            f.fix
        ),
    }
}

static COUNTS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// How many messages per rule are logged (0: all); set from `REGCHECK_MAX_REPEATS`.
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

fn with_current_site<R>(f: impl FnOnce(&mut CallSite) -> R) -> Option<R> {
    let call = callsite::calls_on_thread();
    CURRENT_SITE
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            if !matches!(c.as_ref(), Some(s) if s.call == call) {
                let n = STACK.load(Ordering::Relaxed);
                *c = Some(CallSite { call, stack: callsite::capture(n), sites: None });
            }
            c.as_mut().map(f)
        })
        .ok()
        .flatten()
}

/// The current call's application frames, symbolised.
fn current_sites() -> Vec<Site> {
    let n = STACK.load(Ordering::Relaxed);
    if n == 0 {
        return Vec::new();
    }
    with_current_site(|c| c.sites.get_or_insert_with(|| callsite::symbolize(&c.stack, n)).clone()).unwrap_or_default()
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

/// Log a finding at the level its action asks for, count it, and keep rejections as the
/// thread's last rejection. Returns the message.
pub fn emit(call: &str, args: &str, f: &Finding, action: Action, outcome: Outcome, why: Option<Why>) -> String {
    let msg = format_finding_why(call, args, f, outcome, why);
    let seen = COUNTS.get(f.rule.index()).map_or(1, |c| c.fetch_add(1, Ordering::Relaxed) + 1);
    if action == Action::Error {
        ERRORS.fetch_add(1, Ordering::Relaxed);
    }
    let limit = MAX_REPEATS.load(Ordering::Relaxed);
    let last_report = limit != 0 && seen == limit;
    let logged =
        (limit == 0 || seen <= limit) && level_of(action).is_some_and(|l| log::log_enabled!(target: "regcheck", l));
    if logged {
        let level = level_of(action).unwrap_or(log::Level::Error);
        let sites = current_sites();
        if json_format() {
            let line = json::finding(&json::FindingRecord {
                call,
                args,
                finding: f,
                action,
                outcome,
                message: &msg,
                sites: &sites,
                last_report,
            });
            log::log!(target: JSON_TARGET, level, "{line}");
        } else {
            let text = if last_report {
                format!(
                    "{msg} [last report of {} in this process (REGCHECK_MAX_REPEATS={limit}): it is still enforced and counted by REGCHECK_SUMMARY]",
                    f.rule.name()
                )
            } else {
                msg.clone()
            };
            log::log!(target: "regcheck", level, "{}", with_frames(&text, &sites));
        }
    }
    if action != Action::Off {
        // A logged finding has unwound already; an unlogged one only for a reader of the log.
        let stack = if logged || findings::has_reader() {
            with_current_site(|c| c.stack.clone()).unwrap_or_default()
        } else {
            Stack::EMPTY
        };
        findings::record(f.rule, action, outcome, call, &msg, stack);
    }
    if matches!(outcome, Outcome::Rejected(_)) && action == Action::Error {
        set_rejection(f.rule, &msg);
    }
    msg
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

fn set_rejection(rule: RuleId, msg: &str) {
    let call = callsite::calls_on_thread();
    let (stack, sites) = with_current_site(|c| (c.stack.clone(), c.sites.clone())).unwrap_or_default();
    let _ = LAST_REJECTION.try_with(|l| {
        let Ok(mut l) = l.try_borrow_mut() else { return };
        if l.call == call && l.rule.is_some() && call != 0 {
            // The first error finding of a call is the one that rejected it.
            return;
        }
        l.msg.clear();
        l.msg.push_str(msg);
        l.rule = Some(rule);
        l.call = call;
        l.stack = stack;
        l.sites = sites;
        let text = format!("regcheck: {}", msg.replace('\0', " "));
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
}

/// The end-of-run summary (`REGCHECK_SUMMARY=1`): findings per rule.
pub fn summary_text() -> String {
    let mut lines = Vec::new();
    for r in CATALOGUE {
        let n = count(r.id);
        if n > 0 {
            lines.push(format!("  {:<34} {n}", r.name));
        }
    }
    if lines.is_empty() {
        "regcheck: summary: no findings".to_string()
    } else {
        format!("regcheck: summary: findings per rule:\n{}", lines.join("\n"))
    }
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

/// Write the exit summary: text on stderr, or (JSON format) one `summary` object where the
/// log goes. `live` is the number of host registrations never unregistered.
pub fn write_summary(live: usize) {
    if json_format() {
        write_json_line(&json::summary(live));
        return;
    }
    let mut err = std::io::stderr();
    let _ = writeln!(err, "{}", summary_text());
    if live > 0 {
        let _ = writeln!(err, "regcheck: summary: {live} host registration(s) never unregistered");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_rule_call_argument_fix_and_outcome() {
        let f = Finding::new(RuleId::AclHostregAlign, "ptr", "0x1010 is not aligned", "use posix_memalign");
        let m = format_finding("aclrtHostRegisterV2", "ptr=0x1010, size=4096, flag=0x2", &f, Outcome::Rejected(100000));
        assert_eq!(
            m,
            "[ACL-HOSTREG-ALIGN] aclrtHostRegisterV2(ptr=0x1010, size=4096, flag=0x2): `ptr`: 0x1010 is not aligned. \
             Fix: use posix_memalign. (rejected with 100000 (ACL_ERROR_INVALID_PARAM); the vendor was not called)"
        );
        let m = format_finding("c", "", &f, Outcome::ReportOnly(100000));
        assert!(m.contains("report mode"));
    }

    #[test]
    fn last_rejection_is_per_thread() {
        let f = Finding::new(RuleId::AclHostregNull, "ptr", "is NULL", "x");
        emit("aclrtHostRegisterV2", "", &f, Action::Error, Outcome::Rejected(100000), None);
        assert!(last_rejection().contains("ACL-HOSTREG-NULL"));
        std::thread::spawn(|| assert_eq!(last_rejection(), "")).join().unwrap();
        assert!(count(RuleId::AclHostregNull) >= 1);
    }
}
