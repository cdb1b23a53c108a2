//! `regcheck rules [--json]` and `regcheck explain RULE-ID`: the catalogue the library
//! enforces, with each rule's action under the settings in the environment.

use std::process::ExitCode;

use clap::Args;
use regcheck::config::{Config, Mode};
use regcheck::rules::{examples, Action, Family, RuleId, RuleInfo, CATALOGUE, FIELD_REPORTS};
use serde::Serialize;

#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Print one JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Use these per-rule actions instead of $REGCHECK_RULES, e.g. 'ACL-HOSTREG-*=warn'.
    #[arg(long, value_name = "SPEC")]
    pub rules: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// The rule's ID, e.g. ACL-HOSTREG-ALIGN (case-insensitive), or its number.
    #[arg(value_name = "RULE-ID")]
    pub rule: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The settings in force: `REGCHECK_*` from the environment, `REGCHECK_RULES` replaced when
/// asked. Warnings (misspelt names, invalid values) go to stderr.
pub fn settings(rules_override: Option<&str>) -> Config {
    let mut vars: Vec<(String, String)> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    if let Some(spec) = rules_override {
        vars.retain(|(k, _)| k != "REGCHECK_RULES");
        vars.push(("REGCHECK_RULES".into(), spec.into()));
    }
    let (config, warnings) = Config::from_vars(vars);
    for w in warnings {
        eprintln!("regcheck: warning: {w}");
    }
    config
}

#[derive(Debug, Serialize)]
pub struct RuleJson {
    pub id: u32,
    pub name: &'static str,
    pub family: &'static str,
    pub default: &'static str,
    /// The action in force under the settings.
    pub action: &'static str,
    /// The vendor code returned when the rule rejects (`null`: it does not reject by default;
    /// raised to `error`, it returns `reject_code`).
    pub code: Option<i64>,
    pub reject_code: i64,
    pub reject_code_name: &'static str,
    pub calls: &'static str,
    pub summary: &'static str,
    pub fix: &'static str,
    pub source: &'static str,
    pub field_reports: Vec<FieldReport>,
    pub example: Option<ExampleJson>,
}

#[derive(Debug, Serialize)]
pub struct FieldReport {
    pub id: &'static str,
    pub text: &'static str,
}

#[derive(Debug, Serialize)]
pub struct ExampleJson {
    pub wrong: &'static str,
    pub right: &'static str,
}

fn family_name(f: Family) -> &'static str {
    match f {
        Family::Acl => "acl",
        Family::Hixl => "hixl",
        Family::Adxl => "adxl",
        Family::Datadist => "datadist",
    }
}

/// The field reports a rule's source cites ("field failure A1", "field failures (...)").
pub fn field_reports(source: &str) -> Vec<FieldReport> {
    FIELD_REPORTS
        .iter()
        .filter(|(id, _)| {
            source.match_indices("field failure").any(|(i, _)| {
                let rest = &source[i..];
                let rest = rest.trim_start_matches("field failures").trim_start_matches("field failure").trim_start();
                let cited: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
                cited == *id
            })
        })
        .map(|(id, text)| FieldReport { id, text })
        .collect()
}

pub fn rule_json(r: &RuleInfo, action: Action) -> RuleJson {
    RuleJson {
        id: r.id as u32,
        name: r.name,
        family: family_name(r.family),
        default: r.default.as_str(),
        action: action.as_str(),
        code: r.code,
        reject_code: r.reject_code(),
        reject_code_name: regcheck::codes::name(r.reject_code()),
        calls: r.calls,
        summary: r.summary,
        fix: r.fix,
        source: r.source,
        field_reports: field_reports(r.source),
        example: examples::of(r.id).map(|e| ExampleJson { wrong: e.wrong, right: e.right }),
    }
}

#[derive(Debug, Serialize)]
struct Catalogue {
    /// REGCHECK_MODE: in `report` mode no rule rejects, whatever its action.
    mode: &'static str,
    rules: Vec<RuleJson>,
}

/// `regcheck rules`.
pub fn list(a: RulesArgs) -> ExitCode {
    let config = settings(a.rules.as_deref());
    let actions = config.actions();
    if a.json {
        let doc = Catalogue {
            mode: config.mode.as_str(),
            rules: CATALOGUE.iter().map(|r| rule_json(r, actions[r.id.index()])).collect(),
        };
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    println!("{}", mode_line(config.mode));
    println!("{:<32} {:<6} {:<7} {:<8} checks", "ID", "#", "action", "code");
    for r in CATALOGUE {
        let action = actions[r.id.index()];
        let shown = if action == r.default { action.to_string() } else { format!("{action}*") };
        let code = r.code.map_or("-".to_string(), |c| c.to_string());
        println!("{:<32} {:<6} {:<7} {:<8} {}", r.name, r.id as u32, shown, code, r.summary);
    }
    if CATALOGUE.iter().any(|r| actions[r.id.index()] != r.default) {
        println!("\n* changed from the default by REGCHECK_RULES");
    }
    println!("\n`regcheck explain RULE-ID` shows a rule's fix, source and example.");
    ExitCode::SUCCESS
}

fn mode_line(mode: Mode) -> String {
    match mode {
        Mode::Enforce => "mode: enforce (error rules reject the call)".to_string(),
        Mode::Report => "mode: report (REGCHECK_MODE=report: nothing is rejected; error rules are logged)".to_string(),
        Mode::Off => "mode: off (REGCHECK_MODE=off: nothing is checked)".to_string(),
    }
}

/// The rule named by `query`: its ID (case-insensitive) or its number.
pub fn find(query: &str) -> Option<RuleId> {
    RuleId::from_name(query).or_else(|| {
        let n: u32 = query.trim().trim_start_matches('#').parse().ok()?;
        RuleId::ALL.iter().copied().find(|id| *id as u32 == n)
    })
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}")).collect::<Vec<_>>().join("\n")
}

/// `regcheck explain RULE-ID`.
pub fn explain(a: ExplainArgs) -> ExitCode {
    let Some(id) = find(&a.rule) else {
        let q = a.rule.to_ascii_uppercase();
        let near: Vec<&str> =
            CATALOGUE.iter().map(|r| r.name).filter(|n| n.contains(q.trim_end_matches('*')) || q.contains(n)).collect();
        let hint = if near.is_empty() { String::new() } else { format!("; did you mean {}?", near.join(", ")) };
        eprintln!("regcheck: no rule {:?}{hint} (`regcheck rules` lists them)", a.rule);
        return ExitCode::from(2);
    };
    let config = settings(None);
    let action = config.actions()[id.index()];
    let r = id.info();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rule_json(r, action)).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    let family = match r.family {
        Family::Acl => "ACL runtime",
        Family::Hixl => "HIXL",
        Family::Adxl => "ADXL",
        Family::Datadist => "LLM-DataDist",
    };
    println!("{} (#{}, {family})", r.name, r.id as u32);
    println!();
    println!("  checks:  {}", r.summary);
    println!("  calls:   {}", r.calls);
    let changed =
        if action == r.default { String::new() } else { format!(" (default {}; set by REGCHECK_RULES)", r.default) };
    println!("  action:  {action}{changed}");
    let code = r.reject_code();
    let when = if r.code.is_some() { "when it rejects" } else { "if raised to error" };
    println!(
        "  returns: {code} {} {when}; {}",
        regcheck::codes::name(code),
        match config.mode {
            Mode::Enforce => "the vendor is not called",
            Mode::Report => "in report mode nothing is rejected",
            Mode::Off => "REGCHECK_MODE=off checks nothing",
        }
    );
    println!("  fix:     {}", r.fix);
    println!("  source:  {}", r.source);
    for f in field_reports(r.source) {
        println!("           {}: {}", f.id, f.text);
    }
    println!("  read:    {}", crate::docs::rule_page(r.name));
    if let Some(e) = examples::of(id) {
        println!();
        println!("  wrong:");
        println!("{}", indent(e.wrong, "      "));
        println!("  right:");
        println!("{}", indent(e.right, "      "));
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_rules_by_name_and_number() {
        assert_eq!(find("acl-hostreg-align"), Some(RuleId::AclHostregAlign));
        assert_eq!(find("4"), Some(RuleId::AclHostregAlign));
        assert_eq!(find("#101"), Some(RuleId::HixlNotInitialized));
        assert_eq!(find("ACL-NOPE"), None);
    }

    #[test]
    fn expands_cited_field_reports() {
        let ids: Vec<&str> = field_reports(RuleId::AclHostregAlign.info().source).iter().map(|f| f.id).collect();
        assert_eq!(ids, ["A1"]);
        assert!(field_reports("regcheck (an impossible range)").is_empty());
        let ids: Vec<&str> = field_reports("field failure A1; field failures A10").iter().map(|f| f.id).collect();
        assert_eq!(ids, ["A1", "A10"]);
    }
}
