//! Running a script: the driver (tests/c/differential), bare on the simulator or under
//! regcheck, each step's answer as the driver printed it.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use super::gen::Step;
use super::Env;
use crate::{Link, Program};

/// How the driver meets regcheck. Through every door, a step that may crash is probed in a
/// forked child first, so that a crash (bare, or regcheck letting one through) ends only that
/// child and the runs stay comparable after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door {
    /// No regcheck.
    Bare,
    /// `LD_PRELOAD=libregcheck.so`.
    Preload,
    /// `regcheck run --audit`: LD_PRELOAD and the LD_AUDIT module.
    Audit,
}

impl Door {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Door::Bare => "bare",
            Door::Preload => "LD_PRELOAD",
            Door::Audit => "regcheck run --audit",
        }
    }
}

/// One step's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The call returned `rc`; the simulator received `fwd` calls of it.
    Code {
        /// The code returned.
        rc: i64,
        /// Calls of the function the simulator received (0: regcheck answered alone).
        fwd: u64,
    },
    /// The call crashed (the bare run's forked child, or the run itself), with this signal.
    Crash(i32),
    /// The run did not finish in time during this step.
    Hang,
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Code { rc, fwd: 0 } if *rc != 0 => write!(f, "{rc} (regcheck, not forwarded)"),
            Answer::Code { rc, .. } => write!(f, "{rc}"),
            Answer::Crash(6) => write!(f, "crash (SIGABRT)"),
            Answer::Crash(11) => write!(f, "crash (SIGSEGV)"),
            Answer::Crash(14) => write!(f, "hang (child's alarm)"),
            Answer::Crash(sig) => write!(f, "crash (signal {sig})"),
            Answer::Hang => write!(f, "hang"),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Run {
    /// The answers of the steps it reached; the last may be a crash or a hang that ended it.
    pub answers: Vec<Answer>,
    /// The run reached the script's end.
    pub finished: bool,
    /// How it ended, when it did not finish: exit status or signal.
    pub ended: String,
    /// Its stderr (regcheck's messages).
    pub stderr: String,
}

fn driver() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        Program::cxx(
            "differential",
            &[
                "tests/c/differential/main.cpp",
                "tests/c/differential/acl.cpp",
                "tests/c/differential/hixl.cpp",
                "tests/c/differential/hixl_cs.cpp",
            ],
        )
        .link(Link::Bare)
        .libs(&["cann_hixl", "ascendcl"])
        .flag("-ldl")
        .build()
    })
}

/// Builds the driver and regcheck (once per process).
pub fn prepare() {
    driver();
    crate::regcheck();
}

/// The time a run may take: generous, since six test sessions may share two cores.
fn timeout(steps: usize) -> Duration {
    Duration::from_secs(60 + steps as u64 / 50)
}

/// Runs `script` through `door` in `env`.
pub fn run(door: Door, env: &Env, script: &[Step]) -> Run {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tag = format!("{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
    let dir = crate::target_dir().join("differential");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let script_file = dir.join(format!("script-{tag}.txt"));
    let scratch = dir.join(format!("scratch-{tag}.bin"));
    let text: String = script.iter().map(|s| format!("{}{}\n", if s.may_crash { "!" } else { "" }, s.line)).collect();
    std::fs::write(&script_file, text).unwrap_or_else(|e| panic!("{}: {e}", script_file.display()));
    let exe = driver();
    let mut cmd = match door {
        Door::Audit => {
            let mut c = crate::command(crate::regcheck().cli);
            c.args(["run", "--audit", "--"]).arg(exe);
            c
        }
        _ => crate::command(exe),
    };
    cmd.arg(&scratch).arg(&script_file);
    clean_env(&mut cmd);
    if door == Door::Preload {
        cmd.env("LD_PRELOAD", crate::regcheck().shared);
    }
    for (k, v) in env.vars() {
        cmd.env(k, v);
    }
    let result = crate::output_within(&mut cmd, timeout(script.len()));
    let _ = std::fs::remove_file(&script_file);
    let _ = std::fs::remove_file(&scratch);
    match result {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let (mut answers, finished) = parse(&stdout);
            let ended = format!("{}", out.status);
            if !finished && answers.len() < script.len() {
                use std::os::unix::process::ExitStatusExt;
                answers.push(Answer::Crash(out.status.signal().unwrap_or(-1)));
            }
            Run { answers, finished, ended, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
        }
        Err(crate::RunError::TimedOut { stdout, stderr, .. }) => {
            let (mut answers, _) = parse(&stdout);
            answers.push(Answer::Hang);
            Run { answers, finished: false, ended: "timed out".into(), stderr }
        }
        Err(e) => panic!("differential driver: {e}"),
    }
}

fn clean_env(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if name == "LD_PRELOAD"
            || name == "LD_AUDIT"
            || name == "LD_LIBRARY_PATH"
            || name.starts_with("REGCHECK_")
            || name.starts_with("ACLSIM_")
        {
            cmd.env_remove(&k);
        }
    }
}

/// The answers, and whether the `end` line came.
fn parse(stdout: &str) -> (Vec<Answer>, bool) {
    let mut answers = Vec::new();
    for line in stdout.lines() {
        if line == "end" {
            return (answers, true);
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            [_, "crash", sig] => answers.push(Answer::Crash(sig.parse().unwrap_or(-1))),
            [_, rc, fwd] => {
                if let (Ok(rc), Ok(fwd)) = (rc.parse(), fwd.parse()) {
                    answers.push(Answer::Code { rc, fwd });
                }
            }
            _ => {}
        }
    }
    (answers, false)
}
