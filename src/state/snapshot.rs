//! A read-only copy of what the hot paths read (host registrations, HIXL objects), so that
//! `aclrtHostGetDevicePointer` and transfer validation take no lock and write no shared
//! memory.
//!
//! Every write to the [`State`] (under its write lock) bumps [`GENERATION`]. Each thread keeps
//! the last snapshot it used; a read whose snapshot is of the current generation uses it with
//! one atomic load and no read-modify-write. Otherwise the read goes to the locked state, and
//! the snapshot is rebuilt (a copy, O(n)) only once reads have found it stale as many times as
//! twice the number of records: after a burst of registrations the copy is paid once, and a
//! program that alternates registrations and look-ups pays at most about one extra locked read
//! per look-up. Every thread may hold one outdated copy until its next look-up.

use std::cell::{Cell, RefCell};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::hixl::{HixlState, Instance};
use super::registry::HostRegistry;
use super::State;

/// What the hot paths read, from a snapshot or from the locked state.
#[derive(Clone, Copy)]
pub struct HotView<'a> {
    pub host_regs: &'a HostRegistry,
    pub hixl: &'a HixlState,
}

impl<'a> HotView<'a> {
    pub fn of(s: &'a State) -> HotView<'a> {
        HotView { host_regs: &s.host_regs, hixl: &s.hixl }
    }
}

pub(super) struct Snapshot {
    generation: u64,
    host_regs: HostRegistry,
    hixl: HixlState,
}

impl Snapshot {
    fn view(&self) -> HotView<'_> {
        HotView { host_regs: &self.host_regs, hixl: &self.hixl }
    }
}

/// Bumped by every write to the state, while its write lock is held.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Reads that found the snapshot stale since it was last built.
static STALE_READS: AtomicUsize = AtomicUsize::new(0);
/// Stale reads after which a copy is made: twice the records at the last look.
static THRESHOLD: AtomicUsize = AtomicUsize::new(MIN_STALE_READS);
const MIN_STALE_READS: usize = 64;
/// The latest snapshot built (taken after the state lock, and by the `fork()` handler).
static PUBLISHED: Mutex<Option<Arc<Snapshot>>> = Mutex::new(None);

/// A thread's snapshot, and the HIXL instance it last looked up there.
struct Local {
    snap: Arc<Snapshot>,
    /// `(address, the instance in snap)`: valid while `snap` is held, which never changes.
    last_instance: Cell<Option<(usize, NonNull<Instance>)>>,
}

impl Local {
    fn new(snap: Arc<Snapshot>) -> Local {
        Local { snap, last_instance: Cell::new(None) }
    }

    /// The instance at `this` in the snapshot: a program transfers through few instances,
    /// so the last one found answers most look-ups without a hash probe.
    #[inline(always)]
    fn instance(&self, this: usize) -> Option<&Instance> {
        if let Some((addr, p)) = self.last_instance.get() {
            if addr == this {
                // SAFETY: `p` points into `self.snap`, which is never modified once built and
                // outlives this borrow of `self`.
                return Some(unsafe { p.as_ref() });
            }
        }
        let i = self.snap.hixl.instances.get(&this)?;
        self.last_instance.set(Some((this, NonNull::from(i))));
        Some(i)
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// Called by every writer, with the state's write lock held.
pub(super) fn bump() {
    GENERATION.fetch_add(1, Ordering::Release);
}

/// Held by the `fork()` handler after the state lock (the order every builder follows).
pub(super) fn lock_published() -> MutexGuard<'static, Option<Arc<Snapshot>>> {
    PUBLISHED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Records held: host registrations and HIXL registrations. The cost of a copy grows with it.
fn records(s: &State) -> usize {
    s.host_regs.len() + s.hixl.instances.values().map(|i| i.regs.len()).sum::<usize>()
}

/// Run `f` on the hot records: the thread's snapshot when it is current, else the locked
/// state (rebuilding the snapshot once enough reads found it stale). Never call the vendor
/// inside `f`.
#[inline(always)]
pub fn read<R>(f: impl FnOnce(HotView<'_>) -> R) -> R {
    read_local(|v, _| f(v))
}

/// [`read`], with the HIXL instance at address `this` (`None`: regcheck does not know it).
#[inline(always)]
pub fn read_instance<R>(this: usize, f: impl FnOnce(HotView<'_>, Option<&Instance>) -> R) -> R {
    read_local(|v, local| {
        let inst = match local {
            Some(l) => l.instance(this),
            None => v.hixl.instances.get(&this),
        };
        f(v, inst)
    })
}

/// `f` on the HIXL instance at `this` in the thread's snapshot, only when that snapshot is
/// current and holds the instance: no lock, no refresh, no count of a stale read (`None`: ask
/// [`read_instance`]).
#[inline(always)]
pub fn read_instance_if_current<R>(this: usize, f: impl FnOnce(&Instance) -> R) -> Option<R> {
    let generation = GENERATION.load(Ordering::Acquire);
    LOCAL
        .try_with(|local| {
            let l = local.try_borrow().ok()?;
            let l = l.as_ref().filter(|l| l.snap.generation == generation)?;
            l.instance(this).map(f)
        })
        .ok()
        .flatten()
}

/// Run `f` on the thread's current snapshot (with its [`Local`]) or on the locked state.
#[inline(always)]
fn read_local<R>(f: impl FnOnce(HotView<'_>, Option<&Local>) -> R) -> R {
    let generation = GENERATION.load(Ordering::Acquire);
    let mut f = Some(f);
    let hit = LOCAL.try_with(|local| {
        let current = |l: &Option<Local>| l.as_ref().is_some_and(|l| l.snap.generation == generation);
        if !local.try_borrow().is_ok_and(|l| current(&l)) && !refresh(local, generation) {
            return None;
        }
        let l = local.try_borrow().ok()?;
        let l = l.as_ref()?;
        f.take().map(|f| f(l.snap.view(), Some(l)))
    });
    match (hit, f) {
        (Ok(Some(r)), _) => r,
        (_, Some(f)) => super::read(|s| f(HotView::of(s), None)),
        // `f` ran and gave no answer: impossible (it returns R); the locked read is unreachable.
        (_, None) => unreachable!("the snapshot read consumed its closure without an answer"),
    }
}

/// Bring the thread's snapshot up to `generation`, from the published one or by building
/// one when reads have found it stale often enough. False: use the locked state.
fn refresh(local: &RefCell<Option<Local>>, generation: u64) -> bool {
    let Ok(mut l) = local.try_borrow_mut() else { return false };
    // Never wait: another thread publishing means this read can go to the state.
    if let Ok(p) = PUBLISHED.try_lock() {
        if let Some(s) = p.as_ref().filter(|s| s.generation == generation) {
            *l = Some(Local::new(Arc::clone(s)));
            return true;
        }
    }
    let stale = STALE_READS.fetch_add(1, Ordering::Relaxed) + 1;
    if stale < THRESHOLD.load(Ordering::Relaxed) {
        return false;
    }
    let built = super::read(|s| {
        let threshold = (2 * records(s)).max(MIN_STALE_READS);
        THRESHOLD.store(threshold, Ordering::Relaxed);
        if stale < threshold {
            return None;
        }
        // Writers need the write lock: the generation cannot move while this copy is made.
        let snap = Arc::new(Snapshot {
            generation: GENERATION.load(Ordering::Acquire),
            host_regs: s.host_regs.clone(),
            hixl: s.hixl.clone(),
        });
        *lock_published() = Some(Arc::clone(&snap));
        Some(snap)
    });
    match built {
        Some(snap) => {
            STALE_READS.store(0, Ordering::Relaxed);
            *l = Some(Local::new(snap));
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::registry::{HostReg, HostRegApi};

    /// A device no other test of this process uses (the state is process-wide).
    const DEVICE: i32 = 9_001;

    fn reg(base: usize) -> HostReg {
        HostReg { device: DEVICE, base, len: 0x1000, flags: 0, api: HostRegApi::V2, after_reset: false }
    }

    fn seen(base: usize) -> bool {
        read(|v| v.host_regs.containing(DEVICE, base + 0x10).is_some())
    }

    fn engine_of(this: usize) -> Option<String> {
        read_instance(this, |_, i| i.and_then(|i| i.local_engine.clone()))
    }

    /// The instance a thread looked up last is remembered per snapshot: look-ups of other
    /// instances, and of the same one after a write, still answer from the records.
    #[test]
    fn the_last_instance_is_forgotten_with_its_snapshot() {
        use crate::state::hixl::Instance;
        let (a, b) = (0x7200_0000_0010, 0x7200_0000_0020);
        let named = |n: &str| Instance { local_engine: Some(n.into()), ..Instance::default() };
        crate::state::with(|s| {
            s.hixl.instances.insert(a, named("a"));
            s.hixl.instances.insert(b, named("b"));
        });
        for _ in 0..(2 * crate::state::read(records) + MIN_STALE_READS + 10) {
            assert_eq!(engine_of(a).as_deref(), Some("a"));
        }
        assert!(LOCAL.with(|l| l.borrow().as_ref().is_some_and(|l| l.last_instance.get().is_some())));
        assert_eq!(engine_of(b).as_deref(), Some("b"));
        assert_eq!(engine_of(a).as_deref(), Some("a"));
        crate::state::with(|s| s.hixl.instances.insert(a, named("a2")));
        // From the locked state at first, then from a new snapshot once enough reads went there.
        for _ in 0..(2 * crate::state::read(records) + MIN_STALE_READS + 10) {
            assert_eq!(engine_of(a).as_deref(), Some("a2"), "a write was hidden by the remembered instance");
        }
        crate::state::with(|s| s.hixl.instances.remove(&a));
        assert_eq!(engine_of(a), None);
        assert_eq!(engine_of(0x7200_0000_0030), None);
        crate::state::with(|s| s.hixl.instances.remove(&b));
    }

    /// Reads enough for a snapshot to be built, then a write: the very next read sees it,
    /// on this thread and on another, whichever copy each thread holds.
    #[test]
    fn a_write_is_seen_by_the_next_read_on_every_thread() {
        let base = 0x7100_0000_0000;
        for round in 0..4 {
            let b = base + round * 0x10_0000;
            crate::state::with(|s| s.host_regs.insert(reg(b)));
            for _ in 0..(2 * crate::state::read(records) + MIN_STALE_READS + 10) {
                assert!(seen(b));
            }
            assert!(LOCAL.with(|l| l.borrow().as_ref().is_some_and(|l| l
                .snap
                .host_regs
                .containing(DEVICE, b)
                .is_some())));
            std::thread::spawn(move || assert!(seen(b))).join().unwrap();
            crate::state::with(|s| s.host_regs.remove(DEVICE, b));
            assert!(!seen(b), "round {round}: the removed registration was still seen");
            std::thread::spawn(move || assert!(!seen(b))).join().unwrap();
        }
    }
}
