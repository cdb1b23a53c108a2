//! Messages and logging: every finding becomes one line naming the severity, the rule ID,
//! the call with its arguments, the argument at fault, what is wrong, the fix, and what
//! regcheck did. Rejections are also kept as the calling thread's last rejection.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use crate::config::Config;
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
    format!("[{}] {call}({args}): {subject}{}. Fix: {}. ({what})", f.rule.name(), f.problem, f.fix)
}

static COUNTS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// How many messages per rule are logged (0: all); set from `REGCHECK_MAX_REPEATS`.
static MAX_REPEATS: AtomicU64 = AtomicU64::new(crate::config::DEFAULT_MAX_REPEATS);

/// Findings raised at `error` level in this process (enforced or, in report mode, not).
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// How many error-level findings this process has had.
pub fn error_count() -> u64 {
    ERRORS.load(Ordering::Relaxed)
}

/// Set the per-rule message limit (0: unlimited).
pub fn set_max_repeats(n: u64) {
    MAX_REPEATS.store(n, Ordering::Relaxed);
}

/// Log a finding at the level its action asks for, count it, and keep rejections as the
/// thread's last rejection. Returns the message.
pub fn emit(call: &str, args: &str, f: &Finding, action: Action, outcome: Outcome) -> String {
    let msg = format_finding(call, args, f, outcome);
    let seen = COUNTS.get(f.rule.index()).map_or(1, |c| c.fetch_add(1, Ordering::Relaxed) + 1);
    if action == Action::Error {
        ERRORS.fetch_add(1, Ordering::Relaxed);
    }
    let limit = MAX_REPEATS.load(Ordering::Relaxed);
    let text = if limit == 0 || seen < limit {
        Some(msg.clone())
    } else if seen == limit {
        Some(format!(
            "{msg} [last report of {} in this process (REGCHECK_MAX_REPEATS={limit}): it is still enforced and counted by REGCHECK_SUMMARY]",
            f.rule.name()
        ))
    } else {
        None
    };
    if let Some(text) = text {
        match action {
            Action::Off => {}
            Action::Info => log::info!(target: "regcheck", "{text}"),
            Action::Warn => log::warn!(target: "regcheck", "{text}"),
            Action::Error => log::error!(target: "regcheck", "{text}"),
        }
    }
    if matches!(outcome, Outcome::Rejected(_)) {
        set_last_rejection(&msg);
    }
    msg
}

thread_local! {
    static LAST_REJECTION: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Remember the calling thread's last rejection message.
pub fn set_last_rejection(msg: &str) {
    let _ = LAST_REJECTION.try_with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            l.clear();
            l.push_str(msg);
        }
    });
}

/// The calling thread's last rejection message ("" when none).
pub fn last_rejection() -> String {
    LAST_REJECTION.try_with(|l| l.try_borrow().map(|s| s.clone()).unwrap_or_default()).unwrap_or_default()
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

/// The log filter of `REGCHECK_LOG` (`env_logger` syntax), or why it is not one.
pub fn parse_filter(spec: &str) -> Result<env_filter::Filter, env_filter::ParseError> {
    Ok(env_filter::Builder::new().try_parse(spec)?.build())
}

/// regcheck's logger: one `regcheck: <level>: <message>` line per record, written with one
/// `write` to stderr (under the standard library's stderr lock) or to the log file (under
/// [`LOG_FILE`]'s lock): the two locks the `fork()` handlers take.
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
        let line = format!("regcheck: {level}: {}\n", rec.args());
        match LOG_FILE.get() {
            Some(file) => {
                let _ = file.lock().unwrap_or_else(PoisonError::into_inner).write_all(line.as_bytes());
            }
            None => {
                let _ = std::io::stderr().lock().write_all(line.as_bytes());
            }
        }
    }

    fn flush(&self) {}
}

/// Install regcheck's logger, unless the process already has one (then messages go to it).
pub fn init_logger(cfg: &Config) {
    let filter = parse_filter(&cfg.log_filter)
        .unwrap_or_else(|_| parse_filter(crate::config::DEFAULT_LOG_FILTER).expect("the default filter parses"));
    if let Some(path) = &cfg.log_file {
        match std::fs::OpenOptions::new().create(true).append(true).open(path) {
            Ok(file) => {
                let _ = LOG_FILE.set(Mutex::new(file));
            }
            Err(e) => eprintln!("regcheck: warning: REGCHECK_LOG_FILE={path}: {e}; logging to stderr"),
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
        emit("aclrtHostRegisterV2", "", &f, Action::Error, Outcome::Rejected(100000));
        assert!(last_rejection().contains("ACL-HOSTREG-NULL"));
        std::thread::spawn(|| assert_eq!(last_rejection(), "")).join().unwrap();
        assert!(count(RuleId::AclHostregNull) >= 1);
    }
}
