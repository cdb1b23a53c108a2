//! "Never hurting the host process", through the doors users use: a panic inside regcheck in
//! any interposed HIXL function is caught and the call forwarded.

use std::sync::OnceLock;

use testkit::{Mode, Outcome, Program, Scenarios, MODES};

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
                if at.is_empty() {
                    assert!(!o.stderr.contains("internal failure"), "{}", ctx());
                } else {
                    assert_eq!(o.stderr.matches(&logged).count(), *n, "`{logged}`: {}", ctx());
                }
            }
        }
    }
}
