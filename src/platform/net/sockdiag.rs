//! ESTABLISHED TCP sockets with a given local port, asked of the kernel through sock_diag
//! netlink (`NETLINK_SOCK_DIAG`, see sock_diag(7) and `linux/inet_diag.h`).
//!
//! One dump request, filtered in the kernel: TCP sockets in state ESTABLISHED whose local port
//! is the one asked for (an `INET_DIAG_REQ_BYTECODE` filter, `S_GE port` then `S_LE port`, which
//! every kernel with sock_diag understands; the request's `id.idiag_sport` says the same, a
//! pre-filter where the kernel honours it). The request is `TCPDIAG_GETSOCK` with the original
//! `struct inet_diag_req`: the kernel dumps IPv4 and IPv6 sockets in one answer (it asks the
//! TCP tables with the family unspecified). When a kernel refuses that message type,
//! `SOCK_DIAG_BY_FAMILY` with `struct inet_diag_req_v2` is sent once per family instead, and
//! from then on.
//!
//! System calls: an `fstat` of the kept socket, one `sendmsg` and one `recvmsg` when no socket
//! matches (the end-of-dump message comes in the first datagram), one more `recvmsg` when some
//! do. The `fstat` compares the socket's inode with the one kept: an application that closed
//! regcheck's descriptor and got the number back for a TCP connection of its own would
//! otherwise receive the request in its stream (a TCP socket ignores the netlink address). The
//! kernel's work is another matter: it walks every bucket of the namespace's
//! established-connections table to answer (see the parent module for what that means for the
//! choice of a way). The netlink socket is kept open,
//! close-on-exec and moved out of the application's way (see [`super::super::procfd`]). So
//! that concurrent callers never read each other's replies, a caller leases a socket for its
//! whole request: a few kept sockets, each taken and given back with one atomic operation, no
//! lock; a caller that finds them all taken opens one of its own. A `fork` child closes the
//! kept sockets in its child handler (the parent's replies must not reach it) and opens its
//! own on first use. A socket in use by another thread of the parent at the moment of a `fork`
//! is closed in the child too; one the parent was opening at that moment stays open, unused,
//! in the child until it `exec`s (close-on-exec).
//!
//! Every wait is bounded: the kernel answers a dump request while it is sent and builds each
//! further part of the answer while the previous one is read, so every `recvmsg` is
//! non-blocking, and a missing part is a failure, not a wait. A socket whose conversation went
//! wrong (a system call failed, a reply was cut short or unreadable) is closed, never reused.
//!
//! The messages are built and read by pure functions ([`build_request`], [`parse_reply`]),
//! tested on byte buffers.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};

use crate::platform::atfork::AtFork;
use crate::platform::procfd;

// --- The protocol (linux/netlink.h, linux/sock_diag.h, linux/inet_diag.h) -----------------

const NLMSG_HDRLEN: usize = 16;
const NLMSG_NOOP: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLMSG_OVERRUN: u16 = 4;
const NLM_F_REQUEST: u16 = 0x1;
/// `NLM_F_ROOT | NLM_F_MATCH`: every socket the filter lets through.
const NLM_F_DUMP: u16 = 0x300;
/// The original inet_diag request for TCP (`struct inet_diag_req`).
const TCPDIAG_GETSOCK: u16 = 18;
/// The sock_diag request (`struct inet_diag_req_v2`).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const INET_DIAG_REQ_BYTECODE: u16 = 1;
const INET_DIAG_BC_S_GE: u8 = 2;
const INET_DIAG_BC_S_LE: u8 = 3;
const TCP_ESTABLISHED: u8 = 1;
/// `struct inet_diag_sockid`: sport, dport (big-endian), src[4], dst[4], if, cookie[2].
const SOCKID_LEN: usize = 48;
/// `struct inet_diag_req`: family, src_len, dst_len, ext, id, states, dbs.
const REQ_LEN: usize = 4 + SOCKID_LEN + 8;
/// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, id.
const REQ_V2_LEN: usize = 8 + SOCKID_LEN;
/// `struct inet_diag_msg`: family, state, timer, retrans, id, expires, rqueue, wqueue, uid,
/// inode.
const DIAG_MSG_LEN: usize = 4 + SOCKID_LEN + 20;
/// Offset of `idiag_inode` in `struct inet_diag_msg`.
const DIAG_MSG_INODE: usize = DIAG_MSG_LEN - 4;
/// The filter: two port comparisons of two `struct inet_diag_bc_op` each.
const BYTECODE_LEN: usize = 16;
/// The longest request [`build_request`] writes.
pub const REQUEST_MAX: usize = NLMSG_HDRLEN + REQ_LEN + 4 + BYTECODE_LEN;

/// What one request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `TCPDIAG_GETSOCK`: IPv4 and IPv6 sockets in one dump.
    BothFamilies,
    /// `SOCK_DIAG_BY_FAMILY` for one address family (`AF_INET` or `AF_INET6`).
    Family(u8),
}

impl Request {
    /// The message type of the request, which the kernel's records repeat.
    fn msg_type(self) -> u16 {
        match self {
            Request::BothFamilies => TCPDIAG_GETSOCK,
            Request::Family(_) => SOCK_DIAG_BY_FAMILY,
        }
    }
}

/// Why the sockets could not be counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A system call failed with this `errno`.
    Os(i32),
    /// The kernel refused the request with this `errno`.
    Kernel(i32),
    /// The answer could not be read: cut short, malformed, or missing.
    Protocol(&'static str),
}

impl Failure {
    /// The interface is not there for this process (and will not be): no netlink, no
    /// sock_diag or TCP diag in the kernel, or a sandbox (seccomp, LSM) forbids it.
    pub fn permanent(self) -> bool {
        match self {
            Failure::Os(e) | Failure::Kernel(e) => matches!(
                e,
                libc::EAFNOSUPPORT
                    | libc::EPROTONOSUPPORT
                    | libc::ESOCKTNOSUPPORT
                    | libc::EPERM
                    | libc::EACCES
                    | libc::ENOENT
                    | libc::EOPNOTSUPP
                    | libc::EINVAL
                    | libc::ENOSYS
            ),
            Failure::Protocol(_) => false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Os(e) => write!(f, "{}", std::io::Error::from_raw_os_error(*e)),
            Failure::Kernel(e) => {
                write!(f, "the kernel refused the request: {}", std::io::Error::from_raw_os_error(*e))
            }
            Failure::Protocol(why) => f.write_str(why),
        }
    }
}

fn put_u16(buf: &mut [u8], at: usize, v: u16) {
    buf[at..at + 2].copy_from_slice(&v.to_ne_bytes());
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

fn get_u16(buf: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(buf.get(at..at + 2)?.try_into().ok()?))
}

fn get_u32(buf: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(buf.get(at..at + 4)?.try_into().ok()?))
}

/// Write the dump request for ESTABLISHED TCP sockets with local port `port` into `out`;
/// returns its length.
pub fn build_request(req: Request, port: u16, seq: u32, out: &mut [u8; REQUEST_MAX]) -> usize {
    let body = match req {
        Request::BothFamilies => REQ_LEN,
        Request::Family(_) => REQ_V2_LEN,
    };
    let len = NLMSG_HDRLEN + body + 4 + BYTECODE_LEN;
    out.fill(0);
    // struct nlmsghdr: len, type, flags, seq, pid (0: the kernel fills in ours).
    put_u32(out, 0, len as u32);
    put_u16(out, 4, req.msg_type());
    put_u16(out, 6, NLM_F_REQUEST | NLM_F_DUMP);
    put_u32(out, 8, seq);
    let b = NLMSG_HDRLEN;
    let states = 1u32 << TCP_ESTABLISHED;
    let id = match req {
        // family (ignored for a dump: both), src_len, dst_len, ext: 0; id; states; dbs 0.
        Request::BothFamilies => {
            put_u32(out, b + 4 + SOCKID_LEN, states);
            b + 4
        }
        // family, protocol, ext 0, pad; states; id.
        Request::Family(family) => {
            out[b] = family;
            out[b + 1] = libc::IPPROTO_TCP as u8;
            put_u32(out, b + 4, states);
            b + 8
        }
    };
    // The socket id: the local port (big-endian), nothing else; no cookie.
    out[id..id + 2].copy_from_slice(&port.to_be_bytes());
    put_u32(out, id + 40, u32::MAX);
    put_u32(out, id + 44, u32::MAX);
    // struct nlattr INET_DIAG_REQ_BYTECODE, then the filter. Each op is {code, yes, no}: the
    // kernel moves `yes` bytes on when the test holds, `no` bytes when not; landing exactly at
    // the end accepts the socket, past it (the length + 4) rejects it. A port comparison keeps
    // its port in the `no` field of a second op.
    let a = b + body;
    put_u16(out, a, (4 + BYTECODE_LEN) as u16);
    put_u16(out, a + 2, INET_DIAG_REQ_BYTECODE);
    let bc = a + 4;
    out[bc] = INET_DIAG_BC_S_GE;
    out[bc + 1] = 8;
    put_u16(out, bc + 2, (BYTECODE_LEN + 4) as u16);
    put_u16(out, bc + 6, port);
    out[bc + 8] = INET_DIAG_BC_S_LE;
    out[bc + 9] = 8;
    put_u16(out, bc + 10, (BYTECODE_LEN - 8 + 4) as u16);
    put_u16(out, bc + 14, port);
    len
}

/// Where a reply leaves the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// More datagrams follow.
    More,
    /// The dump is complete.
    Done,
}

/// Read one datagram of the answer to request `seq` of kind `req`: calls `found` with the
/// inode of each ESTABLISHED IPv4/IPv6 socket whose local port is `port` (the kernel filtered
/// on that already; checked again). Messages of other requests (a sequence number not ours)
/// are skipped.
pub fn parse_reply(
    datagram: &[u8],
    req: Request,
    seq: u32,
    port: u16,
    found: &mut impl FnMut(u32),
) -> Result<Reply, Failure> {
    let mut rest = datagram;
    while !rest.is_empty() {
        let (Some(len), Some(ty), Some(mseq)) = (get_u32(rest, 0), get_u16(rest, 4), get_u32(rest, 8)) else {
            return Err(Failure::Protocol("a netlink message header is cut short"));
        };
        let len = len as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return Err(Failure::Protocol("a netlink message's length does not fit its datagram"));
        }
        let payload = &rest[NLMSG_HDRLEN..len];
        if mseq == seq {
            match ty {
                NLMSG_DONE => {
                    // The dump's status (0, or a negative errno).
                    return match get_u32(payload, 0).map(|v| v as i32) {
                        Some(e) if e < 0 => Err(Failure::Kernel(-e)),
                        _ => Ok(Reply::Done),
                    };
                }
                NLMSG_ERROR => match get_u32(payload, 0).map(|v| v as i32) {
                    None => return Err(Failure::Protocol("a netlink error message is cut short")),
                    Some(0) => {} // an acknowledgement: not asked for, nothing to count
                    Some(e) => return Err(Failure::Kernel(e.saturating_neg())),
                },
                NLMSG_OVERRUN => return Err(Failure::Protocol("the kernel overran the answer")),
                NLMSG_NOOP => {}
                t if t == req.msg_type() => {
                    if payload.len() < DIAG_MSG_LEN {
                        return Err(Failure::Protocol("a socket record is cut short"));
                    }
                    let family = i32::from(payload[0]);
                    let state = payload[1];
                    let sport = u16::from_be_bytes([payload[4], payload[5]]);
                    if state == TCP_ESTABLISHED
                        && sport == port
                        && (family == libc::AF_INET || family == libc::AF_INET6)
                    {
                        found(get_u32(payload, DIAG_MSG_INODE).unwrap_or(0));
                    }
                }
                _ => {}
            }
        }
        let next = (len + 3) & !3;
        rest = &rest[next.min(rest.len())..];
    }
    Ok(Reply::More)
}

// --- The live query --------------------------------------------------------------------------

/// Sockets kept open. A slot holds -1, or a descriptor, with [`BUSY`] set while a caller has
/// it.
const SLOTS: usize = 4;
const EMPTY: i64 = -1;
const BUSY: i64 = 1 << 32;
static POOL: [AtomicI64; SLOTS] = [const { AtomicI64::new(EMPTY) }; SLOTS];
/// The inode of each slot's socket, to tell it from a descriptor the application opened under
/// the same number after closing regcheck's (written before the slot is published).
static INODES: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Sequence numbers of the requests (unique per process, whatever socket carries them).
static SEQ: AtomicU32 = AtomicU32::new(1);
/// The kernel refused `TCPDIAG_GETSOCK`: ask per family.
static PER_FAMILY: AtomicBool = AtomicBool::new(false);
/// Datagrams of one answer at most (each holds dozens of records).
const MAX_DATAGRAMS: usize = 4096;
/// The receive buffer. The kernel sizes a dump's datagrams by the largest buffer the reader
/// offered (at least its page-size-dependent minimum, at most 8 KiB); offered only this, they
/// fit. A larger one would be cut short, reported, and the socket dropped.
const RECV_LEN: usize = 8192;

/// The `fork` child handler closes the parent's sockets.
static HANDLERS: AtFork = AtFork::new(None, None, Some(close_in_child));

extern "C" fn close_in_child() {
    for slot in &POOL {
        let v = slot.swap(EMPTY, Ordering::AcqRel);
        if v >= 0 {
            // SAFETY: the descriptor was regcheck's own; only this thread exists in the child.
            unsafe { libc::close((v & !BUSY) as i32) };
        }
    }
}

/// A socket a caller has to itself.
struct Lease {
    fd: i32,
    slot: Option<usize>,
}

fn lease() -> Result<Lease, Failure> {
    for (i, slot) in POOL.iter().enumerate() {
        let v = slot.load(Ordering::Acquire);
        if v >= 0 && v & BUSY == 0 && slot.compare_exchange(v, v | BUSY, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            let fd = v as i32;
            // A request written to a descriptor the application reopened (a TCP stream, say)
            // would go into its data: one fstat proves the socket is still the one kept.
            if inode_of(fd) == Some(INODES[i].load(Ordering::Relaxed)) {
                return Ok(Lease { fd, slot: Some(i) });
            }
            // Not ours any more: forgotten, never closed (the number is the application's).
            slot.store(EMPTY, Ordering::Release);
        }
    }
    HANDLERS.ensure();
    // SAFETY: plain socket creation; the descriptor returned is ours.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, libc::NETLINK_SOCK_DIAG) };
    if fd < 0 {
        return Err(Failure::Os(errno()));
    }
    let fd = procfd::move_high(fd);
    let Some(inode) = inode_of(fd) else {
        // SAFETY: the descriptor was just created here.
        unsafe { libc::close(fd) };
        return Err(Failure::Os(errno()));
    };
    // Claimed busy first, then given its inode, then leased: a slot is only ever taken from
    // the pool with its inode written.
    let slot = POOL
        .iter()
        .position(|s| s.compare_exchange(EMPTY, i64::from(fd) | BUSY, Ordering::AcqRel, Ordering::Relaxed).is_ok());
    if let Some(i) = slot {
        INODES[i].store(inode, Ordering::Relaxed);
    }
    Ok(Lease { fd, slot })
}

/// The inode of the socket `fd` (`None`: not an open socket).
fn inode_of(fd: i32) -> Option<u64> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is a writable stat buffer; fstat has no other precondition.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded and filled it.
    let st = unsafe { st.assume_init() };
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some(st.st_ino)
}

/// Give a leased socket back; `reusable`: its conversation ended cleanly (else it is closed,
/// or only forgotten when the descriptor is no longer a sock_diag socket: the application
/// closed it behind regcheck's back and may have reused the number).
fn give_back(lease: Lease, reusable: bool) {
    let close = !reusable && is_sock_diag(lease.fd);
    match lease.slot {
        Some(i) if reusable => POOL[i].store(i64::from(lease.fd), Ordering::Release),
        Some(i) => POOL[i].store(EMPTY, Ordering::Release),
        None => {}
    }
    if close || (lease.slot.is_none() && reusable) {
        // SAFETY: our own descriptor (checked above after a failure), no longer published.
        unsafe { libc::close(lease.fd) };
    }
}

/// Whether `fd` is a sock_diag netlink socket (asked only after a failure on it).
fn is_sock_diag(fd: i32) -> bool {
    let opt = |name: libc::c_int| {
        let mut v: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `v` is a writable int of `len` bytes.
        let rc = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, name, (&mut v as *mut libc::c_int).cast(), &mut len) };
        (rc == 0).then_some(v)
    };
    opt(libc::SO_DOMAIN) == Some(libc::AF_NETLINK) && opt(libc::SO_PROTOCOL) == Some(libc::NETLINK_SOCK_DIAG)
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Push the inode of every ESTABLISHED TCP socket of this network namespace whose local port
/// is `port` (IPv4 and IPv6) onto `inodes`. Nothing is allocated when there is none.
pub fn established(port: u16, inodes: &mut Vec<u32>) -> Result<(), Failure> {
    let lease = lease()?;
    let fd = lease.fd;
    let mut result = ask(fd, port, inodes);
    if matches!(result, Err(Failure::Os(_))) && !is_sock_diag(fd) {
        // Not a failure of sock_diag: the kept descriptor was closed behind regcheck's back.
        result = Err(Failure::Protocol("the kept netlink socket was closed by someone else"));
    }
    // A refusal leaves the socket idle; anything else that failed may leave it mid-answer.
    give_back(lease, matches!(result, Ok(()) | Err(Failure::Kernel(_))));
    result
}

fn ask(fd: i32, port: u16, inodes: &mut Vec<u32>) -> Result<(), Failure> {
    if !PER_FAMILY.load(Ordering::Relaxed) {
        match transact(fd, Request::BothFamilies, port, inodes) {
            Err(Failure::Kernel(libc::EINVAL | libc::EOPNOTSUPP)) => {
                PER_FAMILY.store(true, Ordering::Relaxed);
                inodes.clear();
            }
            r => return r,
        }
    }
    for family in [libc::AF_INET as u8, libc::AF_INET6 as u8] {
        match transact(fd, Request::Family(family), port, inodes) {
            // A kernel without IPv6 has no IPv6 sockets.
            Err(Failure::Kernel(libc::ENOENT)) if i32::from(family) == libc::AF_INET6 => {}
            r => r?,
        }
    }
    Ok(())
}

/// One request and its whole answer.
fn transact(fd: i32, req: Request, port: u16, inodes: &mut Vec<u32>) -> Result<(), Failure> {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut msg = [0u8; REQUEST_MAX];
    let len = build_request(req, port, seq, &mut msg);
    // SAFETY: an all-zero sockaddr_nl is valid; the kernel is port 0.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    let nl_len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
    // SAFETY: `msg` holds `len` bytes; `kernel` is a sockaddr_nl of `nl_len` bytes.
    let sent = unsafe {
        libc::sendto(
            fd,
            msg.as_ptr().cast(),
            len,
            libc::MSG_DONTWAIT,
            (&kernel as *const libc::sockaddr_nl).cast(),
            nl_len,
        )
    };
    if sent < 0 {
        return Err(Failure::Os(errno()));
    }
    if sent as usize != len {
        return Err(Failure::Protocol("the request was sent in part"));
    }
    // 8-byte aligned, as the kernel's messages are 4-byte aligned within it.
    let mut buf = [0u64; RECV_LEN / 8];
    for _ in 0..MAX_DATAGRAMS {
        // SAFETY: all-zero is a valid sockaddr_nl (the sender's address is written there).
        let mut from: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: RECV_LEN };
        // SAFETY: all-zero is a valid msghdr; the fields used are set below.
        let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
        mh.msg_name = (&mut from as *mut libc::sockaddr_nl).cast();
        mh.msg_namelen = nl_len;
        mh.msg_iov = &mut iov;
        mh.msg_iovlen = 1;
        // SAFETY: `mh` points at `from` and at `buf` through `iov`, both live and writable
        // for the lengths given.
        let n = unsafe { libc::recvmsg(fd, &mut mh, libc::MSG_DONTWAIT) };
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                libc::EAGAIN => return Err(Failure::Protocol("the kernel's answer stopped before its end")),
                e => return Err(Failure::Os(e)),
            }
        }
        if mh.msg_flags & libc::MSG_TRUNC != 0 {
            return Err(Failure::Protocol("a datagram of the answer was larger than the buffer"));
        }
        if from.nl_pid != 0 {
            continue; // not from the kernel
        }
        // SAFETY: the kernel wrote `n` bytes into `buf` (u64s seen as bytes).
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
        if parse_reply(bytes, req, seq, port, &mut |inode| inodes.push(inode))? == Reply::Done {
            return Ok(());
        }
    }
    Err(Failure::Protocol("the kernel's answer did not end"))
}

/// The kept sockets, for tests: descriptors, `BUSY` or not.
#[cfg(test)]
fn kept() -> Vec<i64> {
    POOL.iter().map(|s| s.load(Ordering::SeqCst)).filter(|v| *v >= 0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that replace or close the process's kept sockets run one at a time: one
    /// test's replacement is another's "closed by someone else".
    static KEPT: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn kept_sockets_to_myself() -> std::sync::MutexGuard<'static, ()> {
        KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The kernel's reading of a filter (inet_diag_bc_run), for a socket with local port
    /// `sport`.
    fn run_filter(bc: &[u8], sport: u16) -> bool {
        let mut at = 0i64;
        let len = bc.len() as i64;
        while at < len {
            let i = at as usize;
            let (code, yes, no) = (bc[i], i64::from(bc[i + 1]), i64::from(get_u16(bc, i + 2).unwrap()));
            let arg = get_u16(bc, i + 6).unwrap();
            let hold = match code {
                INET_DIAG_BC_S_GE => sport >= arg,
                INET_DIAG_BC_S_LE => sport <= arg,
                other => panic!("op {other} not expected"),
            };
            at += if hold { yes } else { no };
        }
        at == len
    }

    /// The kernel's check of a filter (inet_diag_bc_audit), for port comparisons.
    fn audit(bc: &[u8]) -> bool {
        let mut at = 0usize;
        while at < bc.len() {
            let left = bc.len() - at;
            let (yes, no) = (usize::from(bc[at + 1]), usize::from(get_u16(bc, at + 2).unwrap()));
            let min = 8;
            if left < min || no < min || no > left + 4 || no % 4 != 0 || yes < min || yes > left + 4 || yes % 4 != 0 {
                return false;
            }
            at += yes;
        }
        at == bc.len()
    }

    fn header(buf: &[u8]) -> (u32, u16, u16, u32) {
        (get_u32(buf, 0).unwrap(), get_u16(buf, 4).unwrap(), get_u16(buf, 6).unwrap(), get_u32(buf, 8).unwrap())
    }

    #[test]
    fn the_request_for_both_families() {
        let mut out = [0xaau8; REQUEST_MAX];
        let n = build_request(Request::BothFamilies, 26000, 7, &mut out);
        assert_eq!(n, 96);
        assert_eq!(header(&out), (96, TCPDIAG_GETSOCK, NLM_F_REQUEST | NLM_F_DUMP, 7));
        let req = &out[16..16 + REQ_LEN];
        assert_eq!(&req[..4], &[0, 0, 0, 0], "family unspecified, no address lengths, no extensions");
        assert_eq!(&req[4..6], &26000u16.to_be_bytes(), "id.idiag_sport");
        assert!(req[6..44].iter().all(|b| *b == 0), "no destination port, addresses or interface");
        assert_eq!((get_u32(req, 44), get_u32(req, 48)), (Some(u32::MAX), Some(u32::MAX)), "no cookie");
        assert_eq!(get_u32(req, 4 + SOCKID_LEN), Some(1 << 1), "ESTABLISHED only");
        assert_eq!(get_u32(req, 4 + SOCKID_LEN + 4), Some(0));
        let attr = &out[16 + REQ_LEN..n];
        assert_eq!((get_u16(attr, 0), get_u16(attr, 2)), (Some(20), Some(INET_DIAG_REQ_BYTECODE)));
        let bc = &attr[4..];
        assert!(audit(bc));
        for (port, pass) in [(26000, true), (25999, false), (26001, false), (0, false), (65535, false)] {
            assert_eq!(run_filter(bc, port), pass, "port {port}");
        }
    }

    #[test]
    fn the_request_for_one_family() {
        let mut out = [0u8; REQUEST_MAX];
        let n = build_request(Request::Family(libc::AF_INET6 as u8), 1, u32::MAX, &mut out);
        assert_eq!(n, 92);
        assert_eq!(header(&out), (92, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, u32::MAX));
        let req = &out[16..16 + REQ_V2_LEN];
        assert_eq!(&req[..4], &[libc::AF_INET6 as u8, libc::IPPROTO_TCP as u8, 0, 0]);
        assert_eq!(get_u32(req, 4), Some(1 << 1));
        assert_eq!(&req[8..10], &1u16.to_be_bytes());
        let bc = &out[16 + REQ_V2_LEN + 4..n];
        assert!(audit(bc));
        assert!(run_filter(bc, 1) && !run_filter(bc, 0) && !run_filter(bc, 2));
        assert!(out[n..].iter().all(|b| *b == 0));
    }

    /// One netlink message.
    fn message(ty: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let len = NLMSG_HDRLEN + payload.len();
        let mut m = vec![0u8; (len + 3) & !3];
        put_u32(&mut m, 0, len as u32);
        put_u16(&mut m, 4, ty);
        put_u16(&mut m, 6, 2); // NLM_F_MULTI
        put_u32(&mut m, 8, seq);
        m[NLMSG_HDRLEN..len].copy_from_slice(payload);
        m
    }

    /// A socket record as the kernel writes it, with one attribute after it.
    fn record(family: i32, state: u8, sport: u16, inode: u32) -> Vec<u8> {
        let mut r = vec![0u8; DIAG_MSG_LEN + 8];
        r[0] = family as u8;
        r[1] = state;
        r[4..6].copy_from_slice(&sport.to_be_bytes());
        r[6..8].copy_from_slice(&40000u16.to_be_bytes());
        put_u32(&mut r, DIAG_MSG_INODE, inode);
        put_u16(&mut r, DIAG_MSG_LEN, 5); // INET_DIAG_SHUTDOWN, u8, padded
        put_u16(&mut r, DIAG_MSG_LEN + 2, 8);
        r
    }

    fn parse(datagram: &[u8], req: Request, seq: u32) -> (Result<Reply, Failure>, Vec<u32>) {
        let mut found = Vec::new();
        let r = parse_reply(datagram, req, seq, 26000, &mut |i| found.push(i));
        (r, found)
    }

    #[test]
    fn records_then_the_end() {
        let req = Request::BothFamilies;
        let mut d = message(TCPDIAG_GETSOCK, 5, &record(libc::AF_INET, 1, 26000, 11));
        d.extend(message(TCPDIAG_GETSOCK, 5, &record(libc::AF_INET6, 1, 26000, 12)));
        // What the filter should have kept out is not counted either.
        d.extend(message(TCPDIAG_GETSOCK, 5, &record(libc::AF_INET, 8, 26000, 13)));
        d.extend(message(TCPDIAG_GETSOCK, 5, &record(libc::AF_INET, 1, 26001, 14)));
        d.extend(message(TCPDIAG_GETSOCK, 5, &record(libc::AF_UNIX, 1, 26000, 15)));
        // Another request's records, and a record of the other message type.
        d.extend(message(TCPDIAG_GETSOCK, 4, &record(libc::AF_INET, 1, 26000, 16)));
        d.extend(message(SOCK_DIAG_BY_FAMILY, 5, &record(libc::AF_INET, 1, 26000, 17)));
        d.extend(message(NLMSG_NOOP, 5, &[]));
        assert_eq!(parse(&d, req, 5), (Ok(Reply::More), vec![11, 12]), "no end yet: more datagrams");
        d.extend(message(NLMSG_DONE, 5, &0i32.to_ne_bytes()));
        assert_eq!(parse(&d, req, 5), (Ok(Reply::Done), vec![11, 12]));
        // The end alone: nothing.
        assert_eq!(parse(&message(NLMSG_DONE, 5, &0i32.to_ne_bytes()), req, 5), (Ok(Reply::Done), vec![]));
        // An end of another request does not end this one.
        assert_eq!(parse(&message(NLMSG_DONE, 9, &0i32.to_ne_bytes()), req, 5).0, Ok(Reply::More));
        // Per family: the records carry SOCK_DIAG_BY_FAMILY.
        let d = message(SOCK_DIAG_BY_FAMILY, 6, &record(libc::AF_INET, 1, 26000, 21));
        assert_eq!(parse(&d, Request::Family(libc::AF_INET as u8), 6), (Ok(Reply::More), vec![21]));
    }

    #[test]
    fn errors_and_damage() {
        let req = Request::BothFamilies;
        let mut err = (-libc::EINVAL).to_ne_bytes().to_vec();
        err.extend([0u8; 16]); // the request's header, echoed
        assert_eq!(parse(&message(NLMSG_ERROR, 3, &err), req, 3).0, Err(Failure::Kernel(libc::EINVAL)));
        assert_eq!(parse(&message(NLMSG_ERROR, 3, &0i32.to_ne_bytes()), req, 3).0, Ok(Reply::More), "an ack");
        assert!(matches!(parse(&message(NLMSG_ERROR, 3, &[1]), req, 3).0, Err(Failure::Protocol(_))));
        assert_eq!(
            parse(&message(NLMSG_DONE, 3, &(-libc::ENOBUFS).to_ne_bytes()), req, 3).0,
            Err(Failure::Kernel(libc::ENOBUFS))
        );
        assert!(matches!(parse(&message(NLMSG_OVERRUN, 3, &[]), req, 3).0, Err(Failure::Protocol(_))));
        // Cut short: a header, a length past the datagram, a record.
        let d = message(TCPDIAG_GETSOCK, 3, &record(libc::AF_INET, 1, 26000, 1));
        assert!(matches!(parse(&d[..10], req, 3).0, Err(Failure::Protocol(_))));
        assert!(matches!(parse(&d[..d.len() - 4], req, 3).0, Err(Failure::Protocol(_))));
        let short = message(TCPDIAG_GETSOCK, 3, &record(libc::AF_INET, 1, 26000, 1)[..DIAG_MSG_LEN - 1]);
        assert!(matches!(parse(&short, req, 3).0, Err(Failure::Protocol(_))));
        let mut bad = d.clone();
        put_u32(&mut bad, 0, 4);
        assert!(matches!(parse(&bad, req, 3).0, Err(Failure::Protocol(_))), "a length below the header's");
        assert_eq!(parse(&[], req, 3).0, Ok(Reply::More));
    }

    #[test]
    fn failures_that_mean_no_interface() {
        for e in [libc::EPERM, libc::EACCES, libc::EPROTONOSUPPORT, libc::EAFNOSUPPORT, libc::ENOENT] {
            assert!(Failure::Os(e).permanent() && Failure::Kernel(e).permanent(), "{e}");
        }
        for e in [libc::EMFILE, libc::ENOBUFS, libc::ENOMEM, libc::EBADF] {
            assert!(!Failure::Os(e).permanent(), "{e}");
        }
        assert!(!Failure::Protocol("x").permanent());
        assert!(Failure::Kernel(libc::EPERM).to_string().contains("refused"));
    }

    #[test]
    fn a_socket_closed_behind_regchecks_back_is_replaced_not_closed_again() {
        let _kept = kept_sockets_to_myself();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut inodes = Vec::new();
        if established(port, &mut inodes).is_err() {
            crate::platform::unavailable(
                "a_socket_closed_behind_regchecks_back_is_replaced_not_closed_again",
                "sock_diag",
            );
            return;
        }
        // The application closes every kept socket and opens a file at one's number.
        let file = std::fs::File::open("/proc/self/statm").unwrap();
        let spare = std::os::fd::AsRawFd::as_raw_fd(&file);
        for v in kept() {
            let fd = (v & !BUSY) as i32;
            // SAFETY: replaces the kept descriptor with a duplicate of a file of ours, as an
            // application that closed it and opened something else would.
            unsafe { libc::dup2(spare, fd) };
        }
        for _ in 0..SLOTS + 1 {
            let r = established(port, &mut inodes);
            assert!(
                r.is_ok() || r == Err(Failure::Protocol("the kept netlink socket was closed by someone else")),
                "{r:?}"
            );
        }
        assert!(inodes.is_empty());
        assert_eq!(established(port, &mut inodes), Ok(()), "replaced by a socket of its own");
    }

    /// The application closed the kept sockets and a TCP connection of its own got one's number:
    /// no request may go into that stream.
    #[test]
    fn a_kept_number_reused_for_a_tcp_stream_is_never_written() {
        let _kept = kept_sockets_to_myself();
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut inodes = Vec::new();
        if established(port, &mut inodes).is_err() {
            crate::platform::unavailable("a_kept_number_reused_for_a_tcp_stream_is_never_written", "sock_diag");
            return;
        }
        let client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let stream = std::os::fd::AsRawFd::as_raw_fd(&client);
        let reused: Vec<i32> = kept().iter().map(|v| (v & !BUSY) as i32).collect();
        assert!(!reused.is_empty(), "a socket is kept");
        for fd in &reused {
            // SAFETY: replaces the kept descriptor with the application's TCP stream, as a
            // program that closed it and connected again would get.
            unsafe { libc::dup2(stream, *fd) };
        }
        for _ in 0..SLOTS + 1 {
            inodes.clear();
            assert_eq!(established(port, &mut inodes), Ok(()));
            assert_eq!(inodes.len(), 1, "the one connection on the port");
        }
        server.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 256];
        let got = server.read(&mut buf);
        assert!(
            matches!(&got, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "bytes went into the application's stream: {got:?}"
        );
        for fd in reused {
            // SAFETY: the duplicates made above.
            unsafe { libc::close(fd) };
        }
    }

    #[test]
    fn a_fork_child_closes_the_parents_sockets() {
        let _kept = kept_sockets_to_myself();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut inodes = Vec::new();
        if let Err(e) = established(port, &mut inodes) {
            crate::platform::unavailable("a_fork_child_closes_the_parents_sockets", &format!("sock_diag: {e}"));
            return;
        }
        assert!(inodes.is_empty());
        assert!(!kept().is_empty(), "a socket is kept");
        let mut fds = [0; 2];
        // SAFETY: a pipe of our own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only reads atomics, makes system calls without allocating (no
        // socket matches) and writes to the pipe before _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let closed = POOL.iter().all(|s| s.load(Ordering::SeqCst) == EMPTY);
            let mut none = Vec::new();
            let counted = established(port, &mut none).is_ok() && none.is_empty();
            let answer = [u8::from(closed), u8::from(counted)];
            // SAFETY: writes two bytes to our pipe, then leaves without running destructors.
            unsafe {
                libc::write(fds[1], answer.as_ptr().cast(), 2);
                libc::_exit(0);
            }
        }
        assert!(pid > 0);
        // SAFETY: our pipe's write end, and waiting for our own child.
        unsafe { libc::close(fds[1]) };
        let mut answer = [0u8; 2];
        // SAFETY: reads at most two bytes into `answer` (the child writes them, then exits).
        let n = unsafe { libc::read(fds[0], answer.as_mut_ptr().cast(), 2) };
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe {
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
        }
        assert_eq!((n, answer), (2, [1, 1]), "the child closed the inherited sockets and opened its own");
        assert!(!kept().is_empty(), "the parent keeps its own");
    }
}
