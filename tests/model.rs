//! Model-based property tests of the front ends, through the C door: proptest generates
//! sequences of host registrations (V2 and V1), unregistrations, device-pointer queries and
//! frees over every kind of memory (tests/c/acl_model.c runs them against the simulator with
//! libregcheck.so linked), and of HIXL registrations, deregistrations, connects, disconnects
//! and transfers on two engines (tests/c/hixl_model.cpp); a model of the documented rules
//! predicts each call. After every step:
//! * no crash, and every code is one the vendor documents for these calls;
//! * regcheck's registry (`regcheck_live_host_registrations`) equals the model's;
//! * in `enforce` mode a call the model calls valid is forwarded and succeeds, and a call a
//!   documented rule forbids never reaches the vendor;
//! * in `report` mode every call is forwarded, and the registry follows the vendor's answers.
//!
//! Fixed seed, `CASES` sequences per mode.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use testkit::{Link, Program};

const CASES: u32 = 48;
const POOL_PAGES: u64 = 16;
const SLOTS: u64 = 4;
const SLOT_PAGES: u64 = 4;
const MAPPED: u32 = 0x2;
const PINNED: u32 = 0x1000_0000;

/// Memory kinds of the driver (see tests/c/acl_model.c).
const HEAP: u64 = 0;
const MALLOC_HOST: u64 = 1;
const READ_ONLY: u64 = 2;
const HOLE: u64 = 3;
const FILE: u64 = 4;
const KERNEL: u64 = 5;
const STACK: u64 = 6;
const SLOT0: u64 = 7;

/// Codes the vendor documents for these calls (507899 only reaches the caller in report mode).
const DOCUMENTED: &[i64] = &[0, 100000, 107000, 107002, 207000, 507899, 507910, 507911];

#[derive(Debug, Clone)]
enum Op {
    RegV2 { kind: u64, page: u64, pages: u64, flag: u32, misalign: u64 },
    RegV1 { kind: u64, page: u64, pages: u64 },
    Unreg { kind: u64, page: u64, off: u64 },
    DevPtr { kind: u64, page: u64, off: u64 },
    Free { slot: u64 },
}

impl Op {
    fn line(&self) -> String {
        match self {
            Op::RegV2 { kind, page, pages, flag, misalign } => format!("r2 {kind} {page} {pages} {flag} {misalign}"),
            Op::RegV1 { kind, page, pages } => format!("r1 {kind} {page} {pages}"),
            Op::Unreg { kind, page, off } => format!("u {kind} {page} {off}"),
            Op::DevPtr { kind, page, off } => format!("d {kind} {page} {off}"),
            Op::Free { slot } => format!("f {slot}"),
        }
    }
}

fn pool_pages(kind: u64) -> u64 {
    if kind >= SLOT0 {
        SLOT_PAGES
    } else {
        POOL_PAGES
    }
}

fn range_in(kind: u64) -> impl Strategy<Value = (u64, u64, u64)> {
    let n = pool_pages(kind);
    (0..n).prop_flat_map(move |page| (Just(kind), Just(page), 0..=(n - page)))
}

fn op() -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        4 => Just(HEAP), 3 => Just(MALLOC_HOST), 1 => Just(READ_ONLY), 1 => Just(HOLE), 1 => Just(FILE),
        1 => Just(KERNEL), 1 => Just(STACK), 4 => SLOT0..SLOT0 + SLOTS,
    ];
    let flag = prop_oneof![4 => Just(MAPPED), 2 => Just(MAPPED | PINNED), 1 => Just(PINNED), 1 => Just(0u32), 1 => Just(0x4u32), 1 => Just(0x40u32)];
    prop_oneof![
        5 => (kind.clone().prop_flat_map(range_in), flag, prop_oneof![6 => Just(0u64), 1 => 1u64..4096])
            .prop_map(|((kind, page, pages), flag, misalign)| Op::RegV2 { kind, page, pages, flag, misalign }),
        2 => kind.clone().prop_flat_map(range_in).prop_map(|(kind, page, pages)| Op::RegV1 { kind, page, pages }),
        4 => (kind.clone().prop_flat_map(|k| (Just(k), 0..pool_pages(k))), prop_oneof![4 => Just(0u64), 1 => 1u64..4096])
            .prop_map(|((kind, page), off)| Op::Unreg { kind, page, off }),
        2 => (kind.prop_flat_map(|k| (Just(k), 0..pool_pages(k))), 0u64..4096)
            .prop_map(|((kind, page), off)| Op::DevPtr { kind, page, off }),
        1 => (0..SLOTS).prop_map(|slot| Op::Free { slot }),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reg {
    kind: u64,
    page: u64,
    pages: u64,
    mapped: bool,
}

/// What the rules say of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AclVerdict {
    Valid,
    Forbidden,
    Warned,
}

/// The documented rules, over memory in page coordinates.
#[derive(Debug, Default)]
struct Model {
    regs: Vec<Reg>,
    freed: [bool; SLOTS as usize],
}

impl Model {
    /// A generated op the driver must not run: registering into freed memory (its pages may
    /// be mapped again by anything) or freeing twice.
    fn skip(&self, op: &Op) -> bool {
        match *op {
            Op::RegV2 { kind, .. } | Op::RegV1 { kind, .. } => kind >= SLOT0 && self.freed[(kind - SLOT0) as usize],
            Op::Free { slot } => self.freed[slot as usize],
            _ => false,
        }
    }

    fn page_locked(kind: u64) -> bool {
        kind == MALLOC_HOST || kind >= SLOT0
    }

    /// What the rules say of a registration: `Valid`, `Forbidden` (regcheck rejects it), or
    /// `Warned` (regcheck warns and the vendor decides: IOMEMORY, PINNED on page-locked memory,
    /// a thread's stack, which no public code refuses).
    /// On the driver's path, which regcheck knows (it asks the driver for its pinned-register
    /// feature), a PINNED-only registration reaches the driver like any other and its overlaps
    /// count.
    fn register(&self, kind: u64, page: u64, pages: u64, flag: u32, misalign: u64) -> AclVerdict {
        let flag_ok = flag != 0 && flag & !(MAPPED | PINNED | 0x4 | 0x8) == 0;
        let reserved = flag & (0x4 | 0x8) != 0;
        let memory_ok = matches!(kind, HEAP | MALLOC_HOST | STACK) || kind >= SLOT0;
        let pinned_locked = flag & PINNED != 0 && Self::page_locked(kind);
        let overlaps = self.regs.iter().any(|r| r.kind == kind && r.page < page + pages && page < r.page + r.pages);
        let driver_ok = misalign == 0 && memory_ok;
        if pages == 0 || !flag_ok || overlaps || !driver_ok {
            AclVerdict::Forbidden
        } else if reserved || pinned_locked || kind == STACK {
            AclVerdict::Warned
        } else {
            AclVerdict::Valid
        }
    }

    /// The model's verdict, and the update to make when the vendor accepted the call.
    fn step(&mut self, op: &Op, rc: i64) -> AclVerdict {
        let accepted = rc == 0;
        match *op {
            Op::RegV2 { kind, page, pages, flag, misalign } => {
                let verdict = self.register(kind, page, pages, flag, misalign);
                if accepted {
                    // IOMEMORY and READONLY registrations get a device address like MAPPED.
                    self.regs.push(Reg { kind, page, pages, mapped: flag & (MAPPED | 0x4 | 0x8) != 0 });
                }
                verdict
            }
            Op::RegV1 { kind, page, pages } => {
                // V1 over a PINNED-only registration too: the driver's path refuses it (507910).
                let verdict = self.register(kind, page, pages, MAPPED, 0);
                if accepted {
                    self.regs.push(Reg { kind, page, pages, mapped: true });
                }
                verdict
            }
            Op::Unreg { kind, page, off } => {
                let at = self.regs.iter().position(|r| r.kind == kind && r.page == page);
                let valid = off == 0 && at.is_some();
                if accepted {
                    if let Some(i) = at {
                        self.regs.remove(i);
                    }
                }
                if valid {
                    AclVerdict::Valid
                } else {
                    AclVerdict::Forbidden
                }
            }
            Op::DevPtr { kind, page, .. } => {
                if self.regs.iter().any(|r| r.kind == kind && r.mapped && r.page <= page && page < r.page + r.pages) {
                    AclVerdict::Valid
                } else {
                    AclVerdict::Forbidden
                }
            }
            Op::Free { slot } => {
                // Allowed (ACL-FREEHOST-REGISTERED only warns); registrations inside stay.
                if accepted {
                    self.freed[slot as usize] = true;
                }
                AclVerdict::Valid
            }
        }
    }
}

fn driver() -> &'static std::path::Path {
    static EXE: OnceLock<std::path::PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        Program::c("acl_model", &["tests/c/acl_model.c"]).link(Link::RegcheckShared).libs(&["ascendcl"]).build()
    })
}

/// Runs a driver with `script` on its stdin; its stdout and stderr. Panics (with both) when it
/// crashed or failed. Bounded: a script is a few dozen calls, and the driver exits at its end.
fn run_driver(cmd: &mut Command, script: &str) -> (String, String) {
    let mut child = cmd
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH") // cargo's, for the test binary: the driver has its run path
        .env_remove("ACLSIM_TRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the driver");
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "the driver crashed or failed: {}\nscript:\n{script}\n{stdout}\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

struct Step {
    rc: i64,
    fwd: u64,
    live: u64,
}

/// Runs the script; the driver's lines, and its stderr for messages.
fn run_script(ops: &[Op], mode: &str) -> (Vec<Step>, String) {
    let file = testkit::target_dir().join(format!("model-file-{mode}-{}.bin", std::process::id()));
    let script: String = ops.iter().map(|o| o.line() + "\n").collect();
    let (stdout, stderr) = run_driver(
        // The model is regcheck's rules with whole records (the LD_AUDIT module loaded, as
        // `regcheck run --audit` runs a program) on the driver's registration path (per-device
        // registrations, a device reset ends them).
        testkit::command(driver())
            .arg(&file)
            .env("LD_AUDIT", testkit::regcheck().audit)
            .env("ACLSIM_PIN_REGISTER", "1")
            .env("ACLSIM_CANN_VERSION", "9.2.0")
            .env("REGCHECK_MODE", mode)
            .env("REGCHECK_KERNEL_RELEASE", "6.6.0")
            .env("ACLSIM_KERNEL_RELEASE", "6.6.0"),
        &script,
    );
    let _ = std::fs::remove_file(&file);
    let steps = stdout
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Step { rc: w[3].parse().unwrap(), fwd: w[5].parse().unwrap(), live: w[7].parse().unwrap() }
        })
        .collect();
    (steps, stderr)
}

fn check(ops: Vec<Op>, mode: &str) -> Result<(), TestCaseError> {
    // Drop the ops the driver must not run (the model says which, in order).
    let mut probe = Model::default();
    let mut script = Vec::new();
    for op in ops {
        if probe.skip(&op) {
            continue;
        }
        if let Op::Free { slot } = op {
            probe.freed[slot as usize] = true;
        }
        script.push(op);
    }
    let (steps, stderr) = run_script(&script, mode);
    prop_assert_eq!(steps.len(), script.len(), "{}", stderr);
    let mut model = Model::default();
    for (i, (op, s)) in script.iter().zip(&steps).enumerate() {
        let ctx = || format!("step {i}: {op:?} -> rc {} fwd {}\nscript: {script:?}\n{stderr}", s.rc, s.fwd);
        prop_assert!(DOCUMENTED.contains(&s.rc), "undocumented code: {}", ctx());
        let verdict = model.step(op, s.rc);
        if mode == "enforce" {
            match verdict {
                AclVerdict::Valid => {
                    prop_assert_eq!((s.fwd, s.rc), (1, 0), "a valid call is forwarded and succeeds: {}", ctx());
                }
                AclVerdict::Forbidden => {
                    prop_assert!(s.rc != 507899, "the driver's opaque error reached the caller: {}", ctx());
                    // A device-pointer look-up is the vendor's to answer first (every refusal
                    // of it is the vendor's own, with the same code and out-value); regcheck
                    // explains the failure.
                    let fwd = u64::from(matches!(op, Op::DevPtr { .. }));
                    prop_assert_eq!(s.fwd, fwd, "a forbidden call never reaches the vendor: {}", ctx());
                    prop_assert!(s.rc != 0, "{}", ctx());
                }
                AclVerdict::Warned => prop_assert_eq!(s.fwd, 1, "a warned call is the vendor's to decide: {}", ctx()),
            }
        } else {
            prop_assert_eq!(s.fwd, 1, "report mode forwards everything: {}", ctx());
        }
        prop_assert_eq!(s.live, model.regs.len() as u64, "regcheck's registry equals the model's: {}", ctx());
    }
    Ok(())
}

fn config(seed: u64) -> Config {
    Config { cases: CASES, rng_seed: RngSeed::Fixed(seed), failure_persistence: None, ..Config::default() }
}

proptest! {
    #![proptest_config(config(0xac10_0001))]
    #[test]
    fn acl_sequences_enforce(ops in prop::collection::vec(op(), 1..40)) {
        check(ops, "enforce")?;
    }
}

proptest! {
    #![proptest_config(config(0xac10_0002))]
    #[test]
    fn acl_sequences_report(ops in prop::collection::vec(op(), 1..40)) {
        check(ops, "report")?;
    }
}

// ---------------------------------------------------------------------------------------
// HIXL: two engines in one process, registrations, links and transfers
// ---------------------------------------------------------------------------------------

/// Codes HIXL documents: SUCCESS, PARAM_INVALID, TIMEOUT, NOT_CONNECTED, ALREADY_CONNECTED,
/// FAILED.
const HIXL_DOCUMENTED: &[i64] = &[0, 103900, 103901, 103902, 103903, 503900];

#[derive(Debug, Clone)]
enum HOp {
    Reg { e: u64, page: u64, pages: u64 },
    Dereg { e: u64, index: u64 },
    Connect { e: u64 },
    Disconnect { e: u64 },
    Xfer { e: u64, index: u64, off: u64, len: u64 },
}

impl HOp {
    fn line(&self) -> String {
        match self {
            HOp::Reg { e, page, pages } => format!("r {e} {page} {pages}"),
            HOp::Dereg { e, index } => format!("d {e} {index}"),
            HOp::Connect { e } => format!("c {e}"),
            HOp::Disconnect { e } => format!("u {e}"),
            HOp::Xfer { e, index, off, len } => format!("x {e} {index} {off} {len}"),
        }
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

fn hop() -> impl Strategy<Value = HOp> {
    let pg = page_size();
    prop_oneof![
        5 => (0..2u64, range_in(HEAP)).prop_map(|(e, (_, page, pages))| HOp::Reg { e, page, pages }),
        2 => (0..2u64, 0..8u64).prop_map(|(e, index)| HOp::Dereg { e, index }),
        2 => (0..2u64).prop_map(|e| HOp::Connect { e }),
        1 => (0..2u64).prop_map(|e| HOp::Disconnect { e }),
        4 => (0..2u64, 0..10u64, 0..4 * pg, 1..2 * pg).prop_map(|(e, index, off, len)| HOp::Xfer { e, index, off, len }),
    ]
}

/// What the HIXL model says of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// No documented rule objects: forwarded (and, for (de)registrations, accepted).
    Valid,
    /// A documented rule that rejects on every engine forbids it: never forwarded in enforce mode.
    Forbidden,
    /// A rule whose action depends on the engine HIXL selects (late registration, staged
    /// transfers, deregistration while linked, empty regions): only the codes and the registry
    /// are checked.
    Unjudged,
}

/// HIXL's documented rules, in byte offsets into each engine's pool.
#[derive(Debug, Default)]
struct HixlModel {
    /// Live registrations: (handle, engine, start, end).
    live: Vec<(u64, u64, u64, u64)>,
    /// The driver's table of returned handles: (engine, start).
    table: Vec<(u64, u64)>,
    /// `links[e]`: engine e connected to the other.
    links: [bool; 2],
    /// `seen[e]`: the other engine's registrations when engine e's link was made.
    seen: [Vec<(u64, u64)>; 2],
}

impl HixlModel {
    /// A link in either direction: registering (or deregistering) now comes too late.
    fn linked(&self) -> bool {
        self.links[0] || self.links[1]
    }

    /// The model's verdict, and the update once the vendor answered `rc` (`handle`: what
    /// RegisterMem returned, or the handle DeregisterMem was given).
    fn step(&mut self, op: &HOp, rc: i64, handle: u64) -> Verdict {
        let pg = page_size();
        let ok = rc == 0;
        match *op {
            HOp::Reg { e, page, pages } => {
                let (s, t) = (page * pg, (page + pages) * pg);
                let identical = self.live.iter().any(|r| r.1 == e && r.2 == s && r.3 == t);
                // Byte overlap with a non-identical live region (an empty region overlaps nothing).
                let overlap =
                    self.live.iter().any(|r| r.1 == e && r.2 < r.3 && r.2 < t && s < r.3 && !(r.2 == s && r.3 == t));
                let verdict = if pages == 0 {
                    Verdict::Unjudged // an empty region overlaps nothing; its rule depends on the engine
                } else if overlap {
                    Verdict::Forbidden
                } else if self.linked() {
                    Verdict::Unjudged
                } else {
                    Verdict::Valid
                };
                if ok {
                    self.table.push((e, s));
                    if !identical && !self.live.iter().any(|r| r.0 == handle) {
                        self.live.push((handle, e, s, t));
                    }
                }
                verdict
            }
            HOp::Dereg { e, .. } => {
                let on_e = self.live.iter().position(|r| r.0 == handle && r.1 == e);
                if ok {
                    if let Some(i) = on_e {
                        self.live.remove(i);
                    }
                }
                if on_e.is_some() && !self.linked() {
                    Verdict::Valid
                } else {
                    Verdict::Unjudged
                }
            }
            HOp::Connect { e } => {
                if ok && !self.links[e as usize] {
                    self.links[e as usize] = true;
                    let other = 1 - e;
                    self.seen[e as usize] = self.live.iter().filter(|r| r.1 == other).map(|r| (r.2, r.3)).collect();
                }
                Verdict::Valid
            }
            HOp::Disconnect { e } => {
                if ok {
                    self.links[e as usize] = false;
                }
                Verdict::Valid
            }
            HOp::Xfer { e, index, off, len } => {
                if !self.links[e as usize] {
                    return Verdict::Forbidden;
                }
                let (owner, base) = self.table.get(index as usize).copied().unwrap_or((e, 0));
                let (s, t) = (base + off, base + off + len);
                let local = owner == e && self.live.iter().any(|r| r.1 == e && r.2 <= s && t <= r.3);
                let remote = self.seen[e as usize].iter().any(|&(rs, rt)| rs <= off && off + len <= rt)
                    && self.live.iter().any(|r| r.1 == 1 - e && r.2 <= off && off + len <= r.3);
                if local && remote {
                    Verdict::Valid
                } else {
                    Verdict::Unjudged
                }
            }
        }
    }
}

fn hixl_driver() -> &'static std::path::Path {
    static EXE: OnceLock<std::path::PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        Program::cxx("hixl_model", &["tests/c/hixl_model.cpp"])
            .link(Link::RegcheckShared)
            .libs(&["cann_hixl", "ascendcl"])
            .build()
    })
}

fn check_hixl(ops: Vec<HOp>, mode: &str) -> Result<(), TestCaseError> {
    let script: String = ops.iter().map(|o| o.line() + "\n").collect();
    let (stdout, stderr) = run_driver(testkit::command(hixl_driver()).env("REGCHECK_MODE", mode), &script);
    let lines: Vec<Vec<i64>> = stdout
        .lines()
        .map(|l| l.split_whitespace().filter_map(|w| w.parse::<i64>().ok()).collect::<Vec<i64>>())
        .collect();
    prop_assert_eq!(lines.len(), ops.len(), "{}", stderr);
    let mut model = HixlModel::default();
    for (i, (op, w)) in ops.iter().zip(&lines).enumerate() {
        // op <i> rc <rc> fwd <fwd> h <handle> live <live>
        let (rc, fwd, handle, live) = (w[1], w[2], w[3] as u64, w[4] as u64);
        let ctx = || format!("step {i}: {op:?} -> rc {rc} fwd {fwd}\nscript: {ops:?}\n{stderr}");
        prop_assert!(HIXL_DOCUMENTED.contains(&rc), "undocumented code: {}", ctx());
        let verdict = model.step(op, rc, handle);
        if mode == "enforce" {
            match verdict {
                Verdict::Valid => {
                    prop_assert_eq!(fwd, 1, "a valid call is forwarded: {}", ctx());
                    if matches!(op, HOp::Reg { .. } | HOp::Dereg { .. }) {
                        prop_assert_eq!(rc, 0, "and succeeds: {}", ctx());
                    }
                }
                Verdict::Forbidden => {
                    prop_assert_eq!(fwd, 0, "a forbidden call never reaches the vendor: {}", ctx());
                    prop_assert!(rc != 0, "{}", ctx());
                }
                Verdict::Unjudged => {}
            }
        } else {
            prop_assert_eq!(fwd, 1, "report mode forwards everything: {}", ctx());
        }
        prop_assert_eq!(live, model.live.len() as u64, "regcheck's registry equals the model's: {}", ctx());
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 24, ..config(0xac10_0003) })]
    #[test]
    fn hixl_sequences_enforce(ops in prop::collection::vec(hop(), 1..30)) {
        check_hixl(ops, "enforce")?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 24, ..config(0xac10_0004) })]
    #[test]
    fn hixl_sequences_report(ops in prop::collection::vec(hop(), 1..30)) {
        check_hixl(ops, "report")?;
    }
}
