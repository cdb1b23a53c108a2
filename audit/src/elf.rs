//! Look-ups in the dynamic symbol table of a loaded object, through its `link_map`.
//!
//! Only what the dynamic linker itself uses: `l_addr`, the `PT_DYNAMIC` entries at `l_ld`
//! (`DT_SYMTAB`, `DT_STRTAB`, `DT_GNU_HASH` or `DT_HASH`, `DT_VERSYM`). No allocation, no
//! locks, no call into libc: safe to use from `la_symbind64`.

use crate::sys::{
    Dyn, LinkMap, Sym, DT_GNU_HASH, DT_HASH, DT_NULL, DT_STRTAB, DT_SYMTAB, DT_VERSYM, SHN_UNDEF, STB_GLOBAL, STB_WEAK,
    STT_FUNC, STT_OBJECT, STV_DEFAULT, STV_PROTECTED, VERSYM_HIDDEN,
};
use core::ffi::c_char;

/// Longest symbol name compared (C++ mangled names of the HIXL members are ~150 bytes).
const MAX_NAME: usize = 4096;
/// Upper bound on the number of `PT_DYNAMIC` entries walked.
const MAX_DYN: usize = 1024;

/// A view of one object's dynamic symbol table. Plain addresses, so it can live in atomics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DynSyms {
    pub base: usize,
    pub symtab: usize,
    pub strtab: usize,
    pub gnu_hash: usize,
    pub hash: usize,
    pub versym: usize,
}

/// The bytes of a NUL-terminated name, without the NUL (bounded by [`MAX_NAME`]).
///
/// # Safety
/// `name` is NULL or points to a NUL-terminated string.
pub unsafe fn c_name<'a>(name: *const c_char) -> &'a [u8] {
    if name.is_null() {
        return &[];
    }
    let p = name.cast::<u8>();
    let mut n = 0;
    while n < MAX_NAME && *p.add(n) != 0 {
        n += 1;
    }
    core::slice::from_raw_parts(p, n)
}

/// GNU hash (`DT_GNU_HASH`) of a symbol name.
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(u32::from(c)))
}

/// SysV hash (`DT_HASH`) of a symbol name.
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

impl DynSyms {
    /// Reads the dynamic section of a loaded object.
    ///
    /// # Safety
    /// `map` is NULL or a `link_map` handed out by the dynamic linker for a mapped object.
    pub unsafe fn from_link_map(map: *const LinkMap) -> Option<DynSyms> {
        if map.is_null() || (*map).l_ld.is_null() {
            return None;
        }
        let base = (*map).l_addr;
        // On most targets ld.so relocates these entries in place; where `.dynamic` is
        // read-only (e.g. RISC-V, or a read-only PT_DYNAMIC) it does not. An unrelocated
        // entry of a shared object is an offset below its load address.
        let rel = |v: u64| -> usize {
            let v = v as usize;
            if base != 0 && v < base {
                v.wrapping_add(base)
            } else {
                v
            }
        };
        let mut out = DynSyms { base, ..DynSyms::default() };
        let mut d: *const Dyn = (*map).l_ld;
        for _ in 0..MAX_DYN {
            let e = *d;
            match e.d_tag {
                DT_NULL => break,
                DT_SYMTAB => out.symtab = rel(e.d_val),
                DT_STRTAB => out.strtab = rel(e.d_val),
                DT_GNU_HASH => out.gnu_hash = rel(e.d_val),
                DT_HASH => out.hash = rel(e.d_val),
                DT_VERSYM => out.versym = rel(e.d_val),
                _ => {}
            }
            d = d.add(1);
        }
        if out.symtab == 0 || out.strtab == 0 || (out.gnu_hash == 0 && out.hash == 0) {
            return None;
        }
        Some(out)
    }

    unsafe fn sym(&self, i: usize) -> &Sym {
        &*(self.symtab as *const Sym).add(i)
    }

    unsafe fn name_is(&self, s: &Sym, name: &[u8]) -> bool {
        let p = (self.strtab as *const u8).add(s.st_name as usize);
        for (k, &c) in name.iter().enumerate() {
            if *p.add(k) != c {
                return false;
            }
        }
        *p.add(name.len()) == 0
    }

    /// A symbol this object exports: defined, global or weak, default or protected
    /// visibility, and not a hidden (non-default) version.
    unsafe fn exported(&self, i: usize, s: &Sym) -> bool {
        if s.st_shndx == SHN_UNDEF || !(s.bind() == STB_GLOBAL || s.bind() == STB_WEAK) {
            return false;
        }
        if !(s.visibility() == STV_DEFAULT || s.visibility() == STV_PROTECTED) {
            return false;
        }
        if self.versym != 0 && *(self.versym as *const u16).add(i) & VERSYM_HIDDEN != 0 {
            return false;
        }
        true
    }

    /// The first exported symbol named `name` (see [`DynSyms::exported`]).
    ///
    /// # Safety
    /// `self` was read from a loaded object that is still mapped.
    pub unsafe fn lookup(&self, name: &[u8]) -> Option<Sym> {
        if name.is_empty() {
            return None;
        }
        if self.gnu_hash != 0 {
            self.lookup_gnu(name)
        } else {
            self.lookup_sysv(name)
        }
    }

    /// The run-time address of the function `name` that this object exports, if any.
    ///
    /// # Safety
    /// As for [`DynSyms::lookup`].
    pub unsafe fn function(&self, name: &[u8]) -> Option<usize> {
        match self.lookup(name) {
            Some(s) if s.kind() == STT_FUNC && s.st_value != 0 => Some(self.base.wrapping_add(s.st_value as usize)),
            _ => None,
        }
    }

    /// The run-time address of the data object `name` that this object exports, if any.
    ///
    /// # Safety
    /// As for [`DynSyms::lookup`].
    pub unsafe fn object(&self, name: &[u8]) -> Option<usize> {
        match self.lookup(name) {
            Some(s) if s.kind() == STT_OBJECT && s.st_value != 0 => Some(self.base.wrapping_add(s.st_value as usize)),
            _ => None,
        }
    }

    unsafe fn lookup_gnu(&self, name: &[u8]) -> Option<Sym> {
        let t = self.gnu_hash as *const u32;
        let nbuckets = *t as usize;
        let symoffset = *t.add(1) as usize;
        let bloom_size = *t.add(2) as usize;
        let bloom_shift = *t.add(3);
        if nbuckets == 0 || bloom_size == 0 {
            return None;
        }
        let bloom = t.add(4) as *const usize;
        let bits = usize::BITS;
        let h = gnu_hash(name);
        let word = *bloom.add((h / bits) as usize % bloom_size);
        let mask: usize = (1usize << (h % bits)) | (1usize << ((h >> (bloom_shift % 32)) % bits));
        if word & mask != mask {
            return None;
        }
        let buckets = bloom.add(bloom_size) as *const u32;
        let chain = buckets.add(nbuckets);
        let mut i = *buckets.add(h as usize % nbuckets) as usize;
        if i < symoffset {
            return None;
        }
        loop {
            let h2 = *chain.add(i - symoffset);
            if (h | 1) == (h2 | 1) {
                let s = self.sym(i);
                if self.name_is(s, name) && self.exported(i, s) {
                    return Some(*s);
                }
            }
            if h2 & 1 != 0 {
                return None;
            }
            i += 1;
        }
    }

    unsafe fn lookup_sysv(&self, name: &[u8]) -> Option<Sym> {
        let t = self.hash as *const u32;
        let nbucket = *t as usize;
        let nchain = *t.add(1) as usize;
        if nbucket == 0 {
            return None;
        }
        let bucket = t.add(2);
        let chain = bucket.add(nbucket);
        let mut i = *bucket.add(sysv_hash(name) as usize % nbucket) as usize;
        let mut steps = 0;
        while i != 0 && i < nchain && steps <= nchain {
            let s = self.sym(i);
            if self.name_is(s, name) && self.exported(i, s) {
                return Some(*s);
            }
            i = *chain.add(i) as usize;
            steps += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::{c_int, c_void};

    extern "C" {
        fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
        fn dlinfo(handle: *mut c_void, request: c_int, arg: *mut c_void) -> c_int;
    }
    const RTLD_LAZY: c_int = 1;
    const RTLD_NOLOAD: c_int = 4;
    const RTLD_DI_LINKMAP: c_int = 2;

    fn libc_map() -> (*mut c_void, *const LinkMap) {
        unsafe {
            let h = dlopen(c"libc.so.6".as_ptr(), RTLD_LAZY | RTLD_NOLOAD);
            assert!(!h.is_null());
            let mut map: *const LinkMap = core::ptr::null();
            let rc = dlinfo(h, RTLD_DI_LINKMAP, (&mut map as *mut *const LinkMap).cast());
            assert_eq!(rc, 0);
            (h, map)
        }
    }

    #[test]
    fn hashes_match_the_reference_values() {
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(gnu_hash(b"printf"), 0x156b_2bb8);
        assert_eq!(sysv_hash(b"printf"), 0x0779_05a6);
    }

    #[test]
    fn finds_libc_functions_like_dlsym() {
        let (h, map) = libc_map();
        let syms = unsafe { DynSyms::from_link_map(map) }.expect("libc has a symbol table");
        for name in [c"malloc", c"free", c"write", c"getenv", c"posix_memalign"] {
            let ours = unsafe { syms.function(name.to_bytes()) };
            let theirs = unsafe { dlsym(h, name.as_ptr()) } as usize;
            assert_eq!(ours, Some(theirs), "{name:?}");
        }
    }

    #[test]
    fn unknown_names_and_non_functions_are_not_found() {
        let (_, map) = libc_map();
        let syms = unsafe { DynSyms::from_link_map(map) }.unwrap();
        unsafe {
            assert_eq!(syms.function(b"aclrtHostRegisterV2"), None);
            assert_eq!(syms.function(b""), None);
            // `environ` is data, not a function.
            assert!(syms.lookup(b"environ").is_some());
            assert_eq!(syms.function(b"environ"), None);
        }
    }

    #[test]
    fn sysv_table_gives_the_same_answers_when_present() {
        let (_, map) = libc_map();
        let syms = unsafe { DynSyms::from_link_map(map) }.unwrap();
        if syms.hash == 0 {
            return; // built with --hash-style=gnu only
        }
        let sysv = DynSyms { gnu_hash: 0, ..syms };
        unsafe {
            assert_eq!(sysv.function(b"malloc"), syms.function(b"malloc"));
            assert_eq!(sysv.function(b"nonexistent_symbol_x"), None);
        }
    }

    #[test]
    fn c_name_stops_at_nul() {
        assert_eq!(unsafe { c_name(c"abc".as_ptr()) }, b"abc");
        assert_eq!(unsafe { c_name(core::ptr::null()) }, b"");
    }
}
