//! The decision on one finding: what regcheck logs, whether it rejects, what counts toward
//! the exit code, and the sentence that says why. One pure function, [`decide`], over every
//! input that matters; the front end gathers the inputs ([`Case`]) and applies the answer.
//!
//! The inputs:
//! * the finding's **severity**: the rule's action as configured (`REGCHECK_RULES`, the
//!   engine's default, the rule's default);
//! * its **evidence** ([`Evidence`]): *certain* (the call's arguments, platform facts, or
//!   records with complete tracking), *seen* (regcheck itself saw the range registered or
//!   unregistered, but calls it cannot see may have changed that since), or *unknown* (the
//!   finding rests on a record regcheck does not have, while callers it cannot see exist);
//! * its **class** ([`Harm`]): whether forwarding would crash, hang or corrupt, and whether it is
//!   judged by regcheck's records ([`Basis`]);
//! * the **caller**: the application, or the vendor's own library calling its own API;
//! * why tracking is incomplete, when it is ([`Gap`]);
//! * the **mode** (enforce or report).
//!
//! The rules of the decision, in order:
//! 1. A finding on a call the vendor's own library makes is the vendor's business: a debug
//!    line, forwarded, not counted (its records are the vendor's bookkeeping, and where the
//!    vendor fails the call itself, forwarding keeps the vendor's own code, which the
//!    application's call then returns); unless forwarding would crash, hang or corrupt, which
//!    is stopped whoever calls.
//! 2. Certain: the severity, enforced (an `error` rejects in enforce mode) and counted.
//! 3. Seen: the severity in the log, JSON, summary and exit code, but not rejected (the message
//!    says what regcheck saw and why it forwards).
//! 4. Unknown: at most a warning, never counted as an error (the message says why regcheck cannot
//!    be sure, and how to make it sure where there is a way).

use super::Action;

/// How sure regcheck is of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Evidence {
    /// The call's arguments, platform facts, or records regcheck knows to be complete.
    Certain,
    /// regcheck itself saw what the finding says (this range registered, or unregistered, and
    /// nothing since), but calls it cannot see may have changed it.
    Seen,
    /// The finding rests on the absence of a record while calls regcheck cannot see exist.
    Unknown,
}

impl Evidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Certain => "certain",
            Evidence::Seen => "seen",
            Evidence::Unknown => "unknown",
        }
    }
}

/// Which records of earlier calls a rule judges by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// The ACL allocations and registrations: C functions a caller can reach through `dlsym`
    /// or `ctypes`, past `LD_PRELOAD`; whole only with the `LD_AUDIT` module, in a process
    /// regcheck was loaded with.
    Acl,
    /// The records of the API the call belongs to (HIXL instances, registrations, links):
    /// whole under `LD_PRELOAD` for C++ members (bound by the dynamic linker, never looked up
    /// by name); for a C API (the HixlCS calls) whole only as [`Records::Acl`] is.
    Own,
}

/// What a rule judges a call by: this decides how sure its findings can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The call's arguments and the platform (memory map, kernel, SoC, driver): always certain.
    Facts,
    /// regcheck's records of earlier calls: certain with complete tracking; without it, a
    /// finding is what `otherwise` says (a finding may say better: see `Finding::evidence`).
    Records { of: Records, otherwise: Evidence },
}

/// What the vendor does with such a call when it is forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harm {
    /// It crashes, hangs or corrupts (a driver exception, a device writing into freed memory):
    /// stopped whoever calls, the vendor's own libraries included.
    Crash,
    /// The vendor fails it with an error code, now or at a later call.
    Fails,
    /// The vendor accepts it; it works, slower or with a hazard for later.
    Accepted,
}

impl Harm {
    pub fn as_str(self) -> &'static str {
        match self {
            Harm::Crash => "crash",
            Harm::Fails => "fails",
            Harm::Accepted => "accepted",
        }
    }
}

/// Who made the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Application,
    /// One of the vendor's libraries, calling the vendor's API (HIXL registering host memory
    /// with ACL).
    Vendor,
}

/// Why regcheck's records may lack calls: the only cases left once regcheck's own `dlsym`
/// answers look-ups by name (see docs/audit.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gap {
    /// regcheck's own `dlsym` is not the one the program uses (the static library, or another
    /// library defines `dlsym` ahead of it): `ctypes` and `dlopen` + `dlsym` callers may reach
    /// the vendor past it. `regcheck run --audit` closes this gap.
    NotInterposed,
    /// regcheck was loaded after the program started: what was allocated and registered before
    /// is not in its records.
    LoadedLate,
    /// The vendor's library is ahead of regcheck in the program's link order: the program's
    /// calls bind to the vendor directly.
    Bypassed,
    /// A library opened with `RTLD_DEEPBIND` binds the vendor's functions itself, past
    /// regcheck. `regcheck run --audit` closes this gap.
    DeepBind,
    /// An internal failure of regcheck may have lost a record.
    InternalFailure,
}

impl Gap {
    /// Why, as a clause of a message.
    pub fn reason(self) -> &'static str {
        match self {
            Gap::NotInterposed => "regcheck's own dlsym is not the one this program uses (regcheck is linked statically, or another library defines dlsym ahead of it), so calls made through ctypes or dlopen+dlsym may reach the vendor without it and its records may lack them",
            Gap::LoadedLate => "regcheck was loaded after the program started, so memory allocated and registered before then is not in its records",
            Gap::Bypassed => "the vendor's library comes before regcheck in this program's link order, so the program's calls go to the vendor directly and regcheck's records lack them",
            Gap::DeepBind => "a library opened with RTLD_DEEPBIND binds the vendor's functions itself, so its calls go to the vendor without regcheck and its records may lack them",
            Gap::InternalFailure => "an internal failure of regcheck earlier in this process may have lost records",
        }
    }

    /// How to close the gap, when there is a way.
    pub fn advice(self) -> Option<&'static str> {
        match self {
            Gap::NotInterposed | Gap::DeepBind => Some("run the program under `regcheck run --audit` (LD_AUDIT=.../libregcheck_audit.so as well as LD_PRELOAD) to make it certain"),
            Gap::LoadedLate => Some("load regcheck with the program (LD_PRELOAD, or link it) to make it certain"),
            Gap::Bypassed => Some("link -lregcheck before the vendor's library (or load it with LD_PRELOAD) to make it certain"),
            Gap::InternalFailure => None,
        }
    }
}

/// Whether the call is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// `REGCHECK_MODE=enforce`: an error that is certain rejects the call.
    Enforce,
    /// `REGCHECK_MODE=report`: nothing is rejected.
    Report,
}

/// Everything the decision on one finding depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The finding's action as configured.
    pub severity: Action,
    /// What the rule judges by.
    pub basis: Basis,
    /// The finding's own evidence when records are incomplete, where it knows better than the
    /// rule's `otherwise` (heap memory is certainly not from aclrtMallocHost).
    pub evidence: Option<Evidence>,
    pub harm: Harm,
    pub caller: Caller,
    /// Why the records the rule judges by may lack calls (`None`: they are whole).
    pub gap: Option<Gap>,
    pub mode: Enforcement,
}

/// How a finding is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Off,
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn of(a: Action) -> Level {
        match a {
            Action::Off => Level::Off,
            Action::Info => Level::Info,
            Action::Warn => Level::Warn,
            Action::Error => Level::Error,
        }
    }

    /// The action this level is reported as (a debug line is reported as nothing).
    pub fn action(self) -> Action {
        match self {
            Level::Off | Level::Debug => Action::Off,
            Level::Info => Action::Info,
            Level::Warn => Action::Warn,
            Level::Error => Action::Error,
        }
    }
}

/// Why a finding is not applied at its severity: the sentence its message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A finding on the vendor's own call that would not crash: its business.
    VendorsOwn,
    /// regcheck saw it; it forwards (an error is still counted).
    Seen { gap: Gap, would_reject: bool },
    /// regcheck cannot be sure; it warns at most.
    Unknown { gap: Gap, would_reject: bool },
    /// Report mode: logged at its severity, forwarded anyway.
    ReportMode,
}

impl Why {
    /// The sentence, appended to the finding's problem. `code` is what a rejection would return.
    pub fn text(self, code: i64) -> String {
        let advice = |gap: Gap| gap.advice().map(|a| format!("; {a}")).unwrap_or_default();
        match self {
            Why::VendorsOwn => "the call is made by the vendor's own library and would not crash: the vendor answers it (its own code reaches the application's call); forwarded untouched".to_string(),
            Why::Seen { gap, would_reject } => {
                let instead = if would_reject { format!(" instead of rejecting with {code}") } else { String::new() };
                format!("regcheck saw this itself, but {}, so it forwards the call{instead}{}", gap.reason(), advice(gap))
            }
            Why::Unknown { gap, would_reject } => {
                let instead = if would_reject { format!(", instead of rejecting with {code},") } else { String::new() };
                format!("regcheck has no record to be sure of this: {}; so it only warns{instead} and the vendor answers{}", gap.reason(), advice(gap))
            }
            Why::ReportMode => format!("report mode: forwarded anyway (enforce mode would return {code})"),
        }
    }
}

/// The decision on one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// How the finding is logged (and reported in JSON, the findings log and the summary).
    pub level: Level,
    /// The evidence the decision rests on.
    pub evidence: Evidence,
    /// The call is rejected with the finding's code.
    pub reject: bool,
    /// The finding counts as an error (`REGCHECK_ERROR_EXITCODE`, the summary's errors).
    pub counts: bool,
    /// Why it is not applied at its severity, when it is not.
    pub why: Option<Why>,
}

/// The evidence a finding rests on.
pub fn evidence(c: &Case) -> Evidence {
    match (c.basis, c.gap) {
        (Basis::Facts, _) | (_, None) => Evidence::Certain,
        (Basis::Records { otherwise, .. }, Some(_)) => c.evidence.unwrap_or(otherwise),
    }
}

/// Decide one finding (see the module's documentation for the rules).
pub fn decide(c: &Case) -> Decision {
    let ev = evidence(c);
    let off = Decision { level: Level::Off, evidence: ev, reject: false, counts: false, why: None };
    if c.severity == Action::Off {
        return off;
    }
    if c.caller == Caller::Vendor && c.harm != Harm::Crash {
        return Decision { level: Level::Debug, why: Some(Why::VendorsOwn), ..off };
    }
    let error = c.severity == Action::Error;
    let gap = c.gap.unwrap_or(Gap::InternalFailure);
    match ev {
        Evidence::Certain => Decision {
            level: Level::of(c.severity),
            reject: error && c.mode == Enforcement::Enforce,
            counts: error,
            why: (error && c.mode == Enforcement::Report).then_some(Why::ReportMode),
            ..off
        },
        Evidence::Seen => Decision {
            level: Level::of(c.severity),
            counts: error,
            why: Some(Why::Seen { gap, would_reject: error && c.mode == Enforcement::Enforce }),
            ..off
        },
        Evidence::Unknown => Decision {
            level: Level::of(c.severity).min(Level::Warn),
            why: Some(Why::Unknown { gap, would_reject: error && c.mode == Enforcement::Enforce }),
            ..off
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEVERITIES: [Action; 4] = [Action::Off, Action::Info, Action::Warn, Action::Error];
    const BASES: [Basis; 5] = [
        Basis::Facts,
        Basis::Records { of: Records::Acl, otherwise: Evidence::Seen },
        Basis::Records { of: Records::Acl, otherwise: Evidence::Unknown },
        Basis::Records { of: Records::Own, otherwise: Evidence::Seen },
        Basis::Records { of: Records::Own, otherwise: Evidence::Unknown },
    ];
    const EVIDENCE: [Option<Evidence>; 4] =
        [None, Some(Evidence::Certain), Some(Evidence::Seen), Some(Evidence::Unknown)];
    const HARMS: [Harm; 3] = [Harm::Crash, Harm::Fails, Harm::Accepted];
    const CALLERS: [Caller; 2] = [Caller::Application, Caller::Vendor];
    const GAPS: [Option<Gap>; 6] = [
        None,
        Some(Gap::NotInterposed),
        Some(Gap::LoadedLate),
        Some(Gap::Bypassed),
        Some(Gap::DeepBind),
        Some(Gap::InternalFailure),
    ];
    const MODES: [Enforcement; 2] = [Enforcement::Enforce, Enforcement::Report];

    fn every_case() -> Vec<Case> {
        let mut out = Vec::new();
        for severity in SEVERITIES {
            for basis in BASES {
                for evidence in EVIDENCE {
                    for harm in HARMS {
                        for caller in CALLERS {
                            for gap in GAPS {
                                for mode in MODES {
                                    out.push(Case { severity, basis, evidence, harm, caller, gap, mode });
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_whole_product_of_the_inputs() {
        let cases = every_case();
        assert_eq!(cases.len(), 4 * 5 * 4 * 3 * 2 * 6 * 2);
        for c in &cases {
            let d = decide(c);
            let ev = evidence(c);
            assert_eq!(d.evidence, ev, "{c:?}");
            // Off is off.
            if c.severity == Action::Off {
                assert_eq!(d, Decision { level: Level::Off, evidence: ev, reject: false, counts: false, why: None });
                continue;
            }
            // Only an error that is certain, in enforce mode, rejects; and such an error always
            // rejects, whoever calls, unless it is on the vendor's own call and would not crash.
            let vendors_own = c.caller == Caller::Vendor && c.harm != Harm::Crash;
            assert_eq!(
                d.reject,
                !vendors_own
                    && ev == Evidence::Certain
                    && c.severity == Action::Error
                    && c.mode == Enforcement::Enforce,
                "{c:?} -> {d:?}"
            );
            if vendors_own {
                assert_eq!((d.level, d.counts, d.why), (Level::Debug, false, Some(Why::VendorsOwn)), "{c:?}");
                continue;
            }
            // What would crash is decided the same whoever calls.
            if c.harm == Harm::Crash {
                assert_eq!(d, decide(&Case { caller: Caller::Application, ..*c }), "{c:?}");
            }
            // Certain and seen keep the severity; unknown is at most a warning.
            match ev {
                Evidence::Certain | Evidence::Seen => assert_eq!(d.level, Level::of(c.severity), "{c:?}"),
                Evidence::Unknown => assert_eq!(d.level, Level::of(c.severity).min(Level::Warn), "{c:?}"),
            }
            // An error counts unless it is unknown.
            assert_eq!(d.counts, c.severity == Action::Error && ev != Evidence::Unknown, "{c:?}");
            // A finding not applied at its severity says why.
            match ev {
                Evidence::Certain => assert!(
                    d.why.is_none() || (d.why == Some(Why::ReportMode) && c.mode == Enforcement::Report),
                    "{c:?}"
                ),
                Evidence::Seen => assert!(matches!(d.why, Some(Why::Seen { .. })), "{c:?}"),
                Evidence::Unknown => assert!(matches!(d.why, Some(Why::Unknown { .. })), "{c:?}"),
            }
            // Facts, and records with complete tracking, are certain.
            if c.basis == Basis::Facts || c.gap.is_none() {
                assert_eq!(ev, Evidence::Certain, "{c:?}");
            }
        }
    }

    #[test]
    fn the_evidence_of_records_without_complete_tracking() {
        let c = Case {
            severity: Action::Error,
            basis: Basis::Records { of: Records::Acl, otherwise: Evidence::Unknown },
            evidence: None,
            harm: Harm::Crash,
            caller: Caller::Application,
            gap: Some(Gap::NotInterposed),
            mode: Enforcement::Enforce,
        };
        assert_eq!(evidence(&c), Evidence::Unknown);
        assert_eq!(evidence(&Case { evidence: Some(Evidence::Certain), ..c }), Evidence::Certain);
        assert_eq!(evidence(&Case { gap: None, ..c }), Evidence::Certain);
        // A pageable heap buffer on an old kernel is certain: rejected even when the vendor's
        // own library registers it.
        let d = decide(&Case { evidence: Some(Evidence::Certain), caller: Caller::Vendor, ..c });
        assert!(d.reject && d.counts && d.level == Level::Error);
        // The same without a record: a warning that says why and how to be sure.
        let d = decide(&c);
        assert!(!d.reject && !d.counts && d.level == Level::Warn);
        let text = d.why.unwrap().text(100000);
        assert!(text.contains("no record") && text.contains("instead of rejecting with 100000"), "{text}");
        assert!(text.contains("regcheck run --audit"), "{text}");
    }

    #[test]
    fn the_advice_is_given_only_where_it_helps() {
        for gap in [Gap::NotInterposed, Gap::LoadedLate, Gap::Bypassed, Gap::DeepBind, Gap::InternalFailure] {
            for why in [Why::Seen { gap, would_reject: true }, Why::Unknown { gap, would_reject: false }] {
                let text = why.text(507911);
                assert_eq!(
                    text.contains("--audit"),
                    matches!(gap, Gap::NotInterposed | Gap::DeepBind),
                    "{gap:?}: {text}"
                );
                assert!(text.contains(gap.reason()), "{text}");
            }
        }
        let seen = Why::Seen { gap: Gap::NotInterposed, would_reject: true }.text(507911);
        assert!(seen.contains("saw this itself") && seen.contains("instead of rejecting with 507911"), "{seen}");
        let seen = Why::Seen { gap: Gap::NotInterposed, would_reject: false }.text(507911);
        assert!(!seen.contains("instead of rejecting"), "{seen}");
    }
}
