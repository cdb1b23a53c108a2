//! Where the call runs: whether the SoC's product supports host registration, and whether
//! the calling thread has an ACL context.

use crate::rules::products::{self, HostRegSupport};
use crate::rules::{Finding, RuleId};

/// What the product table says about host registration on this SoC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProductVerdict {
    Supported,
    /// No SoC name could be had (the rule is skipped).
    UnknownSoc,
    /// A SoC string not in the table (logged and allowed).
    Unlisted(String),
    /// Sources disagree (logged as a warning, allowed).
    Conflict(&'static str),
    Unsupported(Finding),
}

pub fn check_product(call: &str, soc: Option<&str>) -> ProductVerdict {
    let Some(soc) = soc else { return ProductVerdict::UnknownSoc };
    match products::lookup(soc) {
        None => ProductVerdict::Unlisted(soc.to_string()),
        Some(p) => match p.host_register {
            HostRegSupport::Supported => ProductVerdict::Supported,
            HostRegSupport::Conflict(why) => ProductVerdict::Conflict(why),
            HostRegSupport::DocumentedUnsupported(why) => ProductVerdict::Unsupported(
                Finding::new(
                    RuleId::AclHostregProduct,
                    "(SoC)",
                    format!("{soc} is an {} part: {why}", p.display),
                    "nothing is needed for the runtime of this release; for a product the documentation supports, run on Atlas A2, Atlas A3 or Ascend 950PR/950DT",
                )
                .with_action(crate::rules::Action::Warn),
            ),
            HostRegSupport::Unsupported => ProductVerdict::Unsupported(Finding::new(
                RuleId::AclHostregProduct,
                "(SoC)",
                format!("{soc} is an {} part, which does not support {call}", p.display),
                "run on Atlas A2, Atlas A3 or Ascend 950PR/950DT; on this product copy through device memory (aclrtMalloc + aclrtMemcpy)",
            )),
        },
    }
}

/// `has_context`: `Some(false)` when the vendor says the thread has no current context.
pub fn check_context(has_context: Option<bool>) -> Option<Finding> {
    (has_context == Some(false)).then(|| {
        Finding::new(
            RuleId::AclHostregNoContext,
            "(thread)",
            "the calling thread has no current ACL context",
            "call aclrtSetDevice(deviceId) on this thread first, or aclrtSetCurrentContext(ctx) with the context aclrtGetCurrentContext returned on the thread that set the device",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product() {
        assert_eq!(check_product("x", Some("Ascend910B1")), ProductVerdict::Supported);
        assert_eq!(check_product("x", None), ProductVerdict::UnknownSoc);
        assert!(matches!(check_product("x", Some("Ascend950DT_9571")), ProductVerdict::Conflict(_)));
        assert!(matches!(check_product("x", Some("Foo")), ProductVerdict::Unlisted(_)));
        // The training series: the runtime registers (its feature table), the documentation
        // says no: a warning.
        match check_product("aclrtHostRegisterV2", Some("Ascend910B")) {
            ProductVerdict::Unsupported(f) => {
                assert_eq!(f.rule, RuleId::AclHostregProduct);
                assert!(f.problem.contains("training"), "{}", f.problem);
                assert_eq!(f.action, Some(crate::rules::Action::Warn));
            }
            other => panic!("{other:?}"),
        }
        // The inference series: the runtime refuses (207000), the rule's default applies.
        match check_product("aclrtHostRegisterV2", Some("Ascend310P3")) {
            ProductVerdict::Unsupported(f) => assert_eq!(f.action, None),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn context() {
        assert!(check_context(Some(true)).is_none());
        assert!(check_context(None).is_none());
        assert_eq!(check_context(Some(false)).unwrap().rule, RuleId::AclHostregNoContext);
    }
}
