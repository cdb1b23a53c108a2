//! `cargo xtask demo`: the README's main job.
//!
//! Builds regcheck (release) and the simulator of the vendor libraries, compiles the demos of
//! `examples-c/` against the simulator's headers (bare: linked with the vendor library only),
//! then runs each twice on a simulated old kernel (`5.10.0-60.18.0.50.oe2203.aarch64`, where
//! registering pageable memory crashes the process):
//!
//! 1. bare: the vendor's own, cryptic codes and, at the end, the simulated crash;
//! 2. with `LD_PRELOAD=<target>/release/libregcheck.so` and its `LD_AUDIT` module
//!    (`libregcheck_audit.so`, as `regcheck run --audit` runs a program): regcheck's messages,
//!    no crash. The module makes regcheck's records whole, so the rules that judge by them
//!    reject too.
//!
//! Each run's output (stdout and stderr through one pipe, so in order) is shown as it comes and
//! tallied ([`tally`]): the calls that failed with a bare code (no finding of regcheck's since the
//! previous call), the crashes, and the findings that named the problem and the fix. The closing
//! summary puts those counts side by side, per demo, bare and under regcheck.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::artifacts::build_release;
use crate::util::{run_captured, shown, Result};

/// The kernel release both runs simulate (an openEuler 22.03 kernel: 5.10, the last release
/// on which registering pageable memory is not supported).
pub const KERNEL_RELEASE: &str = "5.10.0-60.18.0.50.oe2203.aarch64";

const RUN_TIMEOUT: Duration = Duration::from_secs(120);

struct Demo {
    /// Shown in the banners.
    title: &'static str,
    source: &'static str,
    exe: &'static str,
    cxx: bool,
    /// Simulator libraries, in link order.
    libs: &'static [&'static str],
    /// Arguments of both runs.
    args: &'static [&'static str],
    /// What to watch for in the bare run, and in the run under regcheck.
    bare_text: &'static [&'static str],
    checked_text: &'static [&'static str],
    /// Under the summary's counts, when they need a word.
    note: &'static str,
}

const DEMOS: &[Demo] = &[
    Demo {
        title: "ACL host registration demo",
        source: "examples-c/acl_demo.c",
        exe: "acl_demo",
        cxx: false,
        libs: &["ascendcl"],
        args: &[],
        bare_text: &[
            "The calls go straight to the vendor library (here: regcheck's simulator of it).",
            "Watch the error codes: a number, no explanation. The last step registers",
            "pageable memory on a 5.10 kernel: the driver does not support it, and the",
            "process dies.",
        ],
        checked_text: &[
            "Same binary, same simulated machine; regcheck is preloaded. Each bad call is",
            "rejected with a message naming the rule, the call, the argument, what is wrong",
            "and how to fix it; the vendor never sees it, and nothing crashes.",
        ],
        note: "",
    },
    Demo {
        title: "HIXL demo",
        source: "examples-c/hixl_demo.cpp",
        exe: "hixl_demo",
        cxx: true,
        libs: &["cann_hixl", "ascendcl"],
        args: &["--mistakes"],
        bare_text: &[
            "The everyday HIXL mistakes, straight to the vendor library (the simulator).",
            "Watch how many of them return SUCCESS: on real hardware they fail much later,",
            "at transfer time or on the peer, far from the call that caused them.",
        ],
        checked_text: &[
            "Same binary under regcheck: each mistake is rejected (or reported) where it",
            "happens, with the rule, the argument and the fix.",
        ],
        note: "",
    },
    Demo {
        title: "HIXL two-process demo",
        source: "examples-c/hixl_two_process.cpp",
        exe: "hixl_two_process",
        cxx: true,
        libs: &["cann_hixl", "ascendcl"],
        args: &[],
        bare_text: &[
            "Two processes: a server registers a buffer, a client links to it and reads it.",
            "Then the server registers a second buffer, after the link was made. The link",
            "never learns of it: the client's read fails, in the client, with a bare code,",
            "while the call that caused it happened in the server.",
        ],
        checked_text: &[
            "Same binary under regcheck: the server's late RegisterMem is named where it",
            "happens, with the fix (register before peers connect).",
        ],
        note: "the client's read fails with a bare code either way: regcheck names its cause in the server",
    },
];

pub fn run() -> Result<i32> {
    let root = testkit::workspace_root();
    let built = build_release(true, false)?;
    let out_dir = testkit::target_dir().join("demo");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;

    let mut programs = Vec::new();
    for demo in DEMOS {
        let source = root.join(demo.source);
        if !source.is_file() {
            eprintln!("xtask: note: {} is not there (yet): skipping the {}", demo.source, demo.title);
            continue;
        }
        eprintln!("xtask: compiling {}", demo.source);
        programs.push((demo, compile(demo, &source, &out_dir.join(demo.exe), &built.sim_lib_dir)?));
    }
    if programs.is_empty() {
        return Err("no demo program in examples-c/ (acl_demo.c, hixl_demo.cpp, hixl_two_process.cpp)".into());
    }

    let mut results = Vec::new();
    for (demo, exe) in &programs {
        let shown_exe = exe.strip_prefix(&root).unwrap_or(exe).to_path_buf();
        let bare = show_run(
            &format!("{}: WITHOUT regcheck (the vendor library alone)", demo.title),
            demo.bare_text,
            demo,
            exe,
            &shown_exe,
            None,
        )?;
        let preload = built.shared.strip_prefix(&root).unwrap_or(&built.shared).to_path_buf();
        let checked = show_run(
            &format!("{}: WITH regcheck (LD_PRELOAD={}, and its LD_AUDIT module)", demo.title, preload.display()),
            demo.checked_text,
            demo,
            exe,
            &shown_exe,
            Some((&built.shared, built.audit.as_deref())),
        )?;
        results.push((demo, bare, checked));
    }

    banner(
        "Summary: what each run told you",
        &[
            "bare code:  a call failed with a number and nothing else (no finding before it)",
            "crash:      the process died",
            "named+fix:  a finding named the rule, the call, the argument, what is wrong and the fix",
        ],
    );
    let mut ok = true;
    println!("  {:<34} {:>30}   {:>30}", "", "without regcheck", "with regcheck");
    for (demo, (bare, bare_tally), (checked, checked_tally)) in &results {
        println!("  {}", demo.title);
        let row = |what: &str, a: usize, b: usize| println!("    {what:<32} {a:>30}   {b:>30}");
        row("calls failed with a bare code", bare_tally.bare_codes, checked_tally.bare_codes);
        row("crashes", bare_tally.crashes, checked_tally.crashes);
        row("findings naming problem and fix", bare_tally.named_with_fix, checked_tally.named_with_fix);
        println!("    {:<32} {:>30}   {:>30}", "the process", short(bare), short(checked));
        if !demo.note.is_empty() {
            println!("    ({})", demo.note);
        }
        ok &= checked.success();
    }
    println!();
    if ok {
        println!("Every demo ran to completion under regcheck.");
        Ok(0)
    } else {
        Err("a demo failed under regcheck (see its output above)".into())
    }
}

/// Compiles one demo against the simulator's headers and libraries (no regcheck).
fn compile(demo: &Demo, source: &Path, exe: &Path, sim_lib_dir: &Path) -> Result<PathBuf> {
    let (compiler, std) =
        if demo.cxx { (env_or("CXX", "c++"), "-std=gnu++17") } else { (env_or("CC", "cc"), "-std=gnu11") };
    let mut cmd = Command::new(compiler);
    cmd.args([std, "-g", "-O1", "-Wall", "-Wextra", "-pthread"])
        .arg("-I")
        .arg(testkit::sim_include_dir())
        .arg("-I")
        .arg(testkit::workspace_root().join("include"))
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-L")
        .arg(sim_lib_dir)
        .arg(format!("-Wl,-rpath,{}", sim_lib_dir.display()));
    for lib in demo.libs {
        cmd.arg(format!("-l{lib}"));
    }
    run_captured(&mut cmd).map_err(|e| format!("compiling {} failed:\n{e}", demo.source))?;
    Ok(exe.to_path_buf())
}

fn env_or(var: &str, default: &str) -> String {
    std::env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
}

/// Runs `exe` with the simulated old kernel (and `LD_PRELOAD=preload.0`, `LD_AUDIT=preload.1`),
/// output to the terminal.
fn show_run(
    title: &str,
    text: &[&str],
    demo: &Demo,
    exe: &Path,
    shown_exe: &Path,
    preload: Option<(&Path, Option<&Path>)>,
) -> Result<(ExitStatus, Tally)> {
    let mut cmd = Command::new(exe);
    cmd.args(demo.args);
    cmd.env("ACLSIM_KERNEL_RELEASE", KERNEL_RELEASE).env("REGCHECK_KERNEL_RELEASE", KERNEL_RELEASE);
    let mut line = format!("$ ACLSIM_KERNEL_RELEASE={KERNEL_RELEASE} REGCHECK_KERNEL_RELEASE={KERNEL_RELEASE}");
    match preload {
        Some((lib, audit)) => {
            cmd.env("LD_PRELOAD", lib);
            line += &format!(" LD_PRELOAD={}", lib.display());
            if let Some(audit) = audit {
                cmd.env("LD_AUDIT", audit);
                line += &format!(" LD_AUDIT={}", audit.display());
            }
        }
        None => {
            cmd.env_remove("LD_PRELOAD").env_remove("LD_AUDIT");
        }
    }
    line += &format!(" {}", shown_exe.display());
    for arg in demo.args {
        line += &format!(" {arg}");
    }
    let mut lines: Vec<&str> = text.to_vec();
    lines.push("");
    lines.push(&line);
    banner(title, &lines);

    // the demos create their scratch files in the working directory
    if let Some(dir) = exe.parent() {
        cmd.current_dir(dir);
    }
    // stdout and stderr through one pipe: in order, shown as they come, then tallied
    let (mut reader, writer) = std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
    let writer2 = writer.try_clone().map_err(|e| format!("cannot make a pipe: {e}"))?;
    cmd.stdout(writer).stderr(writer2);
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", shown(&cmd)))?;
    drop(cmd); // its copies of the pipe's writing end: the reader sees the end of the output
    let echo = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = std::io::stdout().write_all(&buf[..n]);
            let _ = std::io::stdout().flush();
            all.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting for {}: {e}", exe.display()))? {
            break status;
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{} did not finish within {} s", exe.display(), RUN_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = echo.join().unwrap_or_default();
    println!();
    println!("--> {}", describe(&status));
    let mut t = tally(&output);
    t.crashes += usize::from(status.signal().is_some());
    Ok((status, t))
}

/// What one run told its user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Calls that returned a non-zero code with no finding of regcheck's since the previous call.
    pub bare_codes: usize,
    /// Processes killed by a signal.
    pub crashes: usize,
    /// Findings (`regcheck: <severity>: [RULE]` and their indented lines) that name a fix.
    pub named_with_fix: usize,
}

/// Counts a run's output: a call is a line with ` -> CODE` (the demos' way of printing what a
/// call returned); a finding starts with `regcheck: ` and names a rule (`[ACL-...]`), and what
/// follows it indented belongs to it.
pub fn tally(output: &str) -> Tally {
    let mut t = Tally::default();
    let mut findings_since_call = 0;
    let mut finding: Option<String> = None;
    let close = |f: Option<String>, t: &mut Tally| {
        if f.is_some_and(|f| f.to_lowercase().contains("fix")) {
            t.named_with_fix += 1;
        }
    };
    for line in output.lines() {
        if finding.is_some() && line.starts_with([' ', '\t']) && !line.contains(" -> ") {
            if let Some(f) = finding.as_mut() {
                f.push_str(line);
            }
            continue;
        }
        close(finding.take(), &mut t);
        if line.starts_with("regcheck: ") && ["[ACL-", "[HIXL-", "[ADXL-"].iter().any(|id| line.contains(id)) {
            findings_since_call += 1;
            finding = Some(line.to_string());
        } else if let Some(code) = call_code(line) {
            if code != 0 && findings_since_call == 0 {
                t.bare_codes += 1;
            }
            findings_since_call = 0;
        }
    }
    close(finding, &mut t);
    t
}

/// The code a demo's result line (`... -> CODE ...`) shows.
fn call_code(line: &str) -> Option<u64> {
    let (_, after) = line.rsplit_once(" -> ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The end of a run in a few words.
fn short(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(0), _) => "ran to its end".into(),
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(6)) => "crashed (SIGABRT)".into(),
        (None, Some(sig)) => format!("crashed (signal {sig})"),
        _ => format!("{status}"),
    }
}

/// "exited with status 0", "killed by SIGABRT (the simulated crash)", ...
fn describe(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return if code == 0 { "exited normally (status 0)".into() } else { format!("exited with status {code}") };
    }
    match status.signal() {
        Some(6) => "killed by SIGABRT: the process crashed (the simulated driver exception)".into(),
        Some(11) => "killed by SIGSEGV: the process crashed".into(),
        Some(sig) => format!("killed by signal {sig}"),
        None => format!("{status}"),
    }
}

fn banner(title: &str, lines: &[&str]) {
    let rule = "=".repeat(88);
    println!();
    println!("{rule}");
    println!("  {title}");
    if !lines.is_empty() {
        println!();
        for line in lines {
            if line.is_empty() {
                println!();
            } else {
                println!("  {line}");
            }
        }
    }
    println!("{rule}");
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_bare_codes_crashes_and_findings_with_their_fix() {
        let bare = "acl_demo: x\n  step 1: register malloc()    -> 507899 ACL_ERROR_RT_DRV_INTERNAL_ERROR\n  \
                    step 2: register buf (correct)   -> 0 ACL_SUCCESS\nserver: RegisterMem(x) -> 103900\n";
        assert_eq!(tally(bare), Tally { bare_codes: 2, crashes: 0, named_with_fix: 0 });
        // one line per finding, or a first line and indented details
        let checked =
            "regcheck: error: [ACL-HOSTREG-ALIGN] aclrtHostRegisterV2(...): `ptr` ... Fix: allocate ...\n    \
                       at main (acl_demo.c:61)\n  step 1: register malloc()    -> 100000 ACL_ERROR_INVALID_PARAM\n\
                       regcheck: warning: [HIXL-REG-LEN-ZERO] Hixl::RegisterMem(...): `mem.len` is 0\n    \
                       fix: pass the buffer's length\n  RegisterMem with mem.len = 0     -> 0 (SUCCESS)\n\
                       regcheck: error: [ACL-X] no remedy given\nregcheck: note: no rule here, fix nothing\n  step 3: y -> 0 ACL_SUCCESS\n  step 4: z -> 7 ?\n";
        assert_eq!(tally(checked), Tally { bare_codes: 1, crashes: 0, named_with_fix: 2 });
        assert_eq!(call_code("client: TransferSync(READ) -> 103900   <- fails here"), Some(103900));
        assert_eq!(call_code("no call here"), None);
    }
}
