//! `Initialize`'s options (and a `HixlCS*` config's `global_resource_config`): what regcheck
//! understands of them, and which engine HIXL's engine factory selects from them.
//!
//! The option JSON is parsed with `serde_json`; any input, however malformed or deep, gives a
//! value or a problem, never a panic.

use serde_json::Value;

use super::option_values::check_settings;
use super::{Finding, ProductClass, RuleId};
use crate::platform::release::CannRelease;
pub use crate::state::hixl_facts::{BufferPool, Engine, OptionsFacts, Transport};

impl Transport {
    /// Parse `"roce:host"`, `"hccs"`; `None` for an empty string.
    pub fn parse(s: &str) -> Option<Transport> {
        let s = s.trim().to_ascii_lowercase();
        if s.is_empty() {
            return None;
        }
        Some(match s.split_once(':') {
            Some((p, pl)) => Transport {
                protocol: p.trim().to_string(),
                placement: Some(pl.trim().to_string()).filter(|x| !x.is_empty()),
            },
            None => Transport { protocol: s, placement: None },
        })
    }

    /// `protocol:placement` (or just the protocol).
    pub fn text(&self) -> String {
        match &self.placement {
            Some(p) => format!("{}:{p}", self.protocol),
            None => self.protocol.clone(),
        }
    }

    fn matches(&self, other: &Transport) -> bool {
        self.protocol == other.protocol
            && (self.placement.is_none() || other.placement.is_none() || self.placement == other.placement)
    }
}

impl BufferPool {
    /// Read the option's value as the comm engine does.
    pub fn parse(v: &str) -> BufferPool {
        if v.is_empty() {
            return BufferPool::Default;
        }
        if v == "0:0" {
            return BufferPool::Disabled;
        }
        let mut parts = v.split(':');
        let (Some(c), Some(m), None) = (parts.next(), parts.next(), parts.next()) else {
            return BufferPool::Invalid(v.to_string());
        };
        match (c.parse::<u64>(), m.parse::<u64>()) {
            (Ok(count), Ok(mb)) if count > 0 && mb > 0 && count.checked_mul(mb).is_some() => {
                BufferPool::Sized { count, mb }
            }
            _ => BufferPool::Invalid(v.to_string()),
        }
    }

    /// The comm engine stages transfers of unregistered ranges through a pool.
    pub fn stages(&self) -> bool {
        matches!(self, BufferPool::Default | BufferPool::Sized { .. })
    }

    pub fn text(&self) -> String {
        match self {
            BufferPool::Default => "default (4 buffers of 8 MB)".into(),
            BufferPool::Disabled => "off (\"0:0\")".into(),
            BufferPool::Sized { count, mb } => format!("{count} buffers of {mb} MB"),
            BufferPool::Invalid(v) => format!("invalid ({v:?})"),
        }
    }
}

impl OptionsFacts {
    /// An HCCS transport is configured. `None`: transports unknown.
    pub fn hccs(&self) -> Option<bool> {
        self.transports.as_ref().map(|t| t.iter().any(|t| t.protocol == "hccs"))
    }

    /// A host RoCE transport (`roce:host`) is configured. `None`: transports unknown.
    pub fn roce_host(&self) -> Option<bool> {
        self.transports
            .as_ref()
            .map(|t| t.iter().any(|t| t.protocol == "roce" && t.placement.as_deref() == Some("host")))
    }

    /// The transports as text, for messages.
    pub fn transports_text(&self) -> String {
        match &self.transports {
            Some(t) if !t.is_empty() => t.iter().map(Transport::text).collect::<Vec<_>>().join(", "),
            Some(_) => "none".into(),
            None => "unknown".into(),
        }
    }

    /// `LocalCommRes` read from `local_comm_res_path` (HIXL reads the file only when the
    /// option itself is absent or empty).
    pub fn set_local_comm_res_from_file(&mut self, text: &str) {
        if self.local_comm_res.is_none() {
            self.read_local_comm_res(text, "local_comm_res_path");
        }
    }

    fn read_local_comm_res(&mut self, text: &str, what: &str) {
        if text.is_empty() {
            return;
        }
        match parse_object(text) {
            Ok(v) => {
                let version = v.get("version").and_then(Value::as_str).map(str::to_string);
                self.local_comm_res = Some(version);
                if let Some(e) = endpoint_list(&v) {
                    self.set_endpoints(e);
                }
            }
            Err(e) => {
                self.local_comm_res = Some(None);
                self.invalid.push(format!("{what}: {e}"));
            }
        }
    }

    fn set_endpoints(&mut self, endpoints: Vec<Transport>) {
        self.transports = Some(match self.transports.take() {
            Some(desc) => {
                self.transport_source =
                    "LocalCommRes endpoint_list filtered by GlobalResourceConfig protocol_desc".into();
                endpoints.into_iter().filter(|t| desc.iter().any(|x| x.matches(t))).collect()
            }
            None => {
                self.transport_source = "LocalCommRes endpoint_list".into();
                endpoints
            }
        });
    }
}

/// `Initialize`'s option names (vendor headers `hixl_types.h`, `adxl_types.h`).
pub mod option {
    pub const ENABLE_USE_FABRIC_MEM: &str = "EnableUseFabricMem";
    pub const GLOBAL_RESOURCE_CONFIG: &str = "GlobalResourceConfig";
    pub const AUTO_CONNECT: &str = "AutoConnect";
    pub const LOCAL_COMM_RES: &str = "LocalCommRes";
    pub const ADXL_LOCAL_COMM_RES: &str = "adxl.LocalCommRes";
    pub const BUFFER_POOL: &str = "BufferPool";
    pub const ADXL_BUFFER_POOL: &str = "adxl.BufferPool";
    pub const RDMA_TRAFFIC_CLASS: &str = "RdmaTrafficClass";
    pub const ADXL_RDMA_TRAFFIC_CLASS: &str = "adxl.RdmaTrafficClass";
    pub const RDMA_SERVICE_LEVEL: &str = "RdmaServiceLevel";
    pub const ADXL_RDMA_SERVICE_LEVEL: &str = "adxl.RdmaServiceLevel";
}

/// A JSON text that must be an object.
fn parse_object(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(format!("invalid JSON ({e})")),
    }
}

fn transports_of(v: &Value) -> Result<Vec<Transport>, String> {
    match v {
        Value::String(s) => Ok(Transport::parse(s).into_iter().collect()),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str().map(Transport::parse).ok_or_else(|| "protocol_desc entries must be strings".to_string())
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.into_iter().flatten().collect()),
        _ => Err("protocol_desc must be a string or an array of strings".into()),
    }
}

/// The `endpoint_list[]` transports of a LocalCommRes object (`None` when it has none: the
/// endpoints are then generated by HIXL and unknown here).
fn endpoint_list(v: &Value) -> Option<Vec<Transport>> {
    let list = v.get("endpoint_list")?.as_array()?;
    Some(
        list.iter()
            .filter_map(|ep| {
                let p = ep.get("protocol")?.as_str()?.trim();
                let placement = ep.get("placement").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
                (!p.is_empty()).then(|| Transport {
                    protocol: p.to_ascii_lowercase(),
                    placement: placement.map(str::to_ascii_lowercase),
                })
            })
            .collect(),
    )
}

/// What a GlobalResourceConfig (or `global_resource_config`) JSON says.
#[derive(Debug, Default)]
struct GlobalConfig {
    protocol_desc: Option<Vec<Transport>>,
    protocol_desc_entries: Vec<String>,
    local_comm_res_path: Option<String>,
}

/// The hixl_cs engine's `protocol_desc` check (`src/hixl/engine/endpoint_generator/
/// endpoint_generator.cc`, `ParseProtocolDesc`, `IsSupportedProtocolDesc`,
/// `ParseProtocolDescMode`): `protocol:placement`, protocol `roce`, `hccs`, `ub_ctp`, `uboe` or
/// `ub_rtp` (formerly `ubg`), placement `host` or `device`, `uboe` and `ub_rtp` on the device
/// only, and not both `uboe:device` and `ub_rtp:device`.
fn protocol_desc_problems(entries: &[String]) -> Vec<String> {
    const PROTOCOLS: &[&str] = &["roce", "hccs", "ub_ctp", "uboe", "ub_rtp"];
    let mut out = Vec::new();
    for e in entries {
        let ok = match e.split_once(':') {
            Some((p, pl)) if !p.is_empty() && !pl.contains(':') => {
                PROTOCOLS.contains(&p) && (pl == "device" || (pl == "host" && p != "uboe" && p != "ub_rtp"))
            }
            _ => false,
        };
        if !ok {
            out.push(format!(
                "protocol_desc {e:?} is not \"<protocol>:<placement>\" with protocol roce, hccs, ub_ctp, uboe or ub_rtp and placement host or device (uboe and ub_rtp: device only)"
            ));
        }
    }
    if entries.iter().any(|e| e == "uboe:device") && entries.iter().any(|e| e == "ub_rtp:device") {
        out.push("protocol_desc has both \"uboe:device\" and \"ub_rtp:device\"".into());
    }
    out
}

/// Read a GlobalResourceConfig text the way HIXL does: an object whose *flat* keys
/// (`"comm_resource_config.protocol_desc"`, `"comm_resource_config.listen_port"`...) carry the
/// settings. A nested `comm_resource_config` object is not read by HIXL (a problem is noted).
fn global_config(text: &str, facts: &mut OptionsFacts, what: &str) -> GlobalConfig {
    let mut g = GlobalConfig::default();
    if text.is_empty() {
        return g;
    }
    let v = match parse_object(text) {
        Ok(v) => v,
        Err(e) => {
            facts.invalid.push(format!("{what}: {e}"));
            return g;
        }
    };
    if let Some(d) = v.get("comm_resource_config.protocol_desc") {
        match transports_of(d) {
            Ok(t) => g.protocol_desc = Some(t),
            Err(e) => facts.invalid.push(format!("{what}: {e}")),
        }
        g.protocol_desc_entries = match d {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
    } else if v.get("comm_resource_config").and_then(|c| c.get("protocol_desc")).is_some() {
        facts.problems.push(format!(
            "{what}: a nested \"comm_resource_config\" object is not read by HIXL (it reads the flat key \"comm_resource_config.protocol_desc\")"
        ));
    }
    check_settings(&v, facts, what);
    // read after 9.1 only (tag v9.1.0 has no local_comm_res_path)
    match v.get("local_comm_res_path") {
        Some(Value::String(s)) if !s.is_empty() => g.local_comm_res_path = Some(s.clone()),
        Some(_) => facts
            .invalid_after_9_1
            .push(format!("{what}: local_comm_res_path must be a non-empty string (read after 9.1 only)")),
        None => {}
    }
    g
}

/// A `0`/`1` option value as HIXL reads it (`None`: refused).
fn zero_or_one(v: &str) -> Option<bool> {
    match v.trim().parse::<u32>() {
        Ok(0) => Some(false),
        Ok(1) => Some(true),
        _ => None,
    }
}

/// Read `Initialize`'s options:
///
/// - `GlobalResourceConfig`: a JSON object whose flat key `"comm_resource_config.protocol_desc"`
///   is a string or an array of strings `"<protocol>:<placement>"` (`"hccs:device"`,
///   `"roce:host"`...); `local_comm_res_path` names a file holding `LocalCommRes`;
/// - `LocalCommRes` / `adxl.LocalCommRes`: a JSON object with a `version` and, optionally, an
///   `endpoint_list[]` of `protocol` and `placement` (filtered by `protocol_desc` when both
///   are given, as HIXL does);
/// - `EnableUseFabricMem` = `1`: HCCS fabric memory (an `hccs:device` transport);
/// - `AutoConnect` = `1`: transfers need no explicit Connect;
/// - `BufferPool` / `adxl.BufferPool`: the comm engine's staging pool.
///
/// What HIXL's own parser refuses is listed in `invalid`.
pub fn parse_options(options: &[(String, String)]) -> OptionsFacts {
    let mut facts = OptionsFacts::default();
    let get = |name: &str| options.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    facts.keys = options.iter().map(|(k, _)| k.clone()).collect();
    let global = match get(option::GLOBAL_RESOURCE_CONFIG) {
        Some(text) => global_config(text, &mut facts, option::GLOBAL_RESOURCE_CONFIG),
        None => GlobalConfig::default(),
    };
    if let Some(d) = global.protocol_desc {
        facts.protocol_desc = !d.is_empty();
        facts.transport_source = "GlobalResourceConfig comm_resource_config.protocol_desc".into();
        facts.transports = Some(d);
    }
    facts.protocol_desc_entries = global.protocol_desc_entries;
    facts.local_comm_res_path = global.local_comm_res_path;
    let lcr = get(option::LOCAL_COMM_RES).or_else(|| get(option::ADXL_LOCAL_COMM_RES));
    if let Some(text) = lcr {
        facts.read_local_comm_res(text, option::LOCAL_COMM_RES);
    }
    if let Some(v) = get(option::ENABLE_USE_FABRIC_MEM).filter(|v| !v.is_empty()) {
        match zero_or_one(v) {
            Some(on) => facts.fabric_mem = on,
            None => facts.invalid.push(format!("{}: {v:?} is neither 0 nor 1", option::ENABLE_USE_FABRIC_MEM)),
        }
    }
    if let Some(v) = get(option::AUTO_CONNECT) {
        match zero_or_one(v) {
            Some(on) => facts.auto_connect = on,
            None => facts.invalid.push(format!("{}: {v:?} is neither 0 nor 1", option::AUTO_CONNECT)),
        }
    }
    if let Some(v) = get(option::BUFFER_POOL).or_else(|| get(option::ADXL_BUFFER_POOL)) {
        facts.buffer_pool = BufferPool::parse(v);
    }
    if facts.fabric_mem {
        let t = facts.transports.get_or_insert_with(Vec::new);
        if !t.iter().any(|t| t.protocol == "hccs") {
            t.push(Transport { protocol: "hccs".into(), placement: Some("device".into()) });
        }
        if facts.transport_source.is_empty() {
            facts.transport_source = "EnableUseFabricMem=1".into();
        } else {
            facts.transport_source.push_str(" + EnableUseFabricMem=1");
        }
    }
    facts
}

/// A `HixlCS*` config's `global_resource_config` JSON (`None`: not given).
pub fn parse_cs_config(global_resource_config: Option<&str>) -> OptionsFacts {
    let mut facts = OptionsFacts::default();
    if let Some(text) = global_resource_config {
        let g = global_config(text, &mut facts, "global_resource_config");
        if let Some(d) = g.protocol_desc {
            facts.protocol_desc = !d.is_empty();
            facts.transports = Some(d);
            facts.transport_source = "global_resource_config comm_resource_config.protocol_desc".into();
        }
    }
    facts
}

// ---------------------------------------------------------------------------------------
// The engine HIXL selects
// ---------------------------------------------------------------------------------------

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Comm => "comm",
            Engine::HixlCs => "hixl_cs",
            Engine::FabricMem => "fabric_mem",
        }
    }

    /// The options this engine's Initialize accepts (any other name: PARAM_INVALID).
    fn supported(self, key: &str) -> bool {
        use option::*;
        let common = [
            RDMA_TRAFFIC_CLASS,
            ADXL_RDMA_TRAFFIC_CLASS,
            RDMA_SERVICE_LEVEL,
            ADXL_RDMA_SERVICE_LEVEL,
            LOCAL_COMM_RES,
            ADXL_LOCAL_COMM_RES,
            BUFFER_POOL,
            ADXL_BUFFER_POOL,
            AUTO_CONNECT,
            GLOBAL_RESOURCE_CONFIG,
        ];
        common.contains(&key) || (self != Engine::HixlCs && key == ENABLE_USE_FABRIC_MEM)
    }
}

/// The engine a configuration selects, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineChoice {
    pub engine: Engine,
    pub reason: String,
}

/// The engine HIXL's factory (`EngineFactory::CreateEngine`) selects: `EnableUseFabricMem=1`
/// -> fabric memory; a non-empty `LocalCommRes` -> comm, unless its JSON `version` is the
/// string `"1.3"` (hixl_cs); a non-empty `protocol_desc` -> hixl_cs; after 9.1 only (hicann/hixl
/// bb0d0f6), an Ascend 950 SoC (a name containing `Ascend950`, the vendor's `SocType::kV5`) ->
/// hixl_cs; anything else -> comm. `soc` is what `aclrtGetSocName` answers (`None`: nothing,
/// and the factory falls back to comm); `release` the CANN release when it was read (`None`:
/// only assumed). `Err` says why the engine is unknown: an Ascend 950 with none of the options
/// that choose, on a release regcheck could not read (tag v9.1.0's factory has no SoC branch).
pub fn select_engine(
    o: &OptionsFacts,
    soc: Option<&str>,
    release: Option<CannRelease>,
) -> Result<EngineChoice, String> {
    let choice = |engine, reason: String| Ok(EngineChoice { engine, reason });
    if o.fabric_mem {
        return choice(Engine::FabricMem, "EnableUseFabricMem=1".into());
    }
    if let Some(version) = &o.local_comm_res {
        return match version.as_deref() {
            Some("1.3") => choice(Engine::HixlCs, "LocalCommRes version \"1.3\"".into()),
            Some(v) => choice(Engine::Comm, format!("LocalCommRes version {v:?} (not \"1.3\")")),
            None => choice(Engine::Comm, "LocalCommRes without a version \"1.3\"".into()),
        };
    }
    if o.protocol_desc {
        return choice(Engine::HixlCs, "comm_resource_config.protocol_desc is configured".into());
    }
    match (soc, release) {
        (Some(s), Some(r)) if s.contains("Ascend950") && r.after_9_1() => {
            choice(Engine::HixlCs, format!("SoC {s} is an Ascend 950, CANN {r}"))
        }
        (Some(s), Some(r)) if s.contains("Ascend950") => {
            choice(Engine::Comm, format!("default options on SoC {s}: CANN {r} selects no engine by the SoC"))
        }
        (Some(s), None) if s.contains("Ascend950") => Err(format!(
            "default options on SoC {s}, an Ascend 950: releases after 9.1 select hixl_cs there, CANN 9.1.0 the comm engine, and the release is not known (set REGCHECK_CANN_VERSION)"
        )),
        (Some(s), _) => choice(Engine::Comm, format!("default options on SoC {s}")),
        (None, _) => choice(Engine::Comm, "default options, SoC unknown (aclrtGetSocName gave nothing)".into()),
    }
}

/// The HDK version from which fabric memory works on Atlas A3.
pub const HDK_FABRIC_MEM: &str = "25.5.0";
/// The HDK version from which memory mapped with the VMM API (`aclrtMapMem`) can be
/// registered with the fabric-memory engine (it needs `aclrtMemRetainAllocationHandle`).
pub const HDK_FABRIC_VMM: &str = "26.0.0";

/// The largest `local_comm_res_path` file HIXL reads (`kMaxLocalCommResFileSizeBytes`).
const LOCAL_COMM_RES_FILE_MAX: u64 = 1 << 20;

/// `local_comm_res_path` when HIXL reads it (`LocalCommRes` not given): `realpath` must resolve
/// it to a regular file of 1 byte to 1 MiB (`ResolveLocalCommResFromFile`, `ReadLocalCommResFile`).
fn local_comm_res_path_problem(o: &OptionsFacts) -> Option<String> {
    let path = o.local_comm_res_path.as_deref().filter(|_| o.local_comm_res.is_none())?;
    match std::fs::metadata(path) {
        Err(e) => Some(format!("local_comm_res_path {path:?} cannot be read ({e})")),
        Ok(m) if !m.is_file() => Some(format!("local_comm_res_path {path:?} is not a regular file")),
        Ok(m) if m.len() == 0 || m.len() > LOCAL_COMM_RES_FILE_MAX => {
            Some(format!("local_comm_res_path {path:?} holds {} bytes (1 to 1 MiB are read)", m.len()))
        }
        Ok(_) => None,
    }
}

/// `HIXL-INIT-OPTIONS`: what the selected engine's `Initialize` refuses (PARAM_INVALID). `e`:
/// the engine (`None`: unknown, and what depends on it is not judged); `release`: the CANN
/// release when it was read (`None`: assumed, and what only some releases refuse is not judged).
pub fn check_options(o: &OptionsFacts, e: Option<&EngineChoice>, release: Option<CannRelease>) -> Vec<Finding> {
    let mut problems: Vec<String> = o.invalid.clone();
    if release.is_some_and(CannRelease::after_9_1) {
        problems.extend(o.invalid_after_9_1.iter().cloned());
    }
    if release.is_some_and(CannRelease::after_9_1) {
        problems.extend(local_comm_res_path_problem(o));
    }
    let Some(e) = e else {
        return findings_of(problems, "the engine is unknown");
    };
    if e.engine == Engine::HixlCs {
        problems.extend(protocol_desc_problems(&o.protocol_desc_entries));
    }
    for k in o.keys.iter().filter(|k| !e.engine.supported(k)) {
        problems.push(format!("{k:?} is not an option of the {} engine", e.engine.name()));
    }
    match (&o.buffer_pool, e.engine) {
        (BufferPool::Invalid(v), Engine::Comm) => {
            problems.push(format!("BufferPool {v:?} is not \"<count>:<MB>\" with both above 0 (or \"0:0\")"))
        }
        (BufferPool::Default | BufferPool::Disabled, _) | (_, Engine::Comm) => {}
        (p, _) => problems.push(format!(
            "BufferPool {} is not \"0:0\", the only value the {} engine accepts",
            p.text(),
            e.engine.name()
        )),
    }
    findings_of(problems, &format!("on the {} engine ({})", e.engine.name(), e.reason))
}

fn findings_of(problems: Vec<String>, engine: &str) -> Vec<Finding> {
    problems
        .into_iter()
        .map(|p| {
            Finding::new(
                RuleId::HixlInitOptions,
                "options",
                format!("{p}: HIXL's Initialize refuses it (PARAM_INVALID) {engine}"),
                "fix or drop the option (see the HIXL options reference); regcheck forwards the call and the vendor answers",
            )
        })
        .collect()
}

/// `HIXL-INIT-FABRIC-MEM`: `EnableUseFabricMem=1` needs Atlas A3 and HDK 25.5 or later.
/// `Err` names what is unknown.
pub fn check_fabric_mem(
    o: &OptionsFacts,
    product: &ProductClass,
    hdk: &super::HdkFact,
) -> Result<Option<Finding>, super::Skip> {
    if !o.fabric_mem {
        return Ok(None);
    }
    let rule = RuleId::HixlInitFabricMem;
    let a3 = product.family_is(super::products::Family::AtlasA3);
    match a3 {
        None => return Err(product.skip(rule)),
        Some(false) => {
            return Ok(Some(Finding::new(
                rule,
                "options",
                format!("EnableUseFabricMem=1 on {}: fabric memory exists only on Atlas A3", product.name()),
                "drop EnableUseFabricMem on this product (register aclrtMalloc memory with the default engine)",
            )))
        }
        Some(true) => {}
    }
    let min = crate::platform::hdk::HdkVersion::parse(HDK_FABRIC_MEM);
    match (hdk.version, min) {
        (Some(v), Some(m)) if v < m => Ok(Some(Finding::new(
            rule,
            "options",
            format!("EnableUseFabricMem=1 with HDK {}: fabric memory needs HDK 25.5 or later", hdk.describe),
            "upgrade the driver to HDK 25.5 or later (26.0 to register VMM-mapped memory), or drop EnableUseFabricMem",
        ))),
        (Some(_), _) => Ok(None),
        (None, _) => Err(super::Skip::new(rule, "no-hdk", format!("the HDK version is unknown ({})", hdk.describe))),
    }
}

#[cfg(test)]
mod option_table_tests {
    use super::*;

    fn refused(json: &str, soc: Option<&str>) -> Vec<String> {
        let o = parse_options(&[(option::GLOBAL_RESOURCE_CONFIG.to_string(), json.to_string())]);
        let r = CannRelease::parse("9.2.0");
        check_options(&o, select_engine(&o, soc, r).ok().as_ref(), r).into_iter().map(|f| f.problem).collect()
    }

    #[test]
    fn integer_settings_follow_the_vendors_ranges_and_types() {
        // hixl_options_unittest.cc: qos 0-7, max_active_channels >= 1 within uint32, integers or
        // strings holding one, nothing with a fraction (json_utils_ut.cc FloatValueThrows)
        for ok in [
            r#"{"comm_resource_config.qos": 7}"#,
            r#"{"comm_resource_config.qos": "0"}"#,
            r#"{"comm_resource_config.max_active_channels": 4294967295}"#,
            r#"{"comm_resource_config.listen_port": "26000"}"#,
            r#"{"fabric_memory": {"max_capacity": "10", "start_address": "50", "task_stream_num": "4", "enable_aicpu_unfold": false}}"#,
            r#"{"fabric_memory": {"enable_aicpu_unfold": true, "task_stream_num": "1"}}"#,
        ] {
            assert!(refused(ok, None).is_empty(), "{ok}: {:?}", refused(ok, None));
        }
        for (bad, what) in [
            (r#"{"comm_resource_config.qos": 8}"#, "qos 8"),
            (r#"{"comm_resource_config.qos": -1}"#, "qos -1"),
            (r#"{"comm_resource_config.qos": "0invalid"}"#, "not an integer"),
            (r#"{"comm_resource_config.max_active_channels": 0}"#, "max_active_channels 0"),
            (r#"{"comm_resource_config.max_active_channels": 4294967296}"#, "max_active_channels 4294967296"),
            (r#"{"comm_resource_config.listen_port": 1.5}"#, "not an integer"),
            (r#"{"connect_pool.thread_num": 65}"#, "thread_num 65"),
            (r#"{"fabric_memory": {"start_address": "1025"}}"#, "start_address"),
            (r#"{"fabric_memory.max_capacity": 0}"#, "max_capacity 0"),
            (r#"{"fabric_memory": {"task_stream_num": "4"}}"#, "aicpu unfold"),
            (r#"{"fabric_memory.enable_aicpu_unfold": "true"}"#, "not a JSON boolean"),
        ] {
            let got = refused(bad, None);
            assert!(got.len() == 1 && got[0].contains(what), "{bad}: {got:?}");
        }
    }

    #[test]
    fn fractions_and_booleans_are_refused_after_9_1_only() {
        // hicann/hixl 1577fcd (json_utils_ut.cc FloatValueThrows); tag v9.1.0's JsonToNumber
        // reads them with nlohmann's get<T> (truncated, true 1)
        let judge = |json: &str, release: Option<&str>| {
            let o = parse_options(&[(option::GLOBAL_RESOURCE_CONFIG.to_string(), json.to_string())]);
            let r = release.and_then(CannRelease::parse);
            check_options(&o, select_engine(&o, None, r).ok().as_ref(), r)
                .into_iter()
                .map(|f| f.problem)
                .collect::<Vec<_>>()
        };
        for json in [
            r#"{"comm_resource_config.listen_port": 1.5}"#,
            r#"{"comm_resource_config.qos": 7.9}"#,
            r#"{"comm_resource_config.qos": true}"#,
            r#"{"fabric_memory": {"max_capacity": 2e1}}"#,
        ] {
            let after = judge(json, Some("9.2.0"));
            assert!(after.len() == 1 && after[0].contains("1577fcd"), "{json}: {after:?}");
            assert!(judge(json, Some("9.1.0")).is_empty(), "{json}: 9.1.0 converts it");
            assert!(judge(json, None).is_empty(), "{json}: not judged on an assumed release");
        }
        // tag v9.1.0's own parser: no range for connect_pool's, listen_port wrapped to 32 bits,
        // no aicpu unfold, no local_comm_res_path
        for json in [
            r#"{"connect_pool.thread_num": 65}"#,
            r#"{"comm_resource_config.listen_port": 4294967297}"#,
            r#"{"fabric_memory": {"task_stream_num": "4"}}"#,
            r#"{"fabric_memory.enable_aicpu_unfold": "true"}"#,
            r#"{"local_comm_res_path": "/nonexistent/lcr.json"}"#,
        ] {
            assert_eq!(judge(json, Some("9.2.0")).len(), 1, "{json}");
            assert!(judge(json, Some("9.1.0")).is_empty(), "{json}: {:?}", judge(json, Some("9.1.0")));
            assert!(judge(json, None).is_empty(), "{json}");
        }
        // out of range once converted: refused by every release
        for json in [
            r#"{"comm_resource_config.qos": 8.5}"#,
            r#"{"comm_resource_config.listen_port": false}"#,
            r#"{"comm_resource_config.listen_port": "4294967297"}"#,
            r#"{"comm_resource_config.listen_port": 4294967296}"#,
        ] {
            for r in [Some("9.1.0"), Some("9.2.0"), None] {
                assert_eq!(judge(json, r).len(), 1, "{json} {r:?}");
            }
        }
    }

    #[test]
    fn the_engine_on_an_ascend_950_with_default_options_is_the_releases() {
        let o = OptionsFacts::default();
        let soc = Some("Ascend950PR_9579");
        assert_eq!(select_engine(&o, soc, CannRelease::parse("9.2.0")).unwrap().engine, Engine::HixlCs);
        assert_eq!(select_engine(&o, soc, CannRelease::parse("9.1.0")).unwrap().engine, Engine::Comm);
        let why = select_engine(&o, soc, None).unwrap_err();
        assert!(why.contains("REGCHECK_CANN_VERSION"), "{why}");
        // elsewhere, and with options that choose, the release does not matter
        assert_eq!(select_engine(&o, Some("Ascend910B1"), None).unwrap().engine, Engine::Comm);
        let cs = parse_options(&[(
            option::GLOBAL_RESOURCE_CONFIG.to_string(),
            r#"{"comm_resource_config.protocol_desc": "roce:device"}"#.to_string(),
        )]);
        assert_eq!(select_engine(&cs, soc, None).unwrap().engine, Engine::HixlCs);
    }

    #[test]
    fn the_hixl_cs_engine_checks_protocol_desc() {
        // endpoint_generator.cc ParseProtocolDesc: roce, hccs, ub_ctp, uboe, ub_rtp; host or device
        for ok in [r#"["roce:host", "hccs:device"]"#, r#"["ub_ctp:host", "ub_ctp:device"]"#, r#""ub_rtp:device""#] {
            let json = format!(r#"{{"comm_resource_config.protocol_desc": {ok}}}"#);
            assert!(refused(&json, None).is_empty(), "{ok}: {:?}", refused(&json, None));
        }
        for bad in [
            r#""ubg:device""#,
            r#""uboe:host""#,
            r#""roce""#,
            r#""rdma:device""#,
            r#"["uboe:device", "ub_rtp:device"]"#,
        ] {
            let json = format!(r#"{{"comm_resource_config.protocol_desc": {bad}}}"#);
            assert_eq!(refused(&json, None).len(), 1, "{bad}: {:?}", refused(&json, None));
        }
        // the comm engine (LocalCommRes not 1.3) does not filter by it
        let o = parse_options(&[
            (
                option::GLOBAL_RESOURCE_CONFIG.to_string(),
                r#"{"comm_resource_config.protocol_desc": "ubg:device"}"#.to_string(),
            ),
            (option::LOCAL_COMM_RES.to_string(), r#"{"version": "1.2"}"#.to_string()),
        ]);
        let r = CannRelease::parse("9.2.0");
        assert!(check_options(&o, select_engine(&o, None, r).ok().as_ref(), r).is_empty());
    }

    #[test]
    fn local_comm_res_path_must_be_a_readable_regular_file() {
        let dir = std::env::temp_dir().join(format!("regcheck-lcr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.json");
        std::fs::write(&empty, "").unwrap();
        let missing = dir.join("missing.json");
        for (path, what) in [(&dir, "not a regular file"), (&empty, "holds 0 bytes"), (&missing, "cannot be read")] {
            let json = format!(r#"{{"local_comm_res_path": {:?}}}"#, path.to_str().unwrap());
            let got = refused(&json, None);
            assert!(got.len() == 1 && got[0].contains(what), "{json}: {got:?}");
        }
        // read as LocalCommRes: nothing to say about the path
        let mut o = parse_options(&[(
            option::GLOBAL_RESOURCE_CONFIG.to_string(),
            format!(r#"{{"local_comm_res_path": {:?}}}"#, missing.to_str().unwrap()),
        )]);
        o.set_local_comm_res_from_file(r#"{"version": "1.2"}"#);
        let r = CannRelease::parse("9.2.0");
        assert!(check_options(&o, select_engine(&o, None, r).ok().as_ref(), r).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
