//! Per-call logic. Every intercepted call runs in three phases (see [`run`]; a call with
//! nothing to record skips the third, [`run_unrecorded`]):
//! check (gather facts, evaluate rules, decide), forward (the vendor runs, no lock held,
//! regcheck not marked busy), record (update the registry from the vendor's answer).
//! A panic in check or record is caught: it is logged and the call is forwarded as is.

pub mod acl;
pub mod errmsg;
pub mod hixl;

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::{Mode, TestPanic};
use crate::report::{self, Outcome};
use crate::rules::{Action, Finding};
use crate::state::{self, Runtime};

thread_local! {
    static PANIC_AT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Install, once, a panic hook that keeps regcheck's own (caught) panics out of the host's
/// stderr: inside regcheck it only notes where the panic happened, for [`guarded`]'s log
/// line; anywhere else it defers to the hook that was there before.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if Busy::active() {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            let _ = PANIC_AT.try_with(|p| {
                if let Ok(mut p) = p.try_borrow_mut() {
                    *p = at;
                }
            });
        } else {
            previous(info);
        }
    }));
}

/// Marks the thread as running regcheck's own code; a call that re-enters regcheck
/// meanwhile goes straight to the vendor.
struct Busy;

impl Busy {
    fn enter() -> Busy {
        crate::callsite::set_busy(true);
        Busy
    }

    fn active() -> bool {
        crate::callsite::busy()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        crate::callsite::set_busy(false);
    }
}

fn panic_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Set once an internal failure may have left regcheck's records (registrations, allocations,
/// links) incomplete: from then on, rules that judge a call by those records warn instead of
/// rejecting, so that a gap in the records never blocks a valid call.
static RECORDS_UNCERTAIN: AtomicBool = AtomicBool::new(false);

/// Run `f`, catching a panic: logs it and returns `None`.
pub(crate) fn guarded<T>(call: &str, phase: &str, f: impl FnOnce() -> T) -> Option<T> {
    // Not a `Once`: a child forked while another thread installs the hook would wait for
    // that thread forever. The first thread installs it; the others go on without waiting.
    static HOOK: AtomicBool = AtomicBool::new(false);
    if !HOOK.load(Ordering::Relaxed) && !HOOK.swap(true, Ordering::Relaxed) {
        install_panic_hook();
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(p) => {
            RECORDS_UNCERTAIN.store(true, Ordering::Relaxed);
            let mut text = panic_text(p.as_ref());
            if let Ok(at) =
                PANIC_AT.try_with(|p| p.try_borrow_mut().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default())
            {
                if !at.is_empty() {
                    text = format!("{text} (at {at})");
                }
            }
            // The logger itself may be what failed: never let this path panic again.
            let _ = catch_unwind(AssertUnwindSafe(|| {
                log::error!(
                    target: "regcheck",
                    "internal failure in regcheck while {phase} {call}: {text}; the call is forwarded unchanged (please report this)"
                )
            }));
            None
        }
    }
}

fn forced_panic(rt: &Runtime, at: TestPanic) {
    if rt.config.test_panic == at {
        panic!("forced by REGCHECK_TEST_PANIC");
    }
}

/// One intercepted call: `check` returns `Ok(context)` to forward (the context goes to
/// `record`) or `Err(code)` to reject; `forward` calls the vendor; `record` sees its result.
#[inline(always)]
pub(crate) fn run<C, R>(
    call: &'static str,
    check: impl FnOnce(&'static Runtime) -> Result<C, R>,
    forward: impl FnOnce() -> R,
    record: impl FnOnce(&'static Runtime, C, &R),
) -> R {
    // Where regcheck's frames end, for a finding's call site: a local of this frame (the
    // check phase is inlined here).
    let frame_mark = 0u8;
    let (rt, context) = match check_phase(call, std::ptr::addr_of!(frame_mark) as usize, check) {
        Err(code) => return code,
        Ok(None) => return forward(),
        Ok(Some(checked)) => checked,
    };
    let ret = forward();
    let _busy = Busy::enter();
    guarded(call, "recording the result of", || {
        forced_panic(rt, TestPanic::Record);
        record(rt, context, &ret)
    });
    ret
}

/// [`run`] for a call with nothing to record (a look-up): no record phase.
#[inline(always)]
pub(crate) fn run_unrecorded<R>(
    call: &'static str,
    check: impl FnOnce(&'static Runtime) -> Result<(), R>,
    forward: impl FnOnce() -> R,
) -> R {
    let frame_mark = 0u8;
    match check_phase(call, std::ptr::addr_of!(frame_mark) as usize, check) {
        Err(code) => code,
        Ok(_) => forward(),
    }
}

/// The check phase: `Err(code)` rejects the call; `Ok(None)` forwards it with nothing to
/// record (regcheck re-entered, off, or failed); `Ok(Some(..))` forwards and records.
#[inline(always)]
fn check_phase<C, R>(
    call: &'static str,
    frame: usize,
    check: impl FnOnce(&'static Runtime) -> Result<C, R>,
) -> Result<Option<(&'static Runtime, C)>, R> {
    if Busy::active() {
        return Ok(None);
    }
    // Created once; only its creation can fail.
    let rt = match state::runtime_if_ready() {
        Some(rt) => rt,
        None => match guarded(call, "starting for", state::runtime) {
            Some(rt) => rt,
            None => return Ok(None),
        },
    };
    if rt.mode() == Mode::Off {
        return Ok(None);
    }
    // Two thread-local stores.
    crate::callsite::call_started(frame);
    let _busy = Busy::enter();
    state::report_fork();
    match guarded(call, "checking", || {
        forced_panic(rt, TestPanic::Check);
        check(rt)
    }) {
        Some(Ok(c)) => Ok(Some((rt, c))),
        Some(Err(code)) => Err(code),
        None => Ok(None),
    }
}

/// The decision on a call's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Forward,
    Reject(i64),
}

/// Log every finding at its rule's action and decide: the first finding whose action is
/// `error` rejects the call with its rule's code (in enforce mode).
///
/// A rejection needs certainty. A finding that judges the call by regcheck's records of
/// earlier calls is only a warning when those records may lack calls (after an internal
/// failure; without the `LD_AUDIT` module, whose absence lets `ctypes`/`dlsym` callers past;
/// when regcheck was loaded late): its message says why and how to make it sure. And a call
/// the vendor's own libraries make (`libcann_hixl.so` registering host memory with ACL) is the
/// vendor's: it is forwarded untouched, with a debug line.
pub fn decide(rt: &Runtime, call: &str, args: &str, findings: &[Finding]) -> Verdict {
    if findings.iter().all(|f| rt.action_for(f) == Action::Off) {
        return Verdict::Forward;
    }
    if crate::callsite::call_from_vendor() {
        log::debug!(
            target: "regcheck",
            "{call}({args}) is made by the vendor's own library ({}); forwarded untouched: {}",
            crate::callsite::caller_object().unwrap_or_default(),
            findings.iter().map(|f| f.rule.name()).collect::<Vec<_>>().join(", ")
        );
        return Verdict::Forward;
    }
    let uncertain = RECORDS_UNCERTAIN.load(Ordering::Relaxed);
    let tracking = crate::platform::audit::tracking();
    // The action of each finding, and why regcheck cannot be sure of it when that lowered it.
    let judged: Vec<(Action, Option<&'static str>)> = findings
        .iter()
        .map(|f| match rt.action_for(f) {
            Action::Error if uncertain && f.rule.judges_by_records() => {
                rt.note_once("records-uncertain", log::Level::Warn, || {
                    "after an internal failure, regcheck's records may be incomplete: rules that judge a call by them now warn instead of rejecting".to_string()
                });
                (Action::Warn, None)
            }
            Action::Error if !f.rule.records().whole(call, tracking) => (Action::Warn, tracking.gap()),
            // A warning by records that may lack calls says so too.
            a @ (Action::Warn | Action::Info) if !f.rule.records().whole(call, tracking) => (a, tracking.gap()),
            a => (a, None),
        })
        .collect();
    let reject = findings.iter().zip(&judged).find(|(_, (a, _))| *a == Action::Error).map(|(f, _)| f.reject_code());
    let outcome = match (reject, rt.mode()) {
        (Some(code), Mode::Enforce) => Outcome::Rejected(code),
        (Some(code), _) => Outcome::ReportOnly(code),
        (None, _) => Outcome::Forwarded,
    };
    for (f, (action, gap)) in findings.iter().zip(judged) {
        if action == Action::Off {
            continue;
        }
        match gap {
            None => {
                report::emit(call, args, f, action, outcome);
            }
            Some(gap) => {
                let rejects = rt.action_for(f) == Action::Error;
                let unsure =
                    Finding { problem: format!("{}; {}", f.problem, unsure_text(f, gap, rejects)), ..f.clone() };
                report::emit(call, args, &unsure, action, outcome);
            }
        }
    }
    match outcome {
        Outcome::Rejected(code) => Verdict::Reject(code),
        _ => Verdict::Forward,
    }
}

/// What a finding by records that may lack calls says: why regcheck cannot be sure, and (for
/// one that would have rejected) that it warns instead.
fn unsure_text(f: &Finding, gap: &str, rejects: bool) -> String {
    if rejects {
        format!(
            "regcheck cannot be sure of this ({gap}), so it warns instead of rejecting with {}: run the program under `regcheck run --audit` (LD_AUDIT=.../libregcheck_audit.so as well as LD_PRELOAD) and it rejects what it then knows",
            f.reject_code()
        )
    } else {
        format!(
            "regcheck cannot be sure of this ({gap}): run the program under `regcheck run --audit` (LD_AUDIT=.../libregcheck_audit.so as well as LD_PRELOAD) to know"
        )
    }
}
