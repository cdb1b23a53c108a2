//! `cargo xtask bench`: what regcheck costs a call, measured through the C ABI.
//!
//! Builds regcheck (release), the simulator, a permissive stand-in vendor
//! (`benches/abi/standin_acl.c` as `libacl_rt.so`, `benches/abi/standin_hixl.cpp` as
//! `libcann_hixl.so`: every call returns at once) and the driver program
//! (`benches/abi/driver.cpp`), then runs the driver bare and under `LD_PRELOAD=libregcheck.so`,
//! alternately, several rounds, against the stand-in (regcheck's own cost) and against the
//! simulator. Each figure is the fastest over rounds of the driver's per-run figure (itself
//! the fastest of several batches); "added" is regcheck's run minus the bare run, and the
//! anchor is `mlock`+`munlock` of 2 MiB measured in the same runs (the fastest of them). System calls are counted
//! with `strace -f -c` (installed with apt-get when missing, saying so).
//!
//! `--short` (what CI runs) does one quick round of everything: it checks that the benchmark
//! runs, its figures mean nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::artifacts::build_release;
use crate::util::{have_tool, run_captured, shown, Result};

/// Live registrations of the main figures (the HIXL limit per instance).
const MAIN_REGS: usize = 4000;
/// Live registrations of the scaling table.
const SCALE_REGS: &[usize] = &[10, 1000, 4000, 100000];
/// Extra mappings of the `/proc/self/maps` fallback figure.
const MAPPINGS: usize = 1000;
/// Calls per system-call count.
const COUNT_ITERS: usize = 1000;
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// Which vendor library the driver runs against.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Vendor {
    StandIn,
    Simulator,
}

impl Vendor {
    fn name(self) -> &'static str {
        match self {
            Vendor::StandIn => "stand-in",
            Vendor::Simulator => "simulator",
        }
    }
}

struct Bench {
    driver: PathBuf,
    standin_dir: PathBuf,
    sim_dir: PathBuf,
    regcheck: PathBuf,
    out_dir: PathBuf,
    quick: bool,
    rounds: usize,
}

/// Figures of one run: name -> ns (or bytes).
type Figures = BTreeMap<String, f64>;

/// The bare and regcheck figures of every round.
#[derive(Default)]
struct Pair {
    bare: Vec<Figures>,
    checked: Vec<Figures>,
}

impl Pair {
    /// The fastest run: other work on the machine only ever adds time, so the minimum is
    /// the steadiest estimate of a call's own cost (bare and under regcheck alike).
    fn get(runs: &[Figures], key: &str) -> Option<f64> {
        runs.iter().filter_map(|f| f.get(key).copied()).min_by(f64::total_cmp)
    }
    fn bare(&self, key: &str) -> Option<f64> {
        Pair::get(&self.bare, key)
    }
    fn checked(&self, key: &str) -> Option<f64> {
        Pair::get(&self.checked, key)
    }
    fn added(&self, key: &str) -> Option<f64> {
        Some(self.checked(key)? - self.bare(key)?)
    }
    /// The anchor of these runs: mlock+munlock of 2 MiB, the fastest of all runs (so that
    /// a share is never flattered by a slow anchor).
    fn anchor(&self, key: &str) -> Option<f64> {
        self.bare.iter().chain(&self.checked).filter_map(|f| f.get(key).copied()).min_by(f64::total_cmp)
    }
}

pub fn run(args: &[String]) -> Result<i32> {
    let mut quick = false;
    let mut rounds = 7;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--short" => quick = true,
            "--rounds" => {
                rounds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&r| r > 0)
                    .ok_or("--rounds needs a positive number")?
            }
            other => {
                return Err(format!(
                    "unknown option `{other}` for `bench`; usage: cargo xtask bench [--short] [--rounds N]"
                ))
            }
        }
    }
    if quick {
        rounds = 1;
    }
    let built = build_release(false, false)?;
    let out_dir = testkit::target_dir().join("bench-abi");
    let b = Bench {
        driver: out_dir.join("driver"),
        standin_dir: out_dir.join("standin"),
        sim_dir: built.sim_lib_dir.clone(),
        regcheck: built.shared.clone(),
        out_dir,
        quick,
        rounds,
    };
    b.compile()?;
    let strace = ensure_strace();

    eprintln!("xtask: bench: {} round(s), each bare then under regcheck", b.rounds);
    let mut main: BTreeMap<Vendor, Pair> = BTreeMap::new();
    let mut ten: BTreeMap<Vendor, Pair> = BTreeMap::new();
    let mut maps = Pair::default();
    // A warning on every call, nothing logged (REGCHECK_LOG=off).
    let mut warn = Pair::default();
    // regcheck loaded but checking nothing, on the simulator: what its presence alone costs
    // the simulator (which reads /proc/self/maps, longer by regcheck's own mappings).
    let mut sim_off = Pair::default();
    for round in 0..b.rounds {
        eprintln!("xtask: bench: round {}/{}", round + 1, b.rounds);
        for vendor in [Vendor::StandIn, Vendor::Simulator] {
            b.pair(main.entry(vendor).or_default(), vendor, &["time", &MAIN_REGS.to_string()], &[])?;
        }
        b.pair(ten.entry(Vendor::StandIn).or_default(), Vendor::StandIn, &["time", "10"], &[])?;
        b.pair(&mut sim_off, Vendor::Simulator, &["time", &MAIN_REGS.to_string()], &[("REGCHECK_MODE", "off")])?;
        b.pair(&mut maps, Vendor::StandIn, &["maps", &MAPPINGS.to_string()], &[("REGCHECK_TEST_MEMMAP", "maps")])?;
        // A warning on every call: regcheck's records are whole, so an unregistration of what
        // was never registered is certain (rejected); as a warning it is forwarded each time.
        let warned = [("REGCHECK_LOG", "off"), ("REGCHECK_RULES", "ACL-HOSTUNREG-NOT-REGISTERED=warn")];
        b.pair(&mut warn, Vendor::StandIn, &["warn"], &warned)?;
    }
    eprintln!("xtask: bench: scaling with the number of live registrations (stand-in)");
    let mut scale: BTreeMap<usize, Pair> = BTreeMap::new();
    let scale_rounds = if b.quick { 1 } else { b.rounds.div_ceil(2) };
    for &n in SCALE_REGS.iter().filter(|&&n| !b.quick || n <= MAIN_REGS) {
        if n == MAIN_REGS {
            continue;
        }
        for _ in 0..scale_rounds {
            b.pair(scale.entry(n).or_default(), Vendor::StandIn, &["time", &n.to_string()], &[])?;
        }
    }
    let mem_regs = if b.quick { 1000 } else { 100000 };
    let mut mem = Pair::default();
    b.pair(&mut mem, Vendor::StandIn, &["mem", &mem_regs.to_string()], &[])?;
    let syscalls = match &strace {
        Ok(()) => Some(b.syscalls()?),
        Err(why) => {
            eprintln!("xtask: bench: {why}; system calls are not counted");
            None
        }
    };

    let mut out = String::new();
    out += &format!(
        "\nregcheck ABI benchmark ({}): kernel {}, {} CPU(s), {} round(s); each figure the fastest batch of all runs, the anchor too\n\n",
        if b.quick { "--short: a check that it runs, the figures mean nothing" } else { "full" },
        kernel_release(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        b.rounds
    );
    out += &table(&main, &ten, (&maps, &warn), &sim_off, &mem, mem_regs, syscalls.as_ref());
    out += "\n";
    if let Some(p) = main.get(&Vendor::StandIn) {
        scale.insert(MAIN_REGS, Pair { bare: p.bare.clone(), checked: p.checked.clone() });
    }
    out += &scale_table(&scale);
    print!("{out}");
    std::fs::write(b.out_dir.join("report.md"), &out).map_err(|e| format!("cannot write the report: {e}"))?;
    eprintln!("xtask: bench: written to {}", b.out_dir.join("report.md").display());
    // A clean look-up or transfer allocates nothing: counted, not timed, so even --short checks it.
    let allocating: Vec<String> = main
        .get(&Vendor::StandIn)
        .map(|p| {
            ["devptr", "xfer64", "xfer1", "csxfer1"]
                .iter()
                .filter_map(|k| allocations(p, k).filter(|&a| a > 0.0).map(|a| format!("{k}: {a:.3} per call")))
                .collect()
        })
        .unwrap_or_default();
    if !allocating.is_empty() {
        eprintln!("xtask: bench: a clean call allocates under regcheck: {}", allocating.join(", "));
        return Ok(1);
    }
    Ok(0)
}

impl Bench {
    fn compile(&self) -> Result<()> {
        let src = testkit::workspace_root().join("benches/abi");
        let inc = testkit::sim_include_dir();
        std::fs::create_dir_all(&self.standin_dir)
            .map_err(|e| format!("cannot create {}: {e}", self.standin_dir.display()))?;
        let cc = env_or("CC", "cc");
        let cxx = env_or("CXX", "c++");
        eprintln!("xtask: bench: building the stand-in vendor and the driver");
        let mut acl = Command::new(&cc);
        acl.args(["-std=gnu11", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-Wl,-soname,libacl_rt.so"])
            .arg(src.join("standin_acl.c"))
            .arg("-o")
            .arg(self.standin_dir.join("libacl_rt.so"));
        run_captured(&mut acl)?;
        let mut hixl = Command::new(&cxx);
        hixl.args([
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wl,-soname,libcann_hixl.so",
        ])
        .arg("-I")
        .arg(&inc)
        .arg(src.join("standin_hixl.cpp"))
        .arg(testkit::workspace_root().join("sim/src/ascend_string.cpp"))
        .arg("-o")
        .arg(self.standin_dir.join("libcann_hixl.so"));
        run_captured(&mut hixl)?;
        // Linked against the stand-in's names; LD_LIBRARY_PATH picks the vendor at run time.
        let mut driver = Command::new(&cxx);
        driver
            .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"])
            .arg("-I")
            .arg(&inc)
            .arg(src.join("driver.cpp"))
            .arg("-o")
            .arg(&self.driver)
            .arg("-L")
            .arg(&self.standin_dir)
            .args(["-lcann_hixl", "-lacl_rt"]);
        run_captured(&mut driver)?;
        Ok(())
    }

    fn command(&self, vendor: Vendor, args: &[&str], preload: bool, env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(&self.driver);
        cmd.args(args);
        if self.quick && matches!(args.first(), Some(&"time") | Some(&"maps") | Some(&"warn")) {
            cmd.arg("quick");
        }
        if vendor == Vendor::Simulator && args.first() == Some(&"time") {
            // The simulator's HIXL engines listen and transfer over TCP: their cost would
            // drown regcheck's, and the table shows no HIXL figure for the simulator.
            cmd.arg("nohixl");
        }
        let dir = if vendor == Vendor::StandIn { &self.standin_dir } else { &self.sim_dir };
        cmd.env("LD_LIBRARY_PATH", dir);
        if vendor == Vendor::Simulator {
            // The driver's registration path, where a device pointer is answered for any address
            // inside a registration (the runtime's own tables match the base only), as the
            // benchmark's probes need.
            cmd.env("ACLSIM_PIN_REGISTER", "1").env("ACLSIM_CANN_VERSION", "9.2.0");
        }
        for var in ["LD_PRELOAD", "REGCHECK_MODE", "REGCHECK_RULES", "REGCHECK_LOG_FILE", "REGCHECK_SUMMARY"] {
            cmd.env_remove(var);
        }
        if preload {
            cmd.env("LD_PRELOAD", &self.regcheck);
            for (k, v) in env {
                cmd.env(k, v);
            }
        }
        cmd
    }

    /// One bare run and one run under regcheck of `driver args`.
    fn pair(&self, into: &mut Pair, vendor: Vendor, args: &[&str], env: &[(&str, &str)]) -> Result<()> {
        let bare = self.figures(&mut self.command(vendor, args, false, env))?;
        let checked = self.figures(&mut self.command(vendor, args, true, env))?;
        into.bare.push(bare);
        into.checked.push(checked);
        Ok(())
    }

    fn figures(&self, cmd: &mut Command) -> Result<Figures> {
        let stdout = run_bounded(cmd, &self.out_dir)?;
        let mut f = Figures::new();
        for line in stdout.lines() {
            if let Some((k, v)) = line.split_once(' ') {
                if let Ok(v) = v.trim().parse::<f64>() {
                    f.insert(k.to_string(), v);
                }
            }
        }
        Ok(f)
    }

    /// System calls regcheck adds per call, from `strace -f -c` of ITERS calls and of none,
    /// bare and under regcheck (the set-up cancels out).
    fn syscalls(&self) -> Result<BTreeMap<&'static str, f64>> {
        eprintln!("xtask: bench: counting system calls with strace -f -c");
        let mut out = BTreeMap::new();
        let iters = if self.quick { 100 } else { COUNT_ITERS };
        // HIXL registrations on a listening engine, the peers' connections counted each way.
        let diag = [("REGCHECK_TEST_PEERS", "diag")];
        let fd = [("REGCHECK_TEST_PEERS", "fd")];
        // The set-up's HIXL registrations count the peers one fixed way, so that the set-up
        // cancels out (by default each count takes the way that was faster lately, which
        // differs from run to run).
        let fixed: &[Env] = &diag;
        // The warned call, nothing logged (as in its timed figure); its set-up's HIXL
        // registrations count the peers one fixed way, as the others'.
        let unlogged = [
            ("REGCHECK_LOG", "off"),
            ("REGCHECK_TEST_PEERS", "diag"),
            ("REGCHECK_RULES", "ACL-HOSTUNREG-NOT-REGISTERED=warn"),
        ];
        let targets = [
            ("regunreg", "regunreg", fixed),
            ("devptr", "devptr", fixed),
            ("xfer64", "xfer64", fixed),
            ("xfer1", "xfer1", fixed),
            ("csxfer1", "csxfer1", fixed),
            ("unregwarn", "unregwarn", &unlogged[..]),
            ("hixlreg_diag", "hixlreg", &diag[..]),
            ("hixlreg_fd", "hixlreg", &fd[..]),
        ];
        for (key, what, env) in targets {
            let total = |preload: bool, n: usize| -> Result<f64> {
                let file = self.out_dir.join("strace.txt");
                let inner = self.command(Vendor::StandIn, &["count", what, "100", &n.to_string()], preload, env);
                let mut cmd = Command::new("strace");
                cmd.args(["-f", "-c", "-o"]).arg(&file).arg(inner.get_program()).args(inner.get_args());
                for (k, v) in inner.get_envs() {
                    match v {
                        Some(v) => cmd.env(k, v),
                        None => cmd.env_remove(k),
                    };
                }
                run_bounded(&mut cmd, &self.out_dir)?;
                let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read strace's summary: {e}"))?;
                strace_total(&text).ok_or_else(|| format!("no total line in strace's summary:\n{text}"))
            };
            let bare = total(false, iters)? - total(false, 0)?;
            let checked = total(true, iters)? - total(true, 0)?;
            out.insert(key, (checked - bare) / iters as f64);
        }
        Ok(out)
    }
}

/// An environment variable set for a run.
type Env<'a> = (&'a str, &'a str);

/// The `calls` column of the `total` line of `strace -c`.
fn strace_total(text: &str) -> Option<f64> {
    let line = text.lines().rev().find(|l| l.trim_end().ends_with("total"))?;
    let cols: Vec<&str> = line.split_whitespace().collect();
    // % time, seconds, usecs/call, calls, [errors], "total"
    cols.get(3)?.parse().ok()
}

/// Runs `cmd` with its output in files under `dir`, at most [`RUN_TIMEOUT`]; returns stdout.
fn run_bounded(cmd: &mut Command, dir: &Path) -> Result<String> {
    let (out, err) = (dir.join("run.out"), dir.join("run.err"));
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()));
    cmd.stdin(Stdio::null()).stdout(file(&out)?).stderr(file(&err)?);
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", shown(cmd)))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("waiting for {}: {e}", shown(cmd)))? {
            break s;
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{} did not finish within {} s", shown(cmd), RUN_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    if !status.success() {
        return Err(format!("{} failed ({status}):\n{}{}", shown(cmd), read(&out), read(&err)));
    }
    Ok(read(&out))
}

/// strace, installed with apt-get (as root) when missing, saying so.
fn ensure_strace() -> Result<()> {
    if have_tool("strace") {
        return Ok(());
    }
    let root = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root.unwrap_or(false) && have_tool("apt-get") {
        eprintln!("xtask: bench: strace is not installed; installing it: apt-get install -y strace");
        let _ = Command::new("apt-get").args(["update", "-qq"]).status();
        let _ = Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-qq", "strace"])
            .status();
    }
    if have_tool("strace") {
        Ok(())
    } else {
        Err("strace is not installed (apt-get install strace)".into())
    }
}

fn env_or(var: &str, default: &str) -> String {
    std::env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_else(|_| "?".into())
}

/// `1.2 µs`, `35 ns`.
fn time(ns: Option<f64>) -> String {
    match ns {
        None => "-".into(),
        Some(ns) if ns.abs() >= 1000.0 => format!("{:.2} µs", ns / 1000.0),
        Some(ns) => format!("{ns:.0} ns"),
    }
}

fn added(ns: Option<f64>) -> String {
    match ns {
        Some(v) if v >= 0.0 => format!("+{}", time(Some(v))),
        v => time(v),
    }
}

fn share(ns: Option<f64>, anchor: Option<f64>) -> String {
    match (ns, anchor) {
        (Some(n), Some(a)) if a > 0.0 => format!("{:.2}%", 100.0 * n / a),
        _ => "-".into(),
    }
}

/// A goal on the added time: `<= +N ns (met)` or `(not met)`.
fn goal_ns(p: &Pair, key: &str, limit: f64) -> String {
    let verdict = match p.added(key) {
        Some(a) if a <= limit => " (met)",
        Some(_) => " (not met)",
        None => "",
    };
    format!("<= +{}{verdict}", time(Some(limit)))
}

/// A goal on the share of the anchor: `<= N% (met)` or `(not met)`.
fn goal_share(p: &Pair, key: &str, anchor: Option<f64>, limit_percent: f64) -> String {
    let verdict = match (p.added(key), anchor) {
        (Some(a), Some(m)) if m > 0.0 && 100.0 * a / m <= limit_percent => " (met)",
        (Some(_), Some(m)) if m > 0.0 => " (not met)",
        _ => "",
    };
    format!("<= {limit_percent}%{verdict}")
}

/// Heap allocations regcheck adds per call (the driver counts every `malloc` of the process).
fn allocations(p: &Pair, key: &str) -> Option<f64> {
    p.added(&format!("alloc_{key}"))
}

fn calls(sys: Option<&BTreeMap<&'static str, f64>>, key: &str) -> String {
    sys.and_then(|s| s.get(key)).map_or_else(|| "n/a".into(), |v| format!("{v:.2}"))
}

fn table(
    main: &BTreeMap<Vendor, Pair>,
    ten: &BTreeMap<Vendor, Pair>,
    (maps, warn): (&Pair, &Pair),
    sim_off: &Pair,
    mem: &Pair,
    mem_regs: usize,
    sys: Option<&BTreeMap<&'static str, f64>>,
) -> String {
    let mut t = String::from(
        "| figure | vendor | bare | under regcheck | added | share of mlock+munlock 2 MiB | goal | system calls added per call |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let row = |t: &mut String, fig: &str, v: Vendor, p: &Pair, key: &str, anchor: Option<f64>, goal: &str, sc: &str| {
        *t += &format!(
            "| {fig} | {} | {} | {} | {} | {} | {goal} | {sc} |\n",
            v.name(),
            time(p.bare(key)),
            time(p.checked(key)),
            added(p.added(key)),
            if anchor.is_some() { share(p.added(key), anchor) } else { "".into() },
        );
    };
    for (&v, p) in main {
        let a = p.anchor("mlock");
        t += &format!(
            "| mlock+munlock of 2 MiB (the anchor) | {} | {} | {} | | | | |\n",
            v.name(),
            time(p.bare("mlock")),
            time(p.checked("mlock"))
        );
        let goal = goal_share(p, "regunreg", a, if v == Vendor::StandIn { 0.25 } else { 2.0 });
        row(
            &mut t,
            "aclrtHostRegisterV2 + aclrtHostUnregister of 2 MiB",
            v,
            p,
            "regunreg",
            a,
            &goal,
            &calls(sys, "regunreg"),
        );
        if v == Vendor::Simulator {
            let what = "the same, regcheck loaded with REGCHECK_MODE=off (checks nothing)";
            row(&mut t, what, v, sim_off, "regunreg", a, "", "");
        } else {
            let what = "the same, 2 MiB less 64 bytes: a warning on every call (ACL-HOSTREG-SIZE-PAGES), past \
                        REGCHECK_MAX_REPEATS (counted and kept in the findings log, not logged)";
            row(&mut t, what, v, p, "regwarn", a, "", "");
        }
        row(&mut t, "dlsym of a name regcheck does not check (aclrtGetDevice)", v, p, "dlsym", None, "<= +250 ns", "");
        row(
            &mut t,
            &format!("aclrtHostGetDevicePointer, {MAIN_REGS} live registrations"),
            v,
            p,
            "devptr",
            None,
            &if v == Vendor::StandIn { goal_ns(p, "devptr", 5.0) } else { String::new() },
            &calls(sys, "devptr"),
        );
        if v == Vendor::Simulator {
            // No HIXL figures: the simulator's engines transfer over TCP (see `command`).
            continue;
        }
        row(
            &mut t,
            &format!(
                "Hixl::TransferSync per op, 64 ops, {MAIN_REGS} registrations per side, comm engine (default options)"
            ),
            v,
            p,
            "xfer64",
            None,
            &goal_ns(p, "xfer64", 5.0),
            &calls(sys, "xfer64"),
        );
        if let Some(p10) = ten.get(&v) {
            let ratio = match (p.added("xfer64"), p10.added("xfer64")) {
                (Some(a), Some(b)) if b > 0.0 => format!(" (n=4000 / n=10: {:.2}x)", a / b),
                _ => String::new(),
            };
            row(
                &mut t,
                &format!("Hixl::TransferSync per op, 64 ops, 10 registrations per side{ratio}"),
                v,
                p10,
                "xfer64",
                None,
                "n=4000 within 1.5x of n=10",
                "",
            );
        }
        row(
            &mut t,
            &format!("Hixl::TransferSync of one op, per call, {MAIN_REGS} registrations per side, comm engine"),
            v,
            p,
            "xfer1",
            None,
            &goal_ns(p, "xfer1", 15.0),
            &calls(sys, "xfer1"),
        );
        // hixl_cs (LocalCommRes version 1.3): the vendor answers first, regcheck explains a failure.
        row(
            &mut t,
            &format!("Hixl::TransferSync per op, 64 ops, {MAIN_REGS} registrations per side, hixl_cs engine (the vendor answers first)"),
            v,
            p,
            "csxfer64",
            None,
            &goal_ns(p, "csxfer64", 5.0),
            "",
        );
        row(
            &mut t,
            &format!("Hixl::TransferSync of one op, per call, {MAIN_REGS} registrations per side, hixl_cs engine"),
            v,
            p,
            "csxfer1",
            None,
            &goal_ns(p, "csxfer1", 15.0),
            &calls(sys, "csxfer1"),
        );
    }
    let a = maps.anchor("maps_mlock");
    row(
        &mut t,
        &format!("register + unregister of 2 MiB, /proc/self/maps fallback (REGCHECK_TEST_MEMMAP=maps), {MAPPINGS} more mappings"),
        Vendor::StandIn,
        maps,
        "maps_regunreg",
        a,
        "< 5%",
        "",
    );
    row(
        &mut t,
        "aclrtHostUnregister of a pointer never registered: a warning on every call (ACL-HOSTUNREG-NOT-REGISTERED), REGCHECK_LOG=off",
        Vendor::StandIn,
        warn,
        "unregwarn",
        None,
        &goal_ns(warn, "unregwarn", 300.0),
        &calls(sys, "unregwarn"),
    );
    // Heap allocations per call: none on a clean look-up or transfer (the goal; `run` fails
    // the benchmark otherwise).
    let n = |p: Option<&Pair>, key: &str| {
        p.and_then(|p| allocations(p, key)).map_or_else(|| "-".into(), |v| format!("{v:.2}"))
    };
    let standin = main.get(&Vendor::StandIn);
    t += &format!(
        "\nHeap allocations regcheck adds per call (stand-in; goal: none on a clean call): aclrtHostGetDevicePointer {}, Hixl::TransferSync of 64 ops {}, of one op {} (hixl_cs: {}); aclrtHostRegisterV2 + aclrtHostUnregister of 2 MiB {} (its record and the view of its range); the unlogged warning {}\n",
        n(standin, "devptr"),
        n(standin, "xfer64"),
        n(standin, "xfer1"),
        n(standin, "csxfer1"),
        n(standin, "regunreg"),
        n(Some(warn), "unregwarn"),
    );
    t += &format!(
        "\nSystem calls regcheck adds per Hixl::RegisterMem + DeregisterMem on a listening engine no peer linked to (stand-in), the registration's own PROCMAP_QUERY included: {} counting the peers' connections with sock_diag netlink (REGCHECK_TEST_PEERS=diag; the kernel's answer walks its whole connection table), {} through /proc/self/fd (fd; grows with the process's descriptors); by default each count takes the way that was cheaper lately\n",
        calls(sys, "hixlreg_diag"),
        calls(sys, "hixlreg_fd")
    );
    let bytes = |k: &str| mem.added(k).map_or_else(|| "-".into(), |v| format!("{v:.0} B"));
    t += &format!(
        "\nMemory regcheck keeps per live registration ({mem_regs} aclrtHostRegisterV2 registrations, stand-in): heap {}, resident {}\n",
        bytes("mem_heap"),
        bytes("mem_rss")
    );
    t
}

fn scale_table(scale: &BTreeMap<usize, Pair>) -> String {
    let mut t = String::from(
        "Added time by live registrations (stand-in; HIXL: min(n, 4000) per side)\n\n\
         | live registrations | register + unregister 2 MiB | aclrtHostGetDevicePointer | TransferSync per op (64 ops) | TransferSync, one op |\n\
         |---|---|---|---|---|\n",
    );
    for (n, p) in scale {
        t += &format!(
            "| {n} | {} | {} | {} | {} |\n",
            added(p.added("regunreg")),
            added(p.added("devptr")),
            added(p.added("xfer64")),
            added(p.added("xfer1"))
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_strace_total() {
        let text = "% time     seconds  usecs/call     calls    errors syscall\n\
                    ------ ----------- ----------- --------- --------- ----------------\n\
                     60.00    0.000060           6        10           ioctl\n\
                    ------ ----------- ----------- --------- --------- ----------------\n\
                    100.00    0.000100           3        31         2 total\n";
        assert_eq!(strace_total(text), Some(31.0));
        assert_eq!(strace_total("100.00    0.000100           3        31 total\n"), Some(31.0));
        assert_eq!(strace_total("nothing"), None);
    }
}
