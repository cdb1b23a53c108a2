//! regcheck: a validation layer for memory registration on Huawei Ascend NPUs.
//!
//! The library exports the vendor's own function names (`aclrtHostRegisterV2`, ...,
//! and the mangled names of `hixl::Hixl`'s members). Loaded with `LD_PRELOAD` or linked
//! ahead of the vendor library, it checks every call against the documented rules, logs a
//! message with a stable rule ID, rejects what is invalid with the vendor's own error code,
//! and forwards everything else unchanged to the real vendor library.
//!
//! The parts, from the outside in:
//!
//! | module | what it is |
//! |---|---|
//! | [`ffi`] | the C ABI surface: vendor-named exports (thin) and regcheck's own `regcheck_*` API |
//! | [`frontend`] | per-call logic: gather facts, run the rules, decide, forward, record |
//! | [`rules`] | the rule catalogue (data) and the rules (small pure functions) |
//! | [`state`] | per-process state: registrations and allocations, lazily created runtime |
//! | [`config`] | `REGCHECK_*` environment variables, parsed once |
//! | [`report`] | messages, logging (text or JSON), the thread's last rejection |
//! | [`callsite`] | the application's frame that made a reported call |
//! | [`platform`] | probes: kernel, page size, memory map, driver version, memlock |
//! | [`vendor`] | finding the real vendor functions |
//! | [`codes`] | the vendor's error codes |
//!
//! The simulator of the vendor libraries lives in `sim/` (C++), outside this crate.

pub mod callsite;
pub mod codes;
pub mod config;
pub mod ffi;
pub mod frontend;
pub mod hash;
pub mod platform;
pub mod report;
pub mod rules;
pub mod state;
pub mod vendor;
