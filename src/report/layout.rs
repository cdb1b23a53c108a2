//! The layout of a finding's message, as sanitizer reports have it: one short first line (the
//! rule, the call, the argument and what is wrong, what regcheck did), then indented lines
//! for the rest (the call site's frames, the call's full arguments when the first line left
//! them out, why regcheck did not apply the finding's severity, the fix, the evidence, and
//! where to read more: `regcheck explain RULE` and the rule's anchor in the installed docs).
//!
//! ```text
//! [ACL-HOSTREG-ALIGN] aclrtHostRegisterV2(ptr=0x1010, size=4096, flag=0x2): `ptr`: 0x1010 is not aligned (rejected with 100000 ACL_ERROR_INVALID_PARAM)
//!     at register_buffers (kv_pool.c:118)
//!     fix: use posix_memalign
//!     evidence: certain
//!     more: regcheck explain ACL-HOSTREG-ALIGN; share/doc/regcheck/rules.md#acl-hostreg-align
//! ```

use super::Outcome;
use crate::callsite::Site;
use crate::rules::decision::Why;
use crate::rules::{Finding, RuleId};

/// The first line's goal: about this many characters.
pub const HEAD_GOAL: usize = 160;
/// The first line never exceeds this many characters.
pub const HEAD_MAX: usize = 200;
/// Where the rules' page is installed, relative to the install prefix (`cargo xtask install`,
/// the wheel).
pub const RULES_DOC: &str = "share/doc/regcheck/rules.md";
/// Indentation of the detail lines.
pub const INDENT: &str = "    ";

/// A finding's message: the first line and the detail lines (without their indentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub head: String,
    pub details: Vec<String>,
}

/// The rule's anchor in the installed rules page: `share/doc/regcheck/rules.md#acl-hostreg-align`.
pub fn doc_anchor(rule: RuleId) -> String {
    format!("{RULES_DOC}#{}", rule.name().to_ascii_lowercase())
}

/// Where to read more about a rule.
pub fn more(rule: RuleId) -> String {
    format!("regcheck explain {}; {}", rule.name(), doc_anchor(rule))
}

/// What regcheck did, in the first line's closing parentheses.
pub fn outcome_text(outcome: Outcome) -> String {
    match outcome {
        Outcome::Rejected(code) => format!("(rejected with {code} {})", crate::codes::name(code)),
        Outcome::ReportOnly(code) => {
            format!("(report mode: forwarded; enforce returns {code} {})", crate::codes::name(code))
        }
        Outcome::Forwarded => "(forwarded)".to_string(),
        Outcome::Refused(code) => {
            format!("(forwarded; the vendor refused it with {code} {})", crate::codes::name(code))
        }
        Outcome::DryRun => "(dry run)".to_string(),
    }
}

/// The evidence a finding rests on, as its `evidence:` line says it.
pub fn evidence(f: &Finding, why: Option<Why>) -> &'static str {
    match why {
        Some(Why::Seen { .. }) => "seen",
        Some(Why::Unknown { .. }) => "unknown",
        _ => f.evidence.map_or("certain", |e| e.as_str()),
    }
}

/// `text` cut to at most `max` characters at a clause boundary (`; `, `: `, `, `, ` (`) or,
/// failing that, a space, with `...` after it.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let limit = text.char_indices().nth(max.saturating_sub(3)).map_or(text.len(), |(i, _)| i);
    let head = &text[..limit];
    let at = ["; ", ": ", ", ", " ("]
        .iter()
        .filter_map(|b| head.rfind(b))
        .filter(|&i| i >= limit / 3)
        .max()
        .or_else(|| head.rfind(' ').filter(|&i| i > 0))
        .unwrap_or(limit);
    format!("{}...", &text[..at])
}

/// Lay out one finding.
pub fn message(call: &str, args: &str, f: &Finding, outcome: Outcome, why: Option<Why>) -> Message {
    let subject = if f.arg.starts_with('(') { String::new() } else { format!("`{}`: ", f.arg) };
    let done = outcome_text(outcome);
    let rule = f.rule.name();
    let with_args = format!("[{rule}] {call}({args}): {subject}{} {done}", f.problem);
    let mut details = Vec::new();
    let head = if with_args.chars().count() <= HEAD_GOAL || args.is_empty() {
        with_args
    } else {
        details.push(format!("call: {call}({args})"));
        let fixed = format!("[{rule}] {call}(...): {subject} {done}").chars().count();
        // The problem is cut only when the line would pass HEAD_MAX without the arguments.
        let problem = cut(&f.problem, HEAD_MAX.saturating_sub(fixed).max(40));
        if problem != f.problem {
            details.push(format!("problem: {}", f.problem));
        }
        format!("[{rule}] {call}(...): {subject}{problem} {done}")
    };
    if let Some(why) = why {
        details.push(format!("why: {}", why.text(f.reject_code())));
    }
    details.push(format!("fix: {}", f.fix));
    details.push(format!("evidence: {}", evidence(f, why)));
    details.push(format!("more: {}", more(f.rule)));
    Message { head, details }
}

impl Message {
    /// The message with `sites` right after the first line (`    at f (file.c:12)`, then
    /// `    by ...`), then the details.
    pub fn text(&self, sites: &[Site]) -> String {
        let mut out = self.head.clone();
        for (i, s) in sites.iter().enumerate() {
            out.push_str(if i == 0 { "\n    at " } else { "\n    by " });
            out.push_str(&s.text());
        }
        for d in &self.details {
            out.push('\n');
            out.push_str(INDENT);
            out.push_str(d);
        }
        out
    }

    /// The detail line that starts with `label: `, without the label.
    pub fn detail(&self, label: &str) -> Option<&str> {
        self.details.iter().find_map(|d| d.strip_prefix(label)?.strip_prefix(": "))
    }

    /// What `aclGetRecentErrMsg` returns: the first line, the fix and where to read more.
    pub fn short(&self) -> String {
        let fix = self.detail("fix").unwrap_or_default();
        let more = self.detail("more").unwrap_or_default();
        format!("{} Fix: {fix}. More: {more}", self.head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_is_short_and_the_rest_is_indented() {
        let f = Finding::new(RuleId::AclHostregAlign, "ptr", "0x1010 is not aligned", "use posix_memalign");
        let m = message("aclrtHostRegisterV2", "ptr=0x1010, size=4096, flag=0x2", &f, Outcome::Rejected(100000), None);
        assert_eq!(
            m.head,
            "[ACL-HOSTREG-ALIGN] aclrtHostRegisterV2(ptr=0x1010, size=4096, flag=0x2): `ptr`: 0x1010 is not aligned \
             (rejected with 100000 ACL_ERROR_INVALID_PARAM)"
        );
        assert_eq!(m.detail("fix"), Some("use posix_memalign"));
        assert_eq!(m.detail("evidence"), Some("certain"));
        assert_eq!(
            m.detail("more"),
            Some("regcheck explain ACL-HOSTREG-ALIGN; share/doc/regcheck/rules.md#acl-hostreg-align")
        );
        let text = m.text(&[]);
        assert!(text.lines().skip(1).all(|l| l.starts_with(INDENT)), "{text}");
        assert!(m.short().contains("Fix: use posix_memalign"), "{}", m.short());
    }

    #[test]
    fn a_long_problem_is_cut_at_a_clause_and_kept_whole_below() {
        let problem =
            format!("the range [0x1000, +4096) overlaps {}; more words follow here", "a live registration ".repeat(12));
        let f = Finding::new(RuleId::AclHostregOverlap, "ptr", problem.clone(), "unregister it first");
        let args = "ptr=0x7f0000001000, size=4096, flag=0x2 (MAPPED), and more text to be long enough";
        let m = message("aclrtHostRegisterV2", args, &f, Outcome::ReportOnly(507910), None);
        assert!(m.head.chars().count() <= HEAD_MAX, "{} chars: {}", m.head.len(), m.head);
        assert!(m.head.contains("aclrtHostRegisterV2(...)") && m.head.contains("..."), "{}", m.head);
        assert!(m.head.contains("(report mode: forwarded; enforce returns 507910 "), "{}", m.head);
        assert_eq!(m.detail("problem"), Some(problem.as_str()));
        assert_eq!(m.detail("call"), Some(format!("aclrtHostRegisterV2({args})").as_str()));
    }

    #[test]
    fn cut_prefers_clause_boundaries() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("one part; another part that is long", 20), "one part...");
        assert!(cut(&"x".repeat(50), 20).chars().count() <= 20);
    }
}
