//! `REGCHECK_LOG_FORMAT=json`: one JSON object per line. The schema is documented in
//! `docs/json.md` and versioned by the `schema` field; fields are only ever added.
//!
//! Every object has `schema`, `type` (`finding`, `message` or `summary`), `component`
//! (`regcheck`: this library; the `LD_AUDIT` module writes its own `message` lines with
//! `regcheck-audit`), `time` (RFC 3339, UTC, milliseconds) and `pid`; `finding` and `message`
//! also `tid`.

use serde_json::{json, Map, Value};

use super::Outcome;
use crate::callsite::Site;
use crate::rules::{Action, Finding, CATALOGUE};

/// The version of the line format; raised only if a field changes meaning or goes away.
pub const SCHEMA: u32 = 1;

/// `component` of the lines this library writes (the text format's `regcheck:` prefix).
pub const COMPONENT: &str = "regcheck";

/// What [`finding`] needs to describe one finding.
pub struct FindingRecord<'a> {
    pub call: &'a str,
    pub args: &'a str,
    pub finding: &'a Finding,
    pub action: Action,
    pub outcome: Outcome,
    pub message: &'a super::layout::Message,
    /// Why the finding was not applied at its severity, when it was not.
    pub why: Option<crate::rules::decision::Why>,
    pub sites: &'a [Site],
    /// This is the last message of the rule (`REGCHECK_MAX_REPEATS`).
    pub last_report: bool,
    /// A ready suppression entry for this finding's call site (docs/usage.md).
    pub suppression: &'a str,
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn tid() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

fn header(kind: &str, with_tid: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("schema".into(), json!(SCHEMA));
    m.insert("type".into(), json!(kind));
    m.insert("component".into(), json!(COMPONENT));
    m.insert("time".into(), json!(now()));
    m.insert("pid".into(), json!(std::process::id()));
    if with_tid {
        m.insert("tid".into(), json!(tid()));
    }
    m
}

/// One frame as JSON: `function`, `file`, `line` (null when unknown), `object`, `address`
/// and `offset` (hexadecimal strings), `text` (the sanitizer-style form).
pub fn site(s: &Site) -> Value {
    json!({
        "function": s.function,
        "file": s.file,
        "line": s.line,
        "object": s.object,
        "address": format!("0x{:x}", s.address),
        "offset": format!("0x{:x}", s.offset),
        "text": s.text(),
    })
}

/// A `finding` line.
pub fn finding(r: &FindingRecord<'_>) -> String {
    let mut m = header("finding", true);
    let info = r.finding.rule.info();
    let (outcome, forwarded, returned, would_return) = match r.outcome {
        Outcome::Rejected(c) => ("rejected", false, Some(c), None),
        Outcome::ReportOnly(c) => ("report-only", true, None, Some(c)),
        Outcome::Forwarded => ("forwarded", true, None, None),
        Outcome::Refused(c) => ("vendor-refused", true, Some(c), None),
        Outcome::DryRun => ("dry-run", false, None, None),
    };
    m.insert("rule".into(), json!(info.name));
    m.insert("rule_id".into(), json!(r.finding.rule as u32));
    m.insert("action".into(), json!(r.action.as_str()));
    m.insert("outcome".into(), json!(outcome));
    m.insert("forwarded".into(), json!(forwarded));
    m.insert("returned".into(), json!(returned));
    m.insert("returned_name".into(), json!(returned.map(crate::codes::name)));
    m.insert("would_return".into(), json!(would_return));
    m.insert(
        "call".into(),
        json!({ "function": r.call, "args": parse_args(r.args), "text": format!("{}({})", r.call, r.args) }),
    );
    m.insert("argument".into(), json!(r.finding.arg));
    m.insert("problem".into(), json!(r.finding.problem));
    m.insert("fix".into(), json!(r.finding.fix));
    m.insert("message".into(), json!(r.message.text(&[])));
    m.insert("headline".into(), json!(r.message.head));
    m.insert("why".into(), json!(r.why.map(|w| w.text(r.finding.reject_code()))));
    m.insert("evidence".into(), json!(super::layout::evidence(r.finding, r.why)));
    m.insert("explain".into(), json!(format!("regcheck explain {}", info.name)));
    m.insert("doc".into(), json!(super::layout::doc_anchor(r.finding.rule)));
    m.insert("suppression".into(), json!(r.suppression));
    m.insert("call_site".into(), r.sites.first().map_or(Value::Null, site));
    m.insert("stack".into(), Value::Array(r.sites.iter().map(site).collect()));
    m.insert("last_report".into(), json!(r.last_report));
    Value::Object(m).to_string()
}

/// A `message` line: anything regcheck logs that is not a finding (settings, detected
/// environment, internal failures).
pub fn message(level: &str, text: &str) -> String {
    let mut m = header("message", true);
    m.insert("level".into(), json!(level));
    m.insert("message".into(), json!(text));
    Value::Object(m).to_string()
}

/// The `summary` line written at exit: per-rule counts (`findings`), `errors`, the totals
/// by severity (`severity`) and by what became of the findings (`outcomes`), the (rule, call
/// site) groups most frequent first (`groups`), the suppressions that matched nothing
/// (`unused_suppressions`) and the host registrations never unregistered.
pub fn summary(live_host_registrations: usize) -> String {
    let mut m = header("summary", false);
    let findings: Map<String, Value> =
        super::counts().into_iter().map(|(id, n)| (CATALOGUE[id.index()].name.to_string(), json!(n))).collect();
    m.insert("findings".into(), Value::Object(findings));
    m.insert("errors".into(), json!(super::error_count()));
    let s = super::summary::snapshot();
    m.insert("headline".into(), json!(s.headline()));
    m.insert(
        "severity".into(),
        json!({ "error": s.by_action[Action::Error as usize], "warning": s.by_action[Action::Warn as usize], "info": s.by_action[Action::Info as usize] }),
    );
    let fates = [
        super::summary::Fate::Rejected,
        super::summary::Fate::Forwarded,
        super::summary::Fate::Suppressed,
        super::summary::Fate::DryRun,
    ];
    m.insert(
        "outcomes".into(),
        Value::Object(fates.iter().map(|f| (f.as_str().to_string(), json!(s.by_fate[*f as usize]))).collect()),
    );
    let groups: Vec<Value> = s
        .groups
        .iter()
        .map(|g| {
            json!({
                "rule": g.rule.name(),
                "severity": super::summary::severity(g),
                "count": g.count,
                "logged": g.logged,
                "call_site": g.site().as_ref().map_or(Value::Null, site),
            })
        })
        .collect();
    m.insert("groups".into(), Value::Array(groups));
    m.insert("unused_suppressions".into(), json!(super::suppress::unused()));
    m.insert("live_host_registrations".into(), json!(live_host_registrations));
    Value::Object(m).to_string()
}

/// The front end's argument text (`ptr=0x1000, size=4096, flag=0x2 (MAPPED)`,
/// `mem={addr=0x1000, len=4096}, type=host`) as an object of strings; a `{...}` value
/// becomes a nested object and a quoted value its string. Text that is not `name=value`
/// lands under `"_"`.
pub fn parse_args(text: &str) -> Value {
    let mut m = Map::new();
    for item in split_top(text) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() && !k.contains(['{', '(', '"', ' ']) => {
                m.insert(k.trim().to_string(), value(v.trim()));
            }
            _ => {
                m.insert("_".into(), json!(item));
            }
        }
    }
    Value::Object(m)
}

fn value(v: &str) -> Value {
    if let Some(inner) = v.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        return parse_args(inner);
    }
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        if let Ok(Value::String(s)) = serde_json::from_str::<Value>(v) {
            return json!(s);
        }
    }
    json!(v)
}

/// Split on commas outside brackets and quotes.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in text.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            ',' if depth <= 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleId;

    #[test]
    fn arguments_become_objects() {
        assert_eq!(
            parse_args("ptr=0x1010, size=4096, flag=0x2 (MAPPED)"),
            json!({"ptr": "0x1010", "size": "4096", "flag": "0x2 (MAPPED)"})
        );
        assert_eq!(
            parse_args("mem_tag=\"kv, \\\"x\\\"\", mem={type=host, addr=0x1000, size=1}"),
            json!({"mem_tag": "kv, \"x\"", "mem": {"type": "host", "addr": "0x1000", "size": "1"}})
        );
        assert_eq!(
            parse_args("remote_engine=\"b\", op_descs=[2 op(s)]"),
            json!({"remote_engine": "b", "op_descs": "[2 op(s)]"})
        );
        assert_eq!(parse_args(""), json!({}));
        assert_eq!(parse_args("odd text"), json!({"_": "odd text"}));
    }

    #[test]
    fn finding_line_has_the_documented_fields() {
        let f = Finding::new(RuleId::AclHostregAlign, "ptr", "0x1010 is not aligned", "use posix_memalign");
        let sites = [Site {
            address: 0x1234,
            function: Some("register_buffers".into()),
            file: Some("/src/kv_pool.c".into()),
            line: Some(118),
            object: Some("/app".into()),
            offset: 0x234,
        }];
        let line = finding(&FindingRecord {
            call: "aclrtHostRegisterV2",
            args: "ptr=0x1010, size=4096, flag=0x2 (MAPPED)",
            finding: &f,
            action: Action::Error,
            outcome: Outcome::Rejected(100000),
            message: &crate::report::layout::message("aclrtHostRegisterV2", "", &f, Outcome::Rejected(100000), None),
            why: None,
            sites: &sites,
            last_report: false,
            suppression: "{}",
        });
        assert!(!line.contains('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["type"], "finding");
        assert_eq!(v["component"], "regcheck");
        assert_eq!(v["rule"], "ACL-HOSTREG-ALIGN");
        assert_eq!(v["rule_id"], 4);
        assert_eq!(v["action"], "error");
        assert_eq!(v["outcome"], "rejected");
        assert_eq!(v["forwarded"], false);
        assert_eq!(v["returned"], 100000);
        assert_eq!(v["returned_name"], "ACL_ERROR_INVALID_PARAM");
        assert_eq!(v["call"]["function"], "aclrtHostRegisterV2");
        assert_eq!(v["call"]["args"]["size"], "4096");
        assert_eq!(v["call_site"]["function"], "register_buffers");
        assert_eq!(v["call_site"]["line"], 118);
        assert_eq!(v["call_site"]["text"], "register_buffers (kv_pool.c:118)");
        assert_eq!(v["stack"].as_array().unwrap().len(), 1);
        for key in [
            "time",
            "pid",
            "tid",
            "problem",
            "fix",
            "message",
            "argument",
            "would_return",
            "last_report",
            "headline",
            "why",
            "evidence",
            "explain",
            "doc",
            "suppression",
        ] {
            assert!(v.get(key).is_some(), "{key} missing");
        }
        assert!(v["time"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn message_and_summary_lines() {
        let v: Value = serde_json::from_str(&message("warning", "a \"quoted\"\nline")).unwrap();
        assert_eq!(v["type"], "message");
        assert_eq!(v["component"], "regcheck");
        assert_eq!(v["level"], "warning");
        assert_eq!(v["message"], "a \"quoted\"\nline");
        let v: Value = serde_json::from_str(&summary(2)).unwrap();
        assert_eq!(v["type"], "summary");
        assert_eq!(v["component"], "regcheck");
        assert_eq!(v["live_host_registrations"], 2);
        assert!(v["findings"].is_object());
        assert!(v["errors"].is_u64());
        assert!(v["groups"].is_array() && v["outcomes"]["suppressed"].is_u64() && v["severity"]["error"].is_u64());
    }
}
