//! Generated-input tests of the parsers regcheck feeds with text it does not control: rule
//! specs and other `REGCHECK_*` values, the driver's `version.info`, kernel releases, the
//! memory-map text. For any input: no panic; for well-formed input: the value written is the
//! value read back. Fixed seed and case counts, so a run is deterministic and short
//! (`CASES` per property).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

use regcheck::config::{parse_bytes, Config as RcConfig, Mode};
use regcheck::platform::hdk::{parse_version_info, HdkVersion};
use regcheck::platform::kernel::KernelVersion;
use regcheck::platform::memmap::{parse_maps, parse_maps_line, parse_smaps};
use regcheck::rules::{self, Action, CATALOGUE};

/// Cases per property.
const CASES: u32 = 512;

fn config() -> Config {
    Config {
        cases: CASES,
        rng_seed: RngSeed::Fixed(0x7265_6763_6865_636b),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Text drawn from the characters these parsers treat specially, and any other.
fn texty() -> impl Strategy<Value = String> {
    prop_oneof!["[-0-9a-zA-Z.=,*: \t\n\r\"'_/\\[\\]]{0,64}", any::<String>(), "[0-9.]{0,24}",]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_environment_value_is_parsed_or_warned_about(name in prop::sample::select(
        regcheck::config::VARIABLES.iter().map(|(n, _)| *n).collect::<Vec<_>>()), value in texty()) {
        let (c, warnings) = RcConfig::from_vars([(name, value.as_str())]);
        // Whatever was read, the result is usable.
        prop_assert_eq!(c.actions().len(), CATALOGUE.len());
        for w in &warnings {
            prop_assert!(!w.is_empty());
        }
        let (_, secure) = RcConfig::from_vars_secure([(name, value.as_str())], true);
        prop_assert!(secure.len() <= 1);
    }

    #[test]
    fn rule_specs(items in prop::collection::vec((
        prop_oneof![
            prop::sample::select(CATALOGUE.iter().map(|r| r.name.to_string()).collect::<Vec<_>>()),
            Just("*".to_string()), Just("ACL-*".to_string()), Just("HIXL-REG-*".to_string()), "[A-Z-]{0,12}\\*?",
        ],
        prop::sample::select(vec!["error", "warn", "info", "off", "WARNING", "loud", ""]),
    ), 0..6)) {
        let spec = items.iter().map(|(p, a)| format!("{p}={a}")).collect::<Vec<_>>().join(",");
        let (c, warnings) = RcConfig::from_vars([("REGCHECK_RULES", spec.as_str())]);
        // The model: later items win; an unknown action or a pattern matching nothing is
        // ignored with a warning.
        let mut want: Vec<Action> = CATALOGUE.iter().map(|r| r.default).collect();
        let mut expected_warnings = 0;
        for (pattern, action) in &items {
            let Some(a) = Action::parse(action) else { expected_warnings += 1; continue };
            let ids = rules::matching(pattern);
            if ids.is_empty() {
                expected_warnings += 1;
            }
            for id in ids {
                want[id.index()] = a;
            }
        }
        prop_assert_eq!(c.actions(), want, "{}", spec);
        prop_assert_eq!(warnings.len(), expected_warnings, "{:?}", warnings);
    }

    #[test]
    fn byte_sizes(n in 0u64..(1 << 20), unit in prop::sample::select(vec![("", 0), ("k", 10), ("KiB", 10), ("m", 20), ("GB", 30), ("g", 30), ("T", 40), ("tib", 40)]), junk in texty()) {
        prop_assert_eq!(parse_bytes(&format!("{n}{}", unit.0)), Some(n << unit.1));
        let _ = parse_bytes(&junk);
        prop_assert_eq!(parse_bytes(&format!("{}T", u64::MAX)), None, "overflow is an error");
    }

    #[test]
    fn modes(s in texty()) {
        if let Some(m) = Mode::parse(&s) {
            prop_assert_eq!(Mode::parse(m.as_str()), Some(m));
        }
    }

    #[test]
    fn kernel_releases(major in 0u32..100, minor in 0u32..1000, patch in 0u32..100_000, suffix in "(-[a-z0-9._+]{0,20})?", junk in texty()) {
        let v = KernelVersion::parse(&format!("{major}.{minor}.{patch}{suffix}"));
        prop_assert_eq!(v, Some(KernelVersion::new(major, minor, patch)));
        prop_assert_eq!(KernelVersion::parse(&format!("{major}.{minor}")), Some(KernelVersion::new(major, minor, 0)));
        if let Some(v) = KernelVersion::parse(&junk) {
            prop_assert_eq!(KernelVersion::parse(&v.to_string()), Some(v));
        }
    }

    #[test]
    fn driver_versions(major in 0u32..100, minor in 0u32..100, stage in prop::sample::select(vec!["", "rc", "alpha", "beta", "RC"]), n in 0u32..1000, build in 0u32..50, junk in texty()) {
        let text = if stage.is_empty() { format!("{major}.{minor}.{n}") } else { format!("{major}.{minor}.{stage}{n}") };
        let text = if build > 0 { format!("{text}.{build}") } else { text };
        let v = HdkVersion::parse(&text);
        prop_assert!(v.is_some(), "{} parses", text);
        let v = v.unwrap();
        prop_assert_eq!(HdkVersion::parse(&v.to_string()), Some(v), "canonical text reads back");
        prop_assert_eq!(parse_version_info(&format!("package_version=1\r\nVersion={text}\r\n")), Some(text.clone()));
        if let Some(w) = HdkVersion::parse(&junk) {
            prop_assert_eq!(HdkVersion::parse(&w.to_string()), Some(w));
        }
        let _ = parse_version_info(&junk);
    }

    #[test]
    fn memory_map_text(lines in prop::collection::vec((any::<u32>(), 1u32..1 << 20, "[r-][w-][x-][ps]", prop_oneof![Just(String::new()), Just("[heap]".to_string()), Just("[stack]".to_string()), "/[a-z/ ._-]{1,30}", Just("/dev/shm/x (deleted)".to_string())]), 0..20), junk in texty()) {
        let mut start = 0x1000u64;
        let mut text = String::new();
        let mut want = Vec::new();
        for (gap, len, perms, path) in &lines {
            let s = start + u64::from(*gap % 0x10000) * 4096;
            let e = s + u64::from(*len) * 4096;
            text.push_str(&format!("{s:x}-{e:x} {perms} 00000000 00:00 0          {path}\n"));
            want.push((s as usize, e as usize, perms.starts_with('r'), perms.as_bytes()[1] == b'w'));
            start = e;
        }
        let got: Vec<_> = parse_maps(&text).into_iter().map(|m| (m.start, m.end, m.readable, m.writable)).collect();
        prop_assert_eq!(got, want);
        let _ = parse_maps(&junk);
        let _ = parse_smaps(&junk);
        let _ = parse_smaps(&format!("{text}VmFlags: rd wr lo\n{junk}"));
        for l in junk.lines() {
            let _ = parse_maps_line(l);
        }
    }
}
