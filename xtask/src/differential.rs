//! `cargo xtask differential`: the differential test (tests/differential.rs,
//! `testkit::differential`) over more seeds and longer sequences than the suite's.
//!
//! `--seeds N` (default 16) seeds from `--first S` (default 0; seeds' low three bits pick the
//! environment, so eight consecutive seeds cover every one), or `--seed S` for one; `--calls M`
//! steps each (default 3000); `--shrink K` runs at most spent shrinking each failure (default
//! 200). One line per seed, then its failures' shrunk traces; exits 1 when any seed failed.
//! `--print` prints the sequences instead (driver line and readable call, step by step).

use testkit::differential::{check_seed, generate, Limits};

use crate::util::Result;

fn number(flag: &str, value: Option<&String>) -> Result<u64> {
    let v = value.ok_or_else(|| format!("{flag} needs a number"))?;
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    parsed.map_err(|_| format!("{flag}: `{v}` is not a number"))
}

pub fn run(args: &[String]) -> Result<i32> {
    let (mut seeds, mut first, mut calls, mut shrink) = (16u64, 0u64, 3000u64, 200u64);
    let mut print = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seeds" => seeds = number(a, it.next())?,
            "--first" => first = number(a, it.next())?,
            "--seed" => {
                first = number(a, it.next())?;
                seeds = 1;
            }
            "--calls" => calls = number(a, it.next())?,
            "--shrink" => shrink = number(a, it.next())?,
            "--print" => print = true,
            other => return Err(format!("unknown option `{other}` for `differential`; see `cargo xtask help`")),
        }
    }
    let limits =
        Limits { calls: calls as usize, shrink_runs: shrink as usize, shrink_seconds: 300, shrunk_per_door: 8 };
    if print {
        for seed in first..first.saturating_add(seeds) {
            println!("# seed {seed:#x}");
            for (i, st) in generate(seed, calls as usize).iter().enumerate() {
                println!("{i:>5} {:<40} {}", st.line, st.text);
            }
        }
        return Ok(0);
    }
    let mut failures = Vec::new();
    for seed in first..first.saturating_add(seeds) {
        let r = check_seed(seed, limits);
        let verdicts: Vec<String> = r.violations.iter().map(|v| v.describe()).collect();
        println!(
            "seed {seed:#x} ({}): {} steps, {} succeed bare, {} crash bare, {:.1?}: {}",
            r.env,
            r.steps,
            r.bare_successes,
            r.bare_crashes,
            r.elapsed,
            if verdicts.is_empty() { "ok".to_string() } else { verdicts.join("; ") }
        );
        for f in &r.failures {
            println!("\n{f}\n");
        }
        failures.extend(r.failures);
    }
    println!("\n{} seed(s), {} failure(s)", seeds, failures.len());
    Ok(if failures.is_empty() { 0 } else { 1 })
}
