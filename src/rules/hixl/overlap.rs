//! HIXL-REG-OVERLAP told more: one base registered again with another length is two
//! components registering one buffer (vllm-ascend PR #15624), and the call sites of both
//! registrations, when known. Pure: the front end symbolises the sites (rarely: only for such
//! a finding) and hands them in as text.

use super::{human, RegApi};
use crate::rules::{Finding, RuleId};
use crate::state::hixl::HixlReg;

/// Whether registering `[addr, addr + len)` is the live registration `r` again at its base
/// with another length: not identical (that returns the same handle), and not merely an
/// overlap at another base.
pub fn same_base_other_length(r: &HixlReg, addr: usize, len: u64) -> bool {
    r.addr == addr && r.len != len
}

/// The HIXL-REG-OVERLAP finding `f` of a registration `[addr, addr + len)` by `api` that
/// overlaps the live `r`, told more: when it is `r`'s base again with another length, says
/// so and how to share the registration; and where both registrations were made, when known
/// (`first`: where `r` was made, `this`: the call being judged). Any other finding is returned
/// unchanged.
pub fn overlap_with_sites(
    mut f: Finding,
    api: RegApi,
    r: &HixlReg,
    addr: usize,
    len: u64,
    first: Option<&str>,
    this: Option<&str>,
) -> Finding {
    if f.rule != RuleId::HixlRegOverlap {
        return f;
    }
    if same_base_other_length(r, addr, len) {
        f.problem += &format!(
            ": the same base again with another length ({} now, {} before), as when two components each register one buffer (vllm-ascend PR #15624)",
            human(len),
            human(r.len)
        );
        f.fix = format!(
            "register the buffer once, in one component, and share its handle; or {}(0x{:x}) before registering it with the new length",
            api.dereg_call(),
            r.handle
        ).into();
    }
    match (first, this) {
        (Some(a), Some(b)) => f.problem += &format!("; the live registration was made at {a}, this one at {b}"),
        (Some(a), None) => f.problem += &format!("; the live registration was made at {a}"),
        (None, Some(b)) => f.problem += &format!("; this one is made at {b}"),
        (None, None) => {}
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::hixl_facts::MemKind;

    fn reg(addr: usize, len: u64) -> HixlReg {
        HixlReg { handle: 0x77, addr, len, kind: MemKind::Host, tag: String::new(), site: 0 }
    }

    fn overlap() -> Finding {
        Finding::new(
            RuleId::HixlRegOverlap,
            "mem.addr",
            "[..) overlaps the live MEM_HOST registration",
            "register once",
        )
    }

    #[test]
    fn the_same_base_with_another_length_is_told_apart() {
        let r = reg(0x10000, 0x4000);
        assert!(same_base_other_length(&r, 0x10000, 0x8000));
        assert!(!same_base_other_length(&r, 0x10000, 0x4000), "identical: the same handle, no overlap");
        assert!(!same_base_other_length(&r, 0x11000, 0x1000), "another base: a plain overlap");
    }

    #[test]
    fn the_same_base_with_another_length_names_both_sites_vllm_ascend_15624() {
        let r = reg(0x10000, 0x4000);
        let f = overlap_with_sites(
            overlap(),
            RegApi::Hixl,
            &r,
            0x10000,
            0x8000,
            Some("kv_a (a.cpp:10)"),
            Some("kv_b (b.cpp:20)"),
        );
        assert!(
            f.problem.contains(": the same base again with another length (32 KiB now, 16 KiB before)"),
            "{}",
            f.problem
        );
        assert!(f.problem.contains("vllm-ascend PR #15624"), "{}", f.problem);
        assert!(
            f.problem.ends_with("; the live registration was made at kv_a (a.cpp:10), this one at kv_b (b.cpp:20)"),
            "{}",
            f.problem
        );
        assert!(f.fix.contains("share its handle") && f.fix.contains("DeregisterMem(0x77)"), "{}", f.fix);
        let cs = overlap_with_sites(overlap(), RegApi::CsClient, &r, 0x10000, 0x8000, None, None);
        assert!(cs.fix.contains("HixlCSClientUnregMem(0x77)"), "{}", cs.fix);
        assert!(cs.problem.ends_with("(vllm-ascend PR #15624)"), "no sites, nothing said of them: {}", cs.problem);
    }

    #[test]
    fn another_overlap_keeps_its_text_and_gains_the_sites() {
        let r = reg(0x10000, 0x4000);
        let f = overlap_with_sites(overlap(), RegApi::Hixl, &r, 0x11000, 0x1000, Some("a (a.cpp:1)"), None);
        assert_eq!(f.problem, format!("{}; the live registration was made at a (a.cpp:1)", overlap().problem));
        assert_eq!(f.fix, overlap().fix);
        let g = overlap_with_sites(overlap(), RegApi::Hixl, &r, 0x11000, 0x1000, None, None);
        assert_eq!(g, overlap());
        // another rule's finding is left alone
        let other = Finding::new(RuleId::HixlRegCount, "mem", "p", "f");
        assert_eq!(overlap_with_sites(other.clone(), RegApi::Hixl, &r, 0x10000, 0x8000, Some("a"), Some("b")), other);
    }
}
