//! TCP connections accepted on a port: `/proc/net/tcp` and `/proc/net/tcp6`.
//!
//! A HIXL engine initialised as `ip:port` listens there for its peers' control connections;
//! connections established to that port are peers linked to it, possibly from other
//! processes (regcheck sees no call of theirs).
//!
//! Each line of those files is `sl local_address rem_address st ...`, addresses as
//! `HEXIP:HEXPORT`, `st` `01` for ESTABLISHED.

/// The TCP state ESTABLISHED in `/proc/net/tcp`.
const ESTABLISHED: &str = "01";

/// How many ESTABLISHED connections in `text` (a `/proc/net/tcp` or `tcp6` file) have the
/// local port `port`.
pub fn established_on_port(text: &str, port: u16) -> usize {
    text.lines()
        .skip(1)
        .filter(|l| {
            let mut f = l.split_whitespace();
            let (Some(_), Some(local), Some(_), Some(st)) = (f.next(), f.next(), f.next(), f.next()) else {
                return false;
            };
            let local_port = local.rsplit_once(':').and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            st == ESTABLISHED && local_port == Some(port)
        })
        .count()
}

/// ESTABLISHED TCP connections (IPv4 and IPv6) whose local port is `port`, in the process's
/// network namespace.
pub fn established_connections(port: u16) -> Result<usize, String> {
    let mut n = 0;
    let mut read_any = false;
    for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(path) {
            read_any = true;
            n += established_on_port(&text, port);
        }
    }
    if read_any {
        Ok(n)
    } else {
        Err("/proc/net/tcp cannot be read".into())
    }
}

/// The port of a HIXL engine name `ip:port` (`[v6]:port` too); `None` without one.
pub fn engine_port(name: &str) -> Option<u16> {
    let (_, port) = name.trim().rsplit_once(':')?;
    port.parse::<u16>().ok().filter(|p| *p != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:6590 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:6590 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:D2F0 0100007F:6590 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:6590 0100007F:D2F4 06 00000000:00000000 00:00000000 00000000  1000        0 4 1 0000000000000000 20 4 30 10 -1
garbage
";

    #[test]
    fn counts_established_connections_to_the_port() {
        // 0x6590 = 26000: one listener (0A), one accepted connection (01), one TIME_WAIT (06);
        // the outgoing connection from port 0xD2F0 does not count.
        assert_eq!(established_on_port(TCP, 26000), 1);
        assert_eq!(established_on_port(TCP, 0xD2F0), 1);
        assert_eq!(established_on_port(TCP, 1), 0);
        assert_eq!(established_on_port("", 26000), 0);
        let v6 =
            "sl local rem st\n 0: 00000000000000000000000001000000:6590 00000000000000000000000001000000:9C40 01 0\n";
        assert_eq!(established_on_port(v6, 26000), 1);
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
