//! The invariants, checked step by step between the bare run and a run under regcheck, and
//! the shrinking of a failing script.

use std::time::Instant;

use super::exec::{self, Answer, Door, Run};
use super::gen::Step;
use super::Env;

/// The driver's opaque error (`ACL_ERROR_RT_DRV_INTERNAL_ERROR`): regcheck names the reason
/// with a code of its own instead (the catalogue's rules do it on purpose).
const DRIVER_INTERNAL: i64 = 507899;

/// A broken invariant at one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The step's index in the script.
    pub step: usize,
    /// The door under which the invariant broke.
    pub door: Door,
    /// What kind: the same kind at the same op is "the same failure" while shrinking.
    pub kind: &'static str,
    /// The step's op.
    pub op: String,
    /// The bare answer.
    pub bare: Option<Answer>,
    /// The answer under regcheck.
    pub got: Option<Answer>,
}

impl Violation {
    /// One sentence.
    pub fn describe(&self) -> String {
        let show = |a: Option<Answer>| a.map(|a| a.to_string()).unwrap_or_else(|| "-".into());
        format!(
            "step {}: {} under {}: bare {}, under regcheck {}",
            self.step,
            self.kind,
            self.door.name(),
            show(self.bare),
            show(self.got)
        )
    }
}

/// Every step where `run` (under regcheck through `door`) breaks an invariant against `bare`,
/// in order; empty when none does. Comparison goes on past a step whose answers differ (both
/// runs go on from it) and stops where either run ended.
pub fn compare(script: &[Step], bare: &Run, run: &Run, door: Door) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut v = |step: usize, kind, bare: Option<Answer>, got: Option<Answer>| {
        found.push(Violation { step, door, kind, op: script[step].op().to_string(), bare, got })
    };
    for (i, b) in bare.answers.iter().copied().enumerate().take(script.len()) {
        let Some(o) = run.answers.get(i).copied() else {
            v(i, "regcheck's run ended early", Some(b), None);
            break;
        };
        match (b, o) {
            (Answer::Hang | Answer::Crash(14), _) => {
                v(i, "the bare run hangs", Some(b), Some(o));
                break;
            }
            (_, Answer::Hang) => {
                v(i, "hangs under regcheck", Some(b), Some(o));
                break;
            }
            (Answer::Crash(_), Answer::Crash(_)) if door == Door::Preload && script[i].invisible => {
                // a call LD_PRELOAD alone cannot see: probed in both runs, not regcheck's to stop
            }
            (_, Answer::Crash(_)) => {
                v(i, "crashes under regcheck", Some(b), Some(o));
                if i + 1 == run.answers.len() && !run.finished {
                    break; // not a probed step: the run ended there
                }
            }
            (Answer::Crash(_), Answer::Code { rc: 0, .. }) => {
                v(i, "crashes bare, succeeds under regcheck", Some(b), Some(o))
            }
            (Answer::Crash(_), Answer::Code { .. }) => {
                if i + 1 == bare.answers.len() && !bare.finished {
                    break; // the bare run itself ended there (not a probed step): nothing to compare after
                }
            }
            (Answer::Code { rc: 0, .. }, Answer::Code { rc: 0, .. }) => {}
            (Answer::Code { rc: 0, .. }, Answer::Code { fwd: 0, .. }) => {
                v(i, "false rejection (succeeds bare)", Some(b), Some(o))
            }
            (Answer::Code { rc: 0, .. }, Answer::Code { .. }) => {
                v(i, "succeeds bare, fails under regcheck though forwarded", Some(b), Some(o))
            }
            (Answer::Code { rc: br, .. }, Answer::Code { rc: or, fwd }) => {
                if or == 0 {
                    v(i, "fails bare, succeeds under regcheck", Some(b), Some(o));
                } else if or != br && fwd == 0 && br != DRIVER_INTERNAL {
                    v(i, "rejected with another code than the vendor's", Some(b), Some(o));
                } else if or != br && fwd > 0 {
                    v(i, "forwarded, answered otherwise than bare", Some(b), Some(o));
                }
            }
        }
    }
    if bare.finished && !run.finished && run.answers.len() >= script.len() && !script.is_empty() {
        v(script.len() - 1, "regcheck's run ended early", None, None);
    }
    found
}

/// The violations of one kind at one op count as one failure.
pub fn same(a: &Violation, b: &Violation) -> bool {
    a.kind == b.kind && a.op == b.op && a.door == b.door
}

/// Runs `script` bare and through `door`; the first violation like `want`, with both runs.
fn still_fails(env: &Env, script: &[Step], want: &Violation) -> Option<(Violation, Run, Run)> {
    let bare = exec::run(Door::Bare, env, script);
    let run = exec::run(want.door, env, script);
    let v = compare(script, &bare, &run, want.door).into_iter().find(|v| same(v, want))?;
    Some((v, bare, run))
}

/// A smaller script that fails the same way: cut after the failing step, then drop runs of
/// steps (halves, quarters, ... single steps) while it still fails, within `budget` runs
/// (each a bare run and one under regcheck) and `seconds`.
pub fn shrink(
    env: &Env,
    script: &[Step],
    found: (Violation, Run, Run),
    budget: usize,
    seconds: u64,
) -> (Vec<Step>, (Violation, Run, Run)) {
    let start = Instant::now();
    let mut best: Vec<Step> = script[..=found.0.step].to_vec();
    let mut tries = 0;
    let Some(mut best_found) = still_fails(env, &best, &found.0) else {
        return (script.to_vec(), found);
    };
    let mut chunk = best.len().div_ceil(2);
    while chunk >= 1 {
        let mut at = 0;
        while at < best.len() {
            if tries >= budget || start.elapsed().as_secs() >= seconds {
                return (best, best_found);
            }
            let mut candidate = best.clone();
            let end = (at + chunk).min(candidate.len());
            candidate.drain(at..end);
            tries += 1;
            if candidate.is_empty() {
                at = end;
                continue;
            }
            match still_fails(env, &candidate, &best_found.0) {
                Some(f) => {
                    let cut = f.0.step + 1;
                    best = candidate[..cut.min(candidate.len())].to_vec();
                    best_found = f;
                }
                None => at += chunk,
            }
        }
        if chunk == 1 {
            break;
        }
        chunk = chunk.div_ceil(2).max(1);
        if chunk == 1 && best.len() > 200 {
            break; // single steps over a long script cost too much
        }
    }
    (best, best_found)
}

/// The steps with their answers bare and under regcheck, and regcheck's messages.
pub fn trace(script: &[Step], found: &(Violation, Run, Run)) -> String {
    let (v, bare, run) = found;
    let mut s = String::new();
    let width = script.iter().map(|st| st.text.len()).max().unwrap_or(0).min(90);
    for (i, st) in script.iter().enumerate() {
        let b = bare.answers.get(i).map(|a| a.to_string()).unwrap_or_else(|| "-".into());
        let o = run.answers.get(i).map(|a| a.to_string()).unwrap_or_else(|| "-".into());
        let mark = if i == v.step { "  <<<" } else { "" };
        s.push_str(&format!("  {i:>4} {:<width$}  bare {b:<18} {}: {o}{mark}\n", st.text, v.door.name()));
    }
    s.push_str("  script (driver lines):\n");
    for st in script {
        s.push_str(&format!("    {}\n", st.line));
    }
    let msgs: Vec<&str> = run.stderr.lines().filter(|l| l.contains("regcheck")).collect();
    if !msgs.is_empty() {
        s.push_str("  regcheck said:\n");
        for l in msgs.iter().rev().take(12).rev() {
            s.push_str(&format!("    {l}\n"));
        }
    }
    if !run.finished {
        s.push_str(&format!("  the run under regcheck ended: {}\n", run.ended));
    }
    s
}
