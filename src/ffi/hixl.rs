//! The `hixl::Hixl` members (Itanium-mangled names, the vendor's documented interface) and the `HixlCS*` C API
//! (the vendor's documented interface), exported under the vendor's names. Each is one call into
//! [`crate::frontend::hixl`]. Kept out of `regcheck.h`: applications take these
//! declarations from `hixl/hixl.h` and `cs/hixl_cs.h`.
//!
//! A non-virtual member function is called with `this` as its first argument; references
//! are pointers; `MemType`/`TransferOp` are 32-bit; `Status` is `uint32_t`. The members use
//! the `"C-unwind"` ABI so that a C++ exception thrown by the vendor (`std::bad_alloc`)
//! reaches the application exactly as it would without regcheck. Members not exported here
//! (`GetAsyncConnectStatus`, `GetTransferStatus`, `SendNotify`, ...) go straight to the vendor.
//!
//! # Safety
//!
//! These functions are called by C++ code under the vendor's contract: `this` is a live
//! `hixl::Hixl`, references are valid, handles came from the vendor. regcheck reads only what
//! that contract makes valid (and tolerates NULL where a caller might pass it).
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void};

use crate::frontend;
use crate::frontend::hixl::{CommMem, CsConfig, CsSide, LinkCall, MemDesc, Structor, HIXL};

engine_members!(HIXL, "_ZN4hixl4Hixl");

/// `hixl::Hixl::Hixl()` (base object).
#[export_name = "_ZN4hixl4HixlC2Ev"]
pub unsafe extern "C-unwind" fn hixl_ctor_c2(this: *mut c_void) {
    frontend::hixl::construct(&HIXL, this, Structor::Base);
    crate::ffi::framed(())
}

/// `hixl::Hixl::~Hixl()` (base object).
#[export_name = "_ZN4hixl4HixlD2Ev"]
pub unsafe extern "C-unwind" fn hixl_dtor_d2(this: *mut c_void) {
    frontend::hixl::destruct(&HIXL, this, Structor::Base);
    crate::ffi::framed(())
}

/// `Status ConnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis)`.
#[export_name = "_ZN4hixl4Hixl12ConnectAsyncERKN2ge12AscendStringEi"]
pub unsafe extern "C-unwind" fn hixl_connect_async(this: *mut c_void, remote: *const c_void, timeout: i32) -> u32 {
    crate::ffi::framed(frontend::hixl::link(&HIXL, this, LinkCall::ConnectAsync, remote, timeout))
}

/// `Status DisconnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis)`.
#[export_name = "_ZN4hixl4Hixl15DisconnectAsyncERKN2ge12AscendStringEi"]
pub unsafe extern "C-unwind" fn hixl_disconnect_async(this: *mut c_void, remote: *const c_void, timeout: i32) -> u32 {
    crate::ffi::framed(frontend::hixl::link(&HIXL, this, LinkCall::DisconnectAsync, remote, timeout))
}

/// `HixlStatus HixlCSServerCreate(const HixlServerDesc *, const HixlServerConfig *, HixlServerHandle *)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSServerCreate(
    desc: *const c_void,
    config: *const CsConfig,
    handle: *mut *mut c_void,
) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_create(CsSide::Server, desc, config, handle))
}

/// `HixlStatus HixlCSServerRegMem(HixlServerHandle, const char *mem_tag, const CommMem *, MemHandle *)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSServerRegMem(
    server: *mut c_void,
    mem_tag: *const c_char,
    mem: *const CommMem,
    mem_handle: *mut *mut c_void,
) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_reg_mem(CsSide::Server, server, mem_tag, mem, mem_handle))
}

/// `HixlStatus HixlCSServerUnregMem(HixlServerHandle, MemHandle)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSServerUnregMem(server: *mut c_void, mem_handle: *mut c_void) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_unreg_mem(CsSide::Server, server, mem_handle))
}

/// `HixlStatus HixlCSServerDestroy(HixlServerHandle)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSServerDestroy(server: *mut c_void) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_destroy(CsSide::Server, server))
}

/// `HixlStatus HixlCSClientCreate(const HixlClientDesc *, const HixlClientConfig *, HixlClientHandle *)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSClientCreate(
    desc: *const c_void,
    config: *const CsConfig,
    handle: *mut *mut c_void,
) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_create(CsSide::Client, desc, config, handle))
}

/// `HixlStatus HixlCSClientConnect(HixlClientHandle, uint32_t timeout_ms)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSClientConnect(client: *mut c_void, timeout_ms: u32) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_client_connect(client, timeout_ms))
}

/// `HixlStatus HixlCSClientRegMem(HixlClientHandle, const char *mem_tag, const CommMem *, MemHandle *)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSClientRegMem(
    client: *mut c_void,
    mem_tag: *const c_char,
    mem: *const CommMem,
    mem_handle: *mut *mut c_void,
) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_reg_mem(CsSide::Client, client, mem_tag, mem, mem_handle))
}

/// `HixlStatus HixlCSClientUnregMem(HixlClientHandle, MemHandle)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSClientUnregMem(client: *mut c_void, mem_handle: *mut c_void) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_unreg_mem(CsSide::Client, client, mem_handle))
}

/// `HixlStatus HixlCSClientDestroy(HixlClientHandle)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn HixlCSClientDestroy(client: *mut c_void) -> u32 {
    crate::ffi::framed(frontend::hixl::cs_destroy(CsSide::Client, client))
}
