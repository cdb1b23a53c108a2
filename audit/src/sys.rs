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

#[cfg(test)]
mod tests {
    use super::*;

    /// The number of this architecture's `gettid` (each `cfg` branch above runs on its own
    /// architecture: x86_64 in `cargo xtask test`, aarch64 in `cargo xtask cross aarch64`) names
    /// the calling thread: the thread id the kernel shows in `/proc/thread-self`.
    #[test]
    fn gettid_number_names_the_calling_thread() {
        let on_a_thread = std::thread::spawn(|| {
            // SAFETY: gettid takes no arguments and cannot fail.
            let tid = unsafe { syscall(SYS_GETTID) };
            let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
            let shown: c_long = link.to_str().and_then(|s| s.rsplit('/').next()).and_then(|t| t.parse().ok()).unwrap();
            (tid, shown, std::process::id() as c_long)
        });
        let (tid, shown, pid) = on_a_thread.join().unwrap();
        assert_eq!(tid, shown, "SYS_GETTID = {SYS_GETTID} on {}", std::env::consts::ARCH);
        assert_ne!(tid, pid, "a second thread has an id of its own");
    }

    /// The `open` flags above are this architecture's: a file they create is write-only, appends
    /// and is closed on exec.
    #[test]
    fn open_flags_mean_what_they_say() {
        let dir = std::env::temp_dir().join(format!("regcheck-audit-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        for text in ["one\n", "two\n"] {
            // SAFETY: a NUL-terminated path; the descriptor is closed below.
            let fd = unsafe { open(c_path.as_ptr(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, LOG_FILE_MODE) };
            assert!(fd >= 0, "open failed: {}", std::io::Error::last_os_error());
            let fdinfo = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap();
            let flags = fdinfo.lines().find_map(|l| l.strip_prefix("flags:")).unwrap().trim();
            let flags = i64::from_str_radix(flags, 8).unwrap();
            assert_eq!(flags & 0o3, 1, "O_WRONLY: {fdinfo}");
            assert_ne!(flags & O_APPEND as i64, 0, "O_APPEND: {fdinfo}");
            assert_ne!(flags & O_CLOEXEC as i64, 0, "O_CLOEXEC: {fdinfo}");
            // SAFETY: writes from a live buffer of the given length to our descriptor.
            assert_eq!(unsafe { write(fd, text.as_ptr().cast(), text.len()) }, text.len() as isize);
            // SAFETY: our descriptor, closed once.
            unsafe { close(fd) };
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
