//! Which loaded object is which, by file name (pure functions, unit-tested).

/// What the module needs to know about a loaded object. Stored in the low bits of the
/// object's audit cookie (`link_map`s are at least 8-byte aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    /// Anything else: its bindings are left alone.
    Other = 0,
    /// `libregcheck.so` of the application's namespace (the redirection target).
    Regcheck = 1,
    /// An ACL runtime library: `libascendcl.so`, `libacl_rt.so`, `libacl_rt_impl.so`.
    Acl = 2,
    /// The HIXL library `libcann_hixl.so`.
    Hixl = 3,
}

pub const KIND_MASK: usize = 0x7;

impl Kind {
    pub fn from_bits(bits: usize) -> Kind {
        match bits & KIND_MASK {
            1 => Kind::Regcheck,
            2 => Kind::Acl,
            3 => Kind::Hixl,
            _ => Kind::Other,
        }
    }

    /// A vendor library whose exported functions regcheck may stand in for.
    pub fn is_vendor(self) -> bool {
        matches!(self, Kind::Acl | Kind::Hixl)
    }
}

/// File names (prefixes, so that `libascendcl.so.1.2` matches too) of the vendor libraries
/// whose definitions may be redirected, with the group each belongs to.
pub const VENDOR_LIBS: [(&[u8], Kind); 4] = [
    (b"libascendcl.so", Kind::Acl),
    (b"libacl_rt.so", Kind::Acl),
    (b"libacl_rt_impl.so", Kind::Acl),
    (b"libcann_hixl.so", Kind::Hixl),
];

/// File name prefix of the redirection target.
pub const REGCHECK_LIB: &[u8] = b"libregcheck.so";

/// Symbol that marks a regcheck build under another file name (e.g. a program linked with
/// the static library and `-rdynamic`).
pub const REGCHECK_MARKER: &[u8] = b"regcheck_version";

/// The part of a path after its last `/`.
pub fn basename(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&c| c == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Classifies an object by the base name of its path (markers are checked elsewhere).
pub fn classify(path: &[u8]) -> Kind {
    let base = basename(path);
    if base.starts_with(REGCHECK_LIB) {
        return Kind::Regcheck;
    }
    for (prefix, kind) in VENDOR_LIBS {
        if base.starts_with(prefix) {
            return kind;
        }
    }
    Kind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basenames() {
        assert_eq!(basename(b"/a/b/libx.so"), b"libx.so");
        assert_eq!(basename(b"libx.so"), b"libx.so");
        assert_eq!(basename(b""), b"");
        assert_eq!(basename(b"/dir/"), b"");
    }

    #[test]
    fn vendor_libraries_and_groups() {
        assert_eq!(classify(b"/usr/local/Ascend/lib64/libascendcl.so"), Kind::Acl);
        assert_eq!(classify(b"libacl_rt.so"), Kind::Acl);
        assert_eq!(classify(b"/x/libacl_rt.so.8"), Kind::Acl);
        assert_eq!(classify(b"/x/libacl_rt_impl.so"), Kind::Acl);
        assert_eq!(classify(b"/x/libcann_hixl.so"), Kind::Hixl);
        assert!(classify(b"/x/libcann_hixl.so").is_vendor());
    }

    #[test]
    fn regcheck_and_look_alikes() {
        assert_eq!(classify(b"/t/release/libregcheck.so"), Kind::Regcheck);
        assert_eq!(classify(b"/t/libregcheck.so.0"), Kind::Regcheck);
        assert_eq!(classify(b"/t/libregcheck_audit.so"), Kind::Other);
        assert_eq!(classify(b"/ascendcl/libfoo.so"), Kind::Other);
        assert_eq!(classify(b"/x/libhixl.so"), Kind::Other);
        assert_eq!(classify(b"/x/libascendcl_extra.so"), Kind::Other);
        assert_eq!(classify(b""), Kind::Other);
    }

    #[test]
    fn kind_bits_round_trip() {
        for k in [Kind::Other, Kind::Regcheck, Kind::Acl, Kind::Hixl] {
            assert_eq!(Kind::from_bits(0x7fff_0000 | k as usize), k);
        }
        assert!(!Kind::Regcheck.is_vendor());
        assert!(!Kind::Other.is_vendor());
    }
}
