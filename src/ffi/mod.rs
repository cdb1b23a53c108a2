//! The C ABI surface.
//!
//! - [`acl`]: the ACL runtime's own function names (interposers; not in our header).
//! - [`hixl`]: the mangled `hixl::Hixl` members and `HixlCS*` functions (not in our header).
//! - [`adxl`]: the mangled `adxl::AdxlEngine` members (not in our header).
//! - [`api`]: regcheck's own `regcheck_*` API, declared in `include/regcheck.h`.
//! - [`api_findings`]: its findings log (`regcheck_finding_*`), in the same header.
//! - [`api_annotate`]: annotations of memory regcheck could not see allocated (`regcheck_annotate_*`).
//!
//! Every exported function is thin: vendor-named ones call the front end, whose `run`
//! catches panics and forwards; `regcheck_*` ones wrap their body in [`boundary`].

/// cbindgen:ignore
#[macro_use]
mod members;
/// cbindgen:ignore
pub mod acl;
/// cbindgen:ignore
pub mod adxl;
pub mod api;
pub mod api_annotate;
pub mod api_findings;
/// cbindgen:ignore
pub mod dl;
/// cbindgen:ignore
pub mod errmsg;
/// cbindgen:ignore
pub mod hal;
/// cbindgen:ignore
pub mod hixl;
/// cbindgen:ignore
pub mod llm_datadist;

use std::panic::{catch_unwind, AssertUnwindSafe};

/// The front end's answer, returned by an exported `"C-unwind"` function (the C++ members,
/// the `HixlCS*` and LLM-DataDist functions) through an empty `asm!` statement after its call
/// into the front end: that call stays a call, never a jump. A `"C-unwind"` export may unwind,
/// so the compiler makes its one call a tail call (`jmp`), and the export leaves no frame of
/// its own on the stack; where regcheck is linked into the executable the call-site code
/// (`callsite::unwind_to_caller`), which tells regcheck's frames from the application's there
/// only by position (the one frame above the front end's is the export), then took the
/// application's frame for the export's and named the caller's caller (`Run` for the component
/// function that called `RegisterMem`). The `extern "C"` exports (ACL) keep their frame by
/// themselves: a call that may unwind from a function that may not needs an abort pad after it.
/// A member without an answer (a constructor, `Finalize`) calls `framed(())` after its call.
#[inline(always)]
pub(crate) fn framed<T>(answer: T) -> T {
    // SAFETY: an empty statement: it reads, writes and jumps nowhere; assumed to touch memory,
    // it stays after the call.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
    answer
}

/// The one thing regcheck does at load time: register its `fork()` handlers (a few
/// `pthread_atfork` calls; no I/O, no environment (neither `getenv` nor `environ`), no thread;
/// `tests/host.rs::nothing_runs_at_load_time` holds it). Registered later, on first use,
/// a handler can miss a fork another thread has already begun (glibc runs only the handlers
/// registered before that fork started), and the child inherits a lock held by a thread it
/// does not have. Registered here, before the application's threads exist, every fork runs
/// them. Order: the state's `prepare` handler runs first (glibc runs them last-registered
/// first), then the call-site lock's; the first-use registrations stay as a fallback.
extern "C" fn register_fork_handlers_at_load() {
    crate::platform::procfd::install_fork_handlers();
    crate::report::findings::install_fork_handlers();
    crate::callsite::install_fork_handlers();
    crate::state::install_fork_handlers();
}

#[used]
#[link_section = ".init_array"]
static REGISTER_FORK_HANDLERS: extern "C" fn() = register_fork_handlers_at_load;

/// At unload: a program linked with the vendor's library ahead of regcheck never calls it;
/// say so (once, on stderr) when the process ends.
extern "C" fn warn_bypass_at_unload() {
    let _ = catch_unwind(crate::frontend::warn_bypass_at_exit);
}

#[used]
#[link_section = ".fini_array"]
static WARN_BYPASS_AT_UNLOAD: extern "C" fn() = warn_bypass_at_unload;

/// The panic boundary of the `regcheck_*` API: runs `f`, and on a panic logs it and returns
/// `fallback`. No panic crosses into C.
pub(crate) fn boundary<T>(name: &str, fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(|| {
        #[cfg(test)]
        if tests::FORCE_PANIC.with(std::cell::Cell::get) {
            panic!("forced by a unit test inside {name}");
        }
        f()
    })) {
        Ok(v) => v,
        Err(_) => {
            let _ = catch_unwind(|| log::error!(target: "regcheck", "internal failure in {name}; returning an error"));
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::api::*;
    use std::cell::Cell;
    use std::mem::MaybeUninit;

    thread_local! {
        /// Set by a test: every `boundary` on this thread panics inside, before its body.
        pub(super) static FORCE_PANIC: Cell<bool> = const { Cell::new(false) };
    }

    /// Every `regcheck_*` function, with a panic forced inside it, returns its documented
    /// failure value to the caller instead of unwinding into C. The list is checked against
    /// the functions `include/regcheck.h` declares.
    #[test]
    fn a_panic_in_any_regcheck_function_returns_its_failure_value() {
        let mut called: Vec<&str> = Vec::new();
        FORCE_PANIC.with(|f| f.set(true));
        let mut info = MaybeUninit::<regcheck_rule_info>::uninit();
        let mut env = MaybeUninit::<regcheck_environment>::uninit();
        let mut finding = MaybeUninit::<regcheck_finding>::uninit();
        let mut report: *mut regcheck_report = std::ptr::null_mut();
        let mut buf = [0 as std::ffi::c_char; 64];
        let internal = |s: regcheck_status| matches!(s, regcheck_status::InternalError);
        // SAFETY: valid arguments for each function; the forced panic happens before any use.
        unsafe {
            let mut check = |name, ok: bool| {
                called.push(name);
                assert!(ok, "{name} did not return its failure value after a panic");
            };
            check("regcheck_version", regcheck_version().is_null());
            check("regcheck_status_str", std::ffi::CStr::from_ptr(regcheck_status_str(0)).to_bytes() == b"?");
            check("regcheck_rule_count", regcheck_rule_count() == 0);
            check("regcheck_rule_get", internal(regcheck_rule_get(0, info.as_mut_ptr())));
            check("regcheck_rule_find", internal(regcheck_rule_find(c"ACL-HOSTREG-ALIGN".as_ptr(), info.as_mut_ptr())));
            check("regcheck_rule_set_action", internal(regcheck_rule_set_action(c"ACL-HOSTREG-ALIGN".as_ptr(), 0)));
            check("regcheck_get_mode", matches!(regcheck_get_mode(), regcheck_mode::Enforce));
            check(
                "regcheck_check_host_register",
                internal(regcheck_check_host_register(std::ptr::null(), 4096, 0, &mut report)) && report.is_null(),
            );
            check("regcheck_report_count", regcheck_report_count(std::ptr::null()) == 0);
            check("regcheck_report_get", internal(regcheck_report_get(std::ptr::null(), 0, finding.as_mut_ptr())));
            regcheck_report_free(std::ptr::null_mut());
            check("regcheck_report_free", true);
            check("regcheck_last_rejection", regcheck_last_rejection(buf.as_mut_ptr(), buf.len()) == 0);
            check("regcheck_environment_get", internal(regcheck_environment_get(env.as_mut_ptr())));
            check("regcheck_live_host_registrations", regcheck_live_host_registrations() == 0);
            check("regcheck_live_hixl_registrations", regcheck_live_hixl_registrations() == 0);
            let mut site = MaybeUninit::<regcheck_call_site>::uninit();
            check("regcheck_last_rejection_site", internal(regcheck_last_rejection_site(0, site.as_mut_ptr())));
            check("regcheck_last_rejection_rule", regcheck_last_rejection_rule() == 0);
            let (mut wrong, mut right) = (std::ptr::null(), std::ptr::null());
            check(
                "regcheck_rule_example",
                internal(regcheck_rule_example(c"ACL-HOSTREG-ALIGN".as_ptr(), &mut wrong, &mut right))
                    && wrong.is_null(),
            );
            use super::api_findings::*;
            let mut logged = MaybeUninit::<regcheck_logged_finding>::uninit();
            check("regcheck_logged_finding_size", regcheck_logged_finding_size() == 0);
            check("regcheck_findings_last_seq", regcheck_findings_last_seq() == 0);
            check("regcheck_findings_count", regcheck_findings_count() == 0);
            check("regcheck_findings_dropped", regcheck_findings_dropped() == 0);
            check("regcheck_finding_get", internal(regcheck_finding_get(0, logged.as_mut_ptr())));
            check("regcheck_finding_next", internal(regcheck_finding_next(0, logged.as_mut_ptr())));
            use super::api_annotate::*;
            let p = 0x1000 as *const std::ffi::c_void;
            check("regcheck_annotate_malloc_host", internal(regcheck_annotate_malloc_host(p, 4096)));
            check("regcheck_annotate_device_malloc", internal(regcheck_annotate_device_malloc(p, 4096, 2)));
            check("regcheck_annotate_free", internal(regcheck_annotate_free(p)));
        }
        FORCE_PANIC.with(|f| f.set(false));
        // and without the forced panic, the same calls work
        assert!(!regcheck_version().is_null());
        assert!(regcheck_rule_count() > 0);

        let header = include_str!("../../include/regcheck.h");
        let mut declared: Vec<&str> = header
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("regcheck_"))
            .filter(|w| header.contains(&format!("{w}(")))
            .collect();
        declared.sort_unstable();
        declared.dedup();
        called.sort_unstable();
        assert_eq!(called, declared, "every function of include/regcheck.h is tried here");
    }

    #[test]
    fn boundary_returns_the_fallback_and_logs_instead_of_unwinding() {
        assert_eq!(super::boundary("t", 7, || -> i32 { panic!("inside") }), 7);
        assert_eq!(super::boundary("t", 7, || 3), 3);
    }
}
