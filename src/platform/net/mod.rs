//! Connections peers hold to a port of this process: the process's own ESTABLISHED TCP
//! sockets with that local port.
//!
//! A HIXL engine initialised as `ip:port` listens there for its peers' control connections;
//! the sockets it accepted (local port `port`, ESTABLISHED) are peers linked to it, possibly
//! from other processes (regcheck sees no call of theirs).
//!
//! Two ways to find them, each exact:
//!
//! * ask the kernel through sock_diag netlink ([`sockdiag`]) for the ESTABLISHED TCP sockets
//!   (IPv4 and IPv6) whose local port is `port`: one request on a socket kept open, filtered
//!   in the kernel, three system calls in all (with the `fstat` that proves the kept socket is
//!   still regcheck's). The answer covers the whole network namespace,
//!   not this process. None (the usual answer: memory is registered before peers connect)
//!   means none of this process's either. When there are some, the ones that are this
//!   process's are picked by inode: one `fstat` per descriptor of `/proc/self/fd`. Other
//!   processes' sockets with the same local port are not links to this engine (another
//!   service bound to the same port on another address, as with one engine per NIC address;
//!   a client that chose its source port with `bind`): counting them would warn about peers
//!   this engine does not have. That walk is only taken when the kernel names such sockets,
//!   which is mostly when a rule is about to report them.
//! * walk `/proc/self/fd` with `getsockname` and `TCP_INFO` on each socket: about a system
//!   call per open descriptor, no walk of the system's TCP tables (`/proc/net/tcp` takes
//!   milliseconds).
//!
//! Fewer system calls is not cheaper here: to answer, the kernel walks the namespace's whole
//! table of established connections, sized by the host's memory, however few sockets match
//! (262144 buckets, about 0.2 ms, on a host with tens of GiB), while the walk of a process
//! with a few dozen descriptors takes microseconds. So each count takes the way that was
//! cheaper lately, measured (see `use_sock_diag`): sock_diag in a process with hundreds of
//! descriptors or more, the walk below that. Where sock_diag is not available (no netlink, a
//! kernel without TCP diag, a seccomp or LSM sandbox that refuses it; said once at info level)
//! the walk is the only way; tests and the benchmark choose one with `REGCHECK_TEST_PEERS=fd`
//! or `diag` ([`force_way`]).
//!
//! Either way a socket with several descriptors counts once, and a connection the kernel
//! completed that the engine has not `accept`ed yet (no descriptor) is not counted. The
//! netlink socket belongs to the network namespace the process was in at its first count; a
//! process that moves to another namespace later is still answered about the first one.

mod sockdiag;

use std::mem::{size_of, MaybeUninit};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

/// The local port of a socket address, for IPv4 and IPv6.
fn port_of(sa: &libc::sockaddr_storage) -> Option<u16> {
    match i32::from(sa.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin = unsafe { &*(sa as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(u16::from_be(sin.sin_port))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6 = unsafe { &*(sa as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            Some(u16::from_be(sin6.sin6_port))
        }
        _ => None,
    }
}

/// Whether `fd` is an ESTABLISHED TCP socket whose local port is `port`.
fn connected_on_port(fd: i32, port: u16) -> bool {
    let mut sa = MaybeUninit::<libc::sockaddr_storage>::zeroed();
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `sa` is a sockaddr_storage of `len` bytes; the call only writes into it. A file
    // descriptor that is not a socket (or was closed meanwhile) makes it fail.
    if unsafe { libc::getsockname(fd, sa.as_mut_ptr().cast(), &mut len) } != 0 {
        return false;
    }
    // SAFETY: getsockname succeeded and initialised it.
    let local = unsafe { sa.assume_init() };
    if port_of(&local) != Some(port) {
        return false;
    }
    // The TCP state (the first byte of the kernel's `struct tcp_info`): only ESTABLISHED
    // counts; a connection the peer closed (CLOSE_WAIT) is no link any more.
    let mut info = [0u8; 256];
    let mut ilen = info.len() as libc::socklen_t;
    // SAFETY: `info` has `ilen` bytes; the call writes at most that many. Not TCP: it fails.
    let rc = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr().cast(), &mut ilen) };
    rc == 0 && ilen > 0 && info[0] == TCP_ESTABLISHED
}

/// `TCP_ESTABLISHED` of the kernel's TCP states.
const TCP_ESTABLISHED: u8 = 1;

/// How connections are counted: [`AUTO`] (the way that was cheaper lately), or only one way:
/// [`WALK`] (sock_diag is unavailable, or a test asked), [`DIAG`] (a test or the benchmark
/// asked).
static WAY: AtomicU8 = AtomicU8::new(AUTO);
const AUTO: u8 = 0;
const WALK: u8 = 1;
const DIAG: u8 = 2;

/// What each way cost lately, in nanoseconds (a moving average; 0: not measured yet). The
/// kernel's answer costs about the same whatever the process: it walks the namespace's whole
/// table of established connections, sized by the host's memory (262144 buckets, about
/// 0.2 ms, on a host with tens of GiB), however few match. The descriptor walk costs about a
/// microsecond per open descriptor. So the cheaper one is used, and the other one is measured
/// again every [`REMEASURE`] counts, as the process's descriptors come and go.
static DIAG_NS: AtomicU64 = AtomicU64::new(0);
static WALK_NS: AtomicU64 = AtomicU64::new(0);
static COUNTS: AtomicU64 = AtomicU64::new(0);
const REMEASURE: u64 = 64;

/// Count with the `/proc/self/fd` walk only (`REGCHECK_TEST_PEERS=fd`), as where netlink is
/// not available; with sock_diag only (`diag`) while it is available. For tests and the
/// benchmark.
pub fn force_way(sock_diag: bool) {
    WAY.store(if sock_diag { DIAG } else { WALK }, Ordering::Relaxed);
}

/// Which way this count takes: `true` for sock_diag.
fn use_sock_diag() -> bool {
    match WAY.load(Ordering::Relaxed) {
        WALK => false,
        DIAG => true,
        _ => cheaper_is_sock_diag(
            DIAG_NS.load(Ordering::Relaxed),
            WALK_NS.load(Ordering::Relaxed),
            COUNTS.fetch_add(1, Ordering::Relaxed),
        ),
    }
}

/// The choice of the `n`th count given what each way cost lately (0: not measured): each is
/// measured once, then the cheaper one is taken, except every [`REMEASURE`]th count, which
/// measures the other one again.
fn cheaper_is_sock_diag(diag_ns: u64, walk_ns: u64, n: u64) -> bool {
    if diag_ns == 0 || walk_ns == 0 {
        return diag_ns == 0;
    }
    (diag_ns <= walk_ns) != n.is_multiple_of(REMEASURE)
}

fn record(cost: &AtomicU64, since: Instant) {
    let ns = u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX).max(1);
    let old = cost.load(Ordering::Relaxed);
    cost.store(if old == 0 { ns } else { old / 4 * 3 + ns / 4 }.max(1), Ordering::Relaxed);
}

/// Connected sockets of this process whose local port is `port` (peers linked to a listener
/// on it), each socket once.
pub fn established_connections(port: u16) -> Result<usize, FdListError> {
    let start = Instant::now();
    if use_sock_diag() {
        let mut inodes = Vec::new();
        match sockdiag::established(port, &mut inodes) {
            Ok(()) => {
                let n = if inodes.is_empty() { Ok(0) } else { owned_sockets(&mut inodes) };
                record(&DIAG_NS, start);
                return n;
            }
            Err(e) if e.permanent() => {
                if WAY.swap(WALK, Ordering::Relaxed) != WALK {
                    log::info!(
                        target: "regcheck",
                        "sock_diag netlink is not available to this process ({e}); the connections HIXL peers hold to a listening engine are counted through /proc/self/fd (a few system calls per open descriptor at each RegisterMem)"
                    );
                }
            }
            Err(e) => log::debug!("sock_diag: {e}; counting through /proc/self/fd this time"),
        }
    }
    let n = fd_walk(port);
    record(&WALK_NS, start);
    n
}

/// Without sock_diag: this process's descriptors that are ESTABLISHED TCP sockets with local
/// port `port`, each socket once.
fn fd_walk(port: u16) -> Result<usize, FdListError> {
    let mut inodes: Vec<u32> =
        descriptors()?.filter(|fd| connected_on_port(*fd, port)).filter_map(socket_inode).collect();
    inodes.sort_unstable();
    inodes.dedup();
    Ok(inodes.len())
}

/// How many of the sockets with these inode numbers have a descriptor in this process.
fn owned_sockets(inodes: &mut Vec<u32>) -> Result<usize, FdListError> {
    inodes.sort_unstable();
    inodes.dedup();
    let mut owned = vec![false; inodes.len()];
    for fd in descriptors()? {
        if let Some(i) = socket_inode(fd).and_then(|ino| inodes.binary_search(&ino).ok()) {
            owned[i] = true;
        }
    }
    Ok(owned.iter().filter(|o| **o).count())
}

/// This process's open descriptors.
fn descriptors() -> Result<impl Iterator<Item = i32>, FdListError> {
    Ok(std::fs::read_dir("/proc/self/fd")?.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()))
}

/// The inode of the socket `fd` refers to (what sock_diag reports); `None` for anything else.
fn socket_inode(fd: i32) -> Option<u32> {
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: `st` is a writable struct stat; a closed descriptor makes the call fail.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded and filled it.
    let st = unsafe { st.assume_init() };
    // Socket inode numbers are 32-bit (the kernel's sock_diag records carry them so).
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then(|| u32::try_from(st.st_ino).ok()).flatten()
}

/// This process's file descriptors could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("/proc/self/fd: {0}")]
pub struct FdListError(#[from] std::io::Error);

/// Peers linked to the engine named `name` (`ip:port`): connections accepted on its port; 0
/// when the name has no port or the connections cannot be counted.
pub fn engine_peers(name: &str) -> usize {
    engine_port(name).and_then(|p| established_connections(p).ok()).unwrap_or(0)
}

/// The port of a HIXL engine name `ip:port` (`[v6]:port` too); `None` without one.
pub fn engine_port(name: &str) -> Option<u16> {
    let (_, port) = name.trim().rsplit_once(':')?;
    port.parse::<u16>().ok().filter(|p| *p != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// The count through sock_diag (with the process's own picked out), and through the
    /// descriptor walk: they must agree.
    fn counted(port: u16) -> usize {
        let mut inodes = Vec::new();
        let by_diag = match sockdiag::established(port, &mut inodes) {
            Ok(()) => owned_sockets(&mut inodes).unwrap(),
            Err(e) => {
                crate::platform::unavailable("net::tests", &format!("sock_diag netlink: {e}"));
                return fd_walk(port).unwrap();
            }
        };
        assert_eq!(by_diag, fd_walk(port).unwrap(), "sock_diag and /proc/self/fd disagree on port {port}");
        assert_eq!(established_connections(port).unwrap(), by_diag);
        by_diag
    }

    fn wait_for(port: u16, n: usize) -> usize {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while counted(port) != n && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        counted(port)
    }

    #[test]
    fn counts_the_connections_a_listener_accepted() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(counted(port), 0, "the listener itself is not connected");
        let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // Completed by the kernel, not accepted yet: no descriptor, no link.
        assert_eq!(counted(port), 0);
        let (accepted, _) = listener.accept().unwrap();
        // The accepted socket has the local port; the client's side has another one.
        assert_eq!(counted(port), 1);
        let client_port = client.local_addr().unwrap().port();
        assert_eq!(counted(client_port), 1);
        // A second descriptor of the same socket: still one connection.
        let dup = accepted.try_clone().unwrap();
        assert_eq!(counted(port), 1);
        let second = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted2, _) = listener.accept().unwrap();
        assert_eq!(counted(port), 2);
        // The peer closed: the accepted socket is in CLOSE_WAIT, no link any more.
        drop(client);
        assert_eq!(wait_for(port, 1), 1);
        drop((second, accepted2, dup, accepted));
    }

    #[test]
    fn ipv6_connections_count_too() {
        let Ok(listener) = TcpListener::bind("[::1]:0") else {
            crate::platform::unavailable("ipv6_connections_count_too", "no IPv6 loopback");
            return;
        };
        let port = listener.local_addr().unwrap().port();
        // The same port on IPv4 too, as a dual-stack server has it.
        let v4 = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let _c6 = TcpStream::connect(("::1", port)).unwrap();
        let _c4 = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _a6 = listener.accept().unwrap();
        let _a4 = v4.accept().unwrap();
        assert_eq!(counted(port), 2);
    }

    #[test]
    fn another_processs_connections_on_the_same_port_are_not_ours() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _accepted = listener.accept().unwrap();
        // A child process listens on the same port on another loopback address and accepts a
        // connection there: same local port, ESTABLISHED, not this process's.
        let (mut ready, mut go) = ([0; 2], [0; 2]);
        // SAFETY: two pipes of our own.
        unsafe {
            assert_eq!(libc::pipe(ready.as_mut_ptr()), 0);
            assert_eq!(libc::pipe(go.as_mut_ptr()), 0);
        }
        // SAFETY: the child makes only async-signal-safe system calls, then _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: socket calls on the child's own descriptors and buffers.
            unsafe {
                libc::close(ready[0]);
                libc::close(go[1]);
                let mut sa: libc::sockaddr_in = std::mem::zeroed();
                sa.sin_family = libc::AF_INET as libc::sa_family_t;
                sa.sin_port = port.to_be();
                sa.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 2]).to_be();
                let len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
                let sa_ptr = (&sa as *const libc::sockaddr_in).cast::<libc::sockaddr>();
                let l = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                let c = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                let ok = libc::bind(l, sa_ptr, len) == 0
                    && libc::listen(l, 4) == 0
                    && libc::connect(c, sa_ptr, len) == 0
                    && libc::accept(l, std::ptr::null_mut(), std::ptr::null_mut()) >= 0;
                let byte = [u8::from(ok)];
                libc::write(ready[1], byte.as_ptr().cast(), 1);
                let mut b = [0u8; 1];
                libc::read(go[0], b.as_mut_ptr().cast(), 1);
                libc::_exit(0);
            }
        }
        assert!(pid > 0);
        let mut byte = [0u8; 1];
        // SAFETY: our pipes; the child writes one byte (or exits, closing its end).
        unsafe {
            libc::close(ready[1]);
            libc::close(go[0]);
            libc::read(ready[0], byte.as_mut_ptr().cast(), 1);
        }
        let seen = if byte[0] == 1 {
            let mut inodes = Vec::new();
            let all = sockdiag::established(port, &mut inodes).map(|()| inodes.len());
            Some((all, counted(port)))
        } else {
            None
        };
        // SAFETY: releases and reaps our own child.
        unsafe {
            libc::close(go[1]);
            libc::close(ready[0]);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
        }
        let Some((all, ours)) = seen else {
            crate::platform::unavailable(
                "another_processs_connections_on_the_same_port_are_not_ours",
                "cannot bind 127.0.0.2",
            );
            return;
        };
        if let Ok(all) = all {
            assert_eq!(all, 2, "the kernel sees both processes' connections");
        }
        assert_eq!(ours, 1, "only this process's one is a link to its listener");
    }

    #[test]
    fn threads_count_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let clients: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        let accepted: Vec<TcpStream> = (0..3).map(|_| listener.accept().unwrap().0).collect();
        // More threads than kept sockets: some open their own for a while.
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..200 {
                        assert_eq!(established_connections(port).unwrap(), 3);
                    }
                });
            }
        });
        drop((clients, accepted));
    }

    #[test]
    fn the_cheaper_way_is_taken_and_the_other_measured_again() {
        assert!(cheaper_is_sock_diag(0, 0, 5), "sock_diag is measured first");
        assert!(!cheaper_is_sock_diag(200_000, 0, 6), "then the walk");
        assert!(!cheaper_is_sock_diag(200_000, 3_000, 7));
        assert!(cheaper_is_sock_diag(200_000, 3_000, 64), "every 64th count measures the other");
        assert!(cheaper_is_sock_diag(200_000, 900_000, 65));
        assert!(!cheaper_is_sock_diag(200_000, 900_000, 128));
    }

    #[test]
    fn engine_ports() {
        assert_eq!(engine_port("127.0.0.1:26000"), Some(26000));
        assert_eq!(engine_port("[::1]:26000"), Some(26000));
        assert_eq!(engine_port("127.0.0.1"), None);
        assert_eq!(engine_port("127.0.0.1:0"), None);
        assert_eq!(engine_port("host:99999"), None);
    }
}
