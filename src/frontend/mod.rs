//! Per-call logic. Every intercepted call runs in three phases (see [`run`]; a call with
//! nothing to record skips the third, [`run_unrecorded`]):
//! check (gather facts, evaluate rules, decide), forward (the vendor runs, no lock held,
//! regcheck not marked busy), record (update the registry from the vendor's answer).
//! A panic in check or record is caught: it is logged and the call is forwarded as is.

pub mod acl;
pub mod errmsg;
pub mod hal;
pub mod hixl;

use std::any::Any;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use crate::config::{Mode, TestPanic};
use crate::report::{self, Args, Outcome};
use crate::rules::decision::{self, Basis, Caller, Case, Decision, Enforcement, Gap, Harm, Level, Why};
use crate::rules::{Action, Finding, Records};
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
    run_maybe(call, |rt| check(rt).map(Some), forward, record)
}

/// [`run`] for a call whose record phase has something to do only when its check says so:
/// `Ok(None)` forwards the call with no record phase (on a hot path, its guard and the
/// re-entrancy mark are not paid for nothing).
#[inline(always)]
pub(crate) fn run_maybe<C, R>(
    call: &'static str,
    check: impl FnOnce(&'static Runtime) -> Result<Option<C>, R>,
    forward: impl FnOnce() -> R,
    record: impl FnOnce(&'static Runtime, C, &R),
) -> R {
    // Where regcheck's frames end, for a finding's call site: a local of this frame (the
    // check phase is inlined here).
    let frame_mark = 0u8;
    let (rt, context) = match check_phase(call, std::ptr::addr_of!(frame_mark) as usize, check) {
        Err(code) => return code,
        Ok(None | Some((_, None))) => return forward(),
        Ok(Some((rt, Some(c)))) => (rt, c),
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
    evaluate_tracking(rt);
    // Two thread-local stores.
    crate::callsite::call_started(frame, call);
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

/// Which kind of API a call belongs to: what decides whether the records of its own earlier
/// calls can lack calls ([`crate::rules::Records::Own`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// C functions (the ACL runtime, the HixlCS API): a caller can reach them through `dlsym`
    /// or `ctypes`, past `LD_PRELOAD`.
    C,
    /// C++ members (`hixl::Hixl`): bound by the dynamic linker, never looked up by name.
    Cpp,
}

/// Why the records a rule judges by may lack calls, in this process now (`None`: whole).
fn gap(records: Records, api: Api) -> Option<Gap> {
    if RECORDS_UNCERTAIN.load(Ordering::Relaxed) {
        return Some(Gap::InternalFailure);
    }
    if records == Records::Own && api == Api::Cpp {
        return None;
    }
    let base = match BASE_GAP.load(Ordering::Relaxed) {
        NOT_EVALUATED => Some(Gap::NotInterposed),
        g => decode(g),
    };
    base.or(DEEPBIND_GAP.load(Ordering::Relaxed).then_some(Gap::DeepBind))
}

const NOT_EVALUATED: u8 = 0;
const WHOLE: u8 = 1;

fn encode(g: Option<Gap>) -> u8 {
    match g {
        None => WHOLE,
        Some(Gap::NotInterposed) => 2,
        Some(Gap::LoadedLate) => 3,
        Some(Gap::Bypassed) => 4,
        Some(Gap::DeepBind) => 5,
        Some(Gap::InternalFailure) => 6,
    }
}

fn decode(v: u8) -> Option<Gap> {
    match v {
        2 => Some(Gap::NotInterposed),
        3 => Some(Gap::LoadedLate),
        4 => Some(Gap::Bypassed),
        5 => Some(Gap::DeepBind),
        6 => Some(Gap::InternalFailure),
        _ => None,
    }
}

/// What the process's set-up leaves out of regcheck's records ([`evaluate_tracking`]), as
/// [`encode`]d; [`NOT_EVALUATED`] before the first intercepted call.
static BASE_GAP: AtomicU8 = AtomicU8::new(NOT_EVALUATED);
/// A library opened with `RTLD_DEEPBIND` binds the vendor's functions itself.
static DEEPBIND_GAP: AtomicBool = AtomicBool::new(false);
/// How many `RTLD_DEEPBIND` opens [`DEEPBIND_GAP`] accounts for.
static DEEPBIND_SEEN: AtomicUsize = AtomicUsize::new(0);

/// Names regcheck interposes, one per vendor library, asked of the global scope to see whether
/// the vendor's definition comes first.
const PROBES: [&CStr; 3] = [c"aclrtHostRegisterV2", c"aclrtMallocHost", c"HixlCSClientCreate"];

/// The vendor's function that the global scope gives for a name regcheck interposes, ahead of
/// regcheck's own (the program was linked with the vendor's library first): its name and
/// object. Loader calls: never under a regcheck lock.
pub fn bypassed_by() -> Option<(&'static str, String)> {
    let boot = crate::platform::dynsym::bootstrap();
    // regcheck opened after the program started: not a matter of link order (loaded late).
    if boot.after_c_library {
        return None;
    }
    let own = boot.syms?;
    PROBES.iter().find_map(|name| {
        // SAFETY: a plain look-up in the global scope (regcheck's own dlsym lets the C
        // library answer its own look-ups).
        let g = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        if g.is_null() || own.holds(g as usize) || !crate::vendor::is_vendor_definition(name, g) {
            return None;
        }
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr reads the loader's tables; info is a valid out-pointer.
        let object = if unsafe { libc::dladdr(g, &mut info) } != 0 && !info.dli_fname.is_null() {
            unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned()
        } else {
            "the vendor's library".to_string()
        };
        Some((name.to_str().unwrap_or("?"), object))
    })
}

/// The warning for a program whose calls bind to the vendor ahead of regcheck.
pub fn bypass_warning(name: &str, object: &str) -> String {
    format!(
        "warning: {object} comes before libregcheck.so in this program's link order: the program's calls to the vendor's functions ({name} among them) go to the vendor directly and are not checked. Link with -lregcheck before the vendor's library (-lregcheck -lascendcl), or load it with LD_PRELOAD=.../libregcheck.so"
    )
}

/// Find out, once, whether regcheck's records are whole (its own `dlsym` answers look-ups by
/// name, or the audit module redirects them; it was loaded with the program; the vendor is
/// not ahead of it), and, at every new `RTLD_DEEPBIND` open, whether that library binds the
/// vendor itself. Loader calls: called with no regcheck lock held. Two loads on every call
/// after the first (the slow paths are out of line).
#[inline(always)]
fn evaluate_tracking(rt: &Runtime) {
    if BASE_GAP.load(Ordering::Relaxed) == NOT_EVALUATED {
        evaluate_base_gap(rt);
    }
    if crate::platform::audit::DEEPBIND_OPENED.count() > DEEPBIND_SEEN.load(Ordering::Relaxed) {
        note_deepbind_bypass(rt);
    }
}

#[cold]
#[inline(never)]
fn note_deepbind_bypass(rt: &Runtime) {
    if let Some(name) = new_deepbind_bypass() {
        rt.note_once("deepbind", log::Level::Warn, || deepbind_warning(&name).replacen("warning: ", "", 1));
    }
}

/// Whether regcheck's records are whole, found once ([`BASE_GAP`]).
#[cold]
#[inline(never)]
fn evaluate_base_gap(rt: &Runtime) {
    let t = crate::platform::audit::tracking();
    let base = if t.audited {
        (!t.at_start).then_some(Gap::LoadedLate)
    } else if !crate::platform::dynsym::interposes() {
        Some(if crate::platform::dynsym::bootstrap().after_c_library { Gap::LoadedLate } else { Gap::NotInterposed })
    } else {
        None
    };
    let base = match (base, bypassed_by()) {
        (_, Some((name, object))) => {
            rt.note_once("bypassed", log::Level::Warn, || bypass_warning(name, &object).replacen("warning: ", "", 1));
            Some(Gap::Bypassed)
        }
        (Some(Gap::NotInterposed), None) => {
            rt.note_once("not-interposed", log::Level::Info, || {
                format!("{}: findings that rest on its records are warnings only", Gap::NotInterposed.reason())
            });
            Some(Gap::NotInterposed)
        }
        (base, None) => base,
    };
    BASE_GAP.store(encode(base), Ordering::Relaxed);
}

/// The warning for a library opened with `RTLD_DEEPBIND` that binds the vendor itself.
fn deepbind_warning(name: &str) -> String {
    format!("warning: {name} was opened with RTLD_DEEPBIND and binds the vendor's functions itself: its calls go to the vendor without regcheck, so findings that rest on regcheck's records are warnings only from then on; run under `regcheck run --audit` to check them")
}

/// The first library opened with `RTLD_DEEPBIND` since the last look that binds the vendor
/// itself (the audit module redirects those bindings: then none). Sets [`DEEPBIND_GAP`].
fn new_deepbind_bypass() -> Option<String> {
    let opened = crate::platform::audit::DEEPBIND_OPENED.count();
    // A load first: the swap, a write to shared memory, only when a library was opened since.
    if opened <= DEEPBIND_SEEN.load(Ordering::Relaxed) {
        return None;
    }
    let seen = DEEPBIND_SEEN.swap(opened, Ordering::Relaxed);
    if opened <= seen || crate::platform::audit::tracking().audited {
        return None;
    }
    let mut found = None;
    for i in seen..opened {
        let file = crate::platform::audit::DEEPBIND_OPENED.get(i);
        if file.is_none_or(binds_the_vendor) {
            DEEPBIND_GAP.store(true, Ordering::Relaxed);
            found.get_or_insert_with(|| {
                file.map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "a library".into())
            });
        }
    }
    found
}

/// Whether the library `file` (opened with `RTLD_DEEPBIND`) finds a vendor function in its own
/// scope, not regcheck's (also when it cannot be found again: then it may).
fn binds_the_vendor(file: &CStr) -> bool {
    let Some(own) = crate::platform::dynsym::bootstrap().syms else { return true };
    // SAFETY: RTLD_NOLOAD opens nothing new; the handle is closed again.
    let h = unsafe { libc::dlopen(file.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if h.is_null() {
        return true;
    }
    let found = PROBES.iter().any(|name| {
        // SAFETY: a look-up in the library's own scope.
        let p = unsafe { libc::dlsym(h, name.as_ptr()) };
        !p.is_null() && !own.holds(p as usize)
    });
    // SAFETY: the handle was opened above.
    unsafe { libc::dlclose(h) };
    found
}

/// At unload (the process's exit): a program that never called regcheck because the vendor's
/// library came first in its link order is told so, once; so is a library opened with
/// `RTLD_DEEPBIND` that bound the vendor itself, if not said yet.
pub fn warn_bypass_at_exit() {
    if Busy::active() {
        return;
    }
    if BASE_GAP.load(Ordering::Relaxed) == NOT_EVALUATED {
        if let Some((name, object)) = bypassed_by() {
            report::write_notice("warning", &bypass_warning(name, &object));
        }
    }
    if let Some(name) = new_deepbind_bypass() {
        report::write_notice("warning", &deepbind_warning(&name));
    }
}

/// Decide on a call's findings ([`crate::rules::decision`]), log each as decided, and say
/// whether the call is rejected: with the code of the first finding that rejects.
///
/// Who made the call is asked only when it matters: for a finding that would not crash, which
/// is the vendor's business on its own calls.
pub fn decide(rt: &Runtime, api: Api, call: &str, args: Args<'_>, findings: &[Finding]) -> Verdict {
    decide_as(rt, api, call, args, findings, None)
}

/// [`decide`] for a call regcheck left to the vendor, which refused it with `code`: the
/// findings say why (logged and counted as decided), and the vendor's answer stands.
#[cold]
pub fn explain_refusal(rt: &Runtime, api: Api, call: &str, args: Args<'_>, findings: &[Finding], code: i64) {
    let _ = decide_as(rt, api, call, args, findings, Some(code));
}

fn decide_as(
    rt: &Runtime,
    api: Api,
    call: &str,
    args: Args<'_>,
    findings: &[Finding],
    refused: Option<i64>,
) -> Verdict {
    let severities: Few<Action> = findings.iter().map(|f| rt.action_for(f)).collect();
    if severities.iter().all(|a| *a == Action::Off) {
        return Verdict::Forward;
    }
    let mode = if rt.mode() == Mode::Report { Enforcement::Report } else { Enforcement::Enforce };
    let mut caller = None;
    // On the vendor's own call, a finding the vendor fails itself (a fact, in the vendor's
    // order before the others) means the call never gets as far as what would crash.
    let mut vendor_fails_first = false;
    let decisions: Few<Decision> = findings
        .iter()
        .zip(&severities)
        .map(|(f, &severity)| {
            let info = f.rule.info();
            let asks_caller = severity != Action::Off && info.harm != Harm::Crash;
            let caller = if asks_caller {
                *caller.get_or_insert_with(|| {
                    if crate::callsite::call_from_vendor() {
                        Caller::Vendor
                    } else {
                        Caller::Application
                    }
                })
            } else {
                Caller::Application
            };
            let gap = match info.basis {
                Basis::Facts => None,
                Basis::Records { of, .. } => gap(of, api),
            };
            let case = Case { severity, basis: info.basis, evidence: f.evidence, harm: info.harm, caller, gap, mode };
            if info.harm == Harm::Crash && vendor_fails_first {
                return decision::decide(&Case { harm: Harm::Fails, caller: Caller::Vendor, ..case });
            }
            let d = decision::decide(&case);
            if caller == Caller::Vendor
                && info.harm == Harm::Fails
                && severity == Action::Error
                && d.evidence == decision::Evidence::Certain
            {
                vendor_fails_first = true;
            }
            d
        })
        .collect();
    if decisions.iter().any(|d| {
        matches!(
            d.why,
            Some(Why::Seen { gap: Gap::InternalFailure, .. } | Why::Unknown { gap: Gap::InternalFailure, .. })
        )
    }) {
        rt.note_once("records-uncertain", log::Level::Warn, || {
            "after an internal failure, regcheck's records may be incomplete: findings judged by them are no longer enforced".to_string()
        });
    }
    // A suppression (REGCHECK_SUPPRESSIONS) silences a finding: never rejected, logged at debug.
    // Asked only when a suppression names one of the rules (one atomic load each otherwise):
    // a call with no suppression in play allocates nothing here.
    let suppressed: Vec<Option<String>> = if findings
        .iter()
        .zip(&decisions)
        .any(|(f, d)| d.level > Level::Debug && crate::report::suppression_names(f.rule))
    {
        findings
            .iter()
            .zip(&decisions)
            .map(|(f, d)| if d.level > Level::Debug { report::suppressed(f) } else { None })
            .collect()
    } else {
        Vec::new()
    };
    let decisions: Few<Decision> = decisions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if suppressed.get(i).is_some_and(|s| s.is_some()) {
                Decision { reject: false, counts: false, why: None, ..*d }
            } else {
                *d
            }
        })
        .collect();
    let reject = findings.iter().zip(&decisions).find(|(_, d)| d.reject).map(|(f, _)| f.reject_code());
    let report_only =
        findings.iter().zip(&decisions).find(|(_, d)| d.why == Some(Why::ReportMode)).map(|(f, _)| f.reject_code());
    let outcome = match (refused, reject, report_only) {
        (Some(code), _, _) => Outcome::Refused(code),
        (None, Some(code), _) => Outcome::Rejected(code),
        (None, None, Some(code)) => Outcome::ReportOnly(code),
        (None, None, None) => Outcome::Forwarded,
    };
    for (i, (f, d)) in findings.iter().zip(&decisions).enumerate() {
        let by = suppressed.get(i).and_then(|s| s.as_ref());
        match d.level {
            Level::Off => {}
            level if by.is_some() => {
                report::emit_suppressed(call, args, f, level.action(), by.map_or("", |b| b.as_str()))
            }
            Level::Debug => {
                if log::log_enabled!(target: "regcheck", log::Level::Debug) {
                    log::debug!(
                        target: "regcheck",
                        "[{}] {call}({args}) is made by the vendor's own library ({}): {}: {}",
                        f.rule.name(),
                        crate::callsite::caller_object().unwrap_or_default(),
                        f.problem,
                        Why::VendorsOwn.text(f.reject_code())
                    );
                }
            }
            level => {
                // On a call another finding rejects, "it forwards the call" would be untrue.
                let rejected = matches!(outcome, Outcome::Rejected(_));
                let why = d.why.filter(|w| *w != Why::ReportMode && !rejected);
                report::emit(call, args, f, level.action(), outcome, why);
            }
        }
    }
    match outcome {
        Outcome::Rejected(code) => Verdict::Reject(code),
        _ => Verdict::Forward,
    }
}

/// Up to [`Few::INLINE`] values kept on the stack, more on the heap: what a call's findings are
/// decided into ([`decide`]), so that a call with findings allocates nothing for it.
enum Few<T: Copy> {
    Inline(usize, [std::mem::MaybeUninit<T>; 8]),
    Heap(Vec<T>),
}

impl<T: Copy> Few<T> {
    const INLINE: usize = 8;
}

impl<T: Copy> FromIterator<T> for Few<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut it = iter.into_iter();
        let mut buf = [std::mem::MaybeUninit::uninit(); 8];
        let mut n = 0;
        for v in it.by_ref() {
            if n == Self::INLINE {
                // SAFETY: the first `n` elements were written above.
                let mut heap: Vec<T> = buf.iter().map(|b| unsafe { b.assume_init() }).collect();
                heap.push(v);
                heap.extend(it);
                return Few::Heap(heap);
            }
            buf[n].write(v);
            n += 1;
        }
        Few::Inline(n, buf)
    }
}

impl<T: Copy> std::ops::Deref for Few<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            // SAFETY: the first `n` elements are initialised (`from_iter`), and `T` is `Copy`
            // (nothing to drop).
            Few::Inline(n, buf) => unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<T>(), *n) },
            Few::Heap(v) => v,
        }
    }
}

impl<'a, T: Copy> IntoIterator for &'a Few<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod few_tests {
    use super::Few;

    #[test]
    fn few_holds_any_number_in_order() {
        for n in [0usize, 1, 7, 8, 9, 20] {
            let few: Few<usize> = (0..n).collect();
            assert_eq!(&*few, (0..n).collect::<Vec<_>>().as_slice());
            assert_eq!(matches!(few, Few::Heap(_)), n > Few::<usize>::INLINE);
        }
    }
}
