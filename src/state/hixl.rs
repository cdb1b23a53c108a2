//! Per-instance state of `hixl::Hixl` objects, keyed by the object's address, and of the
//! `HixlCS*` servers and clients, keyed by their handles.
//!
//! Only what the vendor accepted is recorded: a registration enters a [`RegSet`] when the
//! vendor returned `SUCCESS` and leaves it when `DeregisterMem` succeeded on a live handle.
//! Every look-up the transfer path needs is O(1) expected, whatever the number of live
//! registrations, with no allocation and no system call.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::thread::ThreadId;

use super::hints::{HintProbe, SpanHints};
use super::hixl_facts::{Engine, MemKind, OptionsFacts};
use super::spans::{AddrMap, SpanIndex};

/// One live registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HixlReg {
    /// The handle the vendor returned.
    pub handle: usize,
    pub addr: usize,
    pub len: u64,
    /// The kind the vendor treats it as (any `type` other than 0 is host memory to HIXL).
    pub kind: MemKind,
    /// `mem_tag` of the `HixlCS*` calls (empty for `Hixl::RegisterMem`).
    pub tag: String,
    /// Where it was made: the return address into the caller of the registration call (0 when
    /// unknown), one word symbolised only when a finding quotes it (`callsite::site_of_address`).
    pub site: usize,
}

impl HixlReg {
    /// One past the last byte (saturating).
    pub fn end(&self) -> usize {
        self.addr.saturating_add(usize::try_from(self.len).unwrap_or(usize::MAX))
    }
}

/// The live registrations of one instance (or server, or client), per [`MemKind`].
#[derive(Debug, Default, Clone)]
pub struct RegSet {
    /// Per kind (device, host): `(addr, handle) -> len`, ordered by address.
    by_addr: [BTreeMap<(usize, usize), u64>; 2],
    /// Per kind: the non-empty registrations as spans, with their handle, for containment.
    spans: [SpanIndex<usize>; 2],
    /// The transfer path's first answer to "is this range inside a registration?" (any kind).
    hints: SpanHints,
    by_handle: HashMap<usize, HixlReg>,
    /// Total bytes per kind.
    totals: [u64; 2],
    /// Some registrations of one kind overlap (possible only when regcheck's overlap rule was
    /// off or in report mode and the vendor accepted them): overlap queries fall back to a scan.
    overlapping: [bool; 2],
}

fn slot(kind: MemKind) -> usize {
    match kind {
        MemKind::Device => 0,
        MemKind::Host => 1,
    }
}

impl RegSet {
    /// Record a registration the vendor accepted. A handle already live is left as it is
    /// (the vendor returns the existing handle for an identical registration).
    pub fn insert(&mut self, reg: HixlReg) {
        if self.by_handle.contains_key(&reg.handle) {
            return;
        }
        let s = slot(reg.kind);
        if self.overlapping_reg(reg.kind, reg.addr, reg.end()).is_some() {
            self.overlapping[s] = true;
        }
        self.by_addr[s].insert((reg.addr, reg.handle), reg.len);
        self.spans[s].insert(reg.addr, reg.end(), reg.handle);
        if self.hints.full() {
            self.hints.rebuild(self.by_handle.len(), self.by_handle.values().map(|r| (r.addr, r.end())));
        }
        self.hints.insert(reg.addr, reg.end());
        self.totals[s] = self.totals[s].saturating_add(reg.len);
        self.by_handle.insert(reg.handle, reg);
    }

    /// Remove a live handle; `None` when it is not live.
    pub fn remove(&mut self, handle: usize) -> Option<HixlReg> {
        let reg = self.by_handle.remove(&handle)?;
        let s = slot(reg.kind);
        self.by_addr[s].remove(&(reg.addr, reg.handle));
        self.spans[s].remove(reg.addr, reg.end(), &reg.handle);
        self.hints.remove(reg.addr, reg.end());
        self.totals[s] = self.totals[s].saturating_sub(reg.len);
        if self.by_addr[s].is_empty() {
            self.overlapping[s] = false;
        }
        Some(reg)
    }

    /// The live registration with this handle.
    pub fn get(&self, handle: usize) -> Option<&HixlReg> {
        self.by_handle.get(&handle)
    }

    /// Distinct live registrations.
    pub fn len(&self) -> usize {
        self.by_handle.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_handle.is_empty()
    }

    /// Total live bytes of one kind.
    pub fn total(&self, kind: MemKind) -> u64 {
        self.totals[slot(kind)]
    }

    /// A live registration identical to `(addr, len, kind)`.
    pub fn identical(&self, kind: MemKind, addr: usize, len: u64) -> Option<&HixlReg> {
        self.by_addr[slot(kind)]
            .range((addr, 0)..=(addr, usize::MAX))
            .find(|(_, l)| **l == len)
            .and_then(|((_, h), _)| self.by_handle.get(h))
    }

    /// A live registration of `kind` sharing a byte with `[addr, end)`, if any. O(log m)
    /// while registrations of a kind do not overlap each other.
    pub fn overlapping_reg(&self, kind: MemKind, addr: usize, end: usize) -> Option<&HixlReg> {
        if end <= addr {
            return None;
        }
        let s = slot(kind);
        let map = &self.by_addr[s];
        let hit = if self.overlapping[s] {
            map.range(..(end, 0)).find(|((a, _), l)| reg_end(*a, **l) > addr && **l > 0)
        } else {
            // The last non-empty registration starting before `end` is the only candidate.
            map.range(..(end, 0)).rev().find(|(_, l)| **l > 0).filter(|((a, _), l)| reg_end(*a, **l) > addr)
        };
        hit.and_then(|((_, h), _)| self.by_handle.get(h))
    }

    /// The hints of the live registrations (any kind): a `true` from them means a live
    /// registration contains the range; `false` says nothing (ask [`RegSet::span_of_range`]).
    #[inline(always)]
    pub fn hints(&self) -> HintProbe<'_> {
        self.hints.probe(self.spans[0].levels() | self.spans[1].levels())
    }

    /// Whether `[addr, addr + len)` lies inside one live registration of any kind.
    /// O(1) expected, no allocation.
    pub fn contains_range(&self, addr: usize, len: u64) -> bool {
        self.kind_of_range(addr, len).is_some()
    }

    /// The kind of a live registration containing `[addr, addr + len)` (device first).
    #[inline]
    pub fn kind_of_range(&self, addr: usize, len: u64) -> Option<MemKind> {
        self.span_of_range(addr, len).map(|(_, _, k)| k)
    }

    /// A live registration containing `[addr, addr + len)` as `(addr, end, kind)`, device
    /// first (the one [`RegSet::kind_of_range`] answers by); among overlapping ones of a kind,
    /// the one [`SpanIndex::find`] picks. An empty range at `addr` lies inside a registration
    /// with `start <= addr <= end`; empty registrations contain nothing.
    #[inline]
    pub fn span_of_range(&self, addr: usize, len: u64) -> Option<(usize, usize, MemKind)> {
        find_kind(&self.spans, addr, len)
    }

    /// The kind of `[addr, addr + len)` when contiguous live registrations of one kind cover
    /// it together, as the hixl_cs memory store merges them for its access checks (a range
    /// across adjacent registrations is valid, one across a gap is not). Only asked once
    /// [`RegSet::span_of_range`] found no single registration.
    pub fn kind_of_merged_range(&self, addr: usize, len: u64) -> Option<MemKind> {
        merged_kind(&self.spans, addr, len)
    }

    /// `Some(Host)` when host registrations hold `[addr, addr + len)`, alone or adjacent ones
    /// together (the fabric memory engine's translation of local host ranges).
    pub fn host_kind_of_range(&self, addr: usize, len: u64) -> Option<MemKind> {
        let index = &self.spans[slot(MemKind::Host)];
        let end = addr.checked_add(usize::try_from(len).ok()?)?;
        (index.find(addr, end).is_some() || covered(index, addr, end)).then_some(MemKind::Host)
    }

    /// Whether a span [`RegSet::span_of_range`] returned answers for any range it contains
    /// (a host span does only while no device registration could come first).
    pub fn span_answers(&self, kind: MemKind) -> bool {
        kind == MemKind::Device || self.by_addr[slot(MemKind::Device)].is_empty()
    }

    /// The registration containing `addr` (any kind), for messages.
    pub fn containing_addr(&self, addr: usize) -> Option<&HixlReg> {
        (0..2).find_map(|s| {
            self.by_addr[s]
                .range(..=(addr, usize::MAX))
                .rev()
                .find(|((a, _), l)| reg_end(*a, **l) > addr && *a <= addr)
                .and_then(|((_, h), _)| self.by_handle.get(h))
        })
    }

    /// Every live registration, by address (device first).
    pub fn iter(&self) -> impl Iterator<Item = &HixlReg> {
        self.by_addr.iter().flat_map(|m| m.keys()).filter_map(|(_, h)| self.by_handle.get(h))
    }

    /// Forget everything (Finalize).
    pub fn clear(&mut self) {
        *self = RegSet::default();
    }
}

/// What a link can see of its peer's registrations: a snapshot taken when the link was made
/// (it never changes), kept per kind as a [`SpanIndex`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PeerView {
    /// Per kind (device, host): the non-empty registrations, with their handle.
    spans: [SpanIndex<usize>; 2],
    hints: SpanHints,
}

impl PeerView {
    /// The snapshot of `regs`.
    pub fn of(regs: &RegSet) -> PeerView {
        PeerView { spans: regs.spans.clone(), hints: regs.hints.clone() }
    }

    /// [`RegSet::hints`] of the snapshot.
    #[inline(always)]
    pub fn hints(&self) -> HintProbe<'_> {
        self.hints.probe(self.spans[0].levels() | self.spans[1].levels())
    }

    /// The kind of a registration of the snapshot containing `[addr, addr + len)` (device
    /// first), as [`RegSet::kind_of_range`] answers it. O(1) expected, no allocation.
    #[inline]
    pub fn kind_of_range(&self, addr: usize, len: u64) -> Option<MemKind> {
        find_kind(&self.spans, addr, len).map(|(_, _, k)| k)
    }

    /// [`RegSet::kind_of_merged_range`] on the snapshot.
    pub fn kind_of_merged_range(&self, addr: usize, len: u64) -> Option<MemKind> {
        merged_kind(&self.spans, addr, len)
    }
}

/// The kind whose contiguous spans cover `[addr, addr + len)` together (see
/// [`RegSet::kind_of_merged_range`]), device first.
fn merged_kind(spans: &[SpanIndex<usize>; 2], addr: usize, len: u64) -> Option<MemKind> {
    let end = addr.checked_add(usize::try_from(len).ok()?)?;
    if end == addr {
        return None;
    }
    [MemKind::Device, MemKind::Host].into_iter().find(|k| covered(&spans[slot(*k)], addr, end))
}

/// Whether contiguous spans of `index` cover `[addr, end)`, `addr < end`: as many as it
/// takes (the vendor's memory store merges the whole run of adjacent regions), each found in
/// O(1) expected, so a range costs the number of registrations it crosses.
fn covered(index: &SpanIndex<usize>, addr: usize, end: usize) -> bool {
    let mut at = addr;
    loop {
        // A span holding the byte at `at`: it starts at or before it, so no gap is left.
        let Some(&(_, e, _)) = index.find(at, at + 1) else { return false };
        if e >= end {
            return true;
        }
        at = e;
    }
}

/// A span of `spans` (device, host) containing `[addr, addr + len)`, device first.
#[inline]
fn find_kind(spans: &[SpanIndex<usize>; 2], addr: usize, len: u64) -> Option<(usize, usize, MemKind)> {
    let Ok(ulen) = usize::try_from(len) else { return None };
    let end = addr.checked_add(ulen)?;
    [MemKind::Device, MemKind::Host]
        .into_iter()
        .find_map(|k| spans[slot(k)].find(addr, end).map(|&(a, e, _)| (a, e, k)))
}

/// The snapshots of an instance's links to engines of this process, by engine name (few: one
/// per other instance of the process; a linear search compares short names).
#[derive(Debug, Default, Clone)]
pub struct PeerViews(Vec<(Vec<u8>, PeerView)>);

impl PeerViews {
    pub fn get(&self, name: &[u8]) -> Option<&PeerView> {
        self.0.iter().find(|(n, _)| n.as_slice() == name).map(|(_, v)| v)
    }

    /// Keep the first snapshot of a link (a second Connect does not make a new link).
    pub fn insert_if_absent(&mut self, name: &[u8], view: PeerView) {
        if self.get(name).is_none() {
            self.0.push((name.to_vec(), view));
        }
    }

    pub fn remove(&mut self, name: &[u8]) {
        self.0.retain(|(n, _)| n.as_slice() != name);
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

fn reg_end(addr: usize, len: u64) -> usize {
    addr.saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
}

/// Where an instance is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Constructed, `Initialize` not (successfully) called yet.
    Constructed,
    Initialized,
    /// `Finalize` was called.
    Finalized,
}

/// One `hixl::Hixl` object.
#[derive(Debug, Clone)]
pub struct Instance {
    pub phase: Phase,
    /// The thread that called `Initialize`.
    pub init_thread: Option<ThreadId>,
    /// That thread's current ACL context at `Initialize`: `None` when the vendor could not
    /// be asked, `Some(None)` when it had none.
    pub init_ctx: Option<Option<usize>>,
    /// `local_engine` of `Initialize`.
    pub local_engine: Option<String>,
    /// Remote engines this instance has a link to (successful Connect/ConnectAsync, not yet
    /// disconnected).
    pub links: BTreeSet<Vec<u8>>,
    /// For each link to an engine of this process: that engine's registrations when the link
    /// was made (what the link can see).
    pub peer_views: PeerViews,
    pub regs: RegSet,
    /// HIXL-REG-COUNT-NEAR was reported for this instance.
    pub near_warned: bool,
    /// What `Initialize`'s options say (transports, AutoConnect, ...).
    pub options: OptionsFacts,
    /// The engine HIXL selected at `Initialize` (`None`: Initialize not seen).
    pub engine: Option<Engine>,
}

impl Default for Instance {
    fn default() -> Self {
        Instance {
            phase: Phase::Constructed,
            init_thread: None,
            init_ctx: None,
            local_engine: None,
            links: BTreeSet::new(),
            peer_views: PeerViews::default(),
            regs: RegSet::default(),
            near_warned: false,
            options: OptionsFacts::default(),
            engine: None,
        }
    }
}

/// One `HixlCS` server or client.
#[derive(Debug, Clone, Default)]
pub struct CsEndpoint {
    /// `server_ip:server_port` of its descriptor, when it could be read.
    pub key: Option<String>,
    pub regs: RegSet,
    /// Client: `HixlCSClientConnect` succeeded. Server: number of clients regcheck saw
    /// connect to its address.
    pub connections: usize,
    /// What the config's `global_resource_config` says.
    pub options: OptionsFacts,
    /// Created through a call regcheck saw (otherwise its state starts when first used).
    pub seen_created: bool,
    /// A server's endpoints, when its descriptor's `endpoint_list` could be read.
    pub endpoints: Option<Vec<super::hixl_facts::CsEndpointFact>>,
}

/// All HIXL objects regcheck has seen.
#[derive(Debug, Default, Clone)]
pub struct HixlState {
    /// `hixl::Hixl` objects by address.
    pub instances: AddrMap<Instance>,
    /// `HixlCS` servers by handle.
    pub servers: HashMap<usize, CsEndpoint>,
    /// `HixlCS` clients by handle.
    pub clients: HashMap<usize, CsEndpoint>,
    /// Where each handle was last deregistered, by instance (the application's frame, not yet
    /// symbolised), quoted when the handle is deregistered again (vllm-ascend #10724). Keyed
    /// by handle, so that a registration returning the handle forgets its entries in one
    /// look-up. Bounded: past [`DEREG_SITES_CAP`] handles it starts over.
    pub dereg_sites: HashMap<usize, Vec<(usize, crate::callsite::Stack)>>,
}

/// How many deregistration sites [`HixlState::dereg_sites`] keeps.
pub const DEREG_SITES_CAP: usize = 16384;

impl HixlState {
    /// The instances other than `this` that have a link to the engine named `name`.
    pub fn incoming_links(&self, this: usize, name: &str) -> Vec<String> {
        self.instances
            .iter()
            .filter(|(addr, i)| **addr != this && i.links.contains(name.as_bytes()))
            .map(|(_, i)| i.local_engine.clone().unwrap_or_else(|| "(unnamed)".into()))
            .collect()
    }

    /// The registrations of the initialised instance (other than `this`) named `name`.
    pub fn regs_of_engine(&self, this: usize, name: &[u8]) -> Option<&RegSet> {
        self.instances
            .iter()
            .find(|(addr, i)| {
                **addr != this
                    && i.phase == Phase::Initialized
                    && i.local_engine.as_deref().map(str::as_bytes) == Some(name)
            })
            .map(|(_, i)| &i.regs)
    }

    /// Whether `handle` is live on an instance other than `this` (its engine name).
    pub fn owner_of(&self, this: usize, handle: usize) -> Option<String> {
        self.instances
            .iter()
            .find(|(addr, i)| **addr != this && i.regs.get(handle).is_some())
            .map(|(addr, i)| i.local_engine.clone().unwrap_or_else(|| format!("instance at 0x{addr:x}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(handle: usize, addr: usize, len: u64, kind: MemKind) -> HixlReg {
        HixlReg { handle, addr, len, kind, tag: String::new(), site: 0 }
    }

    /// A link's snapshot answers every range exactly as the registrations it was taken from:
    /// generated sets with touching, nested, overlapping and empty registrations of both kinds.
    #[test]
    fn peer_view_answers_as_the_registrations() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut overlapped = [false; 2];
        for round in 0..200 {
            let mut set = RegSet::default();
            for h in 0..(1 + next(40)) as usize {
                let kind = if next(3) == 0 { MemKind::Device } else { MemKind::Host };
                let len = if next(10) == 0 { 0 } else { 1 + next(300) };
                set.insert(reg(h + 1, 0x1000 + next(4000) as usize, len, kind));
            }
            let view = PeerView::of(&set);
            overlapped[round % 2] |= set.overlapping.iter().any(|o| *o);
            for _ in 0..400 {
                let addr = 0x1000 + next(4400) as usize - 200;
                let len = next(320);
                assert_eq!(view.kind_of_range(addr, len), set.kind_of_range(addr, len), "{addr:#x}+{len} in {set:?}");
                let end = addr + len as usize;
                let scan = set
                    .iter()
                    .filter(|r| r.len > 0 && r.addr <= addr && end <= r.end())
                    .map(|r| r.kind)
                    .min_by_key(|k| slot(*k));
                assert_eq!(set.kind_of_range(addr, len), scan, "{addr:#x}+{len} in {set:?}");
                if let Some((a, e, k)) = set.span_of_range(addr, len) {
                    assert!(a <= addr && end <= e && set.iter().any(|r| (r.addr, r.end(), r.kind) == (a, e, k)));
                }
            }
            assert_eq!(view.kind_of_range(usize::MAX, 2), None);
            assert_eq!(view.kind_of_range(0x1000, u64::MAX), None);
        }
        assert!(overlapped.iter().all(|o| *o), "the generated sets include overlapping registrations");
        // Sets with no overlap at all.
        let mut set = RegSet::default();
        for h in 0..100usize {
            set.insert(reg(h + 1, 0x10_000 + h * 0x100, if h % 7 == 0 { 0x80 } else { 0x100 }, MemKind::Host));
        }
        let view = PeerView::of(&set);
        assert_eq!(set.overlapping, [false, false]);
        for addr in (0x10_000 - 0x10..0x10_000 + 100 * 0x100 + 0x10).step_by(0x10) {
            for len in [1u64, 0x10, 0x80, 0x100, 0x101] {
                assert_eq!(view.kind_of_range(addr, len), set.kind_of_range(addr, len), "{addr:#x}+{len}");
            }
        }
    }

    #[test]
    fn adjacent_registrations_merge_and_gaps_do_not() {
        let mut s = RegSet::default();
        s.insert(reg(1, 0x1000, 0x1000, MemKind::Host));
        s.insert(reg(2, 0x2000, 0x1000, MemKind::Host));
        s.insert(reg(3, 0x3000, 0x800, MemKind::Host));
        s.insert(reg(4, 0x4000, 0x1000, MemKind::Host)); // after a gap at [0x3800, 0x4000)
        s.insert(reg(5, 0x5000, 0x1000, MemKind::Device)); // adjacent, another kind
        let view = PeerView::of(&s);
        for set in [&s.kind_of_merged_range(0x1800, 0x1000), &view.kind_of_merged_range(0x1800, 0x1000)] {
            assert_eq!(*set, Some(MemKind::Host), "across two");
        }
        assert_eq!(s.kind_of_range(0x1800, 0x1000), None, "no single registration holds it");
        assert_eq!(s.kind_of_merged_range(0x1000, 0x2800), Some(MemKind::Host), "across three, to the end");
        assert_eq!(view.kind_of_merged_range(0x1000, 0x2800), Some(MemKind::Host));
        assert_eq!(s.kind_of_merged_range(0x3000, 0x1800), None, "across the gap");
        assert_eq!(s.kind_of_merged_range(0x1000, 0x2801), None, "one byte into the gap");
        assert_eq!(s.kind_of_merged_range(0x4800, 0x1000), None, "host into device");
        assert_eq!(s.kind_of_merged_range(0x800, 0x1000), None, "starts before any");
        assert_eq!(s.kind_of_merged_range(0x1000, 0), None);
        assert_eq!(s.kind_of_merged_range(usize::MAX - 1, 4), None);
    }

    /// The vendor's memory store merges the whole run of adjacent regions: no cap.
    #[test]
    fn a_run_of_any_length_merges() {
        let mut s = RegSet::default();
        let n = 1000;
        for i in 0..n {
            s.insert(reg(i + 1, 0x10_0000 + i * 0x1000, 0x1000, MemKind::Host));
        }
        let view = PeerView::of(&s);
        let all = (n * 0x1000) as u64;
        assert_eq!(s.kind_of_merged_range(0x10_0000, all), Some(MemKind::Host));
        assert_eq!(view.kind_of_merged_range(0x10_0000, all), Some(MemKind::Host));
        assert_eq!(s.kind_of_merged_range(0x10_0800, all - 0x1000), Some(MemKind::Host), "inside, unaligned");
        assert_eq!(s.kind_of_merged_range(0x10_1000, all), None, "one page past the last");
        assert_eq!(view.kind_of_merged_range(0x10_1000, all), None);
        assert_eq!(s.kind_of_merged_range(0x10_0000, all + 1), None, "one byte past the last");
    }

    #[test]
    fn insert_remove_totals() {
        let mut s = RegSet::default();
        s.insert(reg(1, 0x1000, 0x1000, MemKind::Host));
        s.insert(reg(2, 0x1000, 0x1000, MemKind::Device));
        s.insert(reg(1, 0x1000, 0x1000, MemKind::Host)); // same handle again: ignored
        assert_eq!(s.len(), 2);
        assert_eq!(s.total(MemKind::Host), 0x1000);
        assert_eq!(s.total(MemKind::Device), 0x1000);
        assert_eq!(s.remove(1).unwrap().addr, 0x1000);
        assert!(s.remove(1).is_none());
        assert_eq!(s.total(MemKind::Host), 0);
        assert_eq!(s.iter().count(), 1);
        s.clear();
        assert!(s.is_empty());
    }

    #[test]
    fn overlap_identical_and_containment() {
        let mut s = RegSet::default();
        s.insert(reg(1, 0x1000, 0x1000, MemKind::Host));
        s.insert(reg(2, 0x4000, 0x2000, MemKind::Host));
        assert!(s.overlapping_reg(MemKind::Host, 0x2000, 0x4000).is_none(), "touching");
        assert_eq!(s.overlapping_reg(MemKind::Host, 0x1fff, 0x2000).unwrap().handle, 1);
        assert_eq!(s.overlapping_reg(MemKind::Host, 0, 0x10000).unwrap().handle, 2);
        assert!(s.overlapping_reg(MemKind::Device, 0, 0x10000).is_none(), "other kind");
        assert_eq!(s.identical(MemKind::Host, 0x1000, 0x1000).unwrap().handle, 1);
        assert!(s.identical(MemKind::Host, 0x1000, 0x800).is_none());
        assert!(s.identical(MemKind::Device, 0x1000, 0x1000).is_none());
        assert!(s.contains_range(0x1000, 0x1000));
        assert!(s.contains_range(0x4800, 0x100));
        assert!(!s.contains_range(0x1800, 0x1000), "runs past the end");
        assert!(!s.contains_range(0x3000, 1));
        assert!(!s.contains_range(usize::MAX, 2));
        assert_eq!(s.containing_addr(0x5fff).unwrap().handle, 2);
        assert!(s.containing_addr(0x6000).is_none());
    }

    #[test]
    fn overlapping_registrations_fall_back_to_a_scan() {
        let mut s = RegSet::default();
        s.insert(reg(1, 0x1000, 0x10000, MemKind::Device));
        s.insert(reg(2, 0x2000, 0x1000, MemKind::Device)); // accepted by a lenient vendor
        assert!(s.contains_range(0x8000, 0x1000), "inside the big one, after the small one");
        assert!(s.overlapping_reg(MemKind::Device, 0x9000, 0x9001).is_some());
        s.remove(2);
        s.remove(1);
        assert!(!s.contains_range(0x8000, 1));
    }

    #[test]
    fn the_scan_keeps_the_boundaries_and_skips_empty_registrations() {
        let mut s = RegSet::default();
        assert!(s.is_empty());
        s.insert(reg(1, 0x1000, 0x10000, MemKind::Device));
        s.insert(reg(2, 0x2000, 0x1000, MemKind::Device)); // overlapping: the scan is used
        s.insert(reg(3, 0x20000, 0, MemKind::Device));
        assert!(!s.is_empty());
        assert!(s.overlapping_reg(MemKind::Device, 0x11000, 0x12000).is_none(), "touching the end");
        assert_eq!(s.overlapping_reg(MemKind::Device, 0x10fff, 0x12000).unwrap().handle, 1);
        assert!(s.overlapping_reg(MemKind::Device, 0x800, 0x1000).is_none(), "touching the start");
        assert!(s.overlapping_reg(MemKind::Device, 0x1ffff, 0x20001).is_none(), "an empty registration");
        assert!(s.contains_range(0x10000, 0x1000), "up to the last byte");
        assert!(!s.contains_range(0x10000, 0x1001), "one byte past");
        assert!(!s.contains_range(0x20000, 0), "an empty registration contains nothing");
        assert!(!s.contains_range(0x800, 0x1000), "starts before");
    }

    #[test]
    fn zero_length_registrations_do_not_hide_others() {
        let mut s = RegSet::default();
        s.insert(reg(1, 0x1000, 0x1000, MemKind::Host));
        s.insert(reg(2, 0x1800, 0, MemKind::Host));
        assert!(s.contains_range(0x1900, 0x10));
        assert_eq!(s.overlapping_reg(MemKind::Host, 0x1900, 0x1901).unwrap().handle, 1);
    }

    #[test]
    fn links_across_instances() {
        let mut st = HixlState::default();
        let mut a = Instance { local_engine: Some("a".into()), ..Instance::default() };
        a.links.insert(b"b".to_vec());
        a.regs.insert(reg(7, 0x1000, 1, MemKind::Host));
        st.instances.insert(0x10, a);
        st.instances.insert(0x20, Instance { local_engine: Some("b".into()), ..Instance::default() });
        assert_eq!(st.incoming_links(0x20, "b"), vec!["a".to_string()]);
        assert!(st.incoming_links(0x10, "a").is_empty());
        assert_eq!(st.owner_of(0x20, 7).as_deref(), Some("a"));
        assert!(st.owner_of(0x10, 7).is_none());
        assert!(st.regs_of_engine(0x20, b"a").is_none(), "not initialised");
        st.instances.get_mut(&0x10).unwrap().phase = Phase::Initialized;
        assert_eq!(st.regs_of_engine(0x20, b"a").unwrap().len(), 1);
        assert!(st.regs_of_engine(0x10, b"a").is_none(), "itself");
        assert!(st.regs_of_engine(0x20, b"b").is_none(), "another name");
    }
}
