//! Running test programs and inspecting what they did.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::shown::streams;

/// Environment-variable prefixes that are not inherited by [`Run`] (set them explicitly).
const CLEARED_PREFIXES: &[&str] = &["REGCHECK_", "ACLSIM_"];

/// A program run, as a builder.
///
/// The child gets `ACLSIM_TRACE=1` (unless set explicitly), does not inherit any
/// `REGCHECK_*` or `ACLSIM_*` variable nor `LD_PRELOAD` (unless set explicitly), and is
/// killed with every process it started (its process group) after the timeout (default 60 s),
/// which panics with the output so far. A program that ends while a process it started still
/// holds stdout or stderr open past the timeout fails the same way.
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

    /// Loads regcheck's `LD_AUDIT` module too (`libregcheck_audit.so` of [`crate::regcheck`]),
    /// which makes regcheck's records whole: what `regcheck run --audit` does.
    pub fn audit(self) -> Run {
        self.env("LD_AUDIT", crate::regcheck().audit)
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
        let mut cmd = crate::emulator::command(&self.exe);
        cmd.args(&self.args);
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
        // regcheck's exit summary (on by default when there were findings) would add lines to
        // every run the tests count lines of; tests/report.rs tests it (it removes this).
        cmd.env("REGCHECK_SUMMARY", "0");
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
        match output_within(&mut cmd, self.timeout) {
            Ok(out) => Outcome {
                program: self.exe.clone(),
                saved: OnceLock::new(),
                status: out.status,
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            Err(e) => panic!("{}: {e}\ncommand: {shown}", self.exe.display()),
        }
    }
}

/// Why [`output_within`] gave up on a command.
#[derive(Debug)]
pub enum RunError {
    /// The command could not be started.
    Start(std::io::Error),
    /// Waiting for it failed (it was killed with its process group).
    Wait(std::io::Error),
    /// It did not finish in time (or a process it started still held its output open): its
    /// whole process group was killed. The output read until then.
    TimedOut {
        /// The program run.
        program: PathBuf,
        /// The timeout.
        timeout: Duration,
        /// How the command itself ended, if it had (a descendant kept the pipes open).
        status: Option<ExitStatus>,
        /// stdout read so far.
        stdout: String,
        /// stderr read so far.
        stderr: String,
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Start(e) => write!(f, "cannot start: {e}"),
            RunError::Wait(e) => write!(f, "waiting for it failed: {e}"),
            RunError::TimedOut { program, timeout, status: None, stdout, stderr } => write!(
                f,
                "did not finish within {timeout:?}; its process group was killed\n{}",
                streams(program, stdout, stderr, &OnceLock::new())
            ),
            RunError::TimedOut { program, timeout, status: Some(status), stdout, stderr } => write!(
                f,
                "ended ({status}) but a process it started still held its output open after {timeout:?}; \
                 its process group was killed\n{}",
                streams(program, stdout, stderr, &OnceLock::new())
            ),
        }
    }
}

/// How long the output is still read after the whole process group was killed: a process that
/// left the group (`setsid`) may keep the pipes open forever.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// Runs `cmd` (stdin from `/dev/null`, stdout and stderr captured) in a process group of its own
/// and returns its output, waiting at most `timeout` in all: for the command, and for every
/// process it started to close stdout and stderr. Past the timeout the whole process group is
/// killed (`SIGKILL`), the output is read for at most two more seconds, and the result is
/// [`RunError::TimedOut`]. Never waits longer than `timeout` plus those two seconds.
pub fn output_within(cmd: &mut Command, timeout: Duration) -> Result<Output, RunError> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().map_err(RunError::Start)?;
    let pgid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    let out = reader(&mut child, true, tx.clone());
    let err = reader(&mut child, false, tx);
    let deadline = Instant::now() + timeout;
    let kill_group = || {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads; the
        // group exists until its last member is reaped, so the id cannot name another group.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                kill_group();
                let _ = child.wait();
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group();
                let _ = child.wait();
                return Err(RunError::Wait(e));
            }
        }
    };
    // Both readers report when their pipe closes; descendants may hold them open.
    let mut open = 2;
    let mut limit = deadline;
    let mut killed = status.is_none();
    while open > 0 {
        let now = Instant::now();
        if now >= limit {
            if killed {
                break;
            }
            kill_group();
            killed = true;
            limit = now + DRAIN_AFTER_KILL;
            continue;
        }
        match rx.recv_timeout(limit - now) {
            Ok(()) => open -= 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let stdout = out.take();
    let stderr = err.take();
    match status {
        Some(status) if !killed => Ok(Output { status, stdout, stderr }),
        status => Err(RunError::TimedOut {
            program: PathBuf::from(cmd.get_program()),
            timeout,
            status,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        }),
    }
}

/// The bytes a reader thread has collected so far.
struct Collected(Arc<Mutex<Vec<u8>>>);

impl Collected {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Reads one of the child's pipes on a thread until it closes, then sends `()` on `done`.
/// The thread is detached: when a process outside the group holds the pipe, it is left behind
/// and the caller takes what was read so far.
fn reader(child: &mut Child, stdout: bool, done: mpsc::Sender<()>) -> Collected {
    let mut pipe: Box<dyn Read + Send> = if stdout {
        Box::new(child.stdout.take().expect("piped stdout"))
    } else {
        Box::new(child.stderr.take().expect("piped stderr"))
    };
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buf);
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => sink.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
    Collected(buf)
}

/// What a finished program did.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The program that ran (names the file [`Outcome::dump`] keeps a long output in).
    program: PathBuf,
    /// What [`Outcome::dump`] said of the file with the whole output, once it wrote one.
    saved: OnceLock<String>,
    /// How it ended.
    pub status: ExitStatus,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr (including the simulator's `[aclsim]` trace lines).
    pub stderr: String,
}

impl Outcome {
    /// regcheck's messages on stderr, each with its indented lines (a finding's call site,
    /// why, fix, evidence, where to read more) joined to its first line by newlines.
    pub fn messages(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut open = false;
        for l in self.stderr.lines() {
            if l.starts_with("regcheck: ") || l.starts_with("regcheck-audit: ") {
                out.push(l.to_string());
                open = true;
            } else if open && l.starts_with("    ") {
                if let Some(last) = out.last_mut() {
                    last.push('\n');
                    last.push_str(l);
                }
            } else {
                open = false;
            }
        }
        out
    }

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

    /// stdout and stderr, labelled, for panic messages: whole when short; else the last
    /// [`crate::SHOWN_LINES`] lines of each (at most [`crate::SHOWN_BYTES`] bytes), and the
    /// path of a file under `<target>/testkit/output/` that has all of both (written once).
    pub fn dump(&self) -> String {
        streams(&self.program, &self.stdout, &self.stderr, &self.saved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a thread and fails unless it returns within `bound`: a test of a timeout
    /// must not hang when the timeout is broken.
    fn within<T: Send + 'static>(bound: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        });
        match rx.recv_timeout(bound) {
            Ok(Ok(v)) => v,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => panic!("still running after {bound:?}: the timeout does not bound the run"),
        }
    }

    fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    }

    /// True when no process has this id any more (it may take a moment to be reaped).
    fn gone(pid: libc::pid_t) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            // SAFETY: signal 0 only checks that the process exists.
            if unsafe { libc::kill(pid, 0) } != 0 {
                return true;
            }
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn timeout_kills_the_program_and_what_it_started() {
        // the shell waits on a child that holds stdout: killing the shell alone would leave
        // the reader waiting on the child forever
        let text = within(Duration::from_secs(30), || {
            let run =
                Run::new("/bin/sh").args(["-c", "sleep 600 & echo child=$!; wait"]).timeout(Duration::from_secs(1));
            panic_text(std::panic::catch_unwind(|| run.run()).expect_err("a program that never ends passed"))
        });
        assert!(text.contains("did not finish within 1s"), "{text}");
        let pid: libc::pid_t = text
            .split("child=")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no child pid in the output so far: {text}"));
        assert!(gone(pid), "the program's child {pid} is still running after the timeout");
    }

    #[test]
    fn a_process_left_holding_the_output_fails_the_run_in_bounded_time() {
        // the shell exits at once; its background child keeps stdout open
        let err = within(Duration::from_secs(30), || {
            let mut cmd = Command::new("/bin/sh");
            cmd.args(["-c", "sleep 600 & echo started"]);
            output_within(&mut cmd, Duration::from_secs(1))
        });
        match err {
            Err(RunError::TimedOut { status: Some(status), stdout, .. }) => {
                assert!(status.success(), "{status}");
                assert_eq!(stdout, "started\n");
            }
            other => panic!("expected a time-out after the shell ended, got {other:?}"),
        }
    }

    #[test]
    fn a_quick_program_returns_its_output_and_status() {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = output_within(&mut cmd, Duration::from_secs(30)).expect("finished");
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }
}
