//! Per-call logic. Every intercepted call runs in three phases (see [`run`]):
//! check (gather facts, evaluate rules, decide), forward (the vendor runs, no lock held,
//! regcheck not marked busy), record (update the registry from the vendor's answer).
//! A panic in check or record is caught: it is logged and the call is forwarded as is.

pub mod acl;
pub mod hixl;

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::config::{Mode, TestPanic};
use crate::report::{self, Outcome};
use crate::rules::{Action, Finding};
use crate::state::{self, Runtime};

thread_local! {
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// Marks the thread as running regcheck's own code; a call that re-enters regcheck
/// meanwhile goes straight to the vendor.
struct Busy;

impl Busy {
    fn enter() -> Busy {
        let _ = BUSY.try_with(|b| b.set(true));
        Busy
    }

    fn active() -> bool {
        BUSY.try_with(|b| b.get()).unwrap_or(true)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = BUSY.try_with(|b| b.set(false));
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

/// Run `f`, catching a panic: logs it and returns `None`.
pub(crate) fn guarded<T>(call: &str, phase: &str, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(p) => {
            let text = panic_text(p.as_ref());
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
pub(crate) fn run<C, R>(
    call: &'static str,
    check: impl FnOnce(&'static Runtime) -> Result<C, R>,
    forward: impl FnOnce() -> R,
    record: impl FnOnce(&'static Runtime, C, &R),
) -> R {
    if Busy::active() {
        return forward();
    }
    let Some(rt) = guarded(call, "starting for", state::runtime) else { return forward() };
    if rt.mode() == Mode::Off {
        return forward();
    }
    let context = {
        let _busy = Busy::enter();
        state::report_fork();
        match guarded(call, "checking", || {
            forced_panic(rt, TestPanic::Check);
            check(rt)
        }) {
            Some(Ok(c)) => Some(c),
            Some(Err(code)) => return code,
            None => None,
        }
    };
    let ret = forward();
    if let Some(c) = context {
        let _busy = Busy::enter();
        guarded(call, "recording the result of", || {
            forced_panic(rt, TestPanic::Record);
            record(rt, c, &ret)
        });
    }
    ret
}

/// The decision on a call's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Forward,
    Reject(i64),
}

/// Log every finding at its rule's action and decide: the first finding whose action is
/// `error` rejects the call with its rule's code (in enforce mode).
pub fn decide(rt: &Runtime, call: &str, args: &str, findings: &[Finding]) -> Verdict {
    let reject = findings.iter().find(|f| rt.action(f.rule) == Action::Error).map(Finding::reject_code);
    let outcome = match (reject, rt.mode()) {
        (Some(code), Mode::Enforce) => Outcome::Rejected(code),
        (Some(code), _) => Outcome::ReportOnly(code),
        (None, _) => Outcome::Forwarded,
    };
    for f in findings {
        let action = rt.action(f.rule);
        if action != Action::Off {
            report::emit(call, args, f, action, outcome);
        }
    }
    match outcome {
        Outcome::Rejected(code) => Verdict::Reject(code),
        _ => Verdict::Forward,
    }
}
