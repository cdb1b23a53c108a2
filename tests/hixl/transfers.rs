//! Transfers: unregistered memory, a peer's region registered after the link, the transfer
//! rules, and the leak report at Finalize and destruction.

use crate::{assert_warned, Case, XFER};

#[test]
fn unregistered_transfers_are_staged_on_comm_and_refused_on_hixl_cs() {
    // comm engine, default buffer pool: a TransferSync of unregistered memory is staged
    // through the pool (slower, works): warned and forwarded. TransferAsync is not staged (HCCL
    // refuses the range: 503900), and ops mixing registered device memory with unregistered
    // memory are PARAM_INVALID.
    let outs = Case {
        scenario: "xfer_unregistered_comm",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_dev", 0),
            ("register_b", 0),
            ("connect", 0),
            ("sync", 0),
            ("async", 503900),
            ("mixed", 103900),
            ("disconnect", 0),
        ],
        rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
        absent: &[],
        forwarded: &[(XFER, 1), ("Hixl::TransferAsync", 0)],
    }
    .check();
    for o in &outs {
        assert!(o.stderr.contains("regcheck: warning: [HIXL-XFER-LOCAL-UNREGISTERED]"), "{}", o.dump());
        assert!(o.stderr.contains("staging buffer pool"), "{}", o.dump());
        assert!(o.stderr.contains("one transfer type"), "the mixed call: {}", o.dump());
    }
    // The pool turned off ("0:0"): nothing stages it, and the HCCL transfer fails (503900);
    // and hixl_cs refuses ranges outside registered memory (103900). The comm engine's are
    // rejected before the vendor, with the vendor's code (the bare runs below); hixl_cs fails
    // every such transfer itself, so it answers first and regcheck explains its refusal.
    for (scenario, sync) in [("xfer_unregistered_comm_no_pool", 503900), ("xfer_unregistered_hixl_cs", 103900)] {
        let cs = scenario.ends_with("hixl_cs");
        let outs = Case {
            scenario,
            env: &[],
            codes: &[
                ("register", 0),
                ("register_dev", 0),
                ("register_b", 0),
                ("connect", 0),
                ("sync", sync),
                ("async", sync),
                ("mixed", 103900),
                ("disconnect", 0),
            ],
            rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
            absent: &[],
            forwarded: if cs {
                &[(XFER, 2), ("Hixl::TransferAsync", 1)]
            } else {
                &[(XFER, 0), ("Hixl::TransferAsync", 0)]
            },
        }
        .check();
        // The call site is the application's line, also for a refusal explained after the
        // vendor answered.
        let at = format!("    at UnregisteredTransfer (hixl_scenarios.cpp:{})", crate::line_of("xfer_sync"));
        for o in &outs {
            let sync = o.messages().into_iter().find(|l| l.contains("[HIXL-XFER-LOCAL-UNREGISTERED]"));
            assert!(sync.is_some_and(|m| m.lines().nth(1) == Some(at.as_str())), "{at:?} in {}", o.dump());
        }
        for o in outs.iter().filter(|_| cs) {
            assert!(o.stderr.contains("hixl_cs engine refuses"), "{}", o.dump());
            let line = o.messages().into_iter().find(|l| l.contains("[HIXL-XFER-LOCAL-UNREGISTERED]"));
            assert!(
                line.is_some_and(|l| l.contains("regcheck: error:")
                    && l.contains("(forwarded; the vendor refused it with 103900 PARAM_INVALID)")),
                "{}",
                o.dump()
            );
        }
        let b = crate::bare(scenario, &[]);
        assert_eq!(crate::codes(&b), crate::codes(&outs[0]), "the vendor's codes: {}", b.dump());
    }
    let b = crate::bare("xfer_unregistered_comm", &[]);
    assert_eq!(crate::codes(&b), crate::codes(&outs[0]), "the vendor's codes: {}", b.dump());
    // The JSON log says whose refusal it was, and its code.
    let o = crate::run_in(testkit::Mode::Preload, "xfer_unregistered_hixl_cs", &[("REGCHECK_LOG_FORMAT", "json")]);
    let found: Vec<serde_json::Value> = o
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .filter(|v| v["type"] == "finding" && v["rule"] == "HIXL-XFER-LOCAL-UNREGISTERED")
        .collect();
    assert_eq!(found.len(), 3, "sync, async and mixed: {}", o.dump());
    for f in &found {
        assert_eq!(
            (&f["outcome"], &f["forwarded"], &f["returned"]),
            (&serde_json::json!("vendor-refused"), &serde_json::json!(true), &serde_json::json!(103900)),
            "{}",
            o.dump()
        );
    }
}

/// hixl_cs checks ranges against its memory store, which merges contiguous registrations
/// (hicann/hixl `src/hixl/cs/hixl_mem_store.cc`, `CheckMergedRegionsAccess`;
/// `tests/cpp/hixl/cs/hixl_mem_store_basic_ut.cc`): an op across adjacent registrations is
/// valid, one across a gap is not.
#[test]
fn ops_across_adjacent_registrations_are_valid_on_hixl_cs() {
    Case {
        scenario: "adjacent_hixl_cs",
        env: &[],
        codes: &[
            ("register_a0", 0),
            ("register_a1", 0),
            ("register_a2", 0),
            ("register_b0", 0),
            ("register_b1", 0),
            ("register_b3", 0),
            ("connect", 0),
            ("local_across_three", 0),
            ("remote_across_two", 0),
            ("remote_across_gap", 103900),
            ("disconnect", 0),
        ],
        rules: &["HIXL-XFER-REMOTE-UNREGISTERED"],
        absent: &["HIXL-XFER-LOCAL-UNREGISTERED"],
        // hixl_cs answers first: the refusal of the op across the gap is its own.
        forwarded: &[(XFER, 3)],
    }
    .check();
}

/// The memory store merges without a limit (`CheckMergedRegionsAccess` walks the whole run of
/// adjacent regions): an op across 65 one-page registrations is valid, the bytes arrive; the
/// same length one page later reaches past the last registration and is refused.
#[test]
fn ops_across_any_number_of_adjacent_registrations_are_valid_on_hixl_cs() {
    let codes = &[
        ("register_failures", 0),
        ("register_b", 0),
        ("connect", 0),
        ("local_across_all", 0),
        ("local_one_page_past", 103900),
        ("disconnect", 0),
    ];
    crate::assert_bare("merge_many_hixl_cs", codes);
    Case {
        scenario: "merge_many_hixl_cs",
        env: &[],
        codes,
        rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
        absent: &[],
        // Both reach the vendor, which refuses the one past the end itself.
        forwarded: &[(XFER, 2)],
    }
    .check();
}

#[test]
fn a_peer_region_registered_after_the_link_is_named_at_the_transfer() {
    // hixl_cs: the link carries the peer's registrations of the moment it was made; a read of
    // a region the peer registered later fails: the vendor's refusal, named, with the fix.
    let outs = Case {
        scenario: "remote_late_hixl_cs",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("connect", 0),
            ("read_seen", 0),
            ("register_b_late", 0),
            ("read_late", 103900),
            ("disconnect", 0),
            ("connect_again", 0),
            ("read_late_relinked", 0),
            ("disconnect_again", 0),
        ],
        rules: &["HIXL-XFER-REMOTE-UNREGISTERED", "HIXL-REG-AFTER-CONNECT"],
        absent: &["HIXL-XFER-LOCAL-UNREGISTERED"],
        forwarded: &[(XFER, 3)],
    }
    .check();
    for o in &outs {
        assert!(o.stderr.contains("after this link was made"), "{}", o.dump());
        assert!(o.stderr.contains("register all its memory before peers connect"), "{}", o.dump());
    }
    // comm: the engine stages it through its buffer pool: warned, forwarded.
    let outs = Case {
        scenario: "remote_late_comm",
        env: &[],
        codes: &[
            ("register", 0),
            ("register_b", 0),
            ("connect", 0),
            ("read_seen", 0),
            ("register_b_late", 0),
            ("read_late", 0),
            ("disconnect", 0),
            ("connect_again", 0),
            ("read_late_relinked", 0),
            ("disconnect_again", 0),
        ],
        rules: &["HIXL-XFER-REMOTE-UNREGISTERED"],
        absent: &[],
        forwarded: &[(XFER, 3)],
    }
    .check();
    assert_warned(&outs, "HIXL-XFER-REMOTE-UNREGISTERED");
}

#[test]
fn transfer_rules() {
    Case {
        scenario: "transfer",
        env: &[],
        codes: TRANSFER_CODES,
        rules: &["HIXL-XFER-NOT-CONNECTED", "HIXL-XFER-EMPTY", "HIXL-XFER-LOCAL-UNREGISTERED"],
        absent: &[],
        // The default (comm) engine stages the unregistered TransferSyncs: warned, forwarded.
        forwarded: &[(XFER, 3), ("Hixl::TransferAsync", 0)],
    }
    .check();
    // Every refusal is the vendor's own, with its code.
    let b = crate::bare("transfer", &[]);
    let want: Vec<(String, u32)> = TRANSFER_CODES.iter().map(|(l, c)| (l.to_string(), *c)).collect();
    assert_eq!(crate::codes(&b), want, "{}", b.dump());
}

/// The codes of the `transfer` scenario, the vendor's and regcheck's alike. Nothing stages a
/// TransferAsync: HCCL refuses its unregistered range (503900).
const TRANSFER_CODES: &[(&str, u32)] = &[
    ("register", 0),
    ("register_b", 0),
    ("not_connected", 103902),
    ("connect", 0),
    ("empty", 103900),
    ("len_zero", 103900),
    ("unregistered", 0),
    ("straddling", 0),
    ("many_ok", 0),
    ("async_unregistered", 503900),
    ("unknown_engine", 103902),
    ("disconnect", 0),
];

#[test]
fn leaks_are_listed_at_finalize_and_destruction() {
    let outs = Case {
        scenario: "leak",
        env: &[],
        codes: &[("register", 0), ("register_c", 0)],
        rules: &["HIXL-FINALIZE-LEAK"],
        absent: &[],
        forwarded: &[("Hixl::Finalize", 4), ("Hixl::~Hixl", 3)],
    }
    .check();
    for o in outs {
        assert!(o.stderr.contains("Hixl::~Hixl of"), "destruction reported: {}", o.dump());
        assert_eq!(o.stderr.matches("[HIXL-FINALIZE-LEAK]").count(), 2, "once each, not again from ~Hixl's Finalize");
    }
}

/// A transfer regcheck refuses on an AutoConnect hixl_cs instance leaves the vendor as its own
/// failure would: the link dropped (HixlEngine::AutoDisconnect), so a page the peer registers
/// afterwards draws no HIXL-REG-AFTER-CONNECT warning and the next valid transfer links afresh
/// and moves the bytes (issue 33 item 6).
#[test]
fn a_refused_transfer_drops_the_autoconnect_link_as_the_vendors_failure_does() {
    let want: Vec<(String, u32)> = [
        ("register_a", 0),
        ("register_b", 0),
        ("first", 0),
        ("unregistered", 103900),
        ("register_b_late", 0),
        ("to_late", 0),
        ("disconnect", 0),
    ]
    .iter()
    .map(|(l, c)| (l.to_string(), *c))
    .collect();
    let b = crate::scenarios().bare().arg("autoconnect_refused_transfer").run();
    assert_eq!(crate::codes(&b), want, "the vendor's behaviour: {}", b.dump());
    for mode in [testkit::Mode::Preload, testkit::Mode::Shared] {
        for audited in [false, true] {
            let r = crate::scenarios().run(mode).arg("autoconnect_refused_transfer");
            let o = if audited { r.audit() } else { r }.run();
            let ctx = || format!("{mode:?}, audited {audited}\n{}", o.dump());
            assert_eq!(crate::codes(&o), want, "{}", ctx());
            assert!(o.stderr.contains("[HIXL-XFER-LOCAL-UNREGISTERED]"), "{}", ctx());
            assert!(!o.stderr.contains("[HIXL-REG-AFTER-CONNECT]"), "{}", ctx());
            assert_eq!(o.sim_calls(XFER), 2, "the refused transfer is not forwarded: {}", ctx());
        }
    }
}

/// A page transferred from and then deregistered is unregistered memory again: the next
/// transfer from it is judged as one (comm: refused before the vendor, with the vendor's code;
/// hixl_cs: the vendor's refusal, explained), while its registered neighbour still transfers.
/// Both engines that refuse unregistered local memory: comm with the buffer pool off
/// (deregistered while linked) and hixl_cs (deregistered between links).
#[test]
fn a_deregistered_page_is_unregistered_memory_again() {
    for (scenario, refused) in [("xfer_after_dereg_comm_no_pool", 503900), ("xfer_after_dereg_hixl_cs", 103900)] {
        let cs = scenario.ends_with("hixl_cs");
        let mut codes = vec![("register", 0), ("register_next", 0), ("register_b", 0), ("connect", 0), ("before", 0)];
        if cs {
            codes.push(("unlink", 0));
        }
        codes.push(("dereg", 0));
        if cs {
            codes.push(("relink", 0));
        }
        codes.extend([("after", refused), ("next", 0), ("disconnect", 0)]);
        crate::assert_bare(scenario, &codes);
        let outs = Case {
            scenario,
            env: &[],
            codes: &codes,
            rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
            absent: &[],
            // "before" and "next" reach the vendor; "after" too where it answers first.
            forwarded: &[(XFER, if cs { 3 } else { 2 })],
        }
        .check();
        for o in &outs {
            let line = o.messages().into_iter().find(|l| l.contains("[HIXL-XFER-LOCAL-UNREGISTERED]"));
            assert!(line.is_some_and(|l| l.contains("regcheck: error:")), "{}", o.dump());
        }
    }
}

/// A warm transfer path (hundreds of clean transfers, so that regcheck's thread's copy of its
/// records is current and a clean transfer is judged by the hints alone, with no check phase)
/// still meets the rule for a page never registered and for one just deregistered: warned
/// where the comm engine's pool stages it, refused with HCCL's code without the pool. Fails if
/// that quick way answers "clean" for a range its hints do not hold.
#[test]
fn a_warm_transfer_path_still_finds_unregistered_memory() {
    for (scenario, refused) in [("xfer_warm_comm", 0), ("xfer_warm_comm_no_pool", 503900)] {
        let codes = [
            ("register", 0),
            ("register_next", 0),
            ("register_b", 0),
            ("connect", 0),
            ("warm", 0),
            ("unregistered", refused),
            ("dereg", 0),
            ("warm_next", 0),
            ("deregistered", refused),
            ("disconnect", 0),
        ];
        crate::assert_bare(scenario, &codes);
        let outs = Case {
            scenario,
            env: &[],
            codes: &codes,
            rules: &["HIXL-XFER-LOCAL-UNREGISTERED"],
            absent: &[],
            // 600 clean transfers, and the two unregistered ones where the pool stages them.
            forwarded: &[(XFER, if refused == 0 { 602 } else { 600 })],
        }
        .check();
        // The call site is the application's line, whichever way the call was checked and
        // however regcheck is linked (its own frames told apart from the program's).
        let at = format!("    at Run (hixl_scenarios.cpp:{})", crate::line_of("xfer_warm"));
        for o in &outs {
            let found: Vec<String> =
                o.messages().into_iter().filter(|l| l.contains("[HIXL-XFER-LOCAL-UNREGISTERED]")).collect();
            assert_eq!(found.len(), 2, "the unregistered and the deregistered page: {}", o.dump());
            assert!(found[0].lines().nth(1) == Some(at.as_str()), "{at:?} in {}", o.dump());
        }
    }
}
