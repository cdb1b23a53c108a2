//! Locked-memory limits: `RLIMIT_MEMLOCK`, CAP_IPC_LOCK, and what is locked already.

/// CAP_IPC_LOCK's bit in the capability sets (linux/capability.h).
pub const CAP_IPC_LOCK: u32 = 14;

/// What the process may lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemlockInfo {
    /// The soft `RLIMIT_MEMLOCK` in bytes; `None` when unlimited.
    pub limit: Option<u64>,
    /// CAP_IPC_LOCK is in the effective set (the limit does not apply).
    pub cap_ipc_lock: bool,
    /// `VmLck` of /proc/self/status, bytes already locked.
    pub locked_now: u64,
}

/// Probe the calling thread's locked-memory situation.
///
/// * `limit`: the soft `getrlimit(RLIMIT_MEMLOCK)`; `None` for `RLIM_INFINITY` (and, as the
///   safe side, when the call fails).
/// * `cap_ipc_lock`: bit 14 of `CapEff:` in `/proc/thread-self/status` (capabilities are
///   per thread), else `/proc/self/status`, else the `capget` syscall.
/// * `locked_now`: `VmLck:` of the same file, in bytes (0 when unreadable).
pub fn probe() -> MemlockInfo {
    let status = std::fs::read_to_string("/proc/thread-self/status")
        .or_else(|_| std::fs::read_to_string("/proc/self/status"))
        .ok();
    let (cap_from_status, locked) = status.as_deref().map(parse_status).unwrap_or((None, None));
    let cap_ipc_lock = cap_from_status.or_else(capget_ipc_lock).unwrap_or(false);
    MemlockInfo { limit: rlimit_memlock(), cap_ipc_lock, locked_now: locked.unwrap_or(0) }
}

/// The soft `RLIMIT_MEMLOCK`; `None` when unlimited or unknown.
fn rlimit_memlock() -> Option<u64> {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `rl` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut rl) } != 0 {
        return None;
    }
    if rl.rlim_cur == libc::RLIM_INFINITY {
        None
    } else {
        Some(rlim_to_u64(rl.rlim_cur))
    }
}

/// `rlim_t` is `u64` on 64-bit targets but 32 bits on some 32-bit ones.
#[allow(clippy::useless_conversion)]
fn rlim_to_u64(v: libc::rlim_t) -> u64 {
    u64::from(v)
}

/// CAP_IPC_LOCK in the calling thread's effective set, via `capget(2)`.
fn capget_ipc_lock() -> Option<bool> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = Header { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [Data { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: capget with a version-3 header writes two `Data` entries; both are valid,
    // writable and laid out as the kernel's __user_cap_header_struct / __user_cap_data_struct.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header as *mut Header, data.as_mut_ptr()) };
    (rc == 0).then(|| data[0].effective & (1 << CAP_IPC_LOCK) != 0)
}

/// Parse a `/proc/<pid>/status` text: (CAP_IPC_LOCK in `CapEff:`, `VmLck:` in bytes).
/// Each is `None` when its line is missing or malformed (kernel threads have no `VmLck:`).
pub fn parse_status(text: &str) -> (Option<bool>, Option<u64>) {
    let mut cap = None;
    let mut locked = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("CapEff:") {
            cap = u64::from_str_radix(v.trim(), 16).ok().map(|bits| bits & (1 << CAP_IPC_LOCK) != 0);
        } else if let Some(v) = line.strip_prefix("VmLck:") {
            locked = parse_kb(v);
        }
    }
    (cap, locked)
}

/// `"   1234 kB"` -> 1234 * 1024.
fn parse_kb(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some(unit) if unit.eq_ignore_ascii_case("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// `Some(limit)` when locking `extra_bytes` more would exceed the soft limit: the kernel's
/// rule is `locked_now + extra > limit` unless CAP_IPC_LOCK is held. `None` when it fits,
/// the limit is unlimited, or the capability makes the limit moot.
///
/// The kernel locks whole pages, so pass `extra_bytes` rounded up to the page size.
pub fn would_exceed(info: MemlockInfo, extra_bytes: u64) -> Option<u64> {
    if info.cap_ipc_lock {
        return None;
    }
    let limit = info.limit?;
    (info.locked_now.saturating_add(extra_bytes) > limit).then_some(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tcat\nUmask:\t0022\nState:\tR (running)\n\
VmPeak:\t    8332 kB\nVmSize:\t    8332 kB\nVmLck:\t      12 kB\nVmPin:\t       0 kB\n\
VmRSS:\t    1920 kB\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n\
CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n";

    #[test]
    fn parses_root_status() {
        assert_eq!(parse_status(STATUS), (Some(true), Some(12 * 1024)));
    }

    #[test]
    fn parses_unprivileged_status() {
        let text = "VmLck:\t       0 kB\r\nCapEff:\t0000000000000000\r\n";
        assert_eq!(parse_status(text), (Some(false), Some(0)));
        // Only CAP_IPC_LOCK (bit 14 = 0x4000).
        let text = "CapEff:\t0000000000004000\nVmLck:\t 4 kB\n";
        assert_eq!(parse_status(text), (Some(true), Some(4096)));
        // Every bit but 14.
        let text = "CapEff:\t000001ffffffbfff\n";
        assert_eq!(parse_status(text), (Some(false), None));
    }

    #[test]
    fn tolerates_missing_and_bad_lines() {
        assert_eq!(parse_status(""), (None, None));
        assert_eq!(parse_status("CapEff:\tzz\nVmLck:\tlots kB\n"), (None, None));
        assert_eq!(parse_status("VmLck:\t1 MB\n"), (None, None));
    }

    #[test]
    fn would_exceed_rules() {
        let info = MemlockInfo { limit: Some(64 * 1024), cap_ipc_lock: false, locked_now: 8 * 1024 };
        assert_eq!(would_exceed(info, 56 * 1024), None);
        assert_eq!(would_exceed(info, 56 * 1024 + 4096), Some(64 * 1024));
        assert_eq!(would_exceed(info, u64::MAX), Some(64 * 1024));
        let capable = MemlockInfo { cap_ipc_lock: true, ..info };
        assert_eq!(would_exceed(capable, u64::MAX), None);
        let unlimited = MemlockInfo { limit: None, ..info };
        assert_eq!(would_exceed(unlimited, u64::MAX), None);
        let zero = MemlockInfo { limit: Some(0), cap_ipc_lock: false, locked_now: 0 };
        assert_eq!(would_exceed(zero, 0), None);
        assert_eq!(would_exceed(zero, 1), Some(0));
    }

    #[test]
    fn probe_matches_the_process() {
        let info = probe();
        let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: valid, writable rlimit.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut rl) }, 0);
        if rl.rlim_cur == libc::RLIM_INFINITY {
            assert_eq!(info.limit, None);
        } else {
            assert_eq!(info.limit, Some(rlim_to_u64(rl.rlim_cur)));
        }
        assert_eq!(capget_ipc_lock(), Some(info.cap_ipc_lock));
    }
}
