//! Product families by `aclrtGetSocName()` string, and what each supports (the vendor's documented interface).
//! Kept as data: a new SoC string is one line here.

/// A product family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Family {
    Unknown = 0,
    AtlasA2 = 1,
    AtlasA3 = 2,
    Ascend950PR = 3,
    Ascend950DT = 4,
    Atlas200I500A2 = 5,
    AtlasInference = 6,
    AtlasTraining = 7,
}

/// Whether a family supports the host-registration APIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRegSupport {
    Supported,
    /// Sources disagree: allowed, with a warning naming the conflict.
    Conflict(&'static str),
    /// The runtime's code registers (the chip's feature table has host registration), but
    /// the product documentation says the family is not supported: a warning, never a
    /// rejection.
    DocumentedUnsupported(&'static str),
    /// The runtime refuses it (207000: the chip's feature table lacks host registration).
    Unsupported,
}

/// One row of the product table.
#[derive(Debug)]
pub struct Product {
    pub family: Family,
    pub display: &'static str,
    /// Exact SoC strings.
    pub exact: &'static [&'static str],
    /// A prefix that must be followed by `_` and more (`Ascend950PR_9579`), if any.
    pub prefix: Option<&'static str>,
    pub host_register: HostRegSupport,
    /// HIXL's Atlas A2/A3 rules (host/device caps, aclrtMallocHost origin) apply.
    pub hixl_a2_a3: bool,
    /// Ascend 950 rules (host RoCE must not use aclrtMallocHost memory) apply.
    pub hixl_950: bool,
}

pub static PRODUCTS: &[Product] = &[
    Product {
        family: Family::AtlasA2,
        display: "Atlas A2",
        exact: &["Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910B4-1"],
        prefix: None,
        host_register: HostRegSupport::Supported,
        hixl_a2_a3: true,
        hixl_950: false,
    },
    Product {
        family: Family::AtlasA3,
        display: "Atlas A3",
        exact: &[
            "Ascend910_9362",
            "Ascend910_9363",
            "Ascend910_9372",
            "Ascend910_9381",
            "Ascend910_9382",
            "Ascend910_9391",
            "Ascend910_9392",
        ],
        prefix: None,
        host_register: HostRegSupport::Supported,
        hixl_a2_a3: true,
        hixl_950: false,
    },
    Product {
        family: Family::Ascend950PR,
        display: "Ascend 950PR",
        exact: &[],
        prefix: Some("Ascend950PR"),
        host_register: HostRegSupport::Supported,
        hixl_a2_a3: false,
        hixl_950: true,
    },
    Product {
        family: Family::Ascend950DT,
        display: "Ascend 950DT",
        exact: &[],
        prefix: Some("Ascend950DT"),
        host_register: HostRegSupport::Conflict(
            "the aclrtHostRegisterV2 reference marks Ascend 950DT unsupported while the later CANN API reference lists it as supported",
        ),
        hixl_a2_a3: false,
        hixl_950: true,
    },
    Product {
        family: Family::Atlas200I500A2,
        display: "Atlas 200I/500 A2",
        exact: &["Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4"],
        prefix: None,
        host_register: HostRegSupport::Unsupported,
        hixl_a2_a3: false,
        hixl_950: false,
    },
    Product {
        family: Family::AtlasInference,
        display: "Atlas inference series",
        exact: &["Ascend310P1", "Ascend310P3", "Ascend310P5", "Ascend310P7"],
        prefix: None,
        host_register: HostRegSupport::Unsupported,
        hixl_a2_a3: false,
        hixl_950: false,
    },
    Product {
        family: Family::AtlasTraining,
        display: "Atlas training series",
        // The bare "Ascend910B" is the old training part, not Atlas A2.
        exact: &["Ascend910A", "Ascend910ProA", "Ascend910PremiumA", "Ascend910B", "Ascend910ProB"],
        prefix: None,
        // hicann/runtime `src/runtime/config/cloud/dev_info_reg.cc`: the cloud chip's feature
        // set has RT_FEATURE_MEM_HOST_REGISTER, which `NpuDriver::HostRegister`
        // (`src/runtime/driver/npu_driver_mem.cc`) asks; the vendor's own test expects
        // success there (`tests/ut/runtime/runtime/test/platform/cloud/rt_utest_npu_driver.cc`).
        host_register: HostRegSupport::DocumentedUnsupported(
            "the runtime's feature table for this chip (cloud) has host registration and registers it, while the CANN API reference lists the Atlas training series as unsupported",
        ),
        hixl_a2_a3: false,
        hixl_950: false,
    },
];

/// The product a SoC string belongs to; `None` for an unknown string. Exact match, or a
/// family prefix followed by `_` (never a bare prefix match: `Ascend910B` is not A2).
pub fn lookup(soc: &str) -> Option<&'static Product> {
    let soc = soc.trim();
    PRODUCTS.iter().find(|p| {
        p.exact.contains(&soc)
            || p.prefix
                .is_some_and(|pre| soc.strip_prefix(pre).is_some_and(|rest| rest.starts_with('_') && rest.len() > 1))
    })
}

/// The family of a SoC string (`Unknown` when not in the table).
pub fn family(soc: &str) -> Family {
    lookup(soc).map_or(Family::Unknown, |p| p.family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(family("Ascend910B1"), Family::AtlasA2);
        assert_eq!(family("Ascend910B4-1"), Family::AtlasA2);
        assert_eq!(family("Ascend910B"), Family::AtlasTraining, "bare 910B is the training part");
        assert_eq!(family("Ascend910B9"), Family::Unknown, "no prefix matching");
        assert_eq!(family("Ascend910_9391"), Family::AtlasA3);
        assert_eq!(family("Ascend950PR_9579"), Family::Ascend950PR);
        assert_eq!(family("Ascend950DT_9571"), Family::Ascend950DT);
        assert_eq!(family("Ascend950PR"), Family::Unknown);
        assert_eq!(family("Ascend950PR_"), Family::Unknown, "nothing after the underscore");
        assert_eq!(family("Ascend950PRX1"), Family::Unknown, "no underscore after the prefix");
        assert_eq!(family("Ascend950DTA_1"), Family::Unknown);
        assert_eq!(family("Ascend310P3"), Family::AtlasInference);
        assert_eq!(family("Ascend310B2"), Family::Atlas200I500A2);
        assert_eq!(family("SomethingElse"), Family::Unknown);
        assert_eq!(family(" Ascend910B2C "), Family::AtlasA2);
    }

    #[test]
    fn support() {
        assert_eq!(lookup("Ascend910B3").unwrap().host_register, HostRegSupport::Supported);
        assert!(matches!(lookup("Ascend950DT_1").unwrap().host_register, HostRegSupport::Conflict(_)));
        assert_eq!(lookup("Ascend310P1").unwrap().host_register, HostRegSupport::Unsupported);
        assert!(lookup("Ascend910_9362").unwrap().hixl_a2_a3);
        assert!(lookup("Ascend950PR_1").unwrap().hixl_950);
    }
}
