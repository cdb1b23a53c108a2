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
mod tests;
