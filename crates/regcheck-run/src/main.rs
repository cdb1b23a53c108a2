//! `regcheck-run`: run a program under regcheck without remembering the variables.
//!
//! It finds `libregcheck.so` (and `libregcheck_audit.so`) beside itself, puts them in front of
//! `LD_PRELOAD` (and `LD_AUDIT`), turns its options into `REGCHECK_*` variables, and `exec`s the
//! program, which keeps its pid, its standard streams and its exit status.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: regcheck-run [OPTIONS] [--] PROGRAM [ARGS...]

Runs PROGRAM with regcheck loaded (LD_PRELOAD), checking every memory registration it makes
through the Ascend ACL and HIXL APIs.

options:
  --audit               also load the LD_AUDIT module, for callers that look the vendor
                        functions up themselves (Python ctypes, dlopen + dlsym)
  --report              log everything, reject nothing (REGCHECK_MODE=report)
  --off                 pass-through, no checks (REGCHECK_MODE=off)
  --rules SPEC          per-rule actions, e.g. 'ACL-HOSTREG-*=warn' (REGCHECK_RULES)
  --log FILTER          log filter, e.g. info (REGCHECK_LOG)
  --log-file PATH       append the log to PATH (REGCHECK_LOG_FILE)
  --summary             findings per rule and leaks at exit (REGCHECK_SUMMARY=1)
  --error-exitcode N    exit with N when any error-level finding occurred (REGCHECK_ERROR_EXITCODE)
  --lib-dir DIR         where libregcheck.so is (default: ../lib beside this program, or its
                        own directory)
  --print-env           print the variables that would be set, and exit
  --version             print the version
  --help                print this text
";

#[derive(Debug)]
struct Options {
    audit: bool,
    lib_dir: Option<PathBuf>,
    print_env: bool,
    vars: Vec<(&'static str, OsString)>,
    program: Vec<OsString>,
}

fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Option<Options>, String> {
    let mut o = Options { audit: false, lib_dir: None, print_env: false, vars: Vec::new(), program: Vec::new() };
    while let Some(arg) = args.next() {
        let Some(flag) = arg.to_str().filter(|a| a.starts_with("--")) else {
            o.program.push(arg);
            o.program.extend(args);
            break;
        };
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match flag {
            "--" => {
                o.program.extend(args);
                break;
            }
            "--help" | "-h" => {
                print!("{USAGE}");
                return Ok(None);
            }
            "--version" => {
                println!("regcheck-run {}", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            "--audit" => o.audit = true,
            "--report" => o.vars.push(("REGCHECK_MODE", "report".into())),
            "--off" => o.vars.push(("REGCHECK_MODE", "off".into())),
            "--summary" => o.vars.push(("REGCHECK_SUMMARY", "1".into())),
            "--print-env" => o.print_env = true,
            "--rules" => o.vars.push(("REGCHECK_RULES", value(flag)?)),
            "--log" => o.vars.push(("REGCHECK_LOG", value(flag)?)),
            "--log-file" => o.vars.push(("REGCHECK_LOG_FILE", value(flag)?)),
            "--error-exitcode" => o.vars.push(("REGCHECK_ERROR_EXITCODE", value(flag)?)),
            "--lib-dir" => o.lib_dir = Some(PathBuf::from(value(flag)?)),
            other => return Err(format!("unknown option {other} (see --help)")),
        }
    }
    if o.program.is_empty() && !o.print_env {
        return Err("no program to run (see --help)".into());
    }
    Ok(Some(o))
}

/// `libregcheck.so`'s directory: `--lib-dir`, else `../lib` beside this program (an installed
/// tree), else this program's own directory (a cargo target directory).
fn lib_dir(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
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
fn prepend(value: &Path, existing: Option<OsString>) -> OsString {
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

fn run() -> Result<ExitCode, String> {
    // SAFETY: getauxval has no preconditions.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return Err("refusing to run set-user-ID or set-group-ID: regcheck-run runs whatever program its caller \
                    names, with the caller's environment"
            .into());
    }
    let Some(o) = parse(std::env::args_os().skip(1))? else { return Ok(ExitCode::SUCCESS) };
    let dir = lib_dir(o.lib_dir)?;
    let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    let lib = dir.join("libregcheck.so");
    if !lib.is_file() {
        return Err(format!("{} does not exist", lib.display()));
    }
    let mut vars: Vec<(&str, OsString)> = vec![("LD_PRELOAD", prepend(&lib, std::env::var_os("LD_PRELOAD")))];
    if o.audit {
        let audit = dir.join("libregcheck_audit.so");
        if !audit.is_file() {
            return Err(format!("--audit: {} does not exist", audit.display()));
        }
        vars.push(("LD_AUDIT", prepend(&audit, std::env::var_os("LD_AUDIT"))));
    }
    vars.extend(o.vars);
    if o.print_env {
        for (k, v) in &vars {
            println!("{k}={}", v.to_string_lossy());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = find_program(&o.program[0]).filter(|p| is_set_id(p)) {
        eprintln!(
            "regcheck-run: warning: {} is set-user-ID or set-group-ID: the dynamic linker ignores LD_PRELOAD and \
             LD_AUDIT for it, so regcheck will not be loaded (link the program with -lregcheck instead)",
            path.display()
        );
    }
    let mut cmd = Command::new(&o.program[0]);
    cmd.args(&o.program[1..]).envs(vars.iter().map(|(k, v)| (*k, v)));
    let err = cmd.exec();
    Err(format!("cannot run {}: {err}", o.program[0].to_string_lossy()))
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("regcheck-run: {e}");
            ExitCode::from(127)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> impl Iterator<Item = OsString> {
        a.iter().map(OsString::from).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn options_become_variables_and_the_rest_is_the_program() {
        let o =
            parse(args(&["--report", "--rules", "ACL-*=warn", "--audit", "./app", "--report", "x"])).unwrap().unwrap();
        assert!(o.audit);
        assert_eq!(o.vars, vec![("REGCHECK_MODE", "report".into()), ("REGCHECK_RULES", "ACL-*=warn".into())]);
        assert_eq!(
            o.program,
            vec![OsString::from("./app"), "--report".into(), "x".into()],
            "program options are the program's"
        );
        let o = parse(args(&["--", "--weird-name"])).unwrap().unwrap();
        assert_eq!(o.program, vec![OsString::from("--weird-name")]);
    }

    #[test]
    fn mistakes_are_reported() {
        assert!(parse(args(&[])).unwrap_err().contains("no program"));
        assert!(parse(args(&["--rules"])).unwrap_err().contains("needs a value"));
        assert!(parse(args(&["--frobnicate", "x"])).unwrap_err().contains("unknown option"));
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
