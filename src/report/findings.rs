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
use crate::rules::decision::Why;
use crate::rules::{Action, Finding, RuleId};

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
    /// The code regcheck returned, would return in enforce mode, or the vendor's refusal the
    /// finding explains (0 when none).
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

/// A finding as kept: its parts, formatted into an [`Entry`] only when read. The texts share
/// one buffer (`call`, `args`, the problem, the fix, at the offsets `ends`), which the oldest
/// entry hands to the newest once the log is full: a full log keeps a finding without
/// allocating.
struct Kept {
    seq: u64,
    text: String,
    /// Where `call`, `args` and the problem end in `text` (the fix runs to its end).
    ends: [usize; 3],
    rule: RuleId,
    arg: &'static str,
    code: Option<i64>,
    default: Option<Action>,
    action: Action,
    outcome: super::Outcome,
    /// Why the finding was not applied at its severity, when it was not.
    why: Option<Why>,
    evidence: Option<crate::rules::Evidence>,
    tid: u64,
    stack: Stack,
}

impl Kept {
    fn part(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let end = self.ends.get(i).copied().unwrap_or(self.text.len());
        self.text.get(start..end).unwrap_or("")
    }

    fn entry(&self) -> Entry {
        let (rejected, code) = match self.outcome {
            super::Outcome::Rejected(c) => (true, c),
            super::Outcome::ReportOnly(c) | super::Outcome::Refused(c) => (false, c),
            super::Outcome::Forwarded | super::Outcome::DryRun => (false, 0),
        };
        let finding = Finding {
            rule: self.rule,
            arg: self.arg,
            problem: self.part(2).to_string(),
            fix: self.part(3).to_string().into(),
            code: self.code,
            action: self.default,
            evidence: self.evidence,
        };
        Entry {
            seq: self.seq,
            rule: self.rule,
            action: self.action,
            rejected,
            code,
            call: self.part(0).to_string(),
            message: super::format_finding_why(self.part(0), self.part(1), &finding, self.outcome, self.why),
            tid: self.tid,
            stack: self.stack.clone(),
        }
    }
}

/// A finding to keep, as [`super::emit`] has it.
pub struct Found<'a> {
    pub call: &'a str,
    pub args: super::Args<'a>,
    pub finding: &'a Finding,
    pub action: Action,
    pub outcome: super::Outcome,
    pub why: Option<Why>,
}

impl Entry {
    /// The call site's text, `function (file:line)` or `object+offset` ("" when unknown).
    pub fn call_site(&self) -> String {
        callsite::symbolize(&self.stack, 1).first().map(|s| s.text()).unwrap_or_default()
    }
}

struct Log {
    entries: VecDeque<Kept>,
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

/// Counts the `fork()`s this process's line has made: a thread's cached thread ID is good
/// only while it is unchanged (a child's thread has a new one).
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn forked() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

static TID_HANDLERS: crate::platform::atfork::AtFork = crate::platform::atfork::AtFork::new(None, None, Some(forked));

thread_local! {
    /// The calling thread's kernel thread ID, and [`FORKS`] when it was read.
    static TID: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((u64::MAX, 0)) };
}

/// The calling thread's kernel thread ID: one system call per thread (and per `fork()`).
fn tid() -> u64 {
    TID_HANDLERS.ensure();
    let forks = FORKS.load(Ordering::Relaxed);
    TID.try_with(|t| {
        let (at, tid) = t.get();
        if at == forks {
            return tid;
        }
        // SAFETY: gettid has no preconditions.
        let tid = u64::from(unsafe { libc::gettid() }.unsigned_abs());
        t.set((forks, tid));
        tid
    })
    .unwrap_or_else(|_| u64::from(unsafe { libc::gettid() }.unsigned_abs()))
}

/// Keep a finding (called by [`super::emit`]); `stack` is the call's application frames. Its
/// message is formatted when it is read.
pub fn record(found: Found<'_>, stack: Stack) {
    let tid = tid();
    let f = found.finding;
    locked(|log| {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
        let mut text = if log.entries.len() == CAPACITY {
            DROPPED.fetch_add(1, Ordering::Relaxed);
            log.entries.pop_front().map(|old| old.text).unwrap_or_default()
        } else {
            String::new()
        };
        text.clear();
        let mut ends = [0; 3];
        text.push_str(found.call);
        ends[0] = text.len();
        found.args.write_to(&mut text);
        ends[1] = text.len();
        text.push_str(&f.problem);
        ends[2] = text.len();
        text.push_str(&f.fix);
        log.entries.push_back(Kept {
            seq,
            text,
            ends,
            rule: f.rule,
            arg: f.arg,
            code: f.code,
            default: f.action,
            action: found.action,
            outcome: found.outcome,
            why: found.why,
            evidence: f.evidence,
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
    locked(|log| log.entries.get(index).map(Kept::entry))
}

/// The oldest kept finding whose sequence number is above `after`.
pub fn next_after(after: u64) -> Option<Entry> {
    reader();
    locked(|log| {
        let i = log.entries.partition_point(|e| e.seq <= after);
        log.entries.get(i).map(Kept::entry)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_findings_in_order_and_counts_the_dropped() {
        let start = last_seq();
        for i in 0..(CAPACITY + 5) {
            let f = Finding::new(RuleId::AclHostregNull, "ptr", format!("m{i}"), "x");
            let found = Found {
                call: "aclrtHostRegisterV2",
                args: super::super::Args::Text(""),
                finding: &f,
                action: Action::Error,
                outcome: super::super::Outcome::Rejected(100000),
                why: None,
            };
            record(found, Stack::EMPTY);
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
        assert!(newest.message.starts_with("[ACL-HOSTREG-NULL] aclrtHostRegisterV2(): `ptr`: m"), "{}", newest.message);
        assert!(get(CAPACITY).is_none());
    }
}
