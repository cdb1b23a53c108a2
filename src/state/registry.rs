//! Registries of live registrations and allocations: ordered maps keyed by start address, so
//! every look-up is O(log n) with no system call; the hot one, the host registration
//! containing an address, is O(1) expected from a [`SpanIndex`].

use std::collections::BTreeMap;

use super::spans::SpanIndex;
use crate::codes::host_reg;

/// Which host-registration API made a registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRegApi {
    /// `aclrtHostRegisterV2(ptr, size, flag)`.
    V2,
    /// `aclrtHostRegister(ptr, size, type, &devPtr)`: always mapped.
    V1,
    /// The driver's `halHostRegister(ptr, size, type, dev, &devPtr)`, called directly (flags:
    /// the driver's map type): always mapped.
    Hal,
}

/// One live `aclrtHostRegister*` registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostReg {
    pub device: i32,
    pub base: usize,
    pub len: u64,
    /// V2 flag bits; for V1 the type value.
    pub flags: u32,
    pub api: HostRegApi,
    /// The device was released (its last `aclrtResetDevice`) since: a PINNED-only
    /// registration then lives on only in the runtime's process-wide table, which is where it
    /// is on the runtime-table path (the driver's, on the driver path, ended with the device).
    pub after_reset: bool,
}

impl HostReg {
    pub fn end(&self) -> usize {
        self.base.saturating_add(self.len as usize)
    }

    /// Whether a device address can be asked for (`aclrtHostGetDevicePointer`): a V1
    /// registration always has one; a V2 one with MAPPED, IOMEMORY or READONLY.
    pub fn mapped(&self) -> bool {
        match self.api {
            HostRegApi::V1 | HostRegApi::Hal => true,
            HostRegApi::V2 => self.flags & host_reg::DEVICE_MAPPED != 0,
        }
    }

    /// How it was registered, for messages: `flags MAPPED|PINNED` (V2) or `type 0` (V1).
    pub fn flags_text(&self) -> String {
        match self.api {
            HostRegApi::V2 => format!("flags {}", host_reg::flag_names(self.flags)),
            HostRegApi::V1 => format!("aclrtHostRegister type {}", self.flags),
            HostRegApi::Hal => format!(
                "halHostRegister {}",
                match self.flags {
                    0 => "HOST_MEM_MAP_DEV".to_string(),
                    3 => "HOST_MEM_MAP_DEV_PCIE_TH".to_string(),
                    t => format!("map type {t}"),
                }
            ),
        }
    }

    pub fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr < self.end()
    }

    /// A V2 registration with PINNED and none of MAPPED, IOMEMORY, READONLY: on the runtime's
    /// own path (a driver without the pinned-register feature) it never reaches the driver
    /// and is in the runtime's process-wide pinned table alone (hicann/runtime
    /// `src/runtime/api/impl/api_impl.cc`, `ApiImpl::HostRegisterV2`; `register_memory.cc`),
    /// which no device reset touches; on the driver path the driver holds it, per device.
    pub fn pinned_only(&self) -> bool {
        self.api == HostRegApi::V2 && !self.mapped()
    }
}

/// Live host registrations, per device, non-overlapping within a device (the vendor
/// rejects overlaps, and only successful registrations are recorded).
#[derive(Debug, Default, Clone)]
pub struct HostRegistry {
    /// Per device (sorted by device; a look-up compares plain numbers, and a process has few
    /// devices).
    devices: Vec<(i32, DeviceRegs)>,
    len: usize,
    /// Registrations with a device address that a device reset dropped, by base: on the
    /// runtime-table path the runtime's process-wide mapped table keeps them, and answers the
    /// device pointer of their base, until `aclrtHostUnregister` succeeds (hicann/runtime
    /// `api_impl.cc`, `InsertMappedMemory`, `GetMappedDevicePointer`). Read on cold paths only.
    released: BTreeMap<usize, HostReg>,
}

/// The live host registrations of one device.
#[derive(Debug, Default, Clone)]
struct DeviceRegs {
    /// By base address: overlap queries and iteration.
    by_base: BTreeMap<usize, HostReg>,
    /// The same (the non-empty ones) for containment.
    spans: SpanIndex<HostReg>,
}

impl HostRegistry {
    fn device(&self, device: i32) -> Option<&DeviceRegs> {
        self.devices.iter().find(|(d, _)| *d == device).map(|(_, m)| m)
    }

    pub fn insert(&mut self, reg: HostReg) {
        let i = match self.devices.binary_search_by_key(&reg.device, |(d, _)| *d) {
            Ok(i) => i,
            Err(i) => {
                self.devices.insert(i, (reg.device, DeviceRegs::default()));
                i
            }
        };
        self.released.remove(&reg.base);
        let d = &mut self.devices[i].1;
        match d.by_base.insert(reg.base, reg) {
            Some(old) => {
                d.spans.remove(old.base, old.end(), &old);
            }
            None => self.len += 1,
        }
        d.spans.insert(reg.base, reg.end(), reg);
    }

    pub fn remove(&mut self, device: i32, base: usize) -> Option<HostReg> {
        let i = self.devices.iter().position(|(d, _)| *d == device)?;
        let d = &mut self.devices[i].1;
        let r = d.by_base.remove(&base)?;
        d.spans.remove(r.base, r.end(), &r);
        self.len -= 1;
        if d.by_base.is_empty() {
            self.devices.remove(i);
        }
        Some(r)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The registration on `device` whose base is exactly `base`.
    pub fn exact(&self, device: i32, base: usize) -> Option<&HostReg> {
        self.device(device)?.by_base.get(&base)
    }

    /// The registration on `device` containing `addr` (a device's registrations do not
    /// overlap: at most one does). O(1) expected.
    pub fn containing(&self, device: i32, addr: usize) -> Option<&HostReg> {
        self.device(device)?.spans.find(addr, addr.checked_add(1)?).map(|(_, _, r)| r)
    }

    /// A registration on `device` overlapping `[start, end)`, if any.
    pub fn overlapping(&self, device: i32, start: usize, end: usize) -> Option<&HostReg> {
        if end <= start {
            return None;
        }
        self.device(device)?.by_base.range(..end).next_back().map(|(_, r)| r).filter(|r| r.end() > start)
    }

    /// A registration on a device other than `device` overlapping `[start, end)`, if any (a
    /// process has few devices: one look-up each).
    pub fn overlapping_elsewhere(&self, device: i32, start: usize, end: usize) -> Option<&HostReg> {
        self.devices.iter().filter(|(d, _)| *d != device).find_map(|(d, _)| self.overlapping(*d, start, end))
    }

    /// The registration behind the runtime's table entry `[base, last]` (see
    /// [`super::rt_tables`]) when it is not the current device's: another device's live one,
    /// else one with a device address that a device reset released (returned marked
    /// [`HostReg::after_reset`]), else one regcheck has no record of (device -1, marked too).
    pub fn held_in_runtime_tables(&self, base: usize, last: usize) -> HostReg {
        let live = self.devices.iter().find_map(|(_, m)| m.by_base.get(&base)).copied();
        live.or_else(|| {
            self.released.get(&base).filter(|r| r.api != HostRegApi::Hal).map(|r| HostReg { after_reset: true, ..*r })
        })
        .unwrap_or(HostReg {
            device: -1,
            base,
            len: last.wrapping_sub(base).wrapping_add(1) as u64,
            flags: 0,
            api: HostRegApi::V2,
            after_reset: true,
        })
    }

    /// Drop every registration of `device` (the vendor drops them when the device is reset).
    /// Returns how many were dropped.
    pub fn remove_device(&mut self, device: i32) -> usize {
        let Some(i) = self.devices.iter().position(|(d, _)| *d == device) else { return 0 };
        let n = self.devices.remove(i).1.by_base.len();
        self.len -= n;
        n
    }

    /// The device was released (its last `aclrtResetDevice`): what the driver held of it ends,
    /// the runtime's tables stay. A registration with a device address went to the driver on
    /// either path and is dropped (the simulator's driver forgets it with the device); a
    /// PINNED-only one is kept, marked [`HostReg::after_reset`] (it is in the runtime's table on
    /// the runtime-table path, gone on the driver path). Returns (dropped, kept).
    pub fn reset_device(&mut self, device: i32) -> (usize, usize) {
        let Some(i) = self.devices.iter().position(|(d, _)| *d == device) else { return (0, 0) };
        let regs = self.devices.remove(i).1.by_base;
        self.len -= regs.len();
        let (mut dropped, mut kept) = (0, 0);
        for r in regs.into_values() {
            if r.pinned_only() {
                self.insert(HostReg { after_reset: true, ..r });
                kept += 1;
            } else {
                self.released.insert(r.base, r);
                dropped += 1;
            }
        }
        (dropped, kept)
    }

    /// A PINNED-only registration on a device other than `device` whose base is exactly
    /// `base` (the runtime's pinned table, on its own path, answers for every device).
    pub fn pinned_base_elsewhere(&self, device: i32, base: usize) -> Option<&HostReg> {
        self.devices
            .iter()
            .filter(|(d, _)| *d != device)
            .find_map(|(_, m)| m.by_base.get(&base).filter(|r| r.pinned_only()))
    }

    /// A registration with a device address whose base is exactly `base`, on a device other
    /// than `device` or dropped by a device reset (`true`): the runtime's mapped table, on its
    /// own path, answers for every device and outlives the reset.
    pub fn mapped_base_in_runtime_table(&self, device: i32, base: usize) -> Option<(&HostReg, bool)> {
        self.devices
            .iter()
            .filter(|(d, _)| *d != device)
            .find_map(|(_, m)| m.by_base.get(&base).filter(|r| r.mapped()))
            .map(|r| (r, false))
            .or_else(|| self.released.get(&base).map(|r| (r, true)))
    }

    /// Drop every registration (the vendor drops them at `aclFinalize`). Returns how many.
    pub fn clear(&mut self) -> usize {
        let n = self.len;
        *self = HostRegistry::default();
        n
    }

    /// Every registration, on any device, that intersects `[start, end)`.
    pub fn intersecting_any_device(&self, start: usize, end: usize) -> Vec<HostReg> {
        self.iter().filter(|r| r.base < end && r.end() > start).copied().collect()
    }

    /// Every registration, by device, then address.
    pub fn iter(&self) -> impl Iterator<Item = &HostReg> {
        self.devices.iter().flat_map(|(_, m)| m.by_base.values())
    }
}

/// What regcheck knows of physical memory mapped with the VMM API (`aclrtMallocPhysical`'s
/// properties), kept per `aclrtMapMem` mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmmAttr {
    /// `aclrtPhysicalMemProp.memAttr` (`aclrtMemAttr`).
    pub mem_attr: u32,
    /// `aclrtPhysicalMemProp.location.type` is `ACL_MEM_LOCATION_TYPE_HOST` (or host NUMA).
    pub host: bool,
}

/// Allocations seen through the vendor's allocators (`aclrtMallocHost`, `aclrtMalloc`),
/// with a payload (the `aclrtMalloc` policy).
#[derive(Debug, Clone)]
pub struct AllocMap<T> {
    allocs: BTreeMap<usize, (usize, T)>,
}

impl<T> Default for AllocMap<T> {
    fn default() -> Self {
        AllocMap { allocs: BTreeMap::new() }
    }
}

/// One allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alloc<T> {
    pub base: usize,
    pub len: usize,
    pub extra: T,
}

impl<T: Copy> AllocMap<T> {
    pub fn insert(&mut self, base: usize, len: usize, extra: T) {
        self.allocs.insert(base, (len, extra));
    }

    pub fn remove(&mut self, base: usize) -> Option<Alloc<T>> {
        self.allocs.remove(&base).map(|(len, extra)| Alloc { base, len, extra })
    }

    pub fn get(&self, base: usize) -> Option<Alloc<T>> {
        self.allocs.get(&base).map(|&(len, extra)| Alloc { base, len, extra })
    }

    /// The allocation that contains all of `[start, start + len)`.
    pub fn containing_range(&self, start: usize, len: usize) -> Option<Alloc<T>> {
        let (&base, &(alen, extra)) = self.allocs.range(..=start).next_back()?;
        let end = start.checked_add(len)?;
        (end <= base.saturating_add(alen) && start < base.saturating_add(alen.max(1))).then_some(Alloc {
            base,
            len: alen,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(device: i32, base: usize, len: u64) -> HostReg {
        HostReg { device, base, len, flags: host_reg::MAPPED, api: HostRegApi::V2, after_reset: false }
    }

    #[test]
    fn a_reset_drops_the_drivers_registrations_and_keeps_the_pinned_only_ones() {
        let mut r = HostRegistry::default();
        r.insert(reg(0, 0x1000, 0x1000));
        r.insert(HostReg { flags: host_reg::PINNED, ..reg(0, 0x4000, 0x1000) });
        r.insert(HostReg { flags: host_reg::PINNED | host_reg::MAPPED, ..reg(0, 0x8000, 0x1000) });
        r.insert(HostReg { flags: 0, api: HostRegApi::V1, ..reg(0, 0xc000, 0x1000) });
        r.insert(HostReg { flags: host_reg::PINNED, ..reg(1, 0x10000, 0x1000) });
        assert_eq!(r.reset_device(0), (3, 1));
        assert_eq!(r.len(), 2);
        let kept = r.exact(0, 0x4000).unwrap();
        assert!(kept.after_reset && kept.pinned_only());
        assert!(r.containing(0, 0x4800).is_some(), "still found by address");
        assert!(r.exact(0, 0x1000).is_none() && r.exact(0, 0x8000).is_none() && r.exact(0, 0xc000).is_none());
        assert!(!r.exact(1, 0x10000).unwrap().after_reset, "another device's untouched");
        assert_eq!(r.reset_device(0), (0, 1), "a second reset keeps it");
        assert_eq!(r.reset_device(5), (0, 0));
        assert_eq!(r.pinned_base_elsewhere(1, 0x4000).unwrap().device, 0);
        assert!(r.pinned_base_elsewhere(0, 0x4000).is_none(), "on the device itself: exact()");
        assert_eq!(r.pinned_base_elsewhere(0, 0x10000).unwrap().device, 1);
        r.insert(reg(2, 0x20000, 0x1000));
        assert!(r.pinned_base_elsewhere(0, 0x20000).is_none(), "a mapped one is the driver's, per device");
        assert!(r.pinned_base_elsewhere(0, 0x4800).is_none(), "the base only");
        // Behind a runtime table entry: another device's live registration, else a released
        // one with a device address, else none regcheck knows.
        let t = r.held_in_runtime_tables(0x1000, 0x1fff);
        assert!(t.after_reset && t.device == 0 && t.len == 0x1000, "released: {t:?}");
        assert_eq!(r.held_in_runtime_tables(0xc000, 0xcfff).api, HostRegApi::V1);
        let live = r.held_in_runtime_tables(0x10000, 0x10fff);
        assert!(!live.after_reset && live.device == 1, "another device's, live: {live:?}");
        let unknown = r.held_in_runtime_tables(0x50000, 0x50fff);
        assert!(unknown.after_reset && unknown.device == -1 && unknown.len == 0x1000, "{unknown:?}");
    }

    #[test]
    fn overlap_is_byte_granular_and_per_device() {
        let mut r = HostRegistry::default();
        r.insert(reg(0, 0x1000, 0x1000));
        r.insert(reg(0, 0x4000, 0x2000));
        assert!(r.overlapping(0, 0x2000, 0x4000).is_none(), "touching is not overlapping");
        assert_eq!(r.overlapping(0, 0x1fff, 0x2000).unwrap().base, 0x1000);
        assert_eq!(r.overlapping(0, 0x0, 0x1001).unwrap().base, 0x1000);
        assert_eq!(r.overlapping(0, 0x3000, 0x4001).unwrap().base, 0x4000);
        assert_eq!(r.overlapping(0, 0x0, 0x10000).unwrap().base, 0x4000);
        assert!(r.overlapping(1, 0x1000, 0x2000).is_none(), "other device");
        assert!(r.overlapping(0, 0x5000, 0x5000).is_none(), "empty range");
        assert!(r.overlapping_elsewhere(0, 0x1000, 0x2000).is_none(), "only device 0 has it");
        assert_eq!(r.overlapping_elsewhere(1, 0x1fff, 0x2000).unwrap().device, 0);
    }

    #[test]
    fn containing_and_exact() {
        let mut r = HostRegistry::default();
        r.insert(reg(0, 0x1000, 0x1000));
        r.insert(reg(2, 0x1000, 0x3000));
        assert_eq!(r.containing(0, 0x1800).unwrap().base, 0x1000);
        assert!(r.containing(0, 0x2000).is_none());
        assert_eq!(r.containing(2, 0x2000).unwrap().len, 0x3000);
        assert!(r.exact(0, 0x1800).is_none());
        assert!(r.exact(0, 0x1000).is_some());
        assert_eq!(r.intersecting_any_device(0x1000, 0x1001).len(), 2);
        assert!(r.remove(0, 0x1000).is_some());
        assert_eq!(r.len(), 1);
        r.insert(reg(0, 0x8000, 0x1000));
        assert_eq!(r.remove_device(2), 1);
        assert_eq!(r.len(), 1);
        assert_eq!(r.clear(), 1);
        assert!(r.is_empty());
    }

    #[test]
    fn containing_follows_replacements_and_the_top_of_the_address_space() {
        let mut r = HostRegistry::default();
        r.insert(reg(0, 0x1000, 0x1000));
        r.insert(reg(0, 0x1000, 0x3000)); // the same base again replaces it
        assert_eq!(r.len(), 1);
        assert_eq!(r.containing(0, 0x3fff).unwrap().len, 0x3000);
        assert!(r.remove(0, 0x1000).is_some());
        assert!(r.containing(0, 0x1000).is_none(), "gone from the index too");
        r.insert(reg(0, 0x1000, 0x3000));
        r.insert(reg(0, 0x1000, 0x1000));
        assert!(r.containing(0, 0x2000).is_none(), "the shorter replacement");
        r.insert(reg(0, usize::MAX - 0xfff, u64::MAX)); // the end saturates
        assert_eq!(r.containing(0, usize::MAX - 1).unwrap().base, usize::MAX - 0xfff);
        assert!(r.containing(0, usize::MAX).is_none(), "no registration holds the last byte");
        r.insert(reg(0, 0x9000, 0));
        assert!(r.containing(0, 0x9000).is_none(), "an empty registration holds nothing");
        assert_eq!(r.clear(), 3);
        assert!(r.containing(0, 0x1000).is_none());
    }

    #[test]
    fn alloc_containing_range() {
        let mut a = AllocMap::default();
        a.insert(0x1000, 0x1000, 7u32);
        assert_eq!(a.containing_range(0x1000, 0x1000).unwrap().extra, 7);
        assert!(a.containing_range(0x1800, 0x1000).is_none());
        assert!(a.containing_range(0x2000, 1).is_none());
        assert!(a.containing_range(0x800, 1).is_none());
        assert!(a.containing_range(0x2000, 0).is_none(), "an empty range at the end is outside");
        assert_eq!(a.containing_range(0x1fff, 1).unwrap().base, 0x1000);
        a.insert(0x3000, 0, 9);
        assert_eq!(a.containing_range(0x3000, 0).unwrap().extra, 9, "an empty allocation holds its start");
        assert!(a.containing_range(0x3000, 1).is_none());
        assert_eq!(a.get(0x1000), Some(Alloc { base: 0x1000, len: 0x1000, extra: 7 }));
        assert!(a.get(0x1001).is_none());
        assert_eq!(a.remove(0x1000).unwrap().len, 0x1000);
        assert!(a.get(0x1000).is_none());
    }

    #[test]
    fn removing_a_device_keeps_the_other_devices_registrations() {
        let mut r = HostRegistry::default();
        r.insert(reg(0, 0x1000, 0x1000));
        r.insert(reg(1, 0x1000, 0x1000));
        r.insert(reg(1, 0x3000, 0x1000));
        r.insert(reg(2, 0x5000, 0x1000));
        assert_eq!(r.len(), 4);
        assert!(!r.is_empty());
        assert_eq!(
            r.iter().map(|g| (g.device, g.base)).collect::<Vec<_>>(),
            [(0, 0x1000), (1, 0x1000), (1, 0x3000), (2, 0x5000)]
        );
        assert_eq!(r.remove_device(1), 2);
        assert_eq!(r.len(), 2);
        assert_eq!(r.remove_device(1), 0, "already gone");
        assert_eq!(r.remove_device(7), 0, "never seen");
        assert_eq!(r.len(), 2);
        assert!(r.containing(0, 0x1800).is_some());
        assert!(r.containing(2, 0x5800).is_some());
        assert!(r.containing(1, 0x1800).is_none());
    }

    #[test]
    fn intersecting_any_device_is_byte_granular() {
        let mut r = HostRegistry::default();
        r.insert(reg(0, 0x1000, 0x1000));
        r.insert(reg(3, 0x1800, 0x1000));
        assert!(r.intersecting_any_device(0, 0x1000).is_empty(), "ends where one starts");
        assert!(r.intersecting_any_device(0x2800, 0x3000).is_empty(), "starts where one ends");
        assert_eq!(r.intersecting_any_device(0x1fff, 0x2000).len(), 2);
        assert_eq!(r.intersecting_any_device(0x2000, 0x2001)[0].device, 3);
        assert_eq!(r.intersecting_any_device(0xfff, 0x1001)[0].device, 0);
        assert!(r.intersecting_any_device(0x4000, 0x5000).is_empty(), "after both");
    }
}

/// Return addresses (into the caller of a call, 0 when unknown) by (device, base): where a
/// registration was made, or an unregistration. Bounded: past `CAP` entries it starts over (a
/// forgotten entry only makes a later message say less, never wrong).
#[derive(Debug, Default, Clone)]
pub struct SiteMap<const CAP: usize> {
    map: std::collections::HashMap<(i32, usize), usize, std::hash::BuildHasherDefault<super::spans::AddrHasher>>,
}

impl<const CAP: usize> SiteMap<CAP> {
    /// `base` on `device` was registered (or unregistered) by the caller at `site`.
    pub fn note(&mut self, device: i32, base: usize, site: usize) {
        if self.map.len() >= CAP {
            self.map.clear();
        }
        self.map.insert((device, base), site);
    }

    /// Drop the entry of `base` on `device`.
    pub fn forget(&mut self, device: i32, base: usize) {
        if !self.map.is_empty() {
            self.map.remove(&(device, base));
        }
    }

    /// Whether there is an entry for `base` on `device`.
    pub fn has(&self, device: i32, base: usize) -> bool {
        !self.map.is_empty() && self.map.contains_key(&(device, base))
    }

    /// The site of `base` on `device`, when known.
    pub fn get(&self, device: i32, base: usize) -> Option<usize> {
        self.map.get(&(device, base)).copied().filter(|&s| s != 0)
    }
}

/// Where each live host registration was made (one word per registration, found without
/// unwinding on most calls), so that a later overlap can name both call sites. An entry outlives
/// its registration only until the next registration at the same base replaces it (it is quoted
/// only beside a live registration).
pub type Sites = SiteMap<16384>;

/// Host registrations regcheck saw unregistered, and none registered at the same base on the
/// same device since: what makes a second `aclrtHostUnregister` of the pointer a double
/// unregistration regcheck *saw*, rather than one of memory it has no record of; with where the
/// first unregistration was made.
#[derive(Debug, Default, Clone)]
pub struct Unregistered {
    set: SiteMap<{ Unregistered::CAP }>,
}

impl Unregistered {
    pub const CAP: usize = 4096;

    /// `base` on `device` was unregistered, by the caller at return address `site` (0: unknown).
    pub fn note(&mut self, device: i32, base: usize, site: usize) {
        self.set.note(device, base, site);
    }

    /// `base` on `device` was registered again.
    pub fn forget(&mut self, device: i32, base: usize) {
        self.set.forget(device, base);
    }

    /// Whether regcheck saw `base` on `device` unregistered, and nothing registered there since.
    pub fn seen(&self, device: i32, base: usize) -> bool {
        self.set.has(device, base)
    }

    /// Where `base` on `device` was unregistered (`None` when not seen or unknown).
    pub fn site(&self, device: i32, base: usize) -> Option<usize> {
        self.set.get(device, base)
    }
}

#[cfg(test)]
mod unregistered_tests {
    use super::Unregistered;

    #[test]
    fn seen_until_registered_again() {
        let mut u = Unregistered::default();
        assert!(!u.seen(0, 0x1000));
        u.note(0, 0x1000, 0x5555);
        assert!(u.seen(0, 0x1000) && !u.seen(1, 0x1000) && !u.seen(0, 0x2000));
        assert_eq!(u.site(0, 0x1000), Some(0x5555));
        u.forget(0, 0x1000);
        assert!(!u.seen(0, 0x1000));
        for i in 0..Unregistered::CAP + 1 {
            u.note(0, i, 0);
        }
        assert!(u.set.map.len() <= Unregistered::CAP);
    }
}
