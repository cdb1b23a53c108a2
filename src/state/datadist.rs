//! LLM-DataDist instances (`llm_datadist::LlmDataDist`, keyed by the object's address) and the
//! HCCL global-memory registrations (`HcclRegisterGlobalMem`, keyed by handle).
//!
//! An instance's registrations are the tensor regions its `RegisterKvCache` calls registered
//! (one per distinct (address, size), as the vendor's `CommMemManager` does), kept in a
//! [`RegSet`] under regcheck's own handles so that the HIXL rules (overlap, the 4000 count, the
//! byte caps) judge them as the engine's registrations.

use std::collections::{BTreeMap, HashMap};
use std::thread::ThreadId;

use super::hixl::{HixlReg, RegSet};
use super::hixl_facts::{Engine, MemKind, OptionsFacts};
use crate::callsite::Stack;

/// `llm.TransferBackend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The option absent: HCCL's `HcclRegisterGlobalMem`, reached by `dlsym`.
    Comm,
    /// `"hixl"`: a HIXL engine inside the library.
    Hixl,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Comm => "comm (HCCL)",
            Backend::Hixl => "hixl",
        }
    }
}

/// One `RegisterKvCache` that succeeded.
#[derive(Debug, Clone)]
pub struct KvCache {
    /// regcheck's handles of the regions this cache registered (not those it shared with an
    /// earlier cache).
    pub handles: Vec<usize>,
    /// Where the application called `RegisterKvCache`.
    pub site: Stack,
}

#[derive(Debug, Clone)]
pub struct DdInstance {
    /// `Initialize` succeeded and no `Finalize` since.
    pub initialized: bool,
    pub backend: Backend,
    /// The engine the hixl backend runs (`None` for the comm backend).
    pub engine: Option<Engine>,
    /// The options HIXL is given (hixl backend).
    pub options: OptionsFacts,
    pub init_thread: Option<ThreadId>,
    /// Tensor regions registered, under regcheck's handles.
    pub regs: RegSet,
    pub caches: BTreeMap<i64, KvCache>,
    /// The (address, size) pairs registered, with their handle (the vendor's de-duplication).
    pub keys: BTreeMap<(usize, u64), usize>,
    pub near_warned: bool,
}

impl Default for DdInstance {
    fn default() -> Self {
        DdInstance {
            initialized: false,
            backend: Backend::Comm,
            engine: None,
            options: OptionsFacts::default(),
            init_thread: None,
            regs: RegSet::default(),
            caches: BTreeMap::new(),
            keys: BTreeMap::new(),
            near_warned: false,
        }
    }
}

impl DdInstance {
    /// Records one tensor region, under a new handle of regcheck's.
    pub fn add_region(&mut self, next: &mut usize, addr: usize, len: u64, kind: MemKind) -> usize {
        *next += 1;
        let h = *next;
        self.regs.insert(HixlReg { handle: h, addr, len, kind, tag: String::new(), site: 0 });
        self.keys.insert((addr, len), h);
        h
    }

    /// Drops a cache and its regions.
    pub fn remove_cache(&mut self, id: i64) -> Option<KvCache> {
        let c = self.caches.remove(&id)?;
        for h in &c.handles {
            if let Some(r) = self.regs.remove(*h) {
                self.keys.remove(&(r.addr, r.len));
            }
        }
        Some(c)
    }

    /// Forgets every registration (Finalize).
    pub fn clear(&mut self) {
        self.regs.clear();
        self.caches.clear();
        self.keys.clear();
    }
}

/// One `HcclRegisterGlobalMem` that succeeded.
#[derive(Debug, Clone)]
pub struct HcclReg {
    pub addr: usize,
    pub len: u64,
    pub kind: MemKind,
}

#[derive(Debug, Default)]
pub struct DataDistState {
    pub instances: HashMap<usize, DdInstance>,
    /// The last handle regcheck gave a tensor region.
    pub next_handle: usize,
    pub hccl: BTreeMap<usize, HcclReg>,
}

/// A registration of device or host memory that is still live, found by address.
#[derive(Debug, Clone)]
pub struct LiveRegion {
    /// Who holds it (`LlmDataDist::RegisterKvCache (cache 3)`, `Hixl::RegisterMem`, ...).
    pub by: String,
    pub addr: usize,
    pub len: u64,
    /// Where it was made, when known.
    pub site: Option<Stack>,
}

impl DataDistState {
    /// The LLM-DataDist regions and HCCL registrations intersecting `[start, end)`.
    pub fn intersecting(&self, start: usize, end: usize) -> Vec<LiveRegion> {
        let hit = |a: usize, l: u64| a < end && a.saturating_add(l as usize) > start;
        let mut out = Vec::new();
        for i in self.instances.values() {
            for (id, c) in &i.caches {
                for h in &c.handles {
                    if let Some(r) = i.regs.get(*h).filter(|r| hit(r.addr, r.len)) {
                        out.push(LiveRegion {
                            by: format!("LlmDataDist::RegisterKvCache (cache_id {id}, {} backend)", i.backend.name()),
                            addr: r.addr,
                            len: r.len,
                            site: Some(c.site.clone()),
                        });
                    }
                }
            }
        }
        for r in self.hccl.values().filter(|r| hit(r.addr, r.len)) {
            out.push(LiveRegion { by: "HcclRegisterGlobalMem".into(), addr: r.addr, len: r.len, site: None });
        }
        out
    }
}
