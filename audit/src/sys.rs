//! The few ABI items the module needs: `<link.h>`, `<elf.h>`, `<fcntl.h>` and a few libc
//! functions.
//!
//! Declared by hand so that the module has no dependency at all (it is loaded by the dynamic
//! linker into its own namespace, and everything it links is copied there).

use core::ffi::{c_char, c_int, c_long, c_uint, c_void};

/// `LAV_CURRENT` of glibc 2.35 and later. glibc passes its own `LAV_CURRENT` to `la_version`;
/// version 2 is the one under which `la_symbind*` is also called for bind-now relocations.
pub const LAV_CURRENT: c_uint = 2;

/// `la_objopen` return flags: audit bindings from / to this object.
pub const LA_FLG_BINDTO: c_uint = 0x01;
pub const LA_FLG_BINDFROM: c_uint = 0x02;

/// `la_symbind*` flags.
pub const LA_SYMB_NOPLTENTER: c_uint = 0x01;
pub const LA_SYMB_NOPLTEXIT: c_uint = 0x02;
pub const LA_SYMB_DLSYM: c_uint = 0x08;

/// `la_activity` flag: the namespace's list of objects is consistent again.
pub const LA_ACT_CONSISTENT: c_uint = 0;

/// `Lmid_t` of the application's namespace.
pub const LM_ID_BASE: isize = 0;

pub const DT_NULL: i64 = 0;
pub const DT_HASH: i64 = 4;
pub const DT_STRTAB: i64 = 5;
pub const DT_SYMTAB: i64 = 6;
pub const DT_GNU_HASH: i64 = 0x6fff_fef5;
pub const DT_VERSYM: i64 = 0x6fff_fff0;

pub const SHN_UNDEF: u16 = 0;
pub const STT_OBJECT: u8 = 1;
pub const STT_FUNC: u8 = 2;
pub const STB_GLOBAL: u8 = 1;
pub const STB_WEAK: u8 = 2;
pub const STV_DEFAULT: u8 = 0;
pub const STV_PROTECTED: u8 = 3;
/// Bit of a `DT_VERSYM` entry marking a hidden (non-default) symbol version.
pub const VERSYM_HIDDEN: u16 = 0x8000;

/// `Elf64_Sym`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Sym {
    pub st_name: u32,
    pub st_info: u8,
    pub st_other: u8,
    pub st_shndx: u16,
    pub st_value: u64,
    pub st_size: u64,
}

impl Sym {
    pub fn kind(&self) -> u8 {
        self.st_info & 0xf
    }
    pub fn bind(&self) -> u8 {
        self.st_info >> 4
    }
    pub fn visibility(&self) -> u8 {
        self.st_other & 0x3
    }
}

/// `Elf64_Dyn`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dyn {
    pub d_tag: i64,
    pub d_val: u64,
}

/// The public head of glibc's `struct link_map` (`<link.h>`); the rest is private to ld.so.
#[repr(C)]
pub struct LinkMap {
    pub l_addr: usize,
    pub l_name: *const c_char,
    pub l_ld: *const Dyn,
    pub l_next: *mut LinkMap,
    pub l_prev: *mut LinkMap,
}

/// `open` flags (the generic Linux values, shared by x86_64, aarch64, riscv64 and powerpc64).
pub const O_WRONLY: c_int = 0o1;
pub const O_CREAT: c_int = 0o100;
pub const O_APPEND: c_int = 0o2000;
pub const O_CLOEXEC: c_int = 0o2000000;
/// The mode a created log file gets before the umask (the library's: Rust's default).
pub const LOG_FILE_MODE: c_uint = 0o666;

/// `SYS_gettid` (called through `syscall`: `gettid()` itself needs glibc 2.30).
#[cfg(target_arch = "x86_64")]
pub const SYS_GETTID: c_long = 186;
#[cfg(target_arch = "powerpc64")]
pub const SYS_GETTID: c_long = 207;
#[cfg(target_arch = "s390x")]
pub const SYS_GETTID: c_long = 236;
/// The generic table's number (aarch64, riscv64, loongarch64).
#[cfg(not(any(target_arch = "x86_64", target_arch = "powerpc64", target_arch = "s390x")))]
pub const SYS_GETTID: c_long = 178;

extern "C" {
    /// `getenv`, except that it returns NULL in a secure-execution (set-user-ID) process.
    pub fn secure_getenv(name: *const c_char) -> *mut c_char;
    pub fn getenv(name: *const c_char) -> *mut c_char;
    pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
    pub fn open(path: *const c_char, flags: c_int, ...) -> c_int;
    pub fn close(fd: c_int) -> c_int;
    pub fn syscall(number: c_long, ...) -> c_long;
}
