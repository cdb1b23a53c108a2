//! Connections peers hold to a port of this process: the process's own TCP sockets.
//!
//! A HIXL engine initialised as `ip:port` listens there for its peers' control connections;
//! the sockets it accepted (local port `port`, ESTABLISHED) are peers linked to it, possibly
//! from other processes (regcheck sees no call of theirs). Found through `/proc/self/fd`,
//! `getsockname` and `TCP_INFO` on each socket: a few system calls per open socket, with no
//! walk of the system's TCP tables (`/proc/net/tcp` takes milliseconds).

use std::mem::{size_of, MaybeUninit};

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

/// Connected sockets of this process whose local port is `port` (peers linked to a listener
/// on it).
pub fn established_connections(port: u16) -> Result<usize, FdListError> {
    let dir = std::fs::read_dir("/proc/self/fd")?;
    Ok(dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|fd| connected_on_port(*fd, port))
        .count())
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

    #[test]
    fn counts_the_connections_a_listener_accepted() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(established_connections(port).unwrap(), 0, "the listener itself is not connected");
        let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        // The accepted socket has the local port; the client's side has another one.
        assert_eq!(established_connections(port).unwrap(), 1);
        let client_port = client.local_addr().unwrap().port();
        assert_eq!(established_connections(client_port).unwrap(), 1);
        // The peer closed: the accepted socket is in CLOSE_WAIT, no link any more.
        drop(client);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while established_connections(port).unwrap() != 0 && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(established_connections(port).unwrap(), 0);
        drop(accepted);
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
