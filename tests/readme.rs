//! The rule of the house: every promise of the README and the guide names the test that holds
//! it. Every test the promise table of docs/testing.md ("What the tests promise") names
//! (`path/to/file.rs::test_name`) must exist as a `#[test]` function of that file. And the rules
//! docs/audit.md says need `LD_AUDIT` are exactly those that do. (Links, anchors and commands
//! of the documentation: tests/docs.rs.)

use std::path::Path;

/// The `` `file.rs::name` `` references in `text`.
fn references(text: &str) -> Vec<(String, String)> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|r| r.split_once(".rs::").map(|(file, name)| (format!("{file}.rs"), name.to_string())))
        .collect()
}

/// True when `source` has `fn name(` as a `#[test]` (in the attributes and doc comments
/// right above it).
fn has_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().map(str::trim).collect();
    lines.iter().enumerate().any(|(i, l)| {
        l.starts_with(&format!("fn {name}("))
            && lines[..i]
                .iter()
                .rev()
                .take_while(|a| a.starts_with("#[") || a.starts_with("///"))
                .any(|a| *a == "#[test]")
    })
}

#[test]
fn every_test_the_promise_table_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let testing = std::fs::read_to_string(root.join("docs/testing.md")).unwrap();
    let start = testing.find("\n## What the tests promise\n").expect("docs/testing.md has the promise table");
    let section = &testing[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let refs = references(section);
    assert!(refs.len() >= 40, "only {} tests named in docs/testing.md's promise table", refs.len());
    let mut missing = Vec::new();
    for (file, name) in &refs {
        let source = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        if !has_test(&source, name) {
            missing.push(format!("{file}::{name}"));
        }
    }
    assert!(missing.is_empty(), "docs/testing.md names tests that do not exist: {missing:#?}");
}

#[test]
fn the_reference_parser_finds_and_refuses() {
    let refs = references("| x | `tests/a.rs::one`, `src/b/c.rs::two`, `not a test`, `x::y` |");
    assert_eq!(refs, vec![("tests/a.rs".into(), "one".into()), ("src/b/c.rs".into(), "two".into())]);
    let src = "#[test]\nfn one() {}\nfn two() {}\n";
    assert!(has_test(src, "one"));
    assert!(!has_test(src, "two"));
    assert!(!has_test(src, "three"));
}

/// docs/audit.md's "When regcheck can be sure" names every rule that judges by records of ACL
/// calls: the ones that reject only under `LD_AUDIT`.
#[test]
fn the_rules_that_need_ld_audit_are_named() {
    let audit = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/audit.md")).unwrap();
    let start = audit.find("## When regcheck can be sure").expect("the section");
    let section = &audit[start..];
    let section = &section[..section[4..].find("\n#").map_or(section.len(), |e| e + 4)];
    for r in regcheck::rules::CATALOGUE {
        let named = section.contains(&format!("`{}`", r.name));
        let needs = matches!(r.basis, regcheck::rules::Basis::Records { of: regcheck::rules::Records::Acl, .. });
        assert_eq!(named, needs, "{}: named {named}, needs LD_AUDIT {needs}", r.name);
    }
}
