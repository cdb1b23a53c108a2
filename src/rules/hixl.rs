//! The HIXL rules (`hixl::Hixl` members and the `HixlCS*` C API), as pure functions of the
//! call's arguments and of facts the front end gathered (instance state, registrations,
//! allocations, memory map, SoC, driver version, transports). No I/O, no FFI.
//!
//! Where a fact a rule needs is unknown, the rule does not guess: it reports a [`Skip`]
//! (logged once at info level by the front end) and finds nothing.

use super::acl::human;
use super::products;
use super::{Finding, RuleId};
use crate::platform::hdk::HdkVersion;
use crate::state::hixl::HixlReg;
use crate::state::registry::Alloc;

/// `hixl::MEM_DEVICE` / `COMM_MEM_TYPE_DEVICE`.
pub const MEM_DEVICE: i64 = 0;
/// `hixl::MEM_HOST` / `COMM_MEM_TYPE_HOST`.
pub const MEM_HOST: i64 = 1;
/// Host registration cap on Atlas A2/A3 below HDK 25.5.0 (and when the HDK is unknown).
pub const HOST_CAP_OLD: u64 = 20 << 30;
/// Host registration cap on Atlas A2/A3 from HDK 25.5.0.
pub const HOST_CAP_NEW: u64 = 1 << 40;
/// Device registration cap on Atlas A2/A3.
pub const DEVICE_CAP: u64 = 50 << 30;
/// The HDK version from which the 1 TiB host cap applies.
pub const HDK_BIG_HOST_CAP: &str = "25.5.0";
/// How many items a message lists at most.
const LIST_MAX: usize = 8;

/// The memory kind HIXL treats a registration as (any `type` other than 0 is host to HIXL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    Device,
    Host,
}

impl MemKind {
    /// The kind the vendor uses for a raw `type` value.
    pub fn from_raw(ty: i64) -> MemKind {
        if ty == MEM_DEVICE {
            MemKind::Device
        } else {
            MemKind::Host
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MemKind::Device => "MEM_DEVICE",
            MemKind::Host => "MEM_HOST",
        }
    }
}

/// Which registration call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegApi {
    /// `hixl::Hixl::RegisterMem(const MemDesc &mem, MemType type, MemHandle &)`.
    Hixl,
    /// `HixlCSServerRegMem(server, tag, const CommMem *mem, MemHandle *)`.
    CsServer,
    /// `HixlCSClientRegMem(client, tag, const CommMem *mem, MemHandle *)`.
    CsClient,
}

impl RegApi {
    pub fn call(self) -> &'static str {
        match self {
            RegApi::Hixl => "Hixl::RegisterMem",
            RegApi::CsServer => "HixlCSServerRegMem",
            RegApi::CsClient => "HixlCSClientRegMem",
        }
    }

    fn addr_arg(self) -> &'static str {
        if self == RegApi::Hixl {
            "mem.addr"
        } else {
            "mem->addr"
        }
    }

    fn len_arg(self) -> &'static str {
        if self == RegApi::Hixl {
            "mem.len"
        } else {
            "mem->size"
        }
    }

    fn type_arg(self) -> &'static str {
        if self == RegApi::Hixl {
            "type"
        } else {
            "mem->type"
        }
    }

    /// The object a registration is made on, as an argument name and a noun.
    fn target(self) -> (&'static str, &'static str) {
        match self {
            RegApi::Hixl => ("this", "instance"),
            RegApi::CsServer => ("server_handle", "server"),
            RegApi::CsClient => ("client_handle", "client"),
        }
    }

    fn dereg_call(self) -> &'static str {
        match self {
            RegApi::Hixl => "DeregisterMem",
            RegApi::CsServer => "HixlCSServerUnregMem",
            RegApi::CsClient => "HixlCSClientUnregMem",
        }
    }

    fn type_names(self) -> (&'static str, &'static str) {
        if self == RegApi::Hixl {
            ("hixl::MEM_DEVICE", "hixl::MEM_HOST")
        } else {
            ("COMM_MEM_TYPE_DEVICE", "COMM_MEM_TYPE_HOST")
        }
    }
}

/// A registration's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegArgs {
    pub api: RegApi,
    pub addr: usize,
    pub len: u64,
    /// The raw `type` value (`MemType` or `CommMemType`).
    pub ty: i64,
}

impl RegArgs {
    /// `[addr, addr + len)` when it is a real range (non-NULL, non-empty, no wrap).
    pub fn range(&self) -> Option<(usize, usize)> {
        if self.addr == 0 || self.len == 0 {
            return None;
        }
        let len = usize::try_from(self.len).ok()?;
        self.addr.checked_add(len).map(|end| (self.addr, end))
    }

    /// The kind the vendor will record.
    pub fn kind(&self) -> MemKind {
        MemKind::from_raw(self.ty)
    }

    /// `type` is one of the two valid values.
    pub fn type_valid(&self) -> bool {
        self.ty == MEM_DEVICE || self.ty == MEM_HOST
    }
}

/// A rule that could not be evaluated, and why (the front end logs it once at info level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub rule: RuleId,
    /// A short stable key for "log once" (`"no-soc"`, `"no-transport"`...).
    pub key: &'static str,
    pub why: String,
}

impl Skip {
    fn new(rule: RuleId, key: &'static str, why: impl Into<String>) -> Skip {
        Skip { rule, key, why: why.into() }
    }

    /// The info line the front end logs.
    pub fn message(&self) -> String {
        format!("{} skipped: {}", self.rule.name(), self.why)
    }
}

/// Findings plus the rules that were skipped for lack of facts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checks {
    pub findings: Vec<Finding>,
    pub skipped: Vec<Skip>,
}

impl Checks {
    fn push(&mut self, f: Option<Finding>) {
        self.findings.extend(f);
    }

    fn skip(&mut self, s: Skip) {
        self.skipped.push(s);
    }

    /// Whether a finding of `rule` is among the findings.
    pub fn has(&self, rule: RuleId) -> bool {
        self.findings.iter().any(|f| f.rule == rule)
    }
}

// ---------------------------------------------------------------------------------------
// Initialize's options
// ---------------------------------------------------------------------------------------

/// One configured transport: `protocol[:placement]`, lower-case (`hccs:device`, `roce:host`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    pub protocol: String,
    pub placement: Option<String>,
}

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
    /// Options that could not be understood (logged once at info level).
    pub problems: Vec<String>,
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
}

/// `Initialize`'s option names (vendor header `hixl_types.h`).
pub mod option {
    pub const ENABLE_USE_FABRIC_MEM: &str = "EnableUseFabricMem";
    pub const GLOBAL_RESOURCE_CONFIG: &str = "GlobalResourceConfig";
    pub const AUTO_CONNECT: &str = "AutoConnect";
    pub const LOCAL_COMM_RES: &str = "LocalCommRes";
}

/// Read `Initialize`'s options:
///
/// - `GlobalResourceConfig`: a JSON object whose flat key `"comm_resource_config.protocol_desc"`
///   is a string or an array of strings `"<protocol>:<placement>"` (`"hccs:device"`,
///   `"roce:host"`...); the nested form `{"comm_resource_config": {"protocol_desc": ...}}` is
///   accepted too;
/// - `LocalCommRes`: a JSON object whose `endpoint_list[]` has `protocol` and `placement`
///   (filtered by `protocol_desc` when both are given, as HIXL does);
/// - `EnableUseFabricMem` = `1`: HCCS fabric memory (an `hccs:device` transport);
/// - `AutoConnect` = `1`: transfers need no explicit Connect.
///
/// Everything else is ignored; what cannot be parsed is listed in `problems`.
pub fn parse_options(options: &[(String, String)]) -> OptionsFacts {
    let mut facts = OptionsFacts::default();
    let mut desc: Option<Vec<Transport>> = None;
    let mut endpoints: Option<Vec<Transport>> = None;
    for (k, v) in options {
        match k.trim() {
            option::GLOBAL_RESOURCE_CONFIG => match protocol_desc(v) {
                Ok(d) => desc = d.or(desc),
                Err(e) => facts.problems.push(format!("{}: {e}", option::GLOBAL_RESOURCE_CONFIG)),
            },
            option::LOCAL_COMM_RES => match endpoint_list(v) {
                Ok(e) => endpoints = e.or(endpoints),
                Err(e) => facts.problems.push(format!("{}: {e}", option::LOCAL_COMM_RES)),
            },
            option::ENABLE_USE_FABRIC_MEM => facts.fabric_mem = v.trim() == "1",
            option::AUTO_CONNECT => facts.auto_connect = v.trim() == "1",
            _ => {}
        }
    }
    let mut sources = Vec::new();
    let mut transports = match (desc, endpoints) {
        (Some(d), Some(e)) => {
            sources.push("LocalCommRes endpoint_list filtered by GlobalResourceConfig protocol_desc");
            Some(e.into_iter().filter(|t| d.iter().any(|x| x.matches(t))).collect::<Vec<_>>())
        }
        (Some(d), None) => {
            sources.push("GlobalResourceConfig comm_resource_config.protocol_desc");
            Some(d)
        }
        (None, Some(e)) => {
            sources.push("LocalCommRes endpoint_list");
            Some(e)
        }
        (None, None) => None,
    };
    if facts.fabric_mem {
        let t = transports.get_or_insert_with(Vec::new);
        if !t.iter().any(|t| t.protocol == "hccs") {
            t.push(Transport { protocol: "hccs".into(), placement: Some("device".into()) });
        }
        sources.push("EnableUseFabricMem=1");
    }
    facts.transports = transports;
    facts.transport_source = sources.join(" + ");
    facts
}

/// A `HixlCS*` config's `global_resource_config` JSON (`None`: not given).
pub fn parse_cs_config(global_resource_config: Option<&str>) -> OptionsFacts {
    let mut facts = OptionsFacts::default();
    if let Some(text) = global_resource_config {
        match protocol_desc(text) {
            Ok(Some(d)) => {
                facts.transports = Some(d);
                facts.transport_source = "global_resource_config comm_resource_config.protocol_desc".into();
            }
            Ok(None) => {}
            Err(e) => facts.problems.push(format!("global_resource_config: {e}")),
        }
    }
    facts
}

fn transports_of(v: &Json) -> Result<Vec<Transport>, String> {
    match v {
        Json::Str(s) => Ok(Transport::parse(s).into_iter().collect()),
        Json::Arr(items) => items
            .iter()
            .map(|i| match i {
                Json::Str(s) => Ok(Transport::parse(s)),
                _ => Err("protocol_desc entries must be strings".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.into_iter().flatten().collect()),
        _ => Err("protocol_desc must be a string or an array of strings".into()),
    }
}

/// `comm_resource_config.protocol_desc` of a GlobalResourceConfig JSON text.
fn protocol_desc(text: &str) -> Result<Option<Vec<Transport>>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let json = Json::parse(text)?;
    let Json::Obj(_) = json else { return Err("not a JSON object".into()) };
    if let Some(v) = json.get("comm_resource_config.protocol_desc") {
        return transports_of(v).map(Some);
    }
    if let Some(v) = json.get("comm_resource_config").and_then(|c| c.get("protocol_desc")) {
        return transports_of(v).map(Some);
    }
    Ok(None)
}

/// The `endpoint_list[]` transports of a LocalCommRes JSON text.
fn endpoint_list(text: &str) -> Result<Option<Vec<Transport>>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let json = Json::parse(text)?;
    let Json::Obj(_) = json else { return Err("not a JSON object".into()) };
    let Some(Json::Arr(list)) = json.get("endpoint_list") else { return Ok(None) };
    let mut out = Vec::new();
    for ep in list {
        let Some(Json::Str(p)) = ep.get("protocol") else { continue };
        let placement = match ep.get("placement") {
            Some(Json::Str(s)) if !s.trim().is_empty() => Some(s.trim().to_ascii_lowercase()),
            _ => None,
        };
        if !p.trim().is_empty() {
            out.push(Transport { protocol: p.trim().to_ascii_lowercase(), placement });
        }
    }
    Ok(Some(out))
}

/// A minimal JSON value, enough to read HIXL's option strings.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn parse(text: &str) -> Result<Json, String> {
        let mut p = JsonParser { s: text.as_bytes(), i: 0, depth: 0 };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("unexpected text at byte {}", p.i));
        }
        Ok(v)
    }
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("invalid JSON ({what} at byte {})", self.i))
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        self.depth += 1;
        if self.depth > 64 {
            return self.err("nesting too deep");
        }
        let v = match self.s.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Json::Str),
            Some(_) if self.eat("true") => Ok(Json::Bool(true)),
            Some(_) if self.eat("false") => Ok(Json::Bool(false)),
            Some(_) if self.eat("null") => Ok(Json::Null),
            Some(c) if *c == b'-' || c.is_ascii_digit() => self.number(),
            Some(_) => self.err("unexpected character"),
        };
        self.depth -= 1;
        v
    }

    fn object(&mut self) -> Result<Json, String> {
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.eat("}") {
            return Ok(Json::Obj(members));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return self.err("expected a key");
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(":") {
                return self.err("expected ':'");
            }
            let v = self.value()?;
            members.push((k, v));
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return Ok(Json::Obj(members));
            }
            return self.err("expected ',' or '}'");
        }
    }

    fn array(&mut self) -> Result<Json, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.eat("]") {
            return Ok(Json::Arr(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(Json::Arr(items));
            }
            return self.err("expected ',' or ']'");
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(&c) = self.s.get(self.i) {
            self.i += 1;
            match c {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else { break };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).and_then(|h| std::str::from_utf8(h).ok());
                            let Some(code) = hex.and_then(|h| u32::from_str_radix(h, 16).ok()) else {
                                return self.err("bad \\u escape");
                            };
                            self.i += 4;
                            let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                _ => out.push(c),
            }
        }
        self.err("unterminated string")
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        while self.i < self.s.len() && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .map(Json::Num)
            .map_or_else(|| self.err("bad number"), Ok)
    }
}

// ---------------------------------------------------------------------------------------
// Products and environment
// ---------------------------------------------------------------------------------------

/// The product, as far as the HIXL rules care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProductClass {
    /// No SoC name could be had.
    Unknown,
    /// A SoC string not in the product table.
    Unlisted(String),
    /// Atlas A2 or A3: host/device caps, host memory from aclrtMallocHost.
    A2A3(String),
    /// Ascend 950PR/950DT: no aclrtMallocHost memory over a host RoCE NIC.
    Ascend950(String),
    /// Any other listed product (the A2/A3 and 950 rules do not apply).
    Other(String),
}

impl ProductClass {
    pub fn from_soc(soc: Option<&str>) -> ProductClass {
        let Some(soc) = soc else { return ProductClass::Unknown };
        match products::lookup(soc) {
            None => ProductClass::Unlisted(soc.to_string()),
            Some(p) if p.hixl_a2_a3 => ProductClass::A2A3(format!("{soc} ({})", p.display)),
            Some(p) if p.hixl_950 => ProductClass::Ascend950(format!("{soc} ({})", p.display)),
            Some(p) => ProductClass::Other(format!("{soc} ({})", p.display)),
        }
    }

    /// `Some(true)` for Atlas A2/A3, `None` when the product is unknown.
    fn a2_a3(&self) -> Option<bool> {
        match self {
            ProductClass::Unknown | ProductClass::Unlisted(_) => None,
            ProductClass::A2A3(_) => Some(true),
            _ => Some(false),
        }
    }

    /// `Some(true)` for Ascend 950PR/950DT, `None` when the product is unknown.
    fn ascend_950(&self) -> Option<bool> {
        match self {
            ProductClass::Unknown | ProductClass::Unlisted(_) => None,
            ProductClass::Ascend950(_) => Some(true),
            _ => Some(false),
        }
    }

    fn name(&self) -> &str {
        match self {
            ProductClass::Unknown => "unknown",
            ProductClass::Unlisted(s) | ProductClass::A2A3(s) | ProductClass::Ascend950(s) | ProductClass::Other(s) => {
                s
            }
        }
    }

    fn skip(&self, rule: RuleId) -> Skip {
        match self {
            ProductClass::Unlisted(s) => {
                Skip::new(rule, "unlisted-soc", format!("SoC {s:?} is not in the product table"))
            }
            _ => Skip::new(rule, "no-soc", "the SoC is unknown (aclrtGetSocName gave nothing; set REGCHECK_SOC_NAME)"),
        }
    }
}

/// The driver version, as far as the caps care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdkFact {
    pub version: Option<HdkVersion>,
    /// Text for messages: the version and where it came from, or why it is unknown.
    pub describe: String,
}

/// Where in its life an instance (or CS endpoint) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceState {
    /// regcheck did not see it constructed nor initialised (rules needing it are skipped).
    Unknown,
    Constructed,
    Initialized,
    Finalized,
}

/// `HIXL-NOT-INITIALIZED`.
pub fn check_initialized(call: &str, st: InstanceState) -> Option<Finding> {
    let (problem, fix) = match st {
        InstanceState::Constructed => (
            "the instance is not initialised: Initialize has not succeeded on it",
            format!("call Initialize(local_engine, options) and check that it returns SUCCESS before {call}"),
        ),
        InstanceState::Finalized => (
            "the instance was finalised (Finalize was called)",
            format!("do not use an instance after Finalize; create and Initialize a new one before {call}"),
        ),
        InstanceState::Unknown | InstanceState::Initialized => return None,
    };
    Some(Finding::new(RuleId::HixlNotInitialized, "this", problem, fix))
}

// ---------------------------------------------------------------------------------------
// RegisterMem / HixlCS*RegMem
// ---------------------------------------------------------------------------------------

/// `HIXL-REG-NULL-ADDR`, `-LEN-ZERO`, `-RANGE-OVERFLOW`, `-MEMTYPE`: the arguments alone.
pub fn check_args(a: &RegArgs) -> Vec<Finding> {
    let mut out = Vec::new();
    if a.addr == 0 {
        out.push(Finding::new(
            RuleId::HixlRegNullAddr,
            a.api.addr_arg(),
            "is 0",
            "pass the start address of the buffer to register",
        ));
    }
    if a.len == 0 {
        out.push(Finding::new(
            RuleId::HixlRegLenZero,
            a.api.len_arg(),
            "is 0: HIXL accepts it and the empty region fails later, at transfer time",
            "pass the buffer's length in bytes",
        ));
    }
    if a.addr != 0 && a.len != 0 && (a.addr as u128 + a.len as u128) > usize::MAX as u128 + 1 {
        out.push(Finding::new(
            RuleId::HixlRegRangeOverflow,
            a.api.len_arg(),
            format!("0x{:x} + {} wraps around the address space", a.addr, a.len),
            "pass the buffer's real length",
        ));
    }
    if !a.type_valid() {
        let (dev, host) = a.api.type_names();
        out.push(Finding::new(
            RuleId::HixlRegMemtype,
            a.api.type_arg(),
            format!(
                "{} is neither {dev} (0) nor {host} (1); HIXL would silently treat the memory as host memory",
                a.ty
            ),
            format!("pass {dev} for aclrtMalloc memory or {host} for host memory"),
        ));
    }
    out
}

/// The links that make a registration come too late (or a deregistration too early).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFacts {
    /// Remote engines this instance connected to (a client: its server).
    pub outgoing: Vec<String>,
    /// Engines in this process connected to this one (a server: its clients).
    pub incoming: Vec<String>,
}

impl LinkFacts {
    pub fn any(&self) -> bool {
        !self.outgoing.is_empty() || !self.incoming.is_empty()
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.outgoing.is_empty() {
            parts.push(format!("links to {}", list(&self.outgoing)));
        }
        if !self.incoming.is_empty() {
            parts.push(format!("links from {}", list(&self.incoming)));
        }
        parts.join(" and ")
    }
}

fn list(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().take(LIST_MAX).map(|s| format!("\"{s}\"")).collect();
    if items.len() > LIST_MAX {
        format!("{} and {} more", shown.join(", "), items.len() - LIST_MAX)
    } else {
        shown.join(", ")
    }
}

/// The calling thread against Initialize's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadFacts {
    pub same_thread: bool,
    /// Initialize's thread's context: `None` unknown (the vendor could not be asked or
    /// Initialize was not seen), `Some(None)` it had none.
    pub init_ctx: Option<Option<usize>>,
    /// The calling thread's context, same encoding.
    pub current_ctx: Option<Option<usize>>,
}

/// `HIXL-REG-THREAD`.
pub fn check_thread(call: &str, t: &ThreadFacts) -> Result<Option<Finding>, Skip> {
    if t.same_thread {
        return Ok(None);
    }
    let (Some(init), Some(cur)) = (t.init_ctx, t.current_ctx) else {
        return Err(Skip::new(
            RuleId::HixlRegThread,
            "no-context",
            "the ACL context of Initialize's thread or of the calling thread is unknown (aclrtGetCurrentContext not found, or Initialize not seen)",
        ));
    };
    if init == cur {
        return Ok(None);
    }
    let ctx = |c: Option<usize>| c.map_or("none".to_string(), |c| format!("0x{c:x}"));
    Ok(Some(Finding::new(
        RuleId::HixlRegThread,
        "(thread)",
        format!(
            "{call} is called on a thread other than Initialize's, and this thread's current ACL context ({}) is not the one Initialize's thread had ({})",
            ctx(cur),
            ctx(init)
        ),
        format!(
            "call {call} on the Initialize thread, or on that thread get the context with aclrtGetCurrentContext(&ctx) and call aclrtSetCurrentContext(ctx) on this thread first"
        ),
    )))
}

/// Facts about one registration call.
#[derive(Debug, Clone)]
pub struct RegFacts<'a> {
    pub state: InstanceState,
    /// `None` for the HixlCS calls (no thread rule there).
    pub thread: Option<ThreadFacts>,
    /// `None` when the links are unknown (an endpoint regcheck did not see created).
    pub links: Option<LinkFacts>,
    /// A live registration identical to this one (same addr, len, kind).
    pub identical: Option<&'a HixlReg>,
    /// A live registration of the same kind that overlaps without being identical.
    pub overlap: Option<&'a HixlReg>,
    /// Distinct live registrations on the instance, and the limit.
    pub live: usize,
    pub limit: u64,
    pub near_warned: bool,
    /// Live bytes of this kind on the instance.
    pub total_of_kind: u64,
    pub product: ProductClass,
    pub hdk: HdkFact,
    pub options: &'a OptionsFacts,
    /// The range lies inside an `aclrtMallocHost` allocation regcheck saw.
    pub by_malloc_host: bool,
    /// The `aclrtMalloc` allocation containing the range, with its policy.
    pub dev_alloc: Option<Alloc<u32>>,
    /// Unmapped holes of the range; `None` when the memory map could not be read.
    pub gaps: Option<Vec<(usize, usize)>>,
}

/// The HIXL-REG-COUNT-NEAR threshold: 90% of the limit, rounded up.
pub fn near_threshold(limit: u64) -> u64 {
    (limit.saturating_mul(9)).div_ceil(10).max(1)
}

/// `ACL_MEM_MALLOC_HUGE_ONLY` and its P2P and 1 GiB-page variants.
pub fn policy_is_huge_only(policy: u32) -> bool {
    matches!(policy & 0xff, 1 | 4 | 6 | 7)
}

/// The name of an `aclrtMalloc` policy.
pub fn policy_name(policy: u32) -> String {
    let base = match policy & 0xff {
        0 => "ACL_MEM_MALLOC_HUGE_FIRST",
        1 => "ACL_MEM_MALLOC_HUGE_ONLY",
        2 => "ACL_MEM_MALLOC_NORMAL_ONLY",
        3 => "ACL_MEM_MALLOC_HUGE_FIRST_P2P",
        4 => "ACL_MEM_MALLOC_HUGE_ONLY_P2P",
        5 => "ACL_MEM_MALLOC_NORMAL_ONLY_P2P",
        6 => "ACL_MEM_MALLOC_HUGE1G_ONLY",
        7 => "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P",
        _ => "an unknown policy",
    };
    if policy & !0xff != 0 {
        format!("{base} | 0x{:x}", policy & !0xff)
    } else {
        base.to_string()
    }
}

/// Every rule of a registration, in the order the vendor would fail (so the first error's
/// code is the vendor's own): state, arguments, thread, links, overlap, count, caps, origin.
pub fn check_register(a: &RegArgs, f: &RegFacts) -> Checks {
    let call = a.api.call();
    let mut c = Checks::default();
    if a.api == RegApi::Hixl {
        c.push(check_initialized(call, f.state));
    }
    c.findings.extend(check_args(a));
    if let Some(t) = &f.thread {
        match check_thread(call, t) {
            Ok(finding) => c.push(finding),
            Err(s) => c.skip(s),
        }
    }
    let Some((start, end)) = a.range() else { return c };
    let kind = a.kind();
    let new_reg = f.identical.is_none();

    // Links made before cannot see a new region.
    match &f.links {
        Some(l) if new_reg && l.any() => c.findings.push(Finding::new(
            RuleId::HixlRegAfterConnect,
            a.api.target().0,
            format!(
                "the {} already has {}: links made before this registration cannot see [0x{start:x}, 0x{end:x}) (the peer fails later with \"Can't find remoteBuffer by key\")",
                a.api.target().1,
                l.describe()
            ),
            "register all local memory before Connect (and the peer's before it connects); or Disconnect, register, and Connect again",
        )),
        Some(_) => {}
        None => c.skip(Skip::new(
            RuleId::HixlRegAfterConnect,
            "links-unknown",
            "the endpoint was created before regcheck saw it, so its connections are unknown",
        )),
    }

    if let Some(r) = f.overlap {
        c.findings.push(Finding::new(
            RuleId::HixlRegOverlap,
            a.api.addr_arg(),
            format!(
                "[0x{start:x}, 0x{end:x}) overlaps the live {} registration [0x{:x}, 0x{:x}) ({}, handle 0x{:x}) without being identical to it",
                kind.name(),
                r.addr,
                r.end(),
                human(r.len),
                r.handle
            ),
            format!(
                "register whole allocations once (an identical addr/len/type registration returns the same handle); to change the region, {}(0x{:x}) first",
                a.api.dereg_call(),
                r.handle
            ),
        ));
    }

    if a.api == RegApi::Hixl && new_reg {
        let new_count = f.live as u64 + 1;
        if new_count > f.limit {
            c.findings.push(Finding::new(
                RuleId::HixlRegCount,
                "mem",
                format!(
                    "this would be live registration number {new_count} on the instance; the documented maximum is {} (more risks device OOM and connect time-outs)",
                    f.limit
                ),
                "register whole allocations (one pool per memory type) instead of one region per tensor or layer; deregister what is no longer used",
            ));
        } else if new_count >= near_threshold(f.limit) && !f.near_warned {
            c.findings.push(Finding::new(
                RuleId::HixlRegCountNear,
                "mem",
                format!(
                    "this is live registration number {new_count} on the instance, 90% of the documented maximum of {} (reported once per instance)",
                    f.limit
                ),
                "register fewer, larger regions (whole allocations) before reaching the limit",
            ));
        }
    }

    if a.api == RegApi::Hixl && new_reg {
        c.findings.extend(check_caps(kind, a.len, f.total_of_kind, &f.product, &f.hdk, &mut c.skipped));
    }

    // Where the memory comes from.
    match kind {
        MemKind::Host => {
            if a.api == RegApi::Hixl {
                match f.product.a2_a3() {
                    Some(true) if !f.by_malloc_host => c.findings.push(Finding::new(
                        RuleId::HixlRegHostOrigin,
                        a.api.addr_arg(),
                        format!(
                            "on {} host memory registered with HIXL must come from aclrtMallocHost, and [0x{start:x}, 0x{end:x}) is not inside an aclrtMallocHost allocation",
                            f.product.name()
                        ),
                        "allocate the host buffer with aclrtMallocHost(&p, size) (page-locked and aligned) and register that",
                    )),
                    Some(_) => {}
                    None => c.skip(f.product.skip(RuleId::HixlRegHostOrigin)),
                }
            }
            match (f.product.ascend_950(), f.options.roce_host()) {
                (Some(true), Some(true)) if f.by_malloc_host => c.findings.push(Finding::new(
                    RuleId::HixlRegHostRoce950,
                    a.api.addr_arg(),
                    format!(
                        "on {} with a host RoCE transport ({}), memory allocated by aclrtMallocHost cannot be registered, and [0x{start:x}, 0x{end:x}) is",
                        f.product.name(),
                        f.options.transports_text()
                    ),
                    "allocate this host buffer with malloc/posix_memalign/mmap instead of aclrtMallocHost",
                )),
                (Some(true), Some(true)) | (Some(false), _) | (_, Some(false)) => {}
                (None, _) => c.skip(f.product.skip(RuleId::HixlRegHostRoce950)),
                (_, None) => c.skip(no_transport(RuleId::HixlRegHostRoce950)),
            }
            match &f.gaps {
                Some(g) if !g.is_empty() => {
                    let unmapped: usize = g.iter().map(|(s, e)| e - s).sum();
                    c.findings.push(Finding::new(
                        RuleId::HixlRegHostUnmapped,
                        a.api.addr_arg(),
                        format!(
                            "[0x{start:x}, 0x{end:x}) is not fully mapped in the process: {} unmapped in {} hole(s), the first at [0x{:x}, 0x{:x})",
                            human(unmapped as u64),
                            g.len(),
                            g[0].0,
                            g[0].1
                        ),
                        "register only memory you allocated, with its real length (a freed buffer cannot be registered)",
                    ));
                }
                Some(_) => {}
                None => c.skip(Skip::new(RuleId::HixlRegHostUnmapped, "no-memmap", "the memory map cannot be read")),
            }
        }
        MemKind::Device => match f.dev_alloc {
            None => c.findings.push(Finding::new(
                RuleId::HixlRegDeviceOrigin,
                a.api.addr_arg(),
                format!("[0x{start:x}, 0x{end:x}) is declared device memory but is not inside an aclrtMalloc allocation regcheck saw"),
                "allocate device memory with aclrtMalloc (or, for host memory, pass the host type)",
            )),
            Some(alloc) => match f.options.hccs() {
                Some(true) => {
                    if !policy_is_huge_only(alloc.extra) {
                        c.findings.push(Finding::new(
                    RuleId::HixlRegDeviceHuge,
                    a.api.addr_arg(),
                    format!(
                        "an HCCS transport is configured ({}) and [0x{start:x}, 0x{end:x}) comes from the aclrtMalloc allocation at 0x{:x} ({}) made with {}, not ACL_MEM_MALLOC_HUGE_ONLY",
                        f.options.transports_text(),
                        alloc.base,
                        human(alloc.len as u64),
                        policy_name(alloc.extra)
                    ),
                    "allocate device memory for HCCS with aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_ONLY) (2 MiB-aligned huge pages)",
                        ));
                    }
                    if start % HCCS_ALIGN != 0 {
                        c.findings.push(Finding::new(
                            RuleId::HixlRegDeviceAlign,
                            a.api.addr_arg(),
                            format!(
                                "an HCCS transport is configured ({}) and 0x{start:x} is not 2 MiB-aligned ({} past a boundary): HCCS device-to-device transfers fail (EINVAL) on such addresses",
                                f.options.transports_text(),
                                human((start % HCCS_ALIGN) as u64)
                            ),
                            format!(
                                "register from a 2 MiB boundary (the next is 0x{:x}); ACL_MEM_MALLOC_HUGE_ONLY allocations start on one",
                                (start / HCCS_ALIGN).saturating_add(1).saturating_mul(HCCS_ALIGN)
                            ),
                        ));
                    }
                }
                Some(false) => {}
                None => c.skip(no_transport(RuleId::HixlRegDeviceHuge)),
            },
        },
    }
    c
}

/// The start alignment HCCS device-to-device transfers want (huge pages).
const HCCS_ALIGN: usize = 2 << 20;

fn no_transport(rule: RuleId) -> Skip {
    Skip::new(
        rule,
        "no-transport",
        "the options name no transport (GlobalResourceConfig comm_resource_config.protocol_desc, LocalCommRes endpoint_list or EnableUseFabricMem)",
    )
}

/// `HIXL-REG-HOST-CAP`, `HIXL-REG-DEVICE-CAP`: the totals on Atlas A2/A3.
pub fn check_caps(
    kind: MemKind,
    len: u64,
    total: u64,
    product: &ProductClass,
    hdk: &HdkFact,
    skipped: &mut Vec<Skip>,
) -> Option<Finding> {
    let rule = match kind {
        MemKind::Host => RuleId::HixlRegHostCap,
        MemKind::Device => RuleId::HixlRegDeviceCap,
    };
    match product.a2_a3() {
        Some(true) => {}
        Some(false) => return None,
        None => {
            skipped.push(product.skip(rule));
            return None;
        }
    }
    let new_total = total.saturating_add(len);
    let (cap, why, fix) = match kind {
        MemKind::Device => (
            DEVICE_CAP,
            "device memory is limited to 50 GiB per instance".to_string(),
            "register less device memory on this instance (or spread it over several instances)".to_string(),
        ),
        MemKind::Host => {
            let big = HdkVersion::parse(HDK_BIG_HOST_CAP);
            match (hdk.version, big) {
                (Some(v), Some(b)) if v >= b => (
                    HOST_CAP_NEW,
                    format!("host memory is limited to 1 TiB per instance with HDK {}", hdk.describe),
                    "register less host memory on this instance".to_string(),
                ),
                (Some(_), _) => (
                    HOST_CAP_OLD,
                    format!("host memory is limited to 20 GiB per instance with HDK {} (older than 25.5.0)", hdk.describe),
                    "register less host memory, or upgrade the driver to HDK 25.5.0 or later (1 TiB)".to_string(),
                ),
                (None, _) => (
                    HOST_CAP_OLD,
                    format!(
                        "the HDK version is unknown ({}), so the 20 GiB cap of HDK older than 25.5.0 is assumed",
                        hdk.describe
                    ),
                    "register less host memory; if the driver is HDK 25.5.0 or later (1 TiB cap), set REGCHECK_HDK_VERSION".to_string(),
                ),
            }
        }
    };
    (new_total > cap).then(|| {
        Finding::new(
            rule,
            "mem.len",
            format!(
                "on {} {why}: {} already registered + {} = {} is above {}",
                product.name(),
                human(total),
                human(len),
                human(new_total),
                human(cap)
            ),
            fix,
        )
    })
}

// ---------------------------------------------------------------------------------------
// DeregisterMem / HixlCS*UnregMem
// ---------------------------------------------------------------------------------------

/// Facts about one deregistration.
#[derive(Debug, Clone)]
pub struct DeregFacts<'a> {
    pub state: InstanceState,
    /// The live registration with this handle on this instance.
    pub live: Option<&'a HixlReg>,
    /// The engine that owns the handle, when it is another instance's.
    pub other_owner: Option<String>,
    pub links: Option<LinkFacts>,
}

/// `HIXL-DEREG-NULL`, `HIXL-NOT-INITIALIZED`, `HIXL-DEREG-CONNECTED`, `HIXL-DEREG-UNKNOWN`.
pub fn check_dereg(api: RegApi, handle: usize, f: &DeregFacts) -> Vec<Finding> {
    let call = api.dereg_call();
    let mut out = Vec::new();
    if handle == 0 {
        out.push(Finding::new(
            RuleId::HixlDeregNull,
            "mem_handle",
            "is NULL",
            format!("pass the handle {} returned", api.call()),
        ));
        return out;
    }
    if api == RegApi::Hixl {
        out.extend(check_initialized(call, f.state));
        if !out.is_empty() {
            return out;
        }
    }
    match f.live {
        Some(r) => {
            if let Some(l) = f.links.as_ref().filter(|l| l.any()) {
                out.push(Finding::new(
                    RuleId::HixlDeregConnected,
                    "mem_handle",
                    format!(
                        "0x{handle:x} ([0x{:x}, 0x{:x}), {}) is deregistered while the instance has {}",
                        r.addr,
                        r.end(),
                        r.kind.name(),
                        l.describe()
                    ),
                    "Disconnect every remote engine (and have peers disconnect) before DeregisterMem",
                ));
            }
        }
        None if f.state == InstanceState::Unknown => {}
        None => {
            let problem = match &f.other_owner {
                Some(o) => format!(
                    "0x{handle:x} is not a live registration of this instance (it belongs to {o}); the vendor returns SUCCESS and does nothing"
                ),
                None => format!(
                    "0x{handle:x} is not a live registration of this instance (already deregistered, or never returned by {}); the vendor returns SUCCESS and does nothing",
                    api.call()
                ),
            };
            out.push(Finding::new(
                RuleId::HixlDeregUnknown,
                "mem_handle",
                problem,
                "deregister each handle once, on the instance that returned it",
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// TransferSync / TransferAsync
// ---------------------------------------------------------------------------------------

/// `hixl::TransferOpDesc` (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct TransferOpDesc {
    pub local_addr: usize,
    pub remote_addr: usize,
    pub len: usize,
}

/// Facts about one transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XferFacts {
    pub state: InstanceState,
    /// `Some(false)`: no link to the remote engine; `None`: unknown or not needed
    /// (AutoConnect, or an instance regcheck did not see).
    pub linked: Option<bool>,
}

/// `HIXL-NOT-INITIALIZED`, `HIXL-XFER-NOT-CONNECTED`, `HIXL-XFER-EMPTY`,
/// `HIXL-XFER-LOCAL-UNREGISTERED`. O(n log m) through `registered`, no allocation unless
/// something is wrong.
pub fn check_transfer(
    call: &str,
    remote: &str,
    f: XferFacts,
    ops: &[TransferOpDesc],
    registered: impl Fn(usize, u64) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(nf) = check_initialized(call, f.state) {
        out.push(nf);
        return out;
    }
    if f.linked == Some(false) {
        out.push(Finding::new(
            RuleId::HixlXferNotConnected,
            "remote_engine",
            format!("this instance has no link to \"{remote}\""),
            format!(
                "Connect(\"{remote}\") (and check that it returns SUCCESS) before transferring, or enable AutoConnect"
            ),
        ));
    }
    if ops.is_empty() {
        out.push(Finding::new(RuleId::HixlXferEmpty, "op_descs", "is empty", "pass at least one TransferOpDesc"));
        return out;
    }
    let (mut bad, mut first_bad) = (0usize, None);
    let (mut unreg, mut first_unreg) = (0usize, None);
    for (i, op) in ops.iter().enumerate() {
        if op.len == 0 || op.local_addr == 0 || op.remote_addr == 0 {
            bad += 1;
            first_bad.get_or_insert(i);
        } else if !registered(op.local_addr, op.len as u64) {
            unreg += 1;
            first_unreg.get_or_insert(i);
        }
    }
    let more = |n: usize| if n > 1 { format!(" (and {} more op(s))", n - 1) } else { String::new() };
    if let Some(i) = first_bad {
        let op = &ops[i];
        let what = if op.len == 0 {
            "len is 0"
        } else if op.local_addr == 0 {
            "local_addr is 0"
        } else {
            "remote_addr is 0"
        };
        out.push(Finding::new(
            RuleId::HixlXferEmpty,
            "op_descs",
            format!("op {i} of {}: {what}{}", ops.len(), more(bad)),
            "give every op non-zero local_addr, remote_addr and len",
        ));
    }
    if let Some(i) = first_unreg {
        let op = &ops[i];
        let end = op.local_addr.saturating_add(op.len);
        out.push(Finding::new(
            RuleId::HixlXferLocalUnregistered,
            "op_descs",
            format!(
                "op {i} of {}: the local range [0x{:x}, 0x{end:x}) ({}) is not inside one live registration of this instance{}",
                ops.len(),
                op.local_addr,
                human(op.len as u64),
                more(unreg)
            ),
            "RegisterMem the local buffer (before Connect) and keep each op inside one registered region",
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Finalize / destruction
// ---------------------------------------------------------------------------------------

/// `HIXL-FINALIZE-LEAK`: registrations still live at Finalize or destruction.
pub fn check_leak<'a>(call: &str, engine: Option<&str>, regs: impl Iterator<Item = &'a HixlReg>) -> Option<Finding> {
    let regs: Vec<&HixlReg> = regs.collect();
    if regs.is_empty() {
        return None;
    }
    let total: u64 = regs.iter().map(|r| r.len).sum();
    let mut shown: Vec<String> = regs
        .iter()
        .take(LIST_MAX)
        .map(|r| format!("0x{:x} [0x{:x}, 0x{:x}) {} {}", r.handle, r.addr, r.end(), human(r.len), r.kind.name()))
        .collect();
    if regs.len() > LIST_MAX {
        shown.push(format!("and {} more", regs.len() - LIST_MAX));
    }
    let who = engine.map_or(String::new(), |e| format!(" of \"{e}\""));
    Some(Finding::new(
        RuleId::HixlFinalizeLeak,
        "this",
        format!(
            "{call}{who} with {} registration(s) ({}) never deregistered: {}",
            regs.len(),
            human(total),
            shown.join("; ")
        ),
        "DeregisterMem every handle (after Disconnect) before Finalize",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn hixl(addr: usize, len: u64, ty: i64) -> RegArgs {
        RegArgs { api: RegApi::Hixl, addr, len, ty }
    }

    fn reg(handle: usize, addr: usize, len: u64, kind: MemKind) -> HixlReg {
        HixlReg { handle, addr, len, kind, tag: String::new() }
    }

    fn rules(v: &[Finding]) -> Vec<RuleId> {
        v.iter().map(|f| f.rule).collect()
    }

    fn hdk(v: Option<&str>) -> HdkFact {
        HdkFact { version: v.and_then(HdkVersion::parse), describe: v.unwrap_or("unknown (no version.info)").into() }
    }

    /// Facts of a clean registration on an initialised A2 instance.
    fn facts(opts: &OptionsFacts) -> RegFacts<'_> {
        RegFacts {
            state: InstanceState::Initialized,
            thread: Some(ThreadFacts { same_thread: true, init_ctx: Some(Some(1)), current_ctx: Some(Some(1)) }),
            links: Some(LinkFacts::default()),
            identical: None,
            overlap: None,
            live: 0,
            limit: 4000,
            near_warned: false,
            total_of_kind: 0,
            product: ProductClass::from_soc(Some("Ascend910B1")),
            hdk: hdk(Some("25.5.0")),
            options: opts,
            by_malloc_host: true,
            dev_alloc: Some(Alloc { base: 0x1000, len: 1 << 20, extra: 1 }),
            gaps: Some(vec![]),
        }
    }

    #[test]
    fn clean_registrations_find_nothing() {
        let o = parse_options(&[(
            "GlobalResourceConfig".into(),
            r#"{"comm_resource_config.protocol_desc":"hccs:device"}"#.into(),
        )]);
        let f = facts(&o);
        let c = check_register(&hixl(0x1000, 4096, MEM_HOST), &f);
        assert!(c.findings.is_empty() && c.skipped.is_empty(), "{c:?}");
        // Device memory over HCCS: from a HUGE_ONLY allocation, on a 2 MiB boundary.
        let f = RegFacts { dev_alloc: Some(Alloc { base: 2 << 20, len: 4 << 20, extra: 1 }), ..facts(&o) };
        let c = check_register(&hixl(2 << 20, 4096, MEM_DEVICE), &f);
        assert!(c.findings.is_empty() && c.skipped.is_empty(), "{c:?}");
    }

    #[test]
    fn argument_rules() {
        assert_eq!(rules(&check_args(&hixl(0, 1, 1))), vec![RuleId::HixlRegNullAddr]);
        assert_eq!(rules(&check_args(&hixl(1, 0, 1))), vec![RuleId::HixlRegLenZero]);
        assert_eq!(rules(&check_args(&hixl(0, 0, 1))), vec![RuleId::HixlRegNullAddr, RuleId::HixlRegLenZero]);
        assert_eq!(rules(&check_args(&hixl(usize::MAX - 10, 11, 0))), Vec::<RuleId>::new(), "ends exactly at the top");
        assert_eq!(rules(&check_args(&hixl(usize::MAX - 10, 12, 0))), vec![RuleId::HixlRegRangeOverflow]);
        assert_eq!(rules(&check_args(&hixl(0x1000, 1, 2))), vec![RuleId::HixlRegMemtype]);
        let cs = RegArgs { api: RegApi::CsClient, addr: 0x1000, len: 1, ty: -1 };
        let f = check_args(&cs);
        assert_eq!(rules(&f), vec![RuleId::HixlRegMemtype]);
        assert_eq!(f[0].arg, "mem->type");
        assert!(f[0].fix.contains("COMM_MEM_TYPE_DEVICE"));
        assert_eq!(hixl(0x1000, 1, 7).kind(), MemKind::Host, "the vendor treats it as host");
        assert!(hixl(0, 1, 0).range().is_none());
    }

    #[test]
    fn initialised_state() {
        assert!(check_initialized("x", InstanceState::Initialized).is_none());
        assert!(check_initialized("x", InstanceState::Unknown).is_none(), "unknown instances are not judged");
        let f = check_initialized("Hixl::RegisterMem", InstanceState::Constructed).unwrap();
        assert_eq!(f.rule, RuleId::HixlNotInitialized);
        assert!(f.problem.contains("not initialised"));
        assert!(check_initialized("x", InstanceState::Finalized).unwrap().problem.contains("finalised"));
        let o = OptionsFacts::default();
        let mut f = facts(&o);
        f.state = InstanceState::Finalized;
        let c = check_register(&hixl(0, 1, 1), &f);
        assert_eq!(c.findings[0].rule, RuleId::HixlNotInitialized, "first, like the vendor");
    }

    #[test]
    fn thread_rule() {
        let t = |same, init, cur| ThreadFacts { same_thread: same, init_ctx: init, current_ctx: cur };
        assert_eq!(check_thread("c", &t(true, None, None)), Ok(None));
        assert_eq!(check_thread("c", &t(false, Some(Some(5)), Some(Some(5)))), Ok(None), "context was set");
        let f = check_thread("c", &t(false, Some(Some(5)), Some(None))).unwrap().unwrap();
        assert_eq!(f.rule, RuleId::HixlRegThread);
        assert!(f.problem.contains("none") && f.problem.contains("0x5"), "{}", f.problem);
        assert!(check_thread("c", &t(false, Some(Some(5)), Some(Some(6)))).unwrap().is_some());
        assert_eq!(check_thread("c", &t(false, None, Some(Some(6)))).unwrap_err().key, "no-context");
        assert!(check_thread("c", &t(false, Some(Some(1)), None)).is_err());
    }

    #[test]
    fn after_connect() {
        let o = OptionsFacts::default();
        let mut f = facts(&o);
        f.links = Some(LinkFacts { outgoing: vec!["b".into()], incoming: vec![] });
        let c = check_register(&hixl(0x1000, 1, 1), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegAfterConnect]);
        assert!(c.findings[0].problem.contains("links to \"b\""));
        f.links = Some(LinkFacts { outgoing: vec![], incoming: vec!["peer".into()] });
        assert!(check_register(&hixl(0x1000, 1, 1), &f).has(RuleId::HixlRegAfterConnect), "a peer connected to us");
        let same = reg(9, 0x1000, 1, MemKind::Host);
        f.identical = Some(&same);
        assert!(!check_register(&hixl(0x1000, 1, 1), &f).has(RuleId::HixlRegAfterConnect), "identical: no new region");
        f.identical = None;
        f.links = None;
        let c = check_register(&hixl(0x1000, 1, 1), &f);
        assert!(c.findings.is_empty());
        assert_eq!(c.skipped[0].rule, RuleId::HixlRegAfterConnect);
    }

    #[test]
    fn overlap() {
        let o = OptionsFacts::default();
        let mut f = facts(&o);
        let other = reg(0x77, 0x1000, 0x2000, MemKind::Host);
        f.overlap = Some(&other);
        let c = check_register(&hixl(0x2000, 0x2000, 1), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegOverlap]);
        assert!(c.findings[0].problem.contains("handle 0x77"));
        assert!(c.findings[0].fix.contains("DeregisterMem(0x77)"));
    }

    #[test]
    fn count_and_near() {
        let o = OptionsFacts::default();
        let mut f = facts(&o);
        f.live = 3999;
        assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.iter().all(|x| x.rule == RuleId::HixlRegCountNear));
        f.near_warned = true;
        assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "4000th is allowed");
        f.live = 4000;
        let c = check_register(&hixl(0x1000, 1, 1), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegCount]);
        assert!(c.findings[0].problem.contains("4001"));
        let same = reg(1, 0x1000, 1, MemKind::Host);
        f.identical = Some(&same);
        assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "identical: same handle, no new one");
        f.identical = None;
        f.live = 3599;
        f.near_warned = false;
        assert_eq!(rules(&check_register(&hixl(0x1000, 1, 1), &f).findings), vec![RuleId::HixlRegCountNear]);
        f.live = 3598;
        assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty());
        assert_eq!(near_threshold(4000), 3600);
        assert_eq!(near_threshold(1), 1);
        assert_eq!(near_threshold(10), 9);
        f.limit = 2;
        f.live = 2;
        assert!(check_register(&hixl(0x1000, 1, 1), &f).has(RuleId::HixlRegCount), "settable limit");
        let cs = RegArgs { api: RegApi::CsServer, addr: 0x1000, len: 1, ty: 1 };
        assert!(!check_register(&cs, &f).has(RuleId::HixlRegCount), "not a HixlCS rule");
    }

    #[test]
    fn caps() {
        let a2 = ProductClass::from_soc(Some("Ascend910_9391"));
        let mut sk = Vec::new();
        let old = hdk(Some("25.3.rc1"));
        let new = hdk(Some("25.5.0"));
        let unknown = hdk(None);
        assert!(check_caps(MemKind::Host, 20 * GIB, 0, &a2, &old, &mut sk).is_none(), "exactly the cap");
        let f = check_caps(MemKind::Host, 1, 20 * GIB, &a2, &old, &mut sk).unwrap();
        assert_eq!(f.rule, RuleId::HixlRegHostCap);
        assert!(f.problem.contains("20 GiB") && f.fix.contains("25.5.0"), "{f:?}");
        assert!(check_caps(MemKind::Host, 21 * GIB, 0, &a2, &new, &mut sk).is_none());
        assert!(check_caps(MemKind::Host, 1, 1 << 40, &a2, &new, &mut sk).is_some());
        let f = check_caps(MemKind::Host, 21 * GIB, 0, &a2, &unknown, &mut sk).unwrap();
        assert!(f.problem.contains("unknown") && f.fix.contains("REGCHECK_HDK_VERSION"), "says so: {f:?}");
        assert!(check_caps(MemKind::Device, 50 * GIB, 0, &a2, &new, &mut sk).is_none());
        assert_eq!(
            check_caps(MemKind::Device, 1, 50 * GIB, &a2, &new, &mut sk).unwrap().rule,
            RuleId::HixlRegDeviceCap
        );
        assert!(sk.is_empty());
        let p950 = ProductClass::from_soc(Some("Ascend950PR_9579"));
        assert!(check_caps(MemKind::Host, 2 << 40, 0, &p950, &old, &mut sk).is_none(), "A2/A3 only");
        assert!(check_caps(MemKind::Host, 2 << 40, 0, &ProductClass::Unknown, &old, &mut sk).is_none());
        assert_eq!(sk.len(), 1);
        assert_eq!(sk[0].key, "no-soc");
        check_caps(MemKind::Host, 2 << 40, 0, &ProductClass::from_soc(Some("Weird1")), &old, &mut sk);
        assert_eq!(sk[1].key, "unlisted-soc");
    }

    #[test]
    fn host_origin_and_roce_950() {
        let o = OptionsFacts::default();
        let mut f = facts(&o);
        f.by_malloc_host = false;
        let c = check_register(&hixl(0x1000, 1, 1), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegHostOrigin]);
        assert!(c.findings[0].fix.contains("aclrtMallocHost"));
        f.product = ProductClass::from_soc(Some("Ascend950PR_1"));
        let c = check_register(&hixl(0x1000, 1, 1), &f);
        assert!(c.findings.is_empty());
        assert_eq!(c.skipped[0].rule, RuleId::HixlRegHostRoce950, "950 without transports: skipped");
        let roce = parse_options(&[(
            "GlobalResourceConfig".into(),
            r#"{"comm_resource_config.protocol_desc":["roce:host"]}"#.into(),
        )]);
        f.options = &roce;
        assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "malloc memory is right on 950");
        f.by_malloc_host = true;
        assert_eq!(rules(&check_register(&hixl(0x1000, 1, 1), &f).findings), vec![RuleId::HixlRegHostRoce950]);
        let dev = parse_options(&[(
            "GlobalResourceConfig".into(),
            r#"{"comm_resource_config.protocol_desc":["roce:device"]}"#.into(),
        )]);
        f.options = &dev;
        assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "device RoCE");
        let cs = RegArgs { api: RegApi::CsClient, addr: 0x1000, len: 1, ty: 1 };
        f.options = &roce;
        assert!(check_register(&cs, &f).has(RuleId::HixlRegHostRoce950), "applies to HixlCS");
        f.product = ProductClass::Unknown;
        f.by_malloc_host = false;
        let c = check_register(&hixl(0x1000, 1, 1), &f);
        assert!(c.findings.is_empty());
        assert!(c.skipped.iter().any(|s| s.rule == RuleId::HixlRegHostOrigin && s.key == "no-soc"));
    }

    #[test]
    fn host_unmapped() {
        let o = OptionsFacts::default();
        let mut f = facts(&o);
        f.gaps = Some(vec![(0x2000, 0x3000)]);
        let c = check_register(&hixl(0x1000, 0x3000, 1), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegHostUnmapped]);
        assert!(c.findings[0].problem.contains("[0x2000, 0x3000)"));
        f.gaps = None;
        let c = check_register(&hixl(0x1000, 0x3000, 1), &f);
        assert_eq!(c.skipped[0].key, "no-memmap");
        f.gaps = Some(vec![(0x2000, 0x3000)]);
        assert!(check_register(&hixl(0x1000, 0x3000, 0), &f).findings.is_empty(), "device memory is not host-mapped");
    }

    #[test]
    fn device_origin_and_huge() {
        let hccs = parse_options(&[("EnableUseFabricMem".into(), "1".into())]);
        let mut f = facts(&hccs);
        f.dev_alloc = None;
        assert_eq!(rules(&check_register(&hixl(0x1000, 1, 0), &f).findings), vec![RuleId::HixlRegDeviceOrigin]);
        const M2: usize = 2 << 20;
        f.dev_alloc = Some(Alloc { base: M2, len: 4096, extra: 0 });
        let c = check_register(&hixl(M2, 1, 0), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegDeviceHuge]);
        assert!(c.findings[0].problem.contains("ACL_MEM_MALLOC_HUGE_FIRST"), "{:?}", c.findings[0]);
        for ok in [1, 4, 6, 7, 0x1001] {
            f.dev_alloc = Some(Alloc { base: M2, len: 4096, extra: ok });
            assert!(check_register(&hixl(M2, 1, 0), &f).findings.is_empty(), "policy {ok:#x}");
        }
        f.dev_alloc = Some(Alloc { base: M2, len: 4096, extra: 0x1002 });
        assert!(check_register(&hixl(M2, 1, 0), &f).findings[0].problem.contains("NORMAL_ONLY | 0x1000"));
        // HCCS also wants a 2 MiB-aligned start.
        f.dev_alloc = Some(Alloc { base: M2, len: 2 * M2, extra: 1 });
        let c = check_register(&hixl(M2 + 0x1000, 1, 0), &f);
        assert_eq!(rules(&c.findings), vec![RuleId::HixlRegDeviceAlign]);
        assert!(c.findings[0].fix.contains("0x400000"), "{:?}", c.findings[0]);
        let none = OptionsFacts::default();
        f.options = &none;
        let c = check_register(&hixl(0x1000, 1, 0), &f);
        assert!(c.findings.is_empty());
        assert_eq!(c.skipped[0].key, "no-transport");
        let roce = parse_options(&[(
            "GlobalResourceConfig".into(),
            r#"{"comm_resource_config.protocol_desc":"roce:device"}"#.into(),
        )]);
        f.options = &roce;
        assert!(check_register(&hixl(0x1000, 1, 0), &f).findings.is_empty(), "not HCCS");
    }

    #[test]
    fn options_parsing() {
        let o = |pairs: &[(&str, &str)]| {
            parse_options(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>())
        };
        assert_eq!(o(&[]).transports, None);
        let f = o(&[("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc":["roce:host","HCCS:device"]}"#)]);
        assert_eq!(f.transports_text(), "roce:host, hccs:device");
        assert_eq!(f.hccs(), Some(true));
        assert_eq!(f.roce_host(), Some(true));
        let f = o(&[("GlobalResourceConfig", r#"{"comm_resource_config": {"protocol_desc": "roce:device"}}"#)]);
        assert_eq!(f.roce_host(), Some(false));
        let f = o(&[("GlobalResourceConfig", r#"{"connect_pool.thread_num":"2"}"#)]);
        assert_eq!(f.transports, None, "other global settings say nothing about transports");
        let f = o(&[("GlobalResourceConfig", "{not json")]);
        assert_eq!(f.transports, None);
        assert_eq!(f.problems.len(), 1);
        let f = o(&[(
            "LocalCommRes",
            r#"{"version":"1.3","endpoint_list":[{"protocol":"roce","comm_id":"1.2.3.4","placement":"host"},{"protocol":"uboe","placement":"device"}]}"#,
        )]);
        assert_eq!(f.transports_text(), "roce:host, uboe:device");
        let f = o(&[
            (
                "LocalCommRes",
                r#"{"endpoint_list":[{"protocol":"roce","placement":"host"},{"protocol":"roce","placement":"device"}]}"#,
            ),
            ("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc":"roce:device"}"#),
        ]);
        assert_eq!(f.transports_text(), "roce:device", "filtered");
        let f = o(&[("LocalCommRes", r#"{"version":"1.3"}"#)]);
        assert_eq!(f.transports, None, "auto-generated endpoints: unknown");
        let f = o(&[("LocalCommRes", "")]);
        assert_eq!(f.transports, None);
        let f = o(&[("EnableUseFabricMem", "1"), ("AutoConnect", "1")]);
        assert_eq!(f.hccs(), Some(true));
        assert!(f.auto_connect && f.fabric_mem);
        assert!(f.transport_source.contains("EnableUseFabricMem"));
        let f = o(&[("EnableUseFabricMem", "0"), ("BufferPool", "4:8")]);
        assert_eq!(f.transports, None);
        assert!(!f.auto_connect);
        let f = parse_cs_config(Some(r#"{"comm_resource_config.protocol_desc":"hccs:device"}"#));
        assert_eq!(f.hccs(), Some(true));
        assert_eq!(parse_cs_config(None).transports, None);
        assert_eq!(parse_cs_config(Some("[1]")).problems.len(), 1);
    }

    #[test]
    fn json_parser() {
        assert_eq!(Json::parse(r#" {"a": [1, -2.5e3, true, false, null, "x\"\u0041"]} "#).unwrap().get("a"), {
            Some(&Json::Arr(vec![
                Json::Num(1.0),
                Json::Num(-2500.0),
                Json::Bool(true),
                Json::Bool(false),
                Json::Null,
                Json::Str("x\"A".into()),
            ]))
        });
        for bad in ["", "{", "{\"a\" 1}", "[1,]", "\"abc", "{\"a\":1} x", "tru", "{1:2}"] {
            assert!(Json::parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(Json::parse(&deep).is_err(), "bounded nesting");
    }

    #[test]
    fn dereg_rules() {
        let live = reg(0x42, 0x1000, 0x100, MemKind::Host);
        let f = |state, live, links: Option<LinkFacts>| DeregFacts { state, live, other_owner: None, links };
        let ok = f(InstanceState::Initialized, Some(&live), Some(LinkFacts::default()));
        assert!(check_dereg(RegApi::Hixl, 0x42, &ok).is_empty());
        assert_eq!(rules(&check_dereg(RegApi::Hixl, 0, &ok)), vec![RuleId::HixlDeregNull]);
        let cs = check_dereg(RegApi::CsServer, 0, &ok);
        assert!(cs[0].fix.contains("HixlCSServerRegMem"));
        let linked = f(
            InstanceState::Initialized,
            Some(&live),
            Some(LinkFacts { outgoing: vec!["b".into()], incoming: vec![] }),
        );
        assert_eq!(rules(&check_dereg(RegApi::Hixl, 0x42, &linked)), vec![RuleId::HixlDeregConnected]);
        let unknown = f(InstanceState::Initialized, None, Some(LinkFacts::default()));
        let u = check_dereg(RegApi::Hixl, 0x43, &unknown);
        assert_eq!(rules(&u), vec![RuleId::HixlDeregUnknown]);
        assert!(u[0].problem.contains("SUCCESS"));
        let other = DeregFacts { other_owner: Some("engine-b".into()), ..unknown.clone() };
        assert!(check_dereg(RegApi::Hixl, 0x43, &other)[0].problem.contains("engine-b"));
        let unseen = f(InstanceState::Unknown, None, None);
        assert!(check_dereg(RegApi::CsClient, 0x43, &unseen).is_empty(), "endpoint not seen: no judgement");
        let fin = f(InstanceState::Finalized, None, None);
        assert_eq!(rules(&check_dereg(RegApi::Hixl, 0x43, &fin)), vec![RuleId::HixlNotInitialized]);
        assert_eq!(
            rules(&check_dereg(RegApi::Hixl, 0, &fin)),
            vec![RuleId::HixlDeregNull],
            "NULL first, like the vendor"
        );
    }

    #[test]
    fn transfer_rules() {
        let ok = XferFacts { state: InstanceState::Initialized, linked: Some(true) };
        let op = |l, r, n| TransferOpDesc { local_addr: l, remote_addr: r, len: n };
        let regd = |a: usize, n: u64| a >= 0x1000 && a as u64 + n <= 0x2000;
        assert!(check_transfer("T", "b", ok, &[op(0x1000, 0x9000, 0x1000)], regd).is_empty());
        assert_eq!(
            rules(&check_transfer("T", "b", XferFacts { linked: Some(false), ..ok }, &[op(0x1000, 1, 1)], regd)),
            vec![RuleId::HixlXferNotConnected]
        );
        assert!(check_transfer("T", "b", XferFacts { linked: None, ..ok }, &[op(0x1000, 1, 1)], regd).is_empty());
        assert_eq!(rules(&check_transfer("T", "b", ok, &[], regd)), vec![RuleId::HixlXferEmpty]);
        let v = check_transfer("T", "b", ok, &[op(0x1000, 1, 1), op(0x1000, 1, 0), op(0, 1, 1)], regd);
        assert_eq!(rules(&v), vec![RuleId::HixlXferEmpty]);
        assert!(v[0].problem.contains("op 1 of 3: len is 0 (and 1 more op(s))"), "{}", v[0].problem);
        let v = check_transfer("T", "b", ok, &[op(0x1800, 1, 0x1000), op(0x3000, 1, 1)], regd);
        assert_eq!(rules(&v), vec![RuleId::HixlXferLocalUnregistered]);
        assert!(v[0].problem.contains("op 0 of 2") && v[0].problem.contains("1 more"), "{}", v[0].problem);
        let nf = XferFacts { state: InstanceState::Constructed, linked: Some(false) };
        assert_eq!(rules(&check_transfer("T", "b", nf, &[], regd)), vec![RuleId::HixlNotInitialized]);
    }

    #[test]
    fn leak() {
        assert!(check_leak("Finalize", None, std::iter::empty()).is_none());
        let regs: Vec<HixlReg> = (0..10).map(|i| reg(i + 1, 0x1000 * (i + 1), 0x10, MemKind::Host)).collect();
        let f = check_leak("Finalize", Some("a"), regs.iter()).unwrap();
        assert_eq!(f.rule, RuleId::HixlFinalizeLeak);
        assert!(f.problem.contains("10 registration(s)") && f.problem.contains("and 2 more"), "{}", f.problem);
        assert!(f.problem.contains("\"a\""));
    }

    #[test]
    fn skips_have_messages() {
        let s = no_transport(RuleId::HixlRegDeviceHuge);
        assert!(s.message().starts_with("HIXL-REG-DEVICE-HUGE skipped: "));
        assert_eq!(policy_name(1), "ACL_MEM_MALLOC_HUGE_ONLY");
        assert_eq!(policy_name(99), "an unknown policy");
        assert_eq!(Transport::parse(" ROCE : Host ").unwrap().text(), "roce:host");
        assert!(Transport::parse(" ").is_none());
        assert_eq!(Transport::parse("hccs").unwrap().text(), "hccs");
    }
}
