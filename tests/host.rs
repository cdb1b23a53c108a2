//! "Never hurting the host process", through the doors users use: a panic inside regcheck in
//! any interposed HIXL function is caught and the call forwarded; a call re-entering regcheck
//! from inside regcheck goes straight to the vendor; no lock is held while the vendor runs;
//! nothing runs at load time.

use std::sync::OnceLock;

use testkit::{Link, Mode, Outcome, Program, Run, Scenarios, MODES};

const LIBS: &[&str] = &["cann_hixl", "ascendcl"];

fn hixl_every_call() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| {
        Scenarios::build(|l| Program::cxx("hixl_every_call", &["tests/c/hixl_every_call.cpp"]).link(l).libs(LIBS))
    })
}

fn codes(o: &Outcome) -> Vec<(String, i64)> {
    o.rc_lines()
}

/// The interposed HIXL functions, as regcheck names them in its log, with how many times the
/// program calls each (the simulator's trace name is the same but for the constructors and
/// destructors: `Hixl::Hixl` and `Hixl::~Hixl`, C1 and C2 alike).
const HIXL_CALLS: &[(&str, usize)] = &[
    ("Hixl::Hixl", 2),
    ("Hixl::~Hixl", 2),
    ("Hixl::Initialize", 2),
    ("Hixl::RegisterMem", 2),
    ("Hixl::Connect", 1),
    ("Hixl::TransferSync", 1),
    ("Hixl::TransferAsync", 1),
    ("Hixl::Disconnect", 1),
    ("Hixl::ConnectAsync", 1),
    ("Hixl::DisconnectAsync", 1),
    ("Hixl::DeregisterMem", 2),
    ("Hixl::Finalize", 4), // twice by the program, twice by the destructors
    ("HixlCSServerCreate", 1),
    ("HixlCSServerRegMem", 1),
    ("HixlCSClientCreate", 1),
    ("HixlCSClientRegMem", 1),
    ("HixlCSClientConnect", 1),
    ("HixlCSClientUnregMem", 1),
    ("HixlCSClientDestroy", 1),
    ("HixlCSServerUnregMem", 1),
    ("HixlCSServerDestroy", 1),
];

fn run(mode: Mode, panic_at: &str) -> Outcome {
    hixl_every_call().run(mode).env("REGCHECK_TEST_PANIC", panic_at).run()
}

/// With a panic forced in the check or the record phase of every interposed HIXL function,
/// each call still reaches the vendor once and returns what it returns without regcheck, the
/// process lives, and the failure is logged naming the call.
#[test]
fn a_panic_in_any_hixl_function_is_caught_and_the_call_forwarded() {
    let bare = hixl_every_call().bare().run();
    assert_eq!(bare.code(), Some(0), "{}", bare.dump());
    let want = codes(&bare);
    assert_eq!(want.len(), 21, "{}", bare.dump());
    assert!(want.iter().all(|(_, c)| *c == 0), "every call is valid: {}", bare.dump());
    for (at, phase) in [("", ""), ("check", "checking"), ("record", "recording the result of")] {
        for mode in MODES {
            let o = run(mode, at);
            let ctx = || format!("REGCHECK_TEST_PANIC={at:?} {mode:?}\n{}", o.dump());
            assert_eq!(o.code(), Some(0), "the process survives: {}", ctx());
            assert_eq!(codes(&o), want, "forwarded as is: {}", ctx());
            for (name, n) in HIXL_CALLS {
                assert_eq!(o.sim_calls(name), *n, "{name} reached the vendor: {}", ctx());
                let logged = format!("internal failure in regcheck while {phase} {name}:");
                // Every call has a record phase but a transfer without AutoConnect (a
                // transfer's records only the links AutoConnect makes and drops).
                let phases =
                    if at == "record" && (name.ends_with("::TransferSync") || name.ends_with("::TransferAsync")) {
                        0
                    } else {
                        *n
                    };
                if at.is_empty() {
                    assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                } else {
                    assert_eq!(o.stderr.matches(&logged).count(), phases, "`{logged}`: {}", ctx());
                }
            }
        }
    }
}

/// `tests/c/shim_user.c` over `tests/c/vendor_shim.c` (the "vendor" regcheck finds), the three
/// ways: regcheck, then the shim, then the simulator.
fn shim_user() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| {
        let shim = Program::c("libvendor_shim.so", &["tests/c/vendor_shim.c"])
            .link(Link::Bare)
            .libs(&["ascendcl"])
            .flag("-shared")
            .flag("-fPIC")
            .flag("-ldl")
            .build();
        let dir = shim.parent().expect("a directory").to_path_buf();
        Scenarios::build(move |l| {
            let p = Program::c("shim_user", &["tests/c/shim_user.c"]);
            let p = if l == Link::Bare { p } else { p.define("REGCHECK_LINKED") };
            p.link(l)
                .libs(&[])
                .flag(&format!("-L{}", dir.display()))
                .flag("-lvendor_shim")
                .flag("-lascendcl")
                .flag(&format!("-Wl,-rpath,{}", dir.display()))
        })
    })
}

/// A call that re-enters regcheck from inside regcheck's own code (here: the vendor's
/// aclrtGetDevice, which regcheck asks while checking aclrtHostRegisterV2, calls
/// aclrtHostRegisterV2 itself) goes straight to the vendor: not checked, not rejected, no
/// message; only the outer call is checked.
#[test]
fn a_call_reentering_regcheck_goes_straight_to_the_vendor() {
    for mode in MODES {
        let o = shim_user().run(mode).arg("reentry").run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        assert_eq!(
            codes(&o),
            vec![("register".to_string(), 0), ("unregister".to_string(), 0)],
            "the outer calls: {}",
            ctx()
        );
        // the inner, misaligned call reached the simulator, which refused it with its own code
        assert!(o.stdout.contains("reentered_rc 507899\n"), "{}", ctx());
        let v2 = o.sim_results("aclrtHostRegisterV2");
        assert_eq!(v2, vec!["507899".to_string(), "0".to_string()], "{}", ctx());
        assert!(!o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "the inner call was not checked: {}", ctx());
        assert!(!o.stderr.contains("regcheck: "), "no message at all: {}", ctx());
    }
}

/// No lock is held while the vendor runs, on the ACL path: while the (shimmed) vendor's
/// aclrtHostRegisterV2 runs, another thread calls regcheck's C API and a checked ACL function,
/// which both take regcheck's state lock; the vendor waits for that thread (at most 10 s).
#[test]
fn no_lock_is_held_while_the_acl_vendor_runs() {
    for mode in MODES {
        let o = shim_user().run(mode).arg("lock").run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert!(!o.stdout.contains("probe blocked"), "regcheck held its lock while the vendor ran: {}", ctx());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        // the other thread got through: no registration yet, and an unregistered pointer,
        // which regcheck does not reject without LD_AUDIT: the vendor answers (that thread
        // has no context: 107002)
        assert!(o.stdout.contains("probe live=0 devptr_rc=107002\nprobe finished\n"), "{}", ctx());
        assert!(!o.stderr.contains("regcheck: error: [ACL-DEVPTR-NOT-MAPPED]"), "{}", ctx());
        assert_eq!(codes(&o), vec![("register".to_string(), 0), ("unregister".to_string(), 0)], "{}", ctx());
    }
}

fn load_time() -> &'static Scenarios {
    static S: OnceLock<Scenarios> = OnceLock::new();
    S.get_or_init(|| {
        Scenarios::build(|l| Program::c("load_time", &["tests/c/load_time.c"]).link(l).libs(&["ascendcl"]).flag("-ldl"))
    })
}

/// Nothing runs at load time but the registration of regcheck's `fork()` handlers (a few
/// `pthread_atfork` calls, see `src/ffi/mod.rs`): loading libregcheck.so reads no variable
/// (neither through `getenv` nor by walking `environ`, as `std::env::vars_os` does), opens no
/// file, asks nothing of the kernel, starts no thread; all of that happens at the first
/// intercepted call (which the same counters see, so they can see it).
#[test]
fn nothing_runs_at_load_time() {
    let rc = testkit::regcheck();
    let o = Run::new(load_time().bare_exe()).arg("dlopen").arg(&rc.shared).run();
    let ctx = || o.dump();
    assert_eq!(o.code(), Some(0), "{}", ctx());
    assert!(o.stdout.contains("load_calls 0 -\n"), "regcheck did work while it was loaded: {}", ctx());
    let threads: Vec<&str> =
        o.stdout.lines().find_map(|l| l.strip_prefix("threads ")).map(|t| t.split(' ').collect()).unwrap_or_default();
    assert!(threads.len() == 2 && threads[0] == threads[1], "a thread was started at load: {}", ctx());
    assert_eq!(codes(&o), vec![("register".to_string(), 100000)], "checked at the first call: {}", ctx());
    let first: usize = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("first_call_calls "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(first > 0, "the counters see regcheck start at the first call: {}", ctx());
    assert!(
        o.stdout.contains("first_call_environ 1\n"),
        "the counters see the configuration read from `environ` at the first call: {}",
        ctx()
    );
}

/// The `REGCHECK_*` variables are read on the first intercepted call (a value set by the
/// program after it started, before that call, is used) and only then (a later change is not).
#[test]
fn configuration_is_read_once_on_the_first_intercepted_call() {
    for mode in MODES {
        let o = load_time().run(mode).arg("read_once").run();
        let ctx = || format!("{mode:?}\n{}", o.dump());
        assert_eq!(o.code(), Some(0), "{}", ctx());
        // both misaligned registrations reach the simulator, which refuses them itself
        assert_eq!(codes(&o), vec![("off".to_string(), 507899), ("still_off".to_string(), 507899)], "{}", ctx());
        assert!(!o.stderr.contains("[ACL-HOSTREG-ALIGN]"), "{}", ctx());
    }
}
