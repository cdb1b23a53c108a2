//! The `adxl::AdxlEngine` members (Itanium-mangled names, the vendor's documented interface
//! `include/adxl/adxl_engine.h`), exported under the vendor's names: every member Mooncake's
//! Ascend transport imports strongly, plus the weak `TransferAsync` and `GetTransferStatus`.
//! Each is one call into [`crate::frontend::hixl`] with [`ADXL`]: the two front ends share
//! their checks, and [`engine_members!`] exports the members they have in common. Kept out of `regcheck.h`.
//!
//! Not exported, on purpose: the static feature gates `GetCapability`, `MallocMem`, `FreeMem`
//! and `ExportToShareableHandle` (see `docs/adxl.md`), and `SendNotify`/`GetNotifies`, which
//! go straight to the vendor. Only the complete-object constructor and destructor (`C1`,
//! `D1`) are exported: what a program that creates an `AdxlEngine` calls.
//!
//! The calling convention is `hixl::Hixl`'s (see [`super::hixl`]): `this` first, references
//! as pointers, 32-bit enums, `Status` as `uint32_t`, the `"C-unwind"` ABI.
//!
//! # Safety
//!
//! These functions are called by C++ code under the vendor's contract: `this` is a live
//! `adxl::AdxlEngine`, references are valid, handles came from the vendor.
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;

use crate::frontend;
use crate::frontend::hixl::{LinkCall, MemDesc, Structor, ADXL};

engine_members!(ADXL, "_ZN4adxl10AdxlEngine");

/// `Status GetTransferStatus(const TransferReq &req, TransferStatus &status)`.
#[export_name = "_ZN4adxl10AdxlEngine17GetTransferStatusERKPvRNS_14TransferStatusE"]
pub unsafe extern "C-unwind" fn adxl_get_transfer_status(
    this: *mut c_void,
    req: *const *mut c_void,
    status: *mut i32,
) -> u32 {
    crate::ffi::framed(frontend::hixl::get_transfer_status(this, req, status))
}
