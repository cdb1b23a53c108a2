//! Pure parsing of `/proc/<pid>/maps` and `/proc/<pid>/smaps` text and the classification
//! of a mapping by its name; the reader of the live text, which stops at the end of a range.

use std::fs::File;
use std::io::{self, BufRead, BufReader};

use super::live::{Extra, Live};
use super::{Backing, Mapping};

/// Classify a mapping by its name (the last column of `/proc/self/maps`) alone:
///
/// * `""`, `[anon:...]`, `[anon_shmem:...]`, `/dev/zero (deleted)` (shared anonymous) ->
///   [`Backing::Anonymous`];
/// * `[heap]` -> [`Backing::Heap`]; `[stack]`, `[stack:TID]` -> [`Backing::Stack`];
///   other `[...]` -> [`Backing::Special`];
/// * `/anon_hugepage...` (MAP_HUGETLB, SHM_HUGETLB) -> [`Backing::HugeTlb`];
/// * `/dev/shm/...`, `/memfd:...`, `/SYSV...` (with or without ` (deleted)`) ->
///   [`Backing::SharedMemory`];
/// * other `/dev/...` and `/dmabuf:...` -> [`Backing::Device`];
/// * other absolute paths -> [`Backing::File`]; other names (`anon_inode:[...]`) ->
///   [`Backing::Special`].
///
/// The filesystem of a path is not consulted here (a file on tmpfs is `File`);
/// [`query`](super::query) refines that.
pub fn classify(name: &str) -> Backing {
    let bare = name.strip_suffix(" (deleted)").unwrap_or(name);
    if name.is_empty() || name.starts_with("[anon:") || name.starts_with("[anon_shmem:") {
        Backing::Anonymous
    } else if name == "[heap]" {
        Backing::Heap
    } else if name == "[stack]" || (name.starts_with("[stack:") && name.ends_with(']')) {
        Backing::Stack
    } else if name.starts_with('[') {
        Backing::Special(name.to_owned())
    } else if bare.starts_with("/anon_hugepage") {
        Backing::HugeTlb(name.to_owned())
    } else if bare == "/dev/zero" {
        Backing::Anonymous
    } else if bare.starts_with("/dev/shm/") || bare.starts_with("/memfd:") || bare.starts_with("/SYSV") {
        Backing::SharedMemory(name.to_owned())
    } else if bare.starts_with("/dev/") || bare.starts_with("/dmabuf:") {
        Backing::Device(name.to_owned())
    } else if name.starts_with('/') {
        Backing::File(name.to_owned())
    } else {
        Backing::Special(name.to_owned())
    }
}

/// Parse one line of `/proc/<pid>/maps` (or a mapping header line of `smaps`):
/// `start-end perms offset dev inode [name]`. The name may contain spaces. `locked` is
/// `None`; the backing comes from [`classify`].
pub fn parse_maps_line(line: &str) -> Option<Mapping> {
    let h = parse_header(line)?;
    Some(h.to_mapping())
}

/// Parse a whole `/proc/<pid>/maps` text; malformed lines are skipped.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    // Reading from a byte slice cannot fail.
    scan(text.as_bytes(), 0, usize::MAX, false, &Live::pure()).unwrap_or_default()
}

/// Parse a whole `/proc/<pid>/smaps` text. `locked` is `Some(lo in VmFlags)` for entries that
/// have a `VmFlags:` line (`None` otherwise); `ht` in VmFlags makes the backing
/// [`Backing::HugeTlb`]. Malformed lines are skipped.
pub fn parse_smaps(text: &str) -> Vec<Mapping> {
    scan(text.as_bytes(), 0, usize::MAX, true, &Live::pure()).unwrap_or_default()
}

/// A parsed mapping header, borrowing its name.
struct Header<'a> {
    start: usize,
    end: usize,
    readable: bool,
    writable: bool,
    shared: bool,
    dev_major: u32,
    name: &'a str,
}

impl Header<'_> {
    fn to_mapping(&self) -> Mapping {
        Mapping {
            start: self.start,
            end: self.end,
            readable: self.readable,
            writable: self.writable,
            shared: self.shared,
            path: self.name.to_owned(),
            backing: classify(self.name),
            locked: None,
        }
    }
}

/// The next space-separated field of `s` and the text after it.
fn next_field(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches(' ');
    if s.is_empty() {
        return None;
    }
    let i = s.find(' ').unwrap_or(s.len());
    Some((&s[..i], &s[i..]))
}

fn hex_usize(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    usize::from_str_radix(s, 16).ok()
}

/// `"7f00-7f10"` -> (0x7f00, 0x7f10).
fn parse_range(s: &str) -> Option<(usize, usize)> {
    let (a, b) = s.split_once('-')?;
    let (start, end) = (hex_usize(a)?, hex_usize(b)?);
    (start <= end).then_some((start, end))
}

/// The address range of a header line, without looking at the rest of it.
fn quick_range(line: &str) -> Option<(usize, usize)> {
    parse_range(line.split(' ').next()?)
}

fn parse_header(line: &str) -> Option<Header<'_>> {
    let line = line.trim_end_matches(['\n', '\r']);
    let (range, rest) = next_field(line)?;
    let (start, end) = parse_range(range)?;
    let (perms, rest) = next_field(rest)?;
    let p = perms.as_bytes();
    if p.len() != 4
        || !matches!(p[0], b'r' | b'-')
        || !matches!(p[1], b'w' | b'-')
        || !matches!(p[2], b'x' | b'-')
        || !matches!(p[3], b'p' | b's')
    {
        return None;
    }
    let (offset, rest) = next_field(rest)?;
    hex_usize(offset)?;
    let (dev, rest) = next_field(rest)?;
    let (major, minor) = dev.split_once(':')?;
    let dev_major = u32::from_str_radix(major, 16).ok()?;
    u32::from_str_radix(minor, 16).ok()?;
    let (inode, rest) = next_field(rest)?;
    if !inode.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Header {
        start,
        end,
        readable: p[0] == b'r',
        writable: p[1] == b'w',
        shared: p[3] == b's',
        dev_major,
        name: rest.trim_start_matches(' '),
    })
}

/// An smaps field line (`Key: value`), as opposed to a mapping header.
fn is_field_line(line: &str) -> bool {
    line.split(' ').next().is_some_and(|t| t.ends_with(':'))
}

/// `"   4 kB"` -> 4096.
fn parse_kb(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some(u) if u.eq_ignore_ascii_case("kB") => n.checked_mul(1024),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// /proc/self/maps and /proc/self/smaps text.

pub(super) fn scan_file(path: &str, start: usize, end: usize, smaps: bool, live: &Live) -> io::Result<Vec<Mapping>> {
    let file = File::open(path)?;
    scan(BufReader::with_capacity(64 * 1024, file), start, end, smaps, live)
}

/// Read maps/smaps text up to the first mapping at or beyond `end`, building the mappings
/// that intersect `[start, end)`.
fn scan<R: BufRead>(mut reader: R, start: usize, end: usize, smaps: bool, live: &Live) -> io::Result<Vec<Mapping>> {
    let mut out = Vec::new();
    // The intersecting mapping whose smaps fields are being read.
    let mut pending: Option<(Mapping, Extra)> = None;
    let mut buf = Vec::with_capacity(256);
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if smaps && is_field_line(line) {
            if let Some((m, x)) = pending.as_mut() {
                if let Some(v) = line.strip_prefix("VmFlags:") {
                    let mut locked = false;
                    for flag in v.split_whitespace() {
                        locked |= flag == "lo";
                        x.hugetlb_flag |= flag == "ht";
                    }
                    m.locked = Some(locked);
                } else if let Some(v) = line.strip_prefix("KernelPageSize:") {
                    x.kernel_page_size = parse_kb(v);
                }
            }
            continue;
        }
        let Some((s, e)) = quick_range(line) else {
            continue;
        };
        if let Some((mut m, x)) = pending.take() {
            live.finish(&mut m, &x);
            out.push(m);
        }
        if s >= end {
            break;
        }
        if e <= start {
            continue;
        }
        if let Some(h) = parse_header(line) {
            let extra = Extra { dev_major: Some(h.dev_major), ..Extra::default() };
            pending = Some((h.to_mapping(), extra));
        }
    }
    if let Some((mut m, x)) = pending.take() {
        live.finish(&mut m, &x);
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1835106                    /usr/bin/cat
55d0c0a02000-55d0c0a07000 r-xp 00002000 fd:01 1835106                    /usr/bin/cat
55d0c1c9e000-55d0c1cbf000 rw-p 00000000 00:00 0                          [heap]
7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 
7f1e30000000-7f1e30400000 rw-s 00000000 00:01 4                          /SYSV00000000 (deleted)
7f1e30400000-7f1e30600000 rw-s 00000000 00:01 1025                       /memfd:regcheck-test (deleted)
7f1e30600000-7f1e30800000 rw-s 00000000 00:1a 77                         /dev/shm/ring buffer 0
7f1e30800000-7f1e30a00000 rw-s 00000000 00:0f 12                         /anon_hugepage (deleted)
7f1e30a00000-7f1e30a01000 rw-s 00000000 00:05 371                        /dev/davinci0
7f1e30a01000-7f1e30a02000 rw-s 00000000 00:01 9                          /dev/zero (deleted)
7f1e30a02000-7f1e30a03000 r--p 00000000 fd:01 42                         /home/user/my data/file name.bin (deleted)
7f1e30a03000-7f1e30a04000 rw-p 00000000 00:00 0                          [anon:glibc: malloc arena]
7f1e30a04000-7f1e30a05000 rw-s 00000000 00:0e 1                          anon_inode:[io_uring]
7ffd6e9c4000-7ffd6e9e5000 rw-p 00000000 00:00 0                          [stack]
7ffd6e9f2000-7ffd6e9f6000 r--p 00000000 00:00 0                          [vvar]
7ffd6e9f6000-7ffd6e9f8000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn parses_maps_lines() {
        let m = parse_maps_line(MAPS.lines().next().unwrap()).unwrap();
        assert_eq!((m.start, m.end), (0x55d0c0a00000, 0x55d0c0a02000));
        assert!(m.readable && !m.writable && !m.shared);
        assert_eq!(m.path, "/usr/bin/cat");
        assert_eq!(m.backing, Backing::File("/usr/bin/cat".into()));
        assert_eq!(m.locked, None);

        let all = parse_maps(MAPS);
        assert_eq!(all.len(), MAPS.lines().count());
        let backings: Vec<Backing> = all.iter().map(|m| m.backing.clone()).collect();
        use Backing::*;
        assert_eq!(
            backings,
            vec![
                File("/usr/bin/cat".into()),
                File("/usr/bin/cat".into()),
                Heap,
                Anonymous,
                SharedMemory("/SYSV00000000 (deleted)".into()),
                SharedMemory("/memfd:regcheck-test (deleted)".into()),
                SharedMemory("/dev/shm/ring buffer 0".into()),
                HugeTlb("/anon_hugepage (deleted)".into()),
                Device("/dev/davinci0".into()),
                Anonymous,
                File("/home/user/my data/file name.bin (deleted)".into()),
                Anonymous,
                Special("anon_inode:[io_uring]".into()),
                Stack,
                Special("[vvar]".into()),
                Special("[vdso]".into()),
                Special("[vsyscall]".into()),
            ]
        );
        assert_eq!(all[3].path, "");
        assert!(all[4].shared && all[4].writable);
        assert_eq!(all[6].path, "/dev/shm/ring buffer 0");
        assert_eq!(all[10].path, "/home/user/my data/file name.bin (deleted)");
        assert!(all[16].start > all[15].start);
    }

    #[test]
    fn rejects_malformed_lines() {
        for line in [
            "",
            "garbage",
            "Size:                  4 kB",
            "VmFlags: rd wr mr mw me ac sd",
            "7f00-7e00 rw-p 00000000 00:00 0",
            "7f00-7f10 rw-q 00000000 00:00 0",
            "7f00-7f10 rwp 00000000 00:00 0",
            "7f00-7f10 rw-p 00000000 0000 0",
            "7f00-7f10 rw-p zz 00:00 0",
            "7f00-7f10 rw-p 00000000 00:00",
            "+7f00-7f10 rw-p 00000000 00:00 0",
            "7f00-1ffffffffffffffff rw-p 00000000 00:00 0",
        ] {
            assert!(parse_maps_line(line).is_none(), "{line:?}");
        }
        let m = parse_maps_line("7f00-7f10 rw-p 00000000 00:00 0").unwrap();
        assert_eq!((m.path.as_str(), m.backing), ("", Backing::Anonymous));
        let m = parse_maps_line("7f00-7f10 rw-p 00000000 103:02 5 /x\n").unwrap();
        assert_eq!(m.path, "/x");
        assert_eq!(parse_maps_line("7f00-7f10 rw-p 00000000 00:00 0 [stack:1234]").unwrap().backing, Backing::Stack);
    }

    const SMAPS: &str = "\
7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 
Size:                132 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                   8 kB
Locked:                0 kB
THPeligible:           0
VmFlags: rd wr mr mw me ac sd
7f1e30000000-7f1e30400000 rw-s 00000000 00:01 4                          /SYSV00000000 (deleted)
Size:               4096 kB
KernelPageSize:        4 kB
Locked:             4096 kB
VmFlags: rd wr sh mr mw me ms lo sd
7f1e30400000-7f1e30600000 rw-s 00000000 00:0f 1025                       /memfd:huge (deleted)
Size:               2048 kB
KernelPageSize:     2048 kB
VmFlags: rd wr sh mr mw me ms de ht sd
7f1e30a02000-7f1e30a03000 r--p 00000000 fd:01 42                         /home/user/my data/f.bin
Size:                  4 kB
7ffd6e9c4000-7ffd6e9e5000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
KernelPageSize:        4 kB
VmFlags: rd wr mr mw me gd ac
";

    #[test]
    fn parses_smaps() {
        let all = parse_smaps(SMAPS);
        assert_eq!(all.len(), 5);
        assert_eq!(all[0].locked, Some(false));
        assert_eq!(all[0].backing, Backing::Anonymous);
        assert_eq!(all[1].locked, Some(true));
        assert_eq!(all[1].backing, Backing::SharedMemory("/SYSV00000000 (deleted)".into()));
        assert_eq!(all[2].backing, Backing::HugeTlb("/memfd:huge (deleted)".into()));
        assert_eq!(all[2].locked, Some(false));
        assert_eq!(all[3].locked, None, "no VmFlags line");
        assert_eq!(all[3].path, "/home/user/my data/f.bin");
        assert_eq!(all[4].backing, Backing::Stack);
        // Same headers as a maps parse.
        let headers: String =
            SMAPS.lines().filter(|l| parse_maps_line(l).is_some()).map(|l| format!("{l}\n")).collect();
        let plain = parse_maps(&headers);
        for (a, b) in all.iter().zip(&plain) {
            assert_eq!((a.start, a.end, &a.path), (b.start, b.end, &b.path));
        }
    }

    #[test]
    fn scan_reads_only_the_range() {
        let live = Live::pure();
        let v = scan(MAPS.as_bytes(), 0x7f1e30400000, 0x7f1e30600001, false, &live).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].start, 0x7f1e30400000);
        assert_eq!(v[1].start, 0x7f1e30600000);
        // A range touching nothing.
        let v = scan(MAPS.as_bytes(), 0x1000, 0x2000, false, &live).unwrap();
        assert!(v.is_empty());
        // smaps fields of a skipped mapping do not leak into the next.
        let v = scan(SMAPS.as_bytes(), 0x7f1e30a02000, 0x7f1e30a03000, true, &live).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].locked, None);
        let v = scan(SMAPS.as_bytes(), 0x7f1e30000000, 0x7f1e30000001, true, &live).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].locked, Some(true));
    }

    #[test]
    fn classifies_names() {
        use Backing::*;
        let cases: &[(&str, Backing)] = &[
            ("", Anonymous),
            ("[heap]", Heap),
            ("[stack]", Stack),
            ("[stack:42]", Stack),
            ("[vdso]", Special("[vdso]".into())),
            ("[anon:x]", Anonymous),
            ("[anon_shmem:y]", Anonymous),
            ("/dev/shm/a", SharedMemory("/dev/shm/a".into())),
            ("/dev/shm/a (deleted)", SharedMemory("/dev/shm/a (deleted)".into())),
            ("/memfd:x", SharedMemory("/memfd:x".into())),
            ("/SYSV0000beef (deleted)", SharedMemory("/SYSV0000beef (deleted)".into())),
            ("/anon_hugepage", HugeTlb("/anon_hugepage".into())),
            ("/dev/zero (deleted)", Anonymous),
            ("/dev/davinci_manager", Device("/dev/davinci_manager".into())),
            ("/dmabuf:", Device("/dmabuf:".into())),
            ("/usr/lib/libc.so.6", File("/usr/lib/libc.so.6".into())),
            ("/tmp/x (deleted)", File("/tmp/x (deleted)".into())),
            ("anon_inode:[perf_event]", Special("anon_inode:[perf_event]".into())),
        ];
        for (name, want) in cases {
            assert_eq!(&classify(name), want, "{name:?}");
        }
    }
}
