//! Which loaded object (executable, shared library) holds an address: a table of every
//! object's load segments, read with `dl_iterate_phdr` and looked up by binary search.
//!
//! The point is where the loader is asked: never under a lock of regcheck's. glibc runs a
//! library's constructors inside `dlopen` holding its loader lock; a constructor that calls
//! ACL reaches regcheck, and a regcheck lock held meanwhile by a thread that waits for the
//! loader (`dladdr` takes that lock) is a deadlock. Here the walk runs with no regcheck lock
//! held, and the table it builds is published behind a mutex that guards nothing but the
//! pointer (held to clone an `Arc`, never across a loader call).
//!
//! Freshness: every look-up compares the loader's counters of objects added and removed
//! (`dlpi_adds`, `dlpi_subs`, from a walk that stops at the first object, with no system
//! call) with those the table was built at, and rebuilds it when they moved, so that an
//! address is never attributed to an object unloaded since.

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One loaded object.
#[derive(Debug, Clone)]
pub struct Object {
    /// Its path as the loader has it (the executable's from `/proc/self/exe`); may be empty
    /// (the vDSO has a bare name).
    pub name: String,
    /// The load bias (`dlpi_addr`): addresses in the object minus this are its own.
    pub base: usize,
    /// The directory the file is in, with symbolic links resolved (`None` for the vDSO and
    /// files that cannot be resolved).
    pub dir: Option<PathBuf>,
}

/// Every object loaded when the table was built.
#[derive(Debug, Default)]
pub struct Table {
    /// `(dlpi_adds, dlpi_subs)` at the walk.
    generation: (u64, u64),
    pub objects: Vec<Object>,
    /// `(start, end, index into objects)` of every `PT_LOAD` segment, sorted by start.
    segments: Vec<(usize, usize, usize)>,
}

impl Table {
    /// The index of the object whose load segments hold `addr`.
    pub fn index_of(&self, addr: usize) -> Option<usize> {
        let i = self.segments.partition_point(|&(start, _, _)| start <= addr);
        let &(start, end, index) = self.segments.get(i.checked_sub(1)?)?;
        (start <= addr && addr < end).then_some(index)
    }

    /// The object that holds `addr`.
    pub fn object_of(&self, addr: usize) -> Option<&Object> {
        self.objects.get(self.index_of(addr)?)
    }

    /// The lowest and highest address of the object at `index` (its load segments).
    pub fn span(&self, index: usize) -> (usize, usize) {
        let mine = self.segments.iter().filter(|s| s.2 == index);
        let start = mine.clone().map(|s| s.0).min().unwrap_or(0);
        (start, mine.map(|s| s.1).max().unwrap_or(0))
    }

    /// The loader's counters when the table was built: a new value means objects came or went.
    pub fn generation(&self) -> (u64, u64) {
        self.generation
    }
}

/// regcheck's walks of the loader's list in progress, and a `fork()` waiting for them to end.
/// glibc does not reset in the child the lock `dl_iterate_phdr` holds: a child forked while a
/// thread of regcheck's is inside it would inherit it held, and its first walk would never
/// end. So the `fork()` handler stops new walks and waits (bounded) for those in progress; a
/// walk waits only for a fork in progress, never for a lock the loader's callers can hold.
static WALKERS: AtomicUsize = AtomicUsize::new(0);
static FORKING: AtomicBool = AtomicBool::new(false);

extern "C" fn fork_prepare() {
    FORKING.store(true, Ordering::SeqCst);
    for _ in 0..100_000 {
        if WALKERS.load(Ordering::SeqCst) == 0 {
            return;
        }
        std::thread::yield_now();
    }
}

extern "C" fn fork_done() {
    FORKING.store(false, Ordering::SeqCst);
}

static FORK_HANDLERS: crate::platform::atfork::AtFork =
    crate::platform::atfork::AtFork::new(Some(fork_prepare), Some(fork_done), Some(fork_done));

/// Run `walk` (a call of `dl_iterate_phdr`) where no `fork()` can cut it in half.
fn walking<R>(walk: impl FnOnce() -> R) -> R {
    FORK_HANDLERS.ensure();
    loop {
        WALKERS.fetch_add(1, Ordering::SeqCst);
        if !FORKING.load(Ordering::SeqCst) {
            break;
        }
        WALKERS.fetch_sub(1, Ordering::SeqCst);
        while FORKING.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    }
    let r = walk();
    WALKERS.fetch_sub(1, Ordering::SeqCst);
    r
}

/// The loader's counters of objects added and removed so far (a walk that stops at the first
/// object). A loader call: never under a regcheck lock.
pub fn generation() -> (u64, u64) {
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _size: usize, out: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the loader passes a valid info; `out` is the pair below.
        unsafe { *(out as *mut (u64, u64)) = ((*info).dlpi_adds, (*info).dlpi_subs) };
        1
    }
    let mut g = (0u64, 0u64);
    // SAFETY: the callback only reads `info` and writes `g`.
    walking(|| unsafe { libc::dl_iterate_phdr(Some(first), (&mut g as *mut (u64, u64)).cast()) });
    g
}

struct Walk {
    generation: (u64, u64),
    objects: Vec<(String, usize)>,
    segments: Vec<(usize, usize, usize)>,
}

unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: usize, out: *mut libc::c_void) -> libc::c_int {
    // SAFETY: the loader passes a valid info for the duration of the call; `out` is a Walk.
    let (info, walk) = unsafe { (&*info, &mut *(out as *mut Walk)) };
    if walk.objects.is_empty() {
        walk.generation = (info.dlpi_adds, info.dlpi_subs);
    }
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: the loader's NUL-terminated name.
        unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
    };
    let index = walk.objects.len();
    walk.objects.push((name, info.dlpi_addr as usize));
    if !info.dlpi_phdr.is_null() {
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        for ph in phdrs.iter().filter(|ph| ph.p_type == libc::PT_LOAD && ph.p_memsz > 0) {
            let start = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
            walk.segments.push((start, start.wrapping_add(ph.p_memsz as usize), index));
        }
    }
    0
}

/// Walk the loaded objects (a loader call: never under a regcheck lock) and build a table.
fn build() -> Table {
    let mut walk = Walk { generation: (0, 0), objects: Vec::new(), segments: Vec::new() };
    // SAFETY: the callback reads the loader's info and writes only `walk`.
    walking(|| unsafe { libc::dl_iterate_phdr(Some(each), (&mut walk as *mut Walk).cast()) });
    walk.segments.sort_unstable();
    // Directories resolved once each (system calls, no loader call).
    let mut dirs: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    let objects =
        walk.objects
            .into_iter()
            .enumerate()
            .map(|(i, (name, base))| {
                // The first object is the executable, which the loader names "" (or as started).
                let name = if i == 0 && !name.starts_with('/') {
                    std::env::current_exe().map(|p| p.display().to_string()).unwrap_or(name)
                } else {
                    name
                };
                let dir = Path::new(&name).parent().filter(|p| name.contains('/') && !p.as_os_str().is_empty()).map(
                    |parent| match dirs.iter().find(|(d, _)| d == parent) {
                        Some((_, resolved)) => resolved.clone(),
                        None => {
                            let resolved = std::fs::canonicalize(parent).ok();
                            dirs.push((parent.to_path_buf(), resolved.clone()));
                            resolved
                        }
                    },
                );
                Object { name, base, dir: dir.flatten() }
            })
            .collect();
    Table { generation: walk.generation, objects, segments: walk.segments }
}

/// The table last built (the mutex guards only the pointer: held to clone or replace it).
static CURRENT: Mutex<Option<Arc<Table>>> = Mutex::new(None);

crate::platform::atfork::hold_across_fork!(static HANDLERS = CURRENT, Option<Arc<Table>>);

fn published() -> Option<Arc<Table>> {
    HANDLERS.ensure();
    CURRENT.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The table of the objects loaded now: the last one built while no object came or went,
/// else a new one. Calls the loader (with no regcheck lock held): never call it under one.
pub fn current() -> Arc<Table> {
    let now = generation();
    if let Some(t) = published().filter(|t| t.generation == now) {
        return t;
    }
    let t = Arc::new(build());
    HANDLERS.ensure();
    let mut slot = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    // Another thread may have published a newer one meanwhile: keep the newer.
    if slot.as_ref().is_none_or(|s| s.generation.0 + s.generation.1 <= t.generation.0 + t.generation.1) {
        *slot = Some(t.clone());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_its_own_code_and_libc() {
        let t = current();
        let own = t.object_of(finds_its_own_code_and_libc as *const () as usize).expect("own code");
        assert_eq!(own.name, std::env::current_exe().unwrap().display().to_string());
        let libc_obj = t.object_of(libc::malloc as *const () as usize).expect("libc");
        assert!(Path::new(&libc_obj.name).file_name().unwrap().to_str().unwrap().starts_with("libc"), "{libc_obj:?}");
        assert!(libc_obj.dir.is_some());
        assert!(t.object_of(0).is_none());
        let stack = 0u8;
        assert!(t.object_of(&stack as *const u8 as usize).is_none(), "the stack is no object's");
        // Nothing loaded since: the same table.
        assert!(Arc::ptr_eq(&t, &current()));
    }
}
