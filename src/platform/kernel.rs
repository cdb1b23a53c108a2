//! Kernel release parsing and comparison ("5.10.0-60.18.0.50.oe2203.aarch64" is 5.10.0).
//!
//! Versions are compared as numbers, never as text: "5.10" is newer than "5.4" and is not
//! "5.1". Distribution kernels backport features, so callers should treat any threshold built
//! on this as a setting, not a fact.

use std::ffi::CStr;

/// A kernel version as numbers; ordered numerically ("5.4" < "5.10").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

/// Parse a run of ASCII digits at the start of `s`: (value, rest). `None` when `s` does not
/// start with a digit or the number does not fit in a `u32`.
fn leading_number(s: &str) -> Option<(u32, &str)> {
    let len = s.bytes().take_while(u8::is_ascii_digit).count();
    if len == 0 {
        return None;
    }
    let value = s[..len].parse::<u32>().ok()?;
    Some((value, &s[len..]))
}

impl KernelVersion {
    /// Build a version from its three numbers.
    pub const fn new(major: u32, minor: u32, patch: u32) -> KernelVersion {
        KernelVersion { major, minor, patch }
    }

    /// Parse a release string such as `uname -r` prints. Missing parts are 0.
    /// Returns `None` when the string does not start with a number.
    ///
    /// Only the leading `MAJOR[.MINOR[.PATCH]]` is read; whatever follows (a distribution
    /// suffix such as `-60.18.0.50.oe2203.aarch64`, `-rc3`, `-fc-v595`) is ignored. Leading and
    /// trailing whitespace is tolerated. A number too large for a `u32` makes the whole string
    /// invalid.
    pub fn parse(release: &str) -> Option<KernelVersion> {
        let s = release.trim();
        let (major, mut rest) = leading_number(s)?;
        let mut parts = [0u32; 2];
        for part in &mut parts {
            let Some(after_dot) = rest.strip_prefix('.') else {
                break;
            };
            match leading_number(after_dot) {
                Some((n, r)) => {
                    *part = n;
                    rest = r;
                }
                // "5.x": the number is over; a too-large number is an error.
                None if after_dot.starts_with(|c: char| c.is_ascii_digit()) => return None,
                None => break,
            }
        }
        Some(KernelVersion::new(major, parts[0], parts[1]))
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The running kernel's release (`uname().release`), falling back to
/// `/proc/sys/kernel/osrelease`. `None` when neither is available or both are empty.
pub fn current_release() -> Option<String> {
    uname_release().or_else(|| {
        let text = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    })
}

/// The running kernel's version: [`current_release`] parsed with [`KernelVersion::parse`].
pub fn current() -> Option<KernelVersion> {
    KernelVersion::parse(&current_release()?)
}

/// `uname(2)`'s release field.
fn uname_release() -> Option<String> {
    // SAFETY: utsname is a plain C struct of char arrays; all-zero is a valid value.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    let bytes: Vec<u8> = uts.release.iter().map(|&c| c as u8).collect();
    let release = CStr::from_bytes_until_nul(&bytes).ok()?;
    let release = release.to_string_lossy().trim().to_owned();
    (!release.is_empty()).then_some(release)
}

/// The kernel whose threshold decides whether pageable memory may be registered: the release,
/// its version, and the newest version that needs page-locked memory (the rules give it its
/// methods, `crate::rules::acl`).
#[derive(Debug, Clone)]
pub struct KernelFacts {
    pub release: String,
    pub version: Option<KernelVersion>,
    pub pageable_max: KernelVersion,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> Option<KernelVersion> {
        Some(KernelVersion::new(major, minor, patch))
    }

    #[test]
    fn parses_distribution_releases() {
        assert_eq!(KernelVersion::parse("5.10.0-60.18.0.50.oe2203.aarch64"), v(5, 10, 0));
        assert_eq!(KernelVersion::parse("5.4"), v(5, 4, 0));
        assert_eq!(KernelVersion::parse("6.18.44-fc-v595"), v(6, 18, 44));
        assert_eq!(KernelVersion::parse("4.19.90-24.4.v2101.ky10.aarch64"), v(4, 19, 90));
        assert_eq!(KernelVersion::parse("5.10"), v(5, 10, 0));
        assert_eq!(KernelVersion::parse("6.1.0-rc3"), v(6, 1, 0));
        assert_eq!(KernelVersion::parse("6.8.0-45-generic"), v(6, 8, 0));
        assert_eq!(KernelVersion::parse("6.10-rc1"), v(6, 10, 0));
        assert_eq!(KernelVersion::parse("6"), v(6, 0, 0));
        assert_eq!(KernelVersion::parse(" 5.15.0\n"), v(5, 15, 0));
        assert_eq!(KernelVersion::parse("3.10.0-1160.el7.x86_64"), v(3, 10, 0));
        assert_eq!(KernelVersion::parse("5.4.0+"), v(5, 4, 0));
        assert_eq!(KernelVersion::parse("5.x.3"), v(5, 0, 0));
    }

    #[test]
    fn rejects_garbage() {
        for s in
            ["", "   ", "garbage", "linux-5.10", "v5.10", "-5.10", ".5.10", "+5.10", "99999999999.1", "5.99999999999"]
        {
            assert_eq!(KernelVersion::parse(s), None, "{s:?}");
        }
    }

    #[test]
    fn orders_numerically() {
        let p = |s| KernelVersion::parse(s).unwrap();
        assert!(p("5.4") < p("5.10"));
        assert!(p("5.10") < p("5.19"));
        assert!(p("5.19") < p("6.1"));
        assert!(p("5.4.280") < p("5.10.0"));
        assert!(p("5.10.0") < p("5.10.1"));
        assert!(p("4.19.90-24.4.v2101.ky10.aarch64") < p("5.10.0-60.18.0.50.oe2203.aarch64"));
        assert_eq!(p("5.10"), p("5.10.0-60.18.0.50.oe2203.aarch64"));
        assert!(p("5.1") < p("5.10"));
    }

    #[test]
    fn displays_three_numbers() {
        assert_eq!(KernelVersion::parse("5.4").unwrap().to_string(), "5.4.0");
        assert_eq!(KernelVersion::parse("6.18.44-fc-v595").unwrap().to_string(), "6.18.44");
    }

    #[test]
    fn current_release_is_parseable() {
        let release = current_release().expect("running on Linux");
        assert!(KernelVersion::parse(&release).is_some(), "{release:?}");
        let proc = std::fs::read_to_string("/proc/sys/kernel/osrelease");
        if let Ok(proc) = proc {
            assert_eq!(release, proc.trim());
        }
        assert!(current().is_some());
    }
}
