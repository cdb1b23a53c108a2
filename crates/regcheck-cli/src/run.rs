//! `regcheck run [OPTIONS] [--] PROGRAM [ARGS...]`: run a program under regcheck without
//! remembering the variables.
//!
//! It finds `libregcheck.so` (and `libregcheck_audit.so`) beside itself, puts them in front of
//! `LD_PRELOAD` (and `LD_AUDIT`), turns its options into `REGCHECK_*` variables, and `exec`s the
//! program, which keeps its pid, its standard streams and its exit status.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Args, Parser};

/// Exit status when regcheck cannot start the program (as a shell's "command not found").
pub const CANNOT_RUN: u8 = 127;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Also load the LD_AUDIT module: for the callers regcheck's own dlsym cannot reach
    /// (the vendor's library linked ahead of regcheck, a static regcheck, RTLD_DEEPBIND by
    /// a bare name); not needed for Python ctypes or dlopen + dlsym (docs/audit.md).
    #[arg(long)]
    pub audit: bool,
    /// Log everything, reject nothing (REGCHECK_MODE=report).
    #[arg(long, conflicts_with = "off")]
    pub report: bool,
    /// Pass-through, no checks (REGCHECK_MODE=off).
    #[arg(long)]
    pub off: bool,
    /// Per-rule actions, e.g. 'ACL-HOSTREG-*=warn' (REGCHECK_RULES).
    #[arg(long, value_name = "SPEC")]
    pub rules: Option<OsString>,
    /// Log filter, e.g. info (REGCHECK_LOG).
    #[arg(long, value_name = "FILTER")]
    pub log: Option<OsString>,
    /// Append the log to PATH (REGCHECK_LOG_FILE).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<OsString>,
    /// One JSON object per line (REGCHECK_LOG_FORMAT=json).
    #[arg(long)]
    pub json: bool,
    /// Frames of the application's stack per finding; 0 for none (REGCHECK_STACK).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=64))]
    pub stack: Option<u8>,
    /// The exit summary even without findings (REGCHECK_SUMMARY=1; by default it is written
    /// when there were findings).
    #[arg(long, conflicts_with = "no_summary")]
    pub summary: bool,
    /// No exit summary (REGCHECK_SUMMARY=0).
    #[arg(long)]
    pub no_summary: bool,
    /// Silence the findings a suppression FILE's entries match (REGCHECK_SUPPRESSIONS; may be
    /// repeated). The files are checked before the program starts.
    #[arg(long, value_name = "FILE")]
    pub suppressions: Vec<PathBuf>,
    /// Print a ready suppression entry under each finding (REGCHECK_GEN_SUPPRESSIONS=1).
    #[arg(long)]
    pub gen_suppressions: bool,
    /// Exit with N when any error-level finding occurred (REGCHECK_ERROR_EXITCODE).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
    pub error_exitcode: Option<u8>,
    /// Where libregcheck.so is (default: ../lib beside this program, or its own directory).
    #[arg(long, value_name = "DIR")]
    pub lib_dir: Option<PathBuf>,
    /// Print the variables that would be set, and exit.
    #[arg(long)]
    pub print_env: bool,
    /// The program and its arguments (everything after PROGRAM is the program's).
    #[arg(value_name = "PROGRAM", required_unless_present = "print_env", trailing_var_arg = true)]
    pub program: Vec<OsString>,
}

impl RunArgs {
    /// The `REGCHECK_*` variables the options ask for, in option order.
    pub fn variables(&self) -> Vec<(&'static str, OsString)> {
        let mut vars = Vec::new();
        if self.report {
            vars.push(("REGCHECK_MODE", "report".into()));
        }
        if self.off {
            vars.push(("REGCHECK_MODE", "off".into()));
        }
        if let Some(r) = &self.rules {
            vars.push(("REGCHECK_RULES", r.clone()));
        }
        if let Some(l) = &self.log {
            vars.push(("REGCHECK_LOG", l.clone()));
        }
        if let Some(f) = &self.log_file {
            vars.push(("REGCHECK_LOG_FILE", f.clone()));
        }
        if self.json {
            vars.push(("REGCHECK_LOG_FORMAT", "json".into()));
        }
        if let Some(n) = self.stack {
            vars.push(("REGCHECK_STACK", n.to_string().into()));
        }
        if self.summary {
            vars.push(("REGCHECK_SUMMARY", "1".into()));
        }
        if self.no_summary {
            vars.push(("REGCHECK_SUMMARY", "0".into()));
        }
        if !self.suppressions.is_empty() {
            let abs: Vec<PathBuf> =
                self.suppressions.iter().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone())).collect();
            vars.push(("REGCHECK_SUPPRESSIONS", std::env::join_paths(abs).unwrap_or_default()));
        }
        if self.gen_suppressions {
            vars.push(("REGCHECK_GEN_SUPPRESSIONS", "1".into()));
        }
        if let Some(n) = self.error_exitcode {
            vars.push(("REGCHECK_ERROR_EXITCODE", n.to_string().into()));
        }
        vars
    }
}

/// `libregcheck.so`'s directory: `--lib-dir`, else `../lib` beside this program (an installed
/// tree), else this program's own directory (a cargo target directory).
pub fn lib_dir(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        return Ok(dir);
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    let here = exe.parent().unwrap_or(Path::new("/"));
    let candidates = [here.join("../lib"), here.to_path_buf()];
    candidates.iter().find(|d| d.join("libregcheck.so").is_file()).cloned().ok_or_else(|| {
        format!(
            "cannot find libregcheck.so in {} or {}; pass --lib-dir",
            candidates[0].display(),
            candidates[1].display()
        )
    })
}

/// `value` in front of an existing colon-separated list.
pub fn prepend(value: &Path, existing: Option<OsString>) -> OsString {
    let mut out = value.as_os_str().to_owned();
    if let Some(rest) = existing.filter(|r| !r.is_empty()) {
        out.push(":");
        out.push(rest);
    }
    out
}

/// `PROGRAM` as `exec` finds it: a path when it has a slash, else the first match on `PATH`.
fn find_program(program: &OsString) -> Option<PathBuf> {
    let p = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        return Some(p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(p)).find(|c| c.is_file())
}

/// Whether a file has the set-user-ID or set-group-ID bit: the dynamic linker then ignores
/// `LD_PRELOAD` paths and `LD_AUDIT`, so regcheck would not be loaded.
fn is_set_id(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o6000 != 0)
}

/// Read and parse each suppression file: the first mistake, naming its file and line.
fn check_suppressions(files: &[PathBuf]) -> Result<(), String> {
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("--suppressions {name}: {e}"))?;
        regcheck::report::suppress::parse(&name, &text).map_err(|e| format!("--suppressions {e}"))?;
    }
    Ok(())
}

fn exec(a: RunArgs) -> Result<ExitCode, String> {
    // SAFETY: getauxval has no preconditions.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return Err("refusing to run set-user-ID or set-group-ID: it runs whatever program its caller names, with \
                    the caller's environment"
            .into());
    }
    check_suppressions(&a.suppressions)?;
    let dir = lib_dir(a.lib_dir.clone())?;
    let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    let lib = dir.join("libregcheck.so");
    if !lib.is_file() {
        return Err(format!("{} does not exist", lib.display()));
    }
    let mut vars: Vec<(&str, OsString)> = vec![("LD_PRELOAD", prepend(&lib, std::env::var_os("LD_PRELOAD")))];
    if a.audit {
        let audit = dir.join("libregcheck_audit.so");
        if !audit.is_file() {
            return Err(format!("--audit: {} does not exist", audit.display()));
        }
        vars.push(("LD_AUDIT", prepend(&audit, std::env::var_os("LD_AUDIT"))));
    }
    vars.extend(a.variables());
    if a.print_env {
        for (k, v) in &vars {
            println!("{k}={}", v.to_string_lossy());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = find_program(&a.program[0]).filter(|p| is_set_id(p)) {
        eprintln!(
            "regcheck: warning: {} is set-user-ID or set-group-ID: the dynamic linker ignores LD_PRELOAD and \
             LD_AUDIT for it, so regcheck will not be loaded (link the program with -lregcheck instead)",
            path.display()
        );
    }
    let mut cmd = Command::new(&a.program[0]);
    cmd.args(&a.program[1..]).envs(vars.iter().map(|(k, v)| (*k, v)));
    let err = cmd.exec();
    Err(format!("cannot run {}: {err}", a.program[0].to_string_lossy()))
}

/// Run the program (never returns when it starts); `who` prefixes error messages.
pub fn main(a: RunArgs, who: &str) -> ExitCode {
    match exec(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::from(CANNOT_RUN)
        }
    }
}

/// `regcheck-run [OPTIONS] [--] PROGRAM [ARGS...]`: the same as `regcheck run`.
#[derive(Debug, Parser)]
#[command(
    name = "regcheck-run",
    version,
    about = "Run PROGRAM under regcheck (the same as `regcheck run`)",
    override_usage = "regcheck-run [OPTIONS] [--] PROGRAM [ARGS...]"
)]
struct Alias {
    #[command(flatten)]
    args: RunArgs,
}

/// The `regcheck-run` binary. Usage mistakes exit with 127, as `regcheck-run` always did.
pub fn alias_main() -> ExitCode {
    match Alias::try_parse() {
        Ok(a) => main(a.args, "regcheck-run"),
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        Err(e) => {
            let unknown = e.get(clap::error::ContextKind::InvalidArg).map(|v| v.to_string());
            match (e.kind(), unknown) {
                (clap::error::ErrorKind::UnknownArgument, Some(arg)) => {
                    eprintln!("regcheck-run: unknown option {arg} (see --help)")
                }
                _ => {
                    let _ = e.print();
                }
            }
            ExitCode::from(CANNOT_RUN)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command as Sub};

    fn parse(a: &[&str]) -> Result<RunArgs, clap::Error> {
        let argv = ["regcheck", "run"].iter().chain(a.iter());
        Cli::try_parse_from(argv).map(|c| match c.command {
            Sub::Run(r) => r,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn options_become_variables_and_the_rest_is_the_program() {
        let o = parse(&[
            "--report",
            "--rules",
            "ACL-*=warn",
            "--audit",
            "--json",
            "--stack",
            "3",
            "./app",
            "--report",
            "x",
        ])
        .unwrap();
        assert!(o.audit);
        assert_eq!(
            o.variables(),
            vec![
                ("REGCHECK_MODE", "report".into()),
                ("REGCHECK_RULES", "ACL-*=warn".into()),
                ("REGCHECK_LOG_FORMAT", "json".into()),
                ("REGCHECK_STACK", "3".into())
            ]
        );
        assert_eq!(
            o.program,
            vec![OsString::from("./app"), "--report".into(), "x".into()],
            "program options are the program's"
        );
        let o = parse(&["--", "--weird-name"]).unwrap();
        assert_eq!(o.program, vec![OsString::from("--weird-name")]);
        assert!(parse(&["--print-env"]).unwrap().program.is_empty());
    }

    #[test]
    fn mistakes_are_reported() {
        assert!(parse(&[]).is_err(), "no program");
        assert!(parse(&["--rules"]).is_err(), "needs a value");
        let e = parse(&["--frobnicate", "x"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
        assert!(parse(&["--error-exitcode", "0", "x"]).is_err());
        assert!(parse(&["--stack", "65", "x"]).is_err());
        assert!(parse(&["--report", "--off", "x"]).is_err());
        assert!(parse(&["--summary", "--no-summary", "x"]).is_err());
    }

    #[test]
    fn finds_set_id_programs() {
        let sh = find_program(&OsString::from("sh")).expect("sh is on PATH");
        assert!(sh.is_file());
        assert!(!is_set_id(&sh));
        assert_eq!(find_program(&OsString::from("./x")), Some(PathBuf::from("./x")));
        assert!(!is_set_id(Path::new("/nonexistent/regcheck-run-test")));
    }

    #[test]
    fn prepends_to_existing_lists() {
        assert_eq!(prepend(Path::new("/a.so"), None), OsString::from("/a.so"));
        assert_eq!(prepend(Path::new("/a.so"), Some("/b.so".into())), OsString::from("/a.so:/b.so"));
        assert_eq!(prepend(Path::new("/a.so"), Some("".into())), OsString::from("/a.so"));
    }
}
