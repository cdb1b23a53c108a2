//! The `adxl::AdxlEngine` front end (`libllm_datadist.so`): the same member functions as
//! `hixl::Hixl`'s ([`super::instance`], given [`ADXL`]), plus `GetTransferStatus`, which
//! regcheck checks only here.
//!
//! Not interposed: the static feature gates `GetCapability`, `MallocMem`, `FreeMem` and
//! `ExportToShareableHandle`. Programs built against ADXL's compat headers (Mooncake's
//! `adxl_compat.h`) declare them weak and test their addresses to choose a code path; regcheck
//! defining them would make them look present when the vendor lacks them, and change the
//! program being checked.

use super::*;

/// `adxl::AdxlEngine` (hicann/hixl `include/adxl/adxl_engine.h`): no ConnectAsync, no
/// DisconnectAsync.
pub static ADXL: Front = front!(
    RegApi::Adxl,
    Library::Adxl,
    "AdxlEngine",
    "_ZN4adxl10AdxlEngine",
    connect_async: None,
    disconnect_async: None,
);

static GET_TRANSFER_STATUS: Member = member!(
    Library::Adxl,
    "AdxlEngine::GetTransferStatus",
    "_ZN4adxl10AdxlEngine17GetTransferStatusERKPvRNS_14TransferStatusE"
);
type GetTransferStatusFn = unsafe extern "C-unwind" fn(*mut c_void, *const *mut c_void, *mut i32) -> u32;

/// `Status GetTransferStatus(const TransferReq &req, TransferStatus &status)`: the engine must
/// be initialised, `req` a request (ADXL-STATUS-NULL-REQ).
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor).
pub unsafe fn get_transfer_status(this: *mut c_void, req: *const *mut c_void, status: *mut i32) -> u32 {
    let call = GET_TRANSFER_STATUS.name;
    run_member(
        &ADXL,
        call,
        |rt| {
            let st = state::read(|s| instance_state(s.hixl.instances.get(&(this as usize))));
            // SAFETY: `req` is the application's `const TransferReq &` (NULL tolerated).
            let r = (!req.is_null()).then(|| unsafe { *req } as usize);
            let findings: Vec<Finding> =
                rules::check_initialized(call, st).into_iter().chain(rules::check_status_req(r)).collect();
            reject_or(rt, Api::Cpp, call, || format!("req=0x{:x}", r.unwrap_or(0)), &findings)
        },
        || call_vendor!(GET_TRANSFER_STATUS.symbol, GetTransferStatusFn, VENDOR_MISSING; this, req, status),
        |_, (), _| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the macro makes are the vendor's (as `nm` shows them for a class built from
    /// the vendor's header), and the two fronts differ only in the class.
    #[test]
    fn symbols_are_the_vendors() {
        assert_eq!(ADXL.ctor[0].symbol.name(), "_ZN4adxl10AdxlEngineC1Ev");
        assert_eq!(ADXL.dtor[0].name, "AdxlEngine::~AdxlEngine");
        assert_eq!(
            ADXL.initialize.symbol.name(),
            "_ZN4adxl10AdxlEngine10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE"
        );
        assert_eq!(
            ADXL.transfer_sync.symbol.name(),
            "_ZN4adxl10AdxlEngine12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi"
        );
        assert_eq!(ADXL.register_mem.name, "AdxlEngine::RegisterMem");
        assert_eq!(HIXL.register_mem.symbol.name(), "_ZN4hixl4Hixl11RegisterMemERKNS_7MemDescENS_7MemTypeERPv");
        assert_eq!(HIXL.dtor[1].symbol.name(), "_ZN4hixl4HixlD2Ev");
        assert_eq!(HIXL.ctor[0].name, "Hixl::Hixl");
        assert!(ADXL.connect_async.is_none() && HIXL.connect_async.is_some());
        assert_eq!(
            GET_TRANSFER_STATUS.symbol.name(),
            "_ZN4adxl10AdxlEngine17GetTransferStatusERKPvRNS_14TransferStatusE"
        );
        assert!(ADXL.is_adxl() && !HIXL.is_adxl());
    }
}
