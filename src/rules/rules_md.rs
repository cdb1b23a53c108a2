//! The catalogue rendered as the Markdown of `docs/rules.md` (a unit test keeps that file
//! identical to it).

use super::catalogue::{CATALOGUE, FIELD_REPORTS};
use super::{Basis, Family, Records, RuleInfo};

/// Render the catalogue as the Markdown of `docs/rules.md`.
pub fn catalogue_markdown() -> String {
    let mut out = String::new();
    out.push_str("# regcheck rule catalogue\n\n");
    out.push_str("For: everyone reading a finding of regcheck's (`regcheck explain RULE` says the same for one\n");
    out.push_str("rule). Answers: what each rule checks, its default action and the code it rejects with, how sure\n");
    out.push_str(
        "regcheck is, what the vendor's code does with such a call, the fix, and where the rule comes from.\n\n",
    );
    out.push_str("Generated from `src/rules/catalogue/` (a unit test keeps this file identical; run\n");
    out.push_str("`REGCHECK_BLESS=1 cargo test --lib catalogue` after changing the catalogue).\n\n");
    out.push_str("Actions: `error` rejects the call with the code shown (in `enforce` mode), `warn` and `info`\n");
    out.push_str("log and forward, `off` skips the check. Change them with `REGCHECK_RULES`.\n\n");
    out.push_str("A rule is an `error` where the vendor's own code fails, hangs, crashes or corrupts data; where\n");
    out.push_str("the vendor accepts the call and it works, it warns and says why it matters. \"What the vendor\n");
    out.push_str("does\" gives the code that decides it (repository, path, function), or \"documentation only\"\n");
    out.push_str("where that code is closed. HIXL rules may differ by engine (`warn (fabric_mem: error)`): see\n");
    out.push_str("[hixl.md](hixl.md) for the engine an instance runs. `adxl::AdxlEngine` runs the same engines: its\n");
    out.push_str("calls are judged by the HIXL rules, plus ADXL's own (`ADXL-*`; see [adxl.md](adxl.md)).\n\n");
    out.push_str("A rejection needs certainty. \"Evidence\" says how sure regcheck is of a rule's findings\n");
    out.push_str("where its records may be incomplete: **certain** for rules that judge the call's arguments and\n");
    out.push_str("the platform, and the `hixl::Hixl` and `adxl::AdxlEngine` members' own records (C++ members\n");
    out.push_str("are bound by the dynamic linker, never looked up by name); for rules that judge by records of C\n");
    out.push_str("calls (ACL allocations and\n");
    out.push_str("registrations, the HixlCS API), which a caller can make through `ctypes` or `dlsym` unseen,\n");
    out.push_str("**seen** (regcheck saw the registration, or the unregistration, itself, but an unseen call may\n");
    out.push_str("have changed it since) or **unknown** (the finding rests on a record regcheck does not have).\n");
    out.push_str(
        "Loaded with the program (`LD_PRELOAD`, `regcheck run`, `-lregcheck` ahead of the vendor), regcheck's\n",
    );
    out.push_str("own `dlsym` makes its records whole, as the `LD_AUDIT` module does, and every rule is certain;\n");
    out.push_str("[audit.md](audit.md#what-is-still-unknown-and-why) says where they may not be (linked statically,\n");
    out.push_str("loaded late, bypassed). Certain findings are applied at their action; seen ones are logged and\n");
    out.push_str("counted at their action (an `error` fails `REGCHECK_ERROR_EXITCODE`) but not rejected; unknown\n");
    out.push_str("ones are at most warnings and never counted as errors. A single finding can know better than\n");
    out.push_str("its rule (a pageable heap buffer is certainly not from `aclrtMallocHost`; a double\n");
    out.push_str("unregistration is one regcheck saw).\n\n");
    out.push_str("\"If forwarded\" says what the vendor does with such a call: `crash` (crashes, hangs or corrupts:\n");
    out.push_str("stopped whoever calls, the vendor's own libraries included), `fails` (an error code, now or at\n");
    out.push_str("a later call) or `accepted`. A finding on a call the vendor's own library makes (HIXL\n");
    out.push_str("registering host memory with ACL) is the vendor's business unless it would crash: a debug\n");
    out.push_str("line, forwarded, so that the vendor's own code reaches the application's call.\n\n");
    for (family, title) in [
        (Family::Acl, "ACL runtime"),
        (Family::Hixl, "HIXL"),
        (Family::Adxl, "ADXL"),
        (Family::Datadist, "LLM-DataDist"),
    ] {
        out.push_str(&format!("## {title}\n\n"));
        out.push_str(
            "| ID | # | default | code on rejection | evidence | if forwarded | calls |\n|---|---|---|---|---|---|---|\n",
        );
        for r in CATALOGUE.iter().filter(|r| r.family == family) {
            let code = match r.code {
                Some(c) => format!("{c} `{}`", crate::codes::name(c)),
                None => "-".to_string(),
            };
            let sure = evidence_text(r);
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                r.name,
                r.id as u32,
                r.default_text(),
                code,
                sure,
                r.harm.as_str(),
                r.calls,
            ));
        }
        out.push('\n');
        for r in CATALOGUE.iter().filter(|r| r.family == family) {
            out.push_str(&format!("### `{}`\n\n{}\n\n", r.name, wrap(&format!("{}.", r.summary), "")));
            for (what, text) in [("Fix", r.fix), ("What the vendor does", r.vendor), ("Source", r.source)] {
                out.push_str(&format!("{}\n", wrap(&format!("- {what}: {text}."), "  ")));
            }
            out.push('\n');
        }
    }
    out.push_str("## Field reports\n\nThe \"field failure\" sources above: what users of these APIs reported in public issue\ntrackers (vllm-ascend, Mooncake, LMCache, HIXL, torch_npu and others).\n\n");
    for (id, text) in FIELD_REPORTS {
        out.push_str(&format!("{}\n", wrap(&format!("- **{id}**: {text}"), "  ")));
    }
    out
}

/// The longest line [`wrap`] makes, unless one word is longer.
const WIDTH: usize = 100;

/// `text` wrapped at [`WIDTH`] characters, each continuation line indented by `indent`. A line
/// never starts with what Markdown would read as a list item, heading, quote or table.
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let structural = word.starts_with(['-', '+', '*', '#', '>', '|', '='])
            || word.trim_end_matches(['.', ')']).chars().all(|c| c.is_ascii_digit()) && word.ends_with(['.', ')']);
        if !line.trim().is_empty() && line.chars().count() + 1 + word.chars().count() > WIDTH && !structural {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        } else if !line.trim().is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out
}

/// The evidence of a rule's findings under `LD_PRELOAD` alone, as the table shows it.
pub fn evidence_text(r: &RuleInfo) -> String {
    match r.basis {
        Basis::Facts => "certain".to_string(),
        Basis::Records { of: Records::Own, .. } if r.family != Family::Acl && !r.calls.contains("HixlCS") => {
            "certain".to_string()
        }
        Basis::Records { of: Records::Own, otherwise } if r.family != Family::Acl => {
            format!("certain (HixlCS calls: {}; certain with `LD_AUDIT`)", otherwise.as_str())
        }
        Basis::Records { otherwise, .. } => format!("{} (certain with `LD_AUDIT`)", otherwise.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_lines_short_and_markdown_plain() {
        let text = "a ".repeat(120) + "- not a list 12. nor a number";
        let w = wrap(&text, "  ");
        assert!(w.lines().all(|l| l.chars().count() <= WIDTH), "{w}");
        assert!(w.lines().skip(1).all(|l| l.starts_with("  ") && !l.trim_start().starts_with(['-', '1'])), "{w}");
        assert_eq!(wrap("short text", ""), "short text");
    }

    #[test]
    fn the_catalogue_page_says_who_it_is_for_in_short_lines() {
        let md = catalogue_markdown();
        assert!(md.lines().nth(2).is_some_and(|l| l.starts_with("For: ")), "{md:.300}");
        // prose is wrapped at WIDTH; a table row holds the rule's calls
        let long: Vec<&str> =
            md.lines().filter(|l| l.chars().count() > if l.starts_with('|') { 300 } else { WIDTH }).collect();
        assert!(long.is_empty(), "{} lines too long: {long:#?}", long.len());
    }
}
