//! The facts regcheck keeps about a HIXL instance, as plain data: the memory kind of a
//! registration, the engine, and what it understood of the instance's options. They live
//! here, below both the per-process state ([`super::hixl`]), which records them, and the rules
//! (`crate::rules::hixl`), which judge by them and give them their methods (parsing the options,
//! naming the engine), so that neither of the two depends on the other for them.

/// The memory kind HIXL treats a registration as (any `type` other than 0 is host to HIXL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    Device,
    Host,
}

/// One configured transport: `protocol[:placement]`, lower-case (`hccs:device`, `roce:host`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    pub protocol: String,
    pub placement: Option<String>,
}

/// The `BufferPool` option of the comm engine (`"<count>:<MB each>"`; `"0:0"` turns it off).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BufferPool {
    /// Not given: the comm engine makes its default pool (4 buffers of 8 MB).
    #[default]
    Default,
    /// `"0:0"`.
    Disabled,
    /// `"<count>:<MB>"`, both above 0.
    Sized { count: u64, mb: u64 },
    /// Anything else: the comm engine's Initialize refuses it.
    Invalid(String),
}

/// What regcheck understood of `Initialize`'s options (or of a `HixlCS*` config).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionsFacts {
    /// The transports the instance may use; `None` when the options do not say.
    pub transports: Option<Vec<Transport>>,
    /// Which option(s) the transports came from.
    pub transport_source: String,
    /// `AutoConnect=1`: transfers may go to engines without an explicit Connect.
    pub auto_connect: bool,
    /// `EnableUseFabricMem=1` (HCCS fabric memory).
    pub fabric_mem: bool,
    /// A non-empty `LocalCommRes` (or `adxl.LocalCommRes`): `Some(version)` with the JSON's
    /// string `version` when it has one.
    pub local_comm_res: Option<Option<String>>,
    /// `GlobalResourceConfig`'s `local_comm_res_path`: where HIXL reads `LocalCommRes` from
    /// when the option itself is not given.
    pub local_comm_res_path: Option<String>,
    /// `comm_resource_config.protocol_desc` is given and not empty.
    pub protocol_desc: bool,
    /// Its entries as written (`"roce:device"`), for the hixl_cs engine's own check.
    pub protocol_desc_entries: Vec<String>,
    /// `BufferPool` (or `adxl.BufferPool`).
    pub buffer_pool: BufferPool,
    /// The option names given, in order.
    pub keys: Vec<String>,
    /// Values HIXL's option parser refuses (its Initialize fails with PARAM_INVALID).
    pub invalid: Vec<String>,
    /// Values only releases after 9.1 refuse (CANN 9.1.0 converts them): a JSON number with a
    /// fraction or an exponent, or a boolean, where an integer is read.
    pub invalid_after_9_1: Vec<String>,
    /// Options regcheck could not make sense of (logged once at info level).
    pub problems: Vec<String>,
}

/// The engines of `hixl::Hixl` (hicann/hixl `src/hixl/engine/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `CommEngine` over the ADXL inner engine (HCCL communication domains).
    Comm,
    /// `HixlEngine`, built on the HixlCS client/server.
    HixlCs,
    /// `FabricMemEngine` (HCCS fabric memory, Atlas A3).
    FabricMem,
}

/// One endpoint of a `HixlCS` server, as its `HixlServerDesc.endpoint_list` gives it (hcomm's
/// `EndpointDesc`): the raw `protocol` (`CommProtocol`) and `loc.locType` (`EndpointLocType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsEndpointFact {
    pub protocol: i32,
    pub loc_type: i32,
}
