//! The in-process findings log: the last [`CAPACITY`] findings of the process, each with a
//! sequence number, so that code running in the process (the C API's `regcheck_finding_*`,
//! hence the Python module and its pytest plugin) can ask what was found and since when.
//!
//! Only findings write here (the slow path, after the message is formatted): a clean call
//! never touches it. The call site is kept as raw addresses and symbolised when asked. When
//! the log is full the oldest entry goes and [`dropped`] counts it; sequence numbers keep
//! counting, so a reader sees a gap.
//!
//! Finding the call site means unwinding the stack. A finding that is logged has it anyway;
//! one that is not (beyond `REGCHECK_MAX_REPEATS` for its rule, or with the log off) gets it
//! only once something in the process has read this log ([`has_reader`]): a program that makes
//! the same warning on every transfer and never asks pays no unwinding past the limit.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::callsite::{self, Stack};
use crate::rules::{Action, RuleId};

/// Findings kept; older ones are dropped.
pub const CAPACITY: usize = 1024;

/// One finding, as kept.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 1 for the process's first finding, then 2, 3, ... (never reused).
    pub seq: u64,
    pub rule: RuleId,
    /// The action in force when it was found (its severity).
    pub action: Action,
    /// Whether regcheck rejected the call (enforce mode, an error finding).
    pub rejected: bool,
    /// The code regcheck returned, or would return in enforce mode (0 when none).
    pub code: i64,
    /// The intercepted function, e.g. `aclrtHostRegisterV2`.
    pub call: String,
    /// The message, as logged (without the `regcheck: <level>:` prefix and the frames).
    pub message: String,
    /// The kernel thread ID of the caller.
    pub tid: u64,
    /// The application's frame of the call (raw; see [`Entry::call_site`]).
    stack: Stack,
}

impl Entry {
    /// The call site's text, `function (file:line)` or `object+offset` ("" when unknown).
    pub fn call_site(&self) -> String {
        callsite::symbolize(&self.stack, 1).first().map(|s| s.text()).unwrap_or_default()
    }
}

struct Log {
    entries: VecDeque<Entry>,
}

static LOG: Mutex<Log> = Mutex::new(Log { entries: VecDeque::new() });
static SEQ: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
static READ: AtomicBool = AtomicBool::new(false);

/// Whether code in the process has read the log (any of the functions below but [`record`]):
/// from then on every finding keeps its call site.
pub fn has_reader() -> bool {
    READ.load(Ordering::Relaxed)
}

fn reader() {
    READ.store(true, Ordering::Relaxed);
}

crate::platform::atfork::hold_across_fork!(static HANDLERS = LOG, Log);

/// Register the `fork()` handlers that keep the log's lock usable in a child (once; see
/// [`crate::platform::atfork`]). The lock is never held while another is taken.
pub fn install_fork_handlers() {
    HANDLERS.ensure();
}

fn locked<R>(f: impl FnOnce(&mut Log) -> R) -> R {
    HANDLERS.ensure();
    let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
    f(&mut log)
}

/// Keep a finding (called by [`super::emit`]); `stack` is the call's application frames.
pub fn record(rule: RuleId, action: Action, outcome: super::Outcome, call: &str, message: &str, stack: Stack) {
    let (rejected, code) = match outcome {
        super::Outcome::Rejected(c) => (true, c),
        super::Outcome::ReportOnly(c) => (false, c),
        super::Outcome::Forwarded | super::Outcome::DryRun => (false, 0),
    };
    // SAFETY: gettid has no preconditions.
    let tid = u64::from(unsafe { libc::gettid() }.unsigned_abs());
    locked(|log| {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
        if log.entries.len() == CAPACITY {
            log.entries.pop_front();
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        log.entries.push_back(Entry {
            seq,
            rule,
            action,
            rejected,
            code,
            call: call.to_string(),
            message: message.to_string(),
            tid,
            stack,
        });
    });
}

/// The sequence number of the latest finding (0 before the first).
pub fn last_seq() -> u64 {
    reader();
    SEQ.load(Ordering::Relaxed)
}

/// Findings dropped because the log was full.
pub fn dropped() -> u64 {
    reader();
    DROPPED.load(Ordering::Relaxed)
}

/// How many findings the log holds.
pub fn len() -> usize {
    reader();
    locked(|log| log.entries.len())
}

/// The kept finding at `index` (0: the oldest kept).
pub fn get(index: usize) -> Option<Entry> {
    reader();
    locked(|log| log.entries.get(index).cloned())
}

/// The oldest kept finding whose sequence number is above `after`.
pub fn next_after(after: u64) -> Option<Entry> {
    reader();
    locked(|log| {
        let i = log.entries.partition_point(|e| e.seq <= after);
        log.entries.get(i).cloned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_findings_in_order_and_counts_the_dropped() {
        let start = last_seq();
        for i in 0..(CAPACITY + 5) {
            record(
                RuleId::AclHostregNull,
                Action::Error,
                super::super::Outcome::Rejected(100000),
                "aclrtHostRegisterV2",
                &format!("m{i}"),
                Stack::EMPTY,
            );
        }
        assert!(last_seq() >= start + CAPACITY as u64 + 5);
        assert!(dropped() >= 5);
        assert_eq!(len(), CAPACITY);
        let first = get(0).unwrap();
        let next = next_after(first.seq).unwrap();
        assert_eq!(next.seq, first.seq + 1);
        assert!(next_after(last_seq()).is_none());
        let newest = get(CAPACITY - 1).unwrap();
        assert!(newest.seq > first.seq && newest.seq <= last_seq());
        assert!(newest.rejected && newest.code == 100000 && newest.call == "aclrtHostRegisterV2");
        assert!(get(CAPACITY).is_none());
    }
}
