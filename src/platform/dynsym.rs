//! Reading a loaded object's dynamic symbol table in memory, without asking the loader's
//! `dlsym` (which regcheck itself defines: see `ffi::dl`). Used to find the C library's own
//! `dlsym`, `dlvsym` and `dlopen` the first time they are needed, and to tell whether a
//! name is one of regcheck's own functions.
//!
//! No allocation, no lock, no system call: safe to run inside a `dlsym` called from another
//! library's constructor, or from a sanitizer's start-up.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// One loaded object's dynamic symbols (addresses in memory).
#[derive(Debug, Clone, Copy, Default)]
pub struct DynSyms {
    /// The load bias.
    pub base: usize,
    symtab: usize,
    strtab: usize,
    gnu_hash: usize,
    hash: usize,
    versym: usize,
    /// The lowest and highest address of its `PT_LOAD` segments.
    pub start: usize,
    pub end: usize,
    /// Its dynamic section, and its `PT_GNU_RELRO` range (read-only after relocation).
    dynamic: usize,
    relro: (usize, usize),
}

/// An entry of the dynamic section (`Elf64_Dyn`).
#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

const DT_NULL: i64 = 0;
const DT_HASH: i64 = 4;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;
const DT_VERSYM: i64 = 0x6fff_fff0;
const STT_FUNC: u8 = 2;
const STT_GNU_IFUNC: u8 = 10;

/// The GNU hash of a symbol name.
fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

/// The SysV hash of a symbol name.
fn sysv_hash(name: &[u8]) -> u32 {
    let mut h = 0u32;
    for &c in name {
        h = (h << 4).wrapping_add(c as u32);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

impl DynSyms {
    /// From `dl_iterate_phdr`'s description of an object.
    ///
    /// # Safety
    /// `info` describes a mapped object (as `dl_iterate_phdr` hands it).
    pub unsafe fn from_phdr_info(info: &libc::dl_phdr_info) -> Option<DynSyms> {
        let base = info.dlpi_addr as usize;
        let mut s = DynSyms { base, start: usize::MAX, ..DynSyms::default() };
        let mut dynamic = 0usize;
        for i in 0..info.dlpi_phnum as usize {
            let ph = &*info.dlpi_phdr.add(i);
            match ph.p_type {
                libc::PT_LOAD => {
                    let a = base + ph.p_vaddr as usize;
                    s.start = s.start.min(a);
                    s.end = s.end.max(a + ph.p_memsz as usize);
                }
                libc::PT_DYNAMIC => dynamic = base + ph.p_vaddr as usize,
                libc::PT_GNU_RELRO => {
                    let a = base + ph.p_vaddr as usize;
                    s.relro = (a, a + ph.p_memsz as usize);
                }
                _ => {}
            }
        }
        if dynamic == 0 {
            return None;
        }
        s.dynamic = dynamic;
        // glibc relocates the dynamic section's addresses in place, except for the vDSO's
        // (and on the few targets with a read-only one): an address below the load bias is
        // still relative to it.
        let at = |v: u64| -> usize {
            let v = v as usize;
            if v < base {
                base + v
            } else {
                v
            }
        };
        let mut d = dynamic as *const Dyn;
        loop {
            let tag = (*d).tag;
            if tag == DT_NULL {
                break;
            }
            let v = (*d).val;
            match tag {
                DT_SYMTAB => s.symtab = at(v),
                DT_STRTAB => s.strtab = at(v),
                DT_GNU_HASH => s.gnu_hash = at(v),
                DT_HASH => s.hash = at(v),
                DT_VERSYM => s.versym = at(v),
                _ => {}
            }
            d = d.add(1);
        }
        (s.symtab != 0 && s.strtab != 0 && (s.gnu_hash != 0 || s.hash != 0)).then_some(s)
    }

    /// The names of the object's `DT_NEEDED` dependencies, to `f`.
    ///
    /// # Safety
    /// The object is still mapped.
    pub unsafe fn needed(&self, mut f: impl FnMut(&CStr)) {
        const DT_NEEDED: i64 = 1;
        if self.dynamic == 0 {
            return;
        }
        let mut d = self.dynamic as *const Dyn;
        while (*d).tag != DT_NULL {
            if (*d).tag == DT_NEEDED {
                f(CStr::from_ptr((self.strtab + (*d).val as usize) as *const c_char));
            }
            d = d.add(1);
        }
    }

    /// Whether `addr` lies in the object's load segments.
    pub fn holds(&self, addr: usize) -> bool {
        self.start <= addr && addr < self.end
    }

    unsafe fn sym(&self, i: usize) -> &libc::Elf64_Sym {
        &*(self.symtab as *const libc::Elf64_Sym).add(i)
    }

    /// Symbol `i` is a defined function named `name`, at its default version.
    unsafe fn matches(&self, i: usize, name: &[u8]) -> Option<usize> {
        let sym = self.sym(i);
        let kind = sym.st_info & 0xf;
        if sym.st_shndx == 0 || sym.st_value == 0 || (kind != STT_FUNC && kind != STT_GNU_IFUNC) {
            return None;
        }
        if self.versym != 0 && *(self.versym as *const u16).add(i) & 0x8000 != 0 {
            return None;
        }
        let n = CStr::from_ptr((self.strtab + sym.st_name as usize) as *const c_char);
        (n.to_bytes() == name && kind == STT_FUNC).then(|| self.base + sym.st_value as usize)
    }

    /// The address of the function `name` this object defines (its default version), if any.
    /// (An `IFUNC` is not resolved here: none of the names asked for is one.)
    ///
    /// # Safety
    /// The object is still mapped.
    pub unsafe fn function(&self, name: &[u8]) -> Option<usize> {
        if self.gnu_hash != 0 {
            let h = self.gnu_hash as *const u32;
            let (nbuckets, symoffset, bloom_size) = (*h as usize, *h.add(1) as usize, *h.add(2) as usize);
            if nbuckets == 0 {
                return None;
            }
            let buckets = (self.gnu_hash + 16 + bloom_size * std::mem::size_of::<usize>()) as *const u32;
            let chain = buckets.add(nbuckets);
            let hash = gnu_hash(name);
            let mut i = *buckets.add(hash as usize % nbuckets) as usize;
            if i < symoffset {
                return None;
            }
            loop {
                let ch = *chain.add(i - symoffset);
                if ch | 1 == hash | 1 {
                    if let Some(a) = self.matches(i, name) {
                        return Some(a);
                    }
                }
                if ch & 1 != 0 {
                    return None;
                }
                i += 1;
            }
        }
        let h = self.hash as *const u32;
        let (nbucket, _nchain) = (*h as usize, *h.add(1) as usize);
        if nbucket == 0 {
            return None;
        }
        let chain = h.add(2 + nbucket);
        let mut i = *h.add(2 + sysv_hash(name) as usize % nbucket) as usize;
        while i != 0 {
            if let Some(a) = self.matches(i, name) {
                return Some(a);
            }
            i = *chain.add(i) as usize;
        }
        None
    }
}

/// The C library's `dlsym`, `dlvsym`, `dlopen`, in that order: where the stubs jump.
#[no_mangle]
pub static regcheck_dl_next: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];

const NAMES: [&[u8]; 3] = [b"dlsym", b"dlvsym", b"dlopen"];

/// regcheck's own object, found at the first stub call.
pub struct Own {
    pub syms: Option<DynSyms>,
    /// regcheck's object comes after the C library's in the loader's order: it was opened
    /// after the program started (or as a dependency of a dependency).
    pub after_c_library: bool,
}

static OWN: OnceLock<Own> = OnceLock::new();

/// Finds regcheck's object and the next definitions of the three functions (once).
pub fn bootstrap() -> &'static Own {
    if let Some(o) = OWN.get() {
        return o;
    }
    OWN.get_or_init(|| {
        let here = bootstrap as *const () as usize;
        let mut own: Option<DynSyms> = None;
        let mut next = [0usize; 3];
        // The definitions after regcheck's object, in the loader's order (as RTLD_NEXT from
        // regcheck would find them); before it, or without it, any other object's.
        let mut fallback = [0usize; 3];
        let mut c_library_seen = false;
        let mut after_c_library = false;
        each_object(|o| {
            // SAFETY: the object is mapped during the walk.
            if !c_library_seen && unsafe { o.function(b"gnu_get_libc_version") }.is_some() {
                c_library_seen = true;
            }
            if o.holds(here) {
                after_c_library = c_library_seen;
                own = Some(*o);
                return false;
            }
            for (i, name) in NAMES.iter().enumerate() {
                // SAFETY: the object is mapped during the walk.
                if let Some(a) = unsafe { o.function(name) } {
                    let slot = if own.is_some() { &mut next[i] } else { &mut fallback[i] };
                    if *slot == 0 {
                        *slot = a;
                    }
                }
            }
            false
        });
        for i in 0..3 {
            let a = if next[i] != 0 { next[i] } else { fallback[i] };
            if a == 0 {
                let msg = b"regcheck: error: cannot find the C library's dlsym/dlvsym/dlopen; aborting\n";
                // SAFETY: writes a static buffer to stderr, then ends the process (there is no
                // function to jump to).
                unsafe {
                    libc::write(2, msg.as_ptr() as *const c_void, msg.len());
                    libc::abort();
                }
            }
            regcheck_dl_next[i].store(a, Ordering::Release);
        }
        Own { syms: own, after_c_library }
    })
}

/// Whether the stubs are in this build and run for this object's callers: regcheck's own
/// `dlsym` is the first definition in the global scope. False in the static library, and for
/// a regcheck `dlopen`ed after the C library was loaded.
pub fn interposes() -> bool {
    let own = bootstrap_if_present();
    let Some(syms) = own.and_then(|o| o.syms) else { return false };
    // SAFETY: RTLD_DEFAULT from regcheck: the global scope's first definition.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"dlsym".as_ptr()) } as usize;
    syms.holds(global)
}

/// [`bootstrap`], only where the stubs exist (regcheck's own object defines `dlsym`).
fn bootstrap_if_present() -> Option<&'static Own> {
    let own = bootstrap();
    // SAFETY: regcheck's own object is mapped.
    own.syms.filter(|s| unsafe { s.function(b"dlsym") }.is_some()).map(|_| own)
}

const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_PLTRELSZ: i64 = 2;
const DT_JMPREL: i64 = 23;
#[cfg(target_arch = "x86_64")]
const BINDINGS: [u32; 2] = [6, 7]; // R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT
#[cfg(target_arch = "aarch64")]
const BINDINGS: [u32; 2] = [1025, 1026]; // R_AARCH64_GLOB_DAT, R_AARCH64_JUMP_SLOT
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const BINDINGS: [u32; 0] = [];

/// A relocation with addend (`Elf64_Rela`).
#[repr(C)]
struct Rela {
    offset: u64,
    info: u64,
    addend: i64,
}

/// Point the object's own bindings (GOT slots: PLT and data) of the functions `replace`
/// answers for at what it answers: how a library opened with `RTLD_DEEPBIND`, whose bindings
/// skip the global scope, is brought to regcheck. A slot in the object's read-only-after-
/// relocation part is made writable for the write and read-only again. Returns how many
/// slots were written.
///
/// # Safety
/// The object at `base` is loaded and relocated, and no other thread binds its slots now (it
/// was just opened, and has not run a call yet).
pub unsafe fn rebind(base: usize, replace: impl Fn(&CStr) -> Option<usize>) -> usize {
    let mut found: Option<DynSyms> = None;
    each_object(|o| {
        if o.base == base {
            found = Some(*o);
        }
        found.is_some()
    });
    let Some(syms) = found else { return 0 };
    let (dynamic, (relro_start, relro_end)) = (syms.dynamic, syms.relro);
    let at = |v: u64| -> usize {
        let v = v as usize;
        if v < base {
            base + v
        } else {
            v
        }
    };
    let (mut rela, mut relasz, mut jmprel, mut pltrelsz) = (0usize, 0usize, 0usize, 0usize);
    let mut d = dynamic as *const Dyn;
    while (*d).tag != DT_NULL {
        match (*d).tag {
            DT_RELA => rela = at((*d).val),
            DT_RELASZ => relasz = (*d).val as usize,
            DT_JMPREL => jmprel = at((*d).val),
            DT_PLTRELSZ => pltrelsz = (*d).val as usize,
            _ => {}
        }
        d = d.add(1);
    }
    let page = crate::platform::page_size();
    let mut written = 0;
    for (table, size) in [(rela, relasz), (jmprel, pltrelsz)] {
        if table == 0 {
            continue;
        }
        for i in 0..size / std::mem::size_of::<Rela>() {
            let r = &*(table as *const Rela).add(i);
            let (kind, index) = ((r.info & 0xffff_ffff) as u32, (r.info >> 32) as usize);
            if index == 0 || !BINDINGS.contains(&kind) {
                continue;
            }
            let sym = syms.sym(index);
            let name = CStr::from_ptr((syms.strtab + sym.st_name as usize) as *const c_char);
            // A definition of the object's own (the vendor's library, an application's layer)
            // is left alone: only its bindings to others are.
            if syms.function(name.to_bytes()).is_some() {
                continue;
            }
            let Some(to) = replace(name) else { continue };
            let slot = base + r.offset as usize;
            let protected = relro_start <= slot && slot < relro_end;
            let page_start = slot & !(page - 1);
            if protected && libc::mprotect(page_start as *mut c_void, page, libc::PROT_READ | libc::PROT_WRITE) != 0 {
                continue;
            }
            std::ptr::write_volatile(slot as *mut usize, to);
            if protected {
                libc::mprotect(page_start as *mut c_void, page, libc::PROT_READ);
            }
            written += 1;
        }
    }
    written
}

/// Every loaded object, in the loader's order, to `f` (until it returns `true`).
pub fn each_object(mut f: impl FnMut(&DynSyms) -> bool) {
    unsafe extern "C" fn cb(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        let f = &mut *(data as *mut &mut dyn FnMut(&DynSyms) -> bool);
        match DynSyms::from_phdr_info(&*info) {
            Some(s) => f(&s) as c_int,
            None => 0,
        }
    }
    let mut f: &mut dyn FnMut(&DynSyms) -> bool = &mut f;
    // SAFETY: the callback gets the pointer to `f`, alive for the call.
    unsafe { libc::dl_iterate_phdr(Some(cb), &mut f as *mut _ as *mut c_void) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes() {
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(gnu_hash(b"printf"), 0x156b_2bb8);
        assert_eq!(sysv_hash(b"printf"), 0x077905a6);
    }

    #[test]
    fn finds_the_c_library_s_functions_and_not_others() {
        let mut found = None;
        each_object(|o| {
            // SAFETY: the objects are mapped during the walk.
            if let Some(a) = unsafe { o.function(b"gnu_get_libc_version") } {
                found = Some((a, unsafe { o.function(b"dlsym") }, unsafe { o.function(b"no_such_function_x") }));
                return true;
            }
            false
        });
        let (a, dlsym, none) = found.expect("the C library");
        assert_eq!(a, libc::gnu_get_libc_version as *const () as usize);
        assert!(dlsym.is_some());
        assert_eq!(none, None);
    }
}
