//! What backs the range (unmapped pages, files, devices, stacks, read-only mappings), how it
//! is page-locked (old kernels, PINNED), and the locked-memory limit.

use super::{human, RegArgs};
use crate::platform::memlock::MemlockInfo;
use crate::platform::memmap::{Backing, RangeView};
use crate::rules::{Finding, RuleId};

fn describe(b: &Backing) -> String {
    match b {
        Backing::Anonymous => "anonymous memory".into(),
        Backing::Heap => "the heap".into(),
        Backing::Stack => "a thread's stack".into(),
        Backing::SharedMemory(p) => format!("shared memory {p}"),
        Backing::HugeTlb(p) => format!("hugetlbfs {p}"),
        Backing::File(p) => format!("the regular file {p}"),
        Backing::Device(p) => format!("the device file {p}"),
        Backing::Special(p) => format!("the kernel mapping {p}"),
    }
}

/// Checks on what backs `[start, end)`: unmapped pages, file mappings, stack, read-only.
pub fn check_memory(start: usize, end: usize, view: &RangeView) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(&(gs, ge)) = view.gaps.first() {
        let unmapped: usize = view.gaps.iter().map(|(s, e)| e - s).sum();
        out.push(Finding::new(
            RuleId::AclHostregUnmapped,
            "ptr",
            format!(
                "[0x{start:x}, 0x{end:x}) is not fully mapped: {} unmapped in {} hole(s), the first at [0x{gs:x}, 0x{ge:x})",
                human(unmapped as u64),
                view.gaps.len()
            ),
            "register only memory you allocated, with its real size (a freed or never-allocated range cannot be registered)",
        ));
    }
    if let Some(m) = view.mappings.iter().find(|m| matches!(m.backing, Backing::File(_) | Backing::Device(_))) {
        out.push(Finding::new(
            RuleId::AclHostregFileBacked,
            "ptr",
            format!("[0x{:x}, 0x{:x}) of the range is a mapping of {}", m.start.max(start), m.end.min(end), describe(&m.backing)),
            "read the file into anonymous memory (posix_memalign, mmap MAP_ANONYMOUS, aclrtMallocHost), or use memfd / /dev/shm shared memory",
        ));
    }
    if let Some(m) = view.mappings.iter().find(|m| m.backing == Backing::Stack) {
        out.push(Finding::new(
            RuleId::AclHostregStack,
            "ptr",
            format!("[0x{:x}, 0x{:x}) of the range is a thread's stack", m.start.max(start), m.end.min(end)),
            "register heap or mmap memory that outlives the call",
        ));
    }
    if let Some(m) = view.mappings.iter().find(|m| !m.writable) {
        out.push(Finding::new(
            RuleId::AclHostregReadonlyMapping,
            "ptr",
            format!(
                "[0x{:x}, 0x{:x}) of the range is mapped {} ({})",
                m.start.max(start),
                m.end.min(end),
                if m.readable { "read-only" } else { "without access" },
                describe(&m.backing)
            ),
            "register writable memory (mprotect(..., PROT_READ | PROT_WRITE) or copy into a writable buffer)",
        ));
    }
    out
}

/// How the range is page-locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// Inside an `aclrtMallocHost` allocation.
    ByMallocHost,
    /// Every mapping of the range is mlocked.
    Mlocked,
    /// Pageable memory.
    No,
    /// Not known (the map could not be read with lock state).
    Unknown,
}

impl Locked {
    pub fn is_locked(self) -> bool {
        matches!(self, Locked::ByMallocHost | Locked::Mlocked)
    }
}

/// Lock state from a view read with lock state.
pub fn locked_from_view(view: &RangeView) -> Locked {
    if view.mappings.is_empty() || !view.gaps.is_empty() {
        return Locked::Unknown;
    }
    if view.mappings.iter().any(|m| m.locked.is_none()) {
        Locked::Unknown
    } else if view.mappings.iter().all(|m| m.locked == Some(true)) {
        Locked::Mlocked
    } else {
        Locked::No
    }
}

/// Whether every mapping of the range is one that `aclrtMallocHost` never returns (the heap, a
/// thread's stack, a regular file's mapping, shared memory: memfd, `/dev/shm`, System V, or a
/// shared anonymous mapping): then regcheck knows the memory is not from aclrtMallocHost even
/// when its records may lack calls.
pub fn certainly_not_malloc_host(view: &RangeView) -> bool {
    !view.mappings.is_empty()
        && view.mappings.iter().all(|m| match m.backing {
            Backing::Heap | Backing::Stack | Backing::File(_) | Backing::SharedMemory(_) => true,
            Backing::Anonymous => m.shared,
            _ => false,
        })
}

pub use crate::platform::kernel::KernelFacts;

impl KernelFacts {
    /// `true` when the kernel is at or below the threshold (pageable memory not allowed).
    pub fn needs_page_locked(&self) -> bool {
        self.version.is_some_and(|v| v <= self.pageable_max)
    }

    /// The threshold as text: `5.10` for a threshold covering every 5.10.x.
    pub fn threshold_text(&self) -> String {
        let v = self.pageable_max;
        if v.patch == u32::MAX {
            format!("{}.{}", v.major, v.minor)
        } else {
            v.to_string()
        }
    }
}

/// Page-locking rules: old kernel with pageable memory, PINNED on locked memory.
pub fn check_locking(a: &RegArgs, locked: Locked, kernel: &KernelFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    if kernel.needs_page_locked() && locked == Locked::No {
        out.push(Finding::new(
            RuleId::AclHostregPageableOldKernel,
            "ptr",
            format!(
                "the range is pageable (not from aclrtMallocHost, not mlocked) and kernel {} is at or below {}: the driver raises an exception on such memory",
                kernel.release,
                kernel.threshold_text()
            ),
            "allocate the buffer with aclrtMallocHost (page-locked), or mlock it first; set REGCHECK_PAGEABLE_KERNEL_MAX if your distribution kernel backports the fix",
        ));
    }
    if a.call.pinned() && locked.is_locked() {
        let how = if locked == Locked::ByMallocHost { "was allocated by aclrtMallocHost" } else { "is mlocked" };
        out.push(Finding::new(
            RuleId::AclHostregPinnedLocked,
            "flag",
            format!(
                "ACL_HOST_REG_PINNED on memory that is already page-locked (it {how}): a driver with the pinned-register feature refuses it, while a runtime that keeps PINNED in its own tables drops the bit and succeeds; regcheck cannot tell which this one does"
            ),
            "drop ACL_HOST_REG_PINNED and register with ACL_HOST_REG_MAPPED only; PINNED is for malloc/new/mmap memory",
        ));
    }
    out
}

/// Would pinning this pageable range exceed the locked-memory limit?
pub fn check_memlock(a: &RegArgs, locked: Locked, info: &MemlockInfo) -> Option<Finding> {
    if !a.call.pinned() || locked.is_locked() || info.cap_ipc_lock {
        return None;
    }
    let limit = info.limit?;
    let want = info.locked_now.saturating_add(a.size);
    (want > limit).then(|| {
        Finding::new(
            RuleId::AclHostregMemlock,
            "size",
            format!(
                "pinning {} more on top of {} already locked exceeds RLIMIT_MEMLOCK ({}) and the process lacks CAP_IPC_LOCK",
                human(a.size),
                human(info.locked_now),
                human(limit)
            ),
            "raise the limit (ulimit -l unlimited; docker --ulimit memlock=-1) or grant CAP_IPC_LOCK",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::kernel::KernelVersion;
    use crate::platform::memmap::Mapping;
    use crate::rules::acl::tests::{rules, v2};
    use crate::rules::acl::{MAPPED, PINNED};

    fn mapping(start: usize, end: usize, writable: bool, backing: Backing) -> Mapping {
        Mapping { start, end, readable: true, writable, shared: false, path: String::new(), backing, locked: None }
    }

    #[test]
    fn memory() {
        let ok = RangeView { mappings: vec![mapping(0x1000, 0x9000, true, Backing::Anonymous)], gaps: vec![] };
        assert!(check_memory(0x2000, 0x3000, &ok).is_empty());
        let shm = RangeView {
            mappings: vec![mapping(0x1000, 0x9000, true, Backing::SharedMemory("/dev/shm/x".into()))],
            gaps: vec![],
        };
        assert!(check_memory(0x2000, 0x3000, &shm).is_empty());
        let holes = RangeView {
            mappings: vec![mapping(0x1000, 0x2000, true, Backing::Anonymous)],
            gaps: vec![(0x2000, 0x4000)],
        };
        assert_eq!(rules(&check_memory(0x1000, 0x4000, &holes)), vec![RuleId::AclHostregUnmapped]);
        let file = RangeView {
            mappings: vec![mapping(0x1000, 0x9000, true, Backing::File("/data/x.bin".into()))],
            gaps: vec![],
        };
        let f = check_memory(0x1000, 0x2000, &file);
        assert_eq!(rules(&f), vec![RuleId::AclHostregFileBacked]);
        assert!(f[0].problem.contains("/data/x.bin"));
        let stack = RangeView { mappings: vec![mapping(0x1000, 0x9000, true, Backing::Stack)], gaps: vec![] };
        assert_eq!(rules(&check_memory(0x1000, 0x2000, &stack)), vec![RuleId::AclHostregStack]);
        let ro = RangeView { mappings: vec![mapping(0x1000, 0x9000, false, Backing::Anonymous)], gaps: vec![] };
        assert_eq!(rules(&check_memory(0x1000, 0x2000, &ro)), vec![RuleId::AclHostregReadonlyMapping]);
    }

    #[test]
    fn locking() {
        let old = KernelFacts {
            release: "5.10.0-60.oe2203".into(),
            version: KernelVersion::parse("5.10.0"),
            pageable_max: KernelVersion::parse("5.10").unwrap(),
        };
        let new = KernelFacts {
            release: "6.1.0".into(),
            version: KernelVersion::parse("6.1.0"),
            pageable_max: KernelVersion::parse("5.10").unwrap(),
        };
        let a = v2(0x10000, 4096, MAPPED);
        assert_eq!(rules(&check_locking(&a, Locked::No, &old)), vec![RuleId::AclHostregPageableOldKernel]);
        assert!(check_locking(&a, Locked::ByMallocHost, &old).is_empty());
        assert!(check_locking(&a, Locked::Mlocked, &old).is_empty());
        assert!(check_locking(&a, Locked::Unknown, &old).is_empty(), "unknown is not rejected");
        assert!(check_locking(&a, Locked::No, &new).is_empty());
        let p = v2(0x10000, 4096, MAPPED | PINNED);
        assert_eq!(rules(&check_locking(&p, Locked::ByMallocHost, &new)), vec![RuleId::AclHostregPinnedLocked]);
        assert!(check_locking(&p, Locked::No, &new).is_empty());
        let mut view = RangeView { mappings: vec![mapping(0, 10, true, Backing::Anonymous)], gaps: vec![] };
        assert_eq!(locked_from_view(&view), Locked::Unknown);
        view.mappings[0].locked = Some(true);
        assert_eq!(locked_from_view(&view), Locked::Mlocked);
        assert!(!certainly_not_malloc_host(&view), "anonymous memory may be aclrtMallocHost's");
        let heap = RangeView { mappings: vec![mapping(0, 10, true, Backing::Heap)], gaps: vec![] };
        assert!(certainly_not_malloc_host(&heap));
        assert!(!certainly_not_malloc_host(&RangeView { mappings: vec![], gaps: vec![(0, 10)] }));
        let memfd = RangeView {
            mappings: vec![mapping(0, 10, true, Backing::SharedMemory("/memfd:x (deleted)".into()))],
            gaps: vec![],
        };
        assert!(certainly_not_malloc_host(&memfd), "memfd memory is never aclrtMallocHost's");
        let mut shared_anon = RangeView { mappings: vec![mapping(0, 10, true, Backing::Anonymous)], gaps: vec![] };
        assert!(!certainly_not_malloc_host(&shared_anon), "private anonymous memory may be aclrtMallocHost's");
        shared_anon.mappings[0].shared = true;
        assert!(certainly_not_malloc_host(&shared_anon), "shared anonymous memory is never aclrtMallocHost's");
        view.mappings.push(mapping(10, 20, true, Backing::Anonymous));
        view.mappings[1].locked = Some(false);
        assert_eq!(locked_from_view(&view), Locked::No);
    }

    #[test]
    fn memlock() {
        let p = v2(0x10000, 1 << 20, MAPPED | PINNED);
        let limited = MemlockInfo { limit: Some(8 << 20), cap_ipc_lock: false, locked_now: 0 };
        assert!(check_memlock(&p, Locked::No, &MemlockInfo { locked_now: 0, ..limited }).is_none());
        assert_eq!(
            check_memlock(&p, Locked::No, &MemlockInfo { locked_now: 7 * (1 << 20) + 1, ..limited }).unwrap().rule,
            RuleId::AclHostregMemlock
        );
        assert!(check_memlock(&p, Locked::No, &MemlockInfo { cap_ipc_lock: true, locked_now: 8 << 20, ..limited })
            .is_none());
        assert!(check_memlock(&p, Locked::No, &MemlockInfo { limit: None, ..limited }).is_none());
        assert!(check_memlock(&v2(0x10000, 1 << 30, MAPPED), Locked::No, &limited).is_none(), "only PINNED pins");
    }
}
