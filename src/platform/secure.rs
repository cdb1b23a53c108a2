//! Secure execution: a process started set-user-ID or set-group-ID (or with file
//! capabilities) runs with privileges its caller does not have, and the caller chose its
//! environment. The kernel says so with `AT_SECURE` in the auxiliary vector; glibc then
//! ignores `LD_LIBRARY_PATH`, `LD_PRELOAD` and friends. regcheck does the same for its own
//! settings (see `Config::from_vars_secure`) and for the vendor's install roots.

/// Whether this process runs in secure-execution mode (`getauxval(AT_SECURE) != 0`).
/// No system call: the value is in the auxiliary vector.
pub fn secure_execution() -> bool {
    // SAFETY: getauxval has no preconditions; an absent entry reads as 0.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// An environment variable that names a path or a directory to search, or `None` when it
/// is unset, empty, or this process runs in secure-execution mode (the caller's choice of a
/// file must not be loaded or written with the program's privileges).
pub fn path_var(name: &str) -> Option<std::ffi::OsString> {
    if secure_execution() {
        return None;
    }
    std::env::var_os(name).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_process_is_not_privileged() {
        // cargo test runs the test binary as its caller: no set-user-ID bit, no capabilities.
        assert!(!secure_execution());
        assert_eq!(path_var("PATH"), std::env::var_os("PATH").filter(|v| !v.is_empty()));
        assert_eq!(path_var("REGCHECK_NO_SUCH_VARIABLE_EVER"), None);
    }
}
