//! The catalogue rendered as the Markdown of `docs/rules.md` (a unit test keeps that file
//! identical to it).

use super::catalogue::{CATALOGUE, FIELD_REPORTS};
use super::{Family, Records};

/// Render the catalogue as the Markdown of `docs/rules.md`.
pub fn catalogue_markdown() -> String {
    let mut out = String::new();
    out.push_str("# regcheck rule catalogue\n\n");
    out.push_str("Generated from `src/rules/catalogue.rs` (a unit test keeps this file identical; run\n");
    out.push_str("`REGCHECK_BLESS=1 cargo test --lib catalogue` after changing the catalogue).\n\n");
    out.push_str("Actions: `error` rejects the call with the code shown (in `enforce` mode), `warn` and `info`\n");
    out.push_str("log and forward, `off` skips the check. Change them with `REGCHECK_RULES`.\n\n");
    out.push_str("A rule is an `error` where the vendor's own code fails, hangs, crashes or corrupts data; where\n");
    out.push_str("the vendor accepts the call and it works, it warns and says why it matters. \"What the vendor\n");
    out.push_str("does\" gives the code that decides it (repository, path, function), or \"documentation only\"\n");
    out.push_str("where that code is closed. HIXL rules may differ by engine (`warn (fabric_mem: error)`): see\n");
    out.push_str("[hixl.md](hixl.md) for the engine an instance runs. `adxl::AdxlEngine` runs the same engines: its\n");
    out.push_str("calls are judged by the HIXL rules, plus ADXL's own (`ADXL-*`; see [adxl.md](adxl.md)).\n\n");
    out.push_str("A rejection needs certainty. \"Rejects with\" says what regcheck must see of the process to\n");
    out.push_str("reject: `LD_PRELOAD` alone (or linking) for rules that judge the call and the platform, and\n");
    out.push_str("the `hixl::Hixl` and `adxl::AdxlEngine` members' own records; `LD_AUDIT` too (`regcheck run --audit`) for rules that\n");
    out.push_str("judge by records of C calls (ACL allocations and registrations, the HixlCS API), which a caller\n");
    out.push_str("can make through `ctypes` or `dlsym`, unseen. Without it such a finding is a warning that says\n");
    out.push_str("so, and the vendor answers the call.\n\n");
    for (family, title) in [(Family::Acl, "ACL runtime"), (Family::Hixl, "HIXL"), (Family::Adxl, "ADXL")] {
        out.push_str(&format!("## {title}\n\n"));
        out.push_str(
            "| ID | # | default | code on rejection | rejects with | calls | checks | what the vendor does |\n|---|---|---|---|---|---|---|---|\n",
        );
        for r in CATALOGUE.iter().filter(|r| r.family == family) {
            let code = match r.code {
                Some(c) => format!("{c} `{}`", crate::codes::name(c)),
                None => "-".to_string(),
            };
            let sure = match r.id.records() {
                Records::None => "`LD_PRELOAD`",
                Records::Hixl if r.calls.contains("HixlCS") => "`LD_PRELOAD` (HixlCS calls: `LD_AUDIT`)",
                Records::Hixl => "`LD_PRELOAD`",
                Records::Acl => "`LD_AUDIT`",
            };
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
                r.name,
                r.id as u32,
                r.default_text(),
                code,
                sure,
                r.calls,
                r.summary,
                r.vendor
            ));
        }
        out.push('\n');
        for r in CATALOGUE.iter().filter(|r| r.family == family) {
            out.push_str(&format!(
                "### `{}`\n\n{}.\n\n- Fix: {}.\n- What the vendor does: {}.\n- Source: {}.\n\n",
                r.name, r.summary, r.fix, r.vendor, r.source
            ));
        }
    }
    out.push_str("## Field reports\n\nThe \"field failure\" sources above: what users of these APIs reported in public issue\ntrackers (vllm-ascend, Mooncake, LMCache, HIXL, torch_npu and others).\n\n| # | what was seen |\n|---|---|\n");
    for (id, text) in FIELD_REPORTS {
        out.push_str(&format!("| {id} | {text} |\n"));
    }
    out
}
