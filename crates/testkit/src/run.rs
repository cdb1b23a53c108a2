//! Running test programs and inspecting what they did.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Environment-variable prefixes that are not inherited by [`Run`] (set them explicitly).
const CLEARED_PREFIXES: &[&str] = &["REGCHECK_", "ACLSIM_"];

/// A program run, as a builder.
///
/// The child gets `ACLSIM_TRACE=1` (unless set explicitly), does not inherit any
/// `REGCHECK_*` or `ACLSIM_*` variable nor `LD_PRELOAD` (unless set explicitly), and is
/// killed after the timeout (default 60 s), which panics with the output so far.
#[derive(Clone, Debug)]
pub struct Run {
    exe: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    preload: Vec<PathBuf>,
    timeout: Duration,
    cwd: Option<PathBuf>,
}

impl Run {
    /// A run of `exe`.
    pub fn new<P: AsRef<Path>>(exe: P) -> Run {
        Run {
            exe: exe.as_ref().to_path_buf(),
            args: Vec::new(),
            envs: Vec::new(),
            preload: Vec::new(),
            timeout: Duration::from_secs(60),
            cwd: None,
        }
    }

    /// Appends one argument.
    pub fn arg<S: AsRef<OsStr>>(mut self, arg: S) -> Run {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets an environment variable of the child (wins over the defaults).
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(mut self, key: K, value: V) -> Run {
        self.envs.push((key.as_ref().to_os_string(), Some(value.as_ref().to_os_string())));
        self
    }

    /// Removes an environment variable from the child (e.g. `ACLSIM_TRACE`).
    pub fn env_remove<K: AsRef<OsStr>>(mut self, key: K) -> Run {
        self.envs.push((key.as_ref().to_os_string(), None));
        self
    }

    /// Adds a library to the child's `LD_PRELOAD` (in order).
    pub fn preload<P: AsRef<Path>>(mut self, lib: P) -> Run {
        self.preload.push(lib.as_ref().to_path_buf());
        self
    }

    /// Sets the timeout (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Run {
        self.timeout = timeout;
        self
    }

    /// Sets the child's working directory.
    pub fn current_dir<P: AsRef<Path>>(mut self, dir: P) -> Run {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Runs the program to completion and returns what it did.
    ///
    /// # Panics
    /// When the program cannot be started or does not finish within the timeout.
    pub fn run(&self) -> Outcome {
        let mut cmd = Command::new(&self.exe);
        cmd.args(&self.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        for (k, _) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if name == "LD_PRELOAD" || CLEARED_PREFIXES.iter().any(|p| name.starts_with(p)) {
                cmd.env_remove(&k);
            }
        }
        cmd.env("ACLSIM_TRACE", "1");
        if !self.preload.is_empty() {
            let joined: Vec<String> = self.preload.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            cmd.env("LD_PRELOAD", joined.join(":"));
        }
        for (k, v) in &self.envs {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let shown = format!("{cmd:?}");
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", self.exe.display()));
        let out_reader = reader(&mut child, true);
        let err_reader = reader(&mut child, false);
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if start.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
                Err(e) => panic!("waiting for {} failed: {e}", self.exe.display()),
            }
        };
        let stdout = out_reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        match status {
            Some(status) => Outcome {
                status,
                stdout,
                stderr,
            },
            None => panic!(
                "{} did not finish within {:?} and was killed\ncommand: {shown}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
                self.exe.display(),
                self.timeout
            ),
        }
    }
}

fn reader(child: &mut Child, stdout: bool) -> thread::JoinHandle<String> {
    let mut pipe: Box<dyn Read + Send> = if stdout {
        Box::new(child.stdout.take().expect("piped stdout"))
    } else {
        Box::new(child.stderr.take().expect("piped stderr"))
    };
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// What a finished program did.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub status: ExitStatus,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr (including the simulator's `[aclsim]` trace lines).
    pub stderr: String,
}

impl Outcome {
    /// The simulator's trace lines for `name`: the lines of stderr containing
    /// `[aclsim] <name>(`.
    pub fn sim_lines(&self, name: &str) -> Vec<&str> {
        let needle = format!("[aclsim] {name}(");
        self.stderr.lines().filter(|l| l.contains(&needle)).collect()
    }

    /// How many calls of `name` reached the simulator (count of `[aclsim] <name>(` lines in
    /// stderr; the run has `ACLSIM_TRACE=1`).
    pub fn sim_calls(&self, name: &str) -> usize {
        self.sim_lines(name).len()
    }

    /// The results the simulator returned for `name`, in call order (the text after ` -> `
    /// of each trace line: a number for most calls, a quoted string or `NULL` for
    /// `aclrtGetSocName`/`aclGetRecentErrMsg`).
    pub fn sim_results(&self, name: &str) -> Vec<String> {
        self.sim_lines(name).iter().filter_map(|l| l.rsplit_once(" -> ").map(|(_, r)| r.trim().to_string())).collect()
    }

    /// The exit code, if the program exited (rather than being killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The signal that ended the program, if any.
    pub fn signal(&self) -> Option<i32> {
        self.status.signal()
    }

    /// True when the program was ended by `SIGABRT` (e.g. the simulated driver exception).
    pub fn aborted(&self) -> bool {
        self.status.signal() == Some(libc::SIGABRT)
    }

    /// Panics, printing stdout and stderr, unless the program exited with code 0.
    pub fn assert_success(&self) -> &Self {
        if !self.status.success() {
            panic!("program failed: {}\n{}", self.status, self.dump());
        }
        self
    }

    /// Panics, printing stdout and stderr, unless the program exited with `code`.
    pub fn assert_code(&self, code: i32) -> &Self {
        if self.status.code() != Some(code) {
            panic!("expected exit code {code}, got {}\n{}", self.status, self.dump());
        }
        self
    }

    /// Panics, printing stdout and stderr, unless the program was ended by `SIGABRT`.
    pub fn assert_aborted(&self) -> &Self {
        if !self.aborted() {
            panic!("expected an abort, got {}\n{}", self.status, self.dump());
        }
        self
    }

    /// Panics, printing stdout and stderr, unless stderr contains `text`.
    pub fn assert_stderr_contains(&self, text: &str) -> &Self {
        if !self.stderr.contains(text) {
            panic!("stderr does not contain {text:?}\n{}", self.dump());
        }
        self
    }

    /// Panics, printing stdout and stderr, unless stdout contains `text`.
    pub fn assert_stdout_contains(&self, text: &str) -> &Self {
        if !self.stdout.contains(text) {
            panic!("stdout does not contain {text:?}\n{}", self.dump());
        }
        self
    }

    /// Panics, printing stdout and stderr, unless the simulator saw `name` exactly `n` times.
    pub fn assert_sim_calls(&self, name: &str, n: usize) -> &Self {
        let got = self.sim_calls(name);
        if got != n {
            panic!("expected {n} call(s) of {name} in the simulator, saw {got}\n{}", self.dump());
        }
        self
    }

    /// stdout and stderr, labelled, for panic messages.
    pub fn dump(&self) -> String {
        format!("--- stdout ---\n{}\n--- stderr ---\n{}", self.stdout, self.stderr)
    }
}
