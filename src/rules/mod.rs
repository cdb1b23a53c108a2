//! The rule catalogue: every check regcheck makes, as data, plus the pure functions that
//! evaluate them ([`acl`], [`hixl`]).
//!
//! A rule has a stable ID (the public contract: never renamed, never reused), a default
//! [`Action`], the vendor code returned when it rejects, a one-line summary, the generic fix
//! and where the rule comes from. The catalogue is rendered to `docs/rules.md`; a test keeps
//! the two identical.

pub mod acl;
pub mod address;
mod catalogue;
pub mod datadist;
pub mod decision;
pub mod examples;
pub mod hixl;
pub mod products;
mod rules_md;

pub use catalogue::{CATALOGUE, FIELD_REPORTS};
pub use decision::{Basis, Evidence, Harm, Records};
pub use rules_md::catalogue_markdown;

use std::fmt;

pub use hixl::Engine;

/// What regcheck does when a rule finds something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Action {
    /// Not checked.
    Off = 0,
    /// Logged at info level, call forwarded.
    Info = 1,
    /// Logged as a warning, call forwarded.
    Warn = 2,
    /// Logged as an error, call rejected with the rule's vendor code (in `enforce` mode).
    Error = 3,
}

impl Action {
    /// Parse `off`, `info`, `warn`/`warning`, `error` (case-insensitive).
    pub fn parse(s: &str) -> Option<Action> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "ignore" => Some(Action::Off),
            "info" => Some(Action::Info),
            "warn" | "warning" => Some(Action::Warn),
            "error" | "reject" => Some(Action::Error),
            _ => None,
        }
    }

    pub fn from_u32(v: u32) -> Option<Action> {
        match v {
            0 => Some(Action::Off),
            1 => Some(Action::Info),
            2 => Some(Action::Warn),
            3 => Some(Action::Error),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Off => "off",
            Action::Info => "info",
            Action::Warn => "warn",
            Action::Error => "error",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which vendor API family a rule belongs to (and so which code space its code is in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Acl,
    Hixl,
    /// `adxl::AdxlEngine`'s own rules (the HIXL engines' code space).
    Adxl,
    /// `llm_datadist::LlmDataDist`'s own rules (LLM-DataDist's codes, `LLM_*`).
    Datadist,
}

impl Family {
    /// The prefix of its rules' IDs.
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Acl => "ACL-",
            Family::Hixl => "HIXL-",
            Family::Adxl => "ADXL-",
            Family::Datadist => "DATADIST-",
        }
    }
}

/// One catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct RuleInfo {
    pub id: RuleId,
    /// The stable ID, e.g. `ACL-HOSTREG-ALIGN`.
    pub name: &'static str,
    pub family: Family,
    pub default: Action,
    /// The vendor code returned when the rule rejects; `None` for rules that never reject
    /// by default (if such a rule is raised to `error`, the family's generic parameter
    /// code is used, see [`RuleInfo::reject_code`]).
    pub code: Option<i64>,
    /// The calls it applies to.
    pub calls: &'static str,
    /// What it checks, one line.
    pub summary: &'static str,
    /// The generic fix.
    pub fix: &'static str,
    /// What the vendor's code does with such a call, with the code reference (repository,
    /// path, function), or "documentation only" where it lives in closed code.
    pub vendor: &'static str,
    /// The default action on the HIXL engines where it differs from `default` (what the
    /// vendor's code does there differs).
    pub engines: &'static [(Engine, Action)],
    /// What it judges a call by, and so how sure its findings are ([`Basis`]).
    pub basis: Basis,
    /// What the vendor does with such a call when it is forwarded ([`Harm`]).
    pub harm: Harm,
    /// Where the rule comes from.
    pub source: &'static str,
}

impl RuleInfo {
    /// The default action on `engine` (`None`: not known or not a HIXL instance).
    pub fn default_on(&self, engine: Option<Engine>) -> Action {
        engine.and_then(|e| self.engines.iter().find(|(x, _)| *x == e)).map_or(self.default, |(_, a)| *a)
    }

    /// The default, as the catalogue shows it (`warn (fabric_mem: error)`).
    pub fn default_text(&self) -> String {
        if self.engines.is_empty() {
            return self.default.to_string();
        }
        let per: Vec<String> = self.engines.iter().map(|(e, a)| format!("{}: {a}", e.name())).collect();
        format!("{} ({})", self.default, per.join(", "))
    }

    /// The code returned on rejection.
    pub fn reject_code(&self) -> i64 {
        match (self.code, self.family) {
            (Some(c), _) => c,
            (None, Family::Acl) => crate::codes::acl::INVALID_PARAM as i64,
            (None, Family::Hixl | Family::Adxl) => crate::codes::hixl::PARAM_INVALID as i64,
            (None, Family::Datadist) => datadist::LLM_PARAM_INVALID as i64,
        }
    }
}

macro_rules! rule_ids {
    ($($variant:ident = $num:literal,)*) => {
        /// Stable numeric rule identifiers (the C API's `regcheck_rule_info.id`).
        /// Numbers are never reused; new rules take new numbers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u32)]
        pub enum RuleId { $($variant = $num,)* }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant,)*];
        }
    };
}

rule_ids! {
    AclHostregNull = 1,
    AclHostregSizeZero = 2,
    AclHostregRangeOverflow = 3,
    AclHostregAlign = 4,
    AclHostregSizePages = 5,
    AclHostregFlagInvalid = 6,
    AclHostregFlagReserved = 7,
    AclHostregPinnedLocked = 8,
    AclHostregPageableOldKernel = 9,
    AclHostregUnmapped = 10,
    AclHostregFileBacked = 11,
    AclHostregStack = 12,
    AclHostregReadonlyMapping = 13,
    AclHostregOverlap = 14,
    AclHostregProduct = 15,
    AclHostregNoContext = 16,
    AclHostregMemlock = 17,
    AclHostregLarge = 18,
    AclHostregPinnedOnly = 19,
    AclHostunregNotRegistered = 20,
    AclDevptrNull = 21,
    AclDevptrFlag = 22,
    AclDevptrNotMapped = 23,
    AclFreehostRegistered = 24,
    AclHostregNotUserSpace = 25,
    AclDevptrInterior = 26,
    HixlNotInitialized = 101,
    HixlRegNullAddr = 102,
    HixlRegLenZero = 103,
    HixlRegRangeOverflow = 104,
    HixlRegMemtype = 105,
    HixlRegOverlap = 106,
    HixlRegCount = 107,
    HixlRegCountNear = 108,
    HixlRegHostCap = 109,
    HixlRegDeviceCap = 110,
    HixlRegAfterConnect = 111,
    HixlRegThread = 112,
    HixlRegHostOrigin = 113,
    HixlRegHostRoce950 = 114,
    HixlRegHostUnmapped = 115,
    HixlRegDeviceOrigin = 116,
    HixlRegDeviceHuge = 117,
    HixlDeregNull = 118,
    HixlDeregUnknown = 119,
    HixlDeregConnected = 120,
    HixlXferNotConnected = 121,
    HixlXferEmpty = 122,
    HixlXferLocalUnregistered = 123,
    HixlFinalizeLeak = 124,
    HixlRegDeviceAlign = 125,
    HixlInitOptions = 126,
    HixlInitFabricMem = 127,
    HixlRegFabricVmm = 128,
    HixlXferRemoteUnregistered = 129,
    HixlRegNotUserSpace = 130,
    HixlConnectSelf = 131,
    HixlFreeRegistered = 132,
    HixlRegNoEndpoint = 133,
    AdxlTimeout = 201,
    AdxlStatusNullReq = 202,
    AdxlXferContext = 203,
    DatadistNotInitialized = 301,
    DatadistAddrsEmpty = 302,
    DatadistAddrsCount = 303,
    DatadistAddrNull = 304,
    DatadistShape = 305,
    DatadistTensorSize = 306,
}

impl RuleId {
    /// The catalogue entry of this rule.
    pub fn info(self) -> &'static RuleInfo {
        &CATALOGUE[self.index()]
    }

    /// Position in [`CATALOGUE`] (and in [`RuleId::ALL`]).
    pub fn index(self) -> usize {
        // RuleId::ALL is in ascending order and the catalogue follows it; unit tests prove both.
        RuleId::ALL.binary_search(&self).unwrap_or(0)
    }

    /// The stable textual ID.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Look a rule up by its textual ID (case-insensitive).
    pub fn from_name(name: &str) -> Option<RuleId> {
        CATALOGUE.iter().find(|r| r.name.eq_ignore_ascii_case(name.trim())).map(|r| r.id)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Rules matched by a pattern: an exact ID, or a prefix ending in `*` (`ACL-HOSTREG-*`, `*`).
pub fn matching(pattern: &str) -> Vec<RuleId> {
    let p = pattern.trim();
    if let Some(prefix) = p.strip_suffix('*') {
        let prefix = prefix.to_ascii_uppercase();
        CATALOGUE.iter().filter(|r| r.name.starts_with(&prefix)).map(|r| r.id).collect()
    } else {
        RuleId::from_name(p).into_iter().collect()
    }
}

/// One thing a rule found about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: RuleId,
    /// The argument at fault (`ptr`, `size`, `flag`, `mem.addr`, ...).
    pub arg: &'static str,
    /// What is wrong, with the values involved.
    pub problem: String,
    /// How to fix it, specific to this call when possible (most are fixed text: kept without
    /// a copy of their own).
    pub fix: std::borrow::Cow<'static, str>,
    /// The code to reject with when it is not the rule's usual one (the vendor answers
    /// differently for the same mistake in another call).
    pub code: Option<i64>,
    /// The default action for this finding when it is not the rule's (what the vendor does in
    /// this configuration differs); a setting of the rule's action still wins.
    pub action: Option<Action>,
    /// What this finding rests on when the records its rule judges by may lack calls, where it
    /// knows better than the rule ([`Basis::Records`]'s `otherwise`): heap memory is certainly
    /// not from aclrtMallocHost; a double unregistration is one regcheck saw.
    pub evidence: Option<Evidence>,
}

impl Finding {
    pub fn new(
        rule: RuleId,
        arg: &'static str,
        problem: impl Into<String>,
        fix: impl Into<std::borrow::Cow<'static, str>>,
    ) -> Finding {
        Finding { rule, arg, problem: problem.into(), fix: fix.into(), code: None, action: None, evidence: None }
    }

    /// The same finding, resting on `evidence` when records are incomplete.
    pub fn with_evidence(self, evidence: Evidence) -> Finding {
        Finding { evidence: Some(evidence), ..self }
    }

    /// The same finding, with `action` as its default.
    pub fn with_action(self, action: Action) -> Finding {
        Finding { action: Some(action), ..self }
    }

    /// The same finding, with the rule's default on `engine`.
    pub fn on_engine(self, engine: Option<Engine>) -> Finding {
        let info = self.rule.info();
        let a = info.default_on(engine);
        if a == info.default {
            self
        } else {
            self.with_action(a)
        }
    }

    /// The same finding, rejected with `code` instead of the rule's code.
    pub fn with_code(self, code: i64) -> Finding {
        Finding { code: Some(code), ..self }
    }

    /// The code a rejection by this finding returns.
    pub fn reject_code(&self) -> i64 {
        self.code.unwrap_or_else(|| self.rule.info().reject_code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_in_rule_order_and_unique() {
        assert_eq!(CATALOGUE.len(), RuleId::ALL.len());
        assert!(RuleId::ALL.windows(2).all(|w| w[0] < w[1]), "RuleId::ALL is sorted");
        for (i, (r, id)) in CATALOGUE.iter().zip(RuleId::ALL).enumerate() {
            assert_eq!(r.id, *id, "entry {i} out of order");
            assert_eq!(id.index(), i);
        }
        let mut names: Vec<_> = CATALOGUE.iter().map(|r| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len(), "duplicate rule name");
    }

    #[test]
    fn rejecting_rules_have_codes_in_their_family() {
        for r in CATALOGUE {
            if r.default == Action::Error {
                let code = r.code.unwrap_or_else(|| panic!("{} rejects without a code", r.name));
                match r.family {
                    Family::Acl => assert!((100000..600000).contains(&code), "{}", r.name),
                    Family::Hixl | Family::Adxl => assert!(code % 100 == 0 || code == 103902, "{}", r.name),
                    Family::Datadist => assert!(
                        [datadist::LLM_FAILED, datadist::LLM_PARAM_INVALID].contains(&(code as u32)),
                        "{}",
                        r.name
                    ),
                }
            }
            assert!(r.name.starts_with(r.family.prefix()), "{}", r.name);
            assert!(!r.fix.is_empty() && !r.summary.is_empty() && !r.source.is_empty());
        }
    }

    #[test]
    fn cited_field_reports_exist() {
        for r in CATALOGUE {
            let mut rest = r.source;
            while let Some(i) = rest.find("field failure ") {
                rest = &rest[i + "field failure ".len()..];
                let id: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
                assert!(FIELD_REPORTS.iter().any(|(f, _)| *f == id), "{} cites unknown field report {id}", r.name);
            }
        }
    }

    #[test]
    fn patterns() {
        assert_eq!(matching("ACL-HOSTREG-ALIGN"), vec![RuleId::AclHostregAlign]);
        assert_eq!(matching("acl-hostreg-align"), vec![RuleId::AclHostregAlign]);
        assert_eq!(matching("ACL-DEVPTR-*").len(), 4);
        assert_eq!(matching("*").len(), CATALOGUE.len());
        assert!(matching("ACL-NOPE").is_empty());
        assert_eq!(Action::parse("Warning"), Some(Action::Warn));
        assert_eq!(Action::parse("loud"), None);
    }

    #[test]
    fn catalogue_doc_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rules.md");
        let want = catalogue_markdown();
        if std::env::var_os("REGCHECK_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(have == want, "docs/rules.md is stale: run REGCHECK_BLESS=1 cargo test --lib catalogue");
    }
}
