//! The `llm_datadist::LlmDataDist` members regcheck interposes (Itanium-mangled names of the
//! vendor's documented interface `include/llm_datadist/llm_datadist.h`; `tests/datadist.rs`
//! compares them with a build of the simulator's header) and HCCL's global-memory registration
//! (`HcclRegisterGlobalMem`, `HcclDeregisterGlobalMem`, C). Each is one call into
//! [`crate::frontend::hixl`]. Kept out of `regcheck.h`.
//!
//! The other members (links, pulls, pushes) go straight to the vendor. Only the
//! complete-object constructor and destructor (`C1`, `D1`) are exported.
//!
//! # Safety
//!
//! Called by C++ code under the vendor's contract: `this` is a live `LlmDataDist`, references
//! are valid.
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;

use crate::frontend;
use crate::frontend::hixl::{CacheDesc, CommMem};

/// `LlmDataDist(uint64_t cluster_id, LlmRole role)`.
#[export_name = "_ZN12llm_datadist11LlmDataDistC1EmNS_7LlmRoleE"]
pub unsafe extern "C-unwind" fn llm_datadist_ctor_c1(this: *mut c_void, cluster_id: u64, role: i32) {
    frontend::hixl::datadist_construct(this, cluster_id, role);
    crate::ffi::framed(())
}

/// `~LlmDataDist()`.
#[export_name = "_ZN12llm_datadist11LlmDataDistD1Ev"]
pub unsafe extern "C-unwind" fn llm_datadist_dtor_d1(this: *mut c_void) {
    frontend::hixl::datadist_destruct(this);
    crate::ffi::framed(())
}

/// `Status Initialize(const std::map<AscendString, AscendString> &options)`.
#[export_name = "_ZN12llm_datadist11LlmDataDist10InitializeERKSt3mapIN2ge12AscendStringES3_St4lessIS3_ESaISt4pairIKS3_S3_EEE"]
pub unsafe extern "C-unwind" fn llm_datadist_initialize(this: *mut c_void, options: *const c_void) -> u32 {
    crate::ffi::framed(frontend::hixl::datadist_initialize(this, options))
}

/// `void Finalize()`.
#[export_name = "_ZN12llm_datadist11LlmDataDist8FinalizeEv"]
pub unsafe extern "C-unwind" fn llm_datadist_finalize(this: *mut c_void) {
    frontend::hixl::datadist_finalize(this);
    crate::ffi::framed(())
}

/// `Status RegisterKvCache(const CacheDesc &, const std::vector<uint64_t> &, const RegisterCfg &, int64_t &)`.
#[export_name = "_ZN12llm_datadist11LlmDataDist15RegisterKvCacheERKNS_9CacheDescERKSt6vectorImSaImEERKNS_11RegisterCfgERl"]
pub unsafe extern "C-unwind" fn llm_datadist_register_kv_cache(
    this: *mut c_void,
    cache_desc: *const CacheDesc,
    addrs: *const c_void,
    cfg: *const c_void,
    cache_id: *mut i64,
) -> u32 {
    crate::ffi::framed(frontend::hixl::register_kv_cache(this, cache_desc, addrs, cfg, cache_id))
}

/// `Status UnregisterKvCache(int64_t cache_id)`.
#[export_name = "_ZN12llm_datadist11LlmDataDist17UnregisterKvCacheEl"]
pub unsafe extern "C-unwind" fn llm_datadist_unregister_kv_cache(this: *mut c_void, cache_id: i64) -> u32 {
    crate::ffi::framed(frontend::hixl::unregister_kv_cache(this, cache_id))
}

/// `HcclResult HcclRegisterGlobalMem(CommMem *mem, void **memHandle)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HcclRegisterGlobalMem(mem: *mut CommMem, mem_handle: *mut *mut c_void) -> i32 {
    crate::ffi::framed(frontend::hixl::hccl_register_global_mem(mem, mem_handle))
}

/// `HcclResult HcclDeregisterGlobalMem(void *memHandle)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HcclDeregisterGlobalMem(mem_handle: *mut c_void) -> i32 {
    crate::ffi::framed(frontend::hixl::hccl_deregister_global_mem(mem_handle))
}
