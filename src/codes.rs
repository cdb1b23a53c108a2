//! The vendor's return codes that regcheck returns or recognises, and the flag values of its
//! host-registration calls: interface facts, shared by the rules and the records.

/// ACL `aclError` values (the vendor's documented interface).
pub mod acl {
    pub const SUCCESS: i32 = 0;
    pub const INVALID_PARAM: i32 = 100000;
    pub const RT_PARAM_INVALID: i32 = 107000;
    pub const RT_CONTEXT_NULL: i32 = 107002;
    pub const API_NOT_SUPPORT: i32 = 200001;
    pub const RT_FEATURE_NOT_SUPPORT: i32 = 207000;
    pub const RT_MEMORY_ALLOCATION: i32 = 207001;
    pub const INTERNAL_ERROR: i32 = 500000;
    pub const RT_DRV_INTERNAL_ERROR: i32 = 507899;
    pub const HOST_MEMORY_ALREADY_REGISTERED: i32 = 507910;
    pub const HOST_MEMORY_NOT_REGISTERED: i32 = 507911;
}

/// HIXL `Status` values (the vendor's documented interface).
pub mod hixl {
    pub const SUCCESS: u32 = 0;
    pub const PARAM_INVALID: u32 = 103900;
    pub const TIMEOUT: u32 = 103901;
    pub const NOT_CONNECTED: u32 = 103902;
    pub const ALREADY_CONNECTED: u32 = 103903;
    pub const UNSUPPORTED: u32 = 103905;
    pub const RESOURCE_EXHAUSTED: u32 = 203900;
    pub const FAILED: u32 = 503900;
}

/// The vendor's name of a code, for messages ("100000 (ACL_ERROR_INVALID_PARAM)").
pub fn name(code: i64) -> &'static str {
    match code {
        0 => "SUCCESS",
        100000 => "ACL_ERROR_INVALID_PARAM",
        100001 => "ACL_ERROR_UNINITIALIZE",
        107000 => "ACL_ERROR_RT_PARAM_INVALID",
        107002 => "ACL_ERROR_RT_CONTEXT_NULL",
        200001 => "ACL_ERROR_API_NOT_SUPPORT",
        207000 => "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
        207001 => "ACL_ERROR_RT_MEMORY_ALLOCATION",
        500000 => "ACL_ERROR_INTERNAL_ERROR",
        507899 => "ACL_ERROR_RT_DRV_INTERNAL_ERROR",
        507910 => "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        507911 => "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED",
        103900 => "PARAM_INVALID",
        103901 => "TIMEOUT",
        103902 => "NOT_CONNECTED",
        103903 => "ALREADY_CONNECTED",
        103905 => "UNSUPPORTED",
        203900 => "RESOURCE_EXHAUSTED",
        503900 => "FAILED",
        _ => "unknown code",
    }
}

/// `aclrtHostRegisterV2`'s flag bits (the vendor's documented interface).
pub mod host_reg {
    pub const MAPPED: u32 = 0x2;
    pub const IOMEMORY: u32 = 0x4;
    pub const READONLY: u32 = 0x8;
    pub const PINNED: u32 = 0x1000_0000;
    /// Every bit `aclrtHostRegisterV2` knows.
    pub const KNOWN_FLAGS: u32 = MAPPED | IOMEMORY | READONLY | PINNED;
    /// The bits that give the registration a device address: the runtime maps a
    /// registration with any of them (hicann/runtime `src/runtime/api/impl/api_impl.cc`,
    /// `ApiImpl::HostRegisterV2`), and `aclrtHostGetDevicePointer` answers for it.
    pub const DEVICE_MAPPED: u32 = MAPPED | IOMEMORY | READONLY;

    /// `MAPPED|PINNED`, `none`, `MAPPED|unknown 0x40`.
    pub fn flag_names(flag: u32) -> String {
        let mut parts = Vec::new();
        for (bit, name) in [(MAPPED, "MAPPED"), (IOMEMORY, "IOMEMORY"), (READONLY, "READONLY"), (PINNED, "PINNED")] {
            if flag & bit != 0 {
                parts.push(name.to_string());
            }
        }
        let unknown = flag & !KNOWN_FLAGS;
        if unknown != 0 {
            parts.push(format!("unknown 0x{unknown:x}"));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join("|")
        }
    }
}
