//! The sock_diag tests (run under `cargo test --lib`).

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
        crate::platform::unavailable("a_socket_closed_behind_regchecks_back_is_replaced_not_closed_again", "sock_diag");
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
