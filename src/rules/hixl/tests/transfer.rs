//! Unit tests of the transfer rules.

use super::*;

/// The hot path's scalar answer agrees with the findings on every combination of facts and
/// of op shapes.
#[test]
fn transfer_clean_agrees_with_the_findings() {
    let op = |l, r, n| TransferOpDesc { local_addr: l, remote_addr: r, len: n };
    let regd = |a: usize, n: u64| {
        if a >= 0x1000 && a as u64 + n <= 0x2000 {
            Some(MemKind::Host)
        } else if a >= 0x4000 && a as u64 + n <= 0x5000 {
            Some(MemKind::Device)
        } else {
            None
        }
    };
    let views =
        [RemoteView::Unknown, RemoteView::Registered(MemKind::Host), RemoteView::Late, RemoteView::Unregistered];
    let lists: [&[TransferOpDesc]; 6] = [
        &[],
        &[op(0x1000, 0x9000, 0x10)],
        &[op(0x3000, 0x9000, 0x10)],
        &[op(0x1000, 0x9000, 0)],
        &[op(0x1000, 0x9000, 0x10), op(0x4000, 0x9000, 0x10)],
        &[op(0x3000, 0x9000, 0x10), op(0x4000, 0x9000, 0x10)],
    ];
    let states =
        [InstanceState::Unknown, InstanceState::Constructed, InstanceState::Initialized, InstanceState::Finalized];
    let engines = [None, Some(Engine::Comm), Some(Engine::HixlCs), Some(Engine::FabricMem)];
    let (mut clean, mut dirty) = (0, 0);
    for state in states {
        for linked in [None, Some(true), Some(false)] {
            for engine in engines {
                for (pool, sync) in [(false, false), (false, true), (true, false), (true, true)] {
                    let f = XferFacts { state, linked, engine, pool, sync, fabric_host: pool, connects_first: !sync };
                    for ops in lists {
                        for view in views {
                            let remote = |_: usize, _: u64| view;
                            let found = check_transfer("T", b"b", f, ops, regd, remote);
                            let fast = transfer_clean(&f, ops, &regd, &remote);
                            assert_eq!(fast, found.is_empty(), "{f:?} {ops:?} {view:?}: {:?}", rules(&found));
                            if fast {
                                clean += 1;
                            } else {
                                dirty += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(clean > 0 && dirty > 0, "both answers were exercised ({clean} clean, {dirty} not)");
}

#[test]
fn transfer_rules() {
    let ok = XferFacts {
        state: InstanceState::Initialized,
        linked: Some(true),
        engine: Some(Engine::HixlCs),
        pool: false,
        sync: true,
        fabric_host: false,
        connects_first: false,
    };
    let op = |l, r, n| TransferOpDesc { local_addr: l, remote_addr: r, len: n };
    let regd = |a: usize, n: u64| (a >= 0x1000 && a as u64 + n <= 0x2000).then_some(MemKind::Host);
    let none = |_: usize, _: u64| RemoteView::Unknown;
    assert!(check_transfer("T", b"b", ok, &[op(0x1000, 0x9000, 0x1000)], regd, none).is_empty());
    assert_eq!(
        rules(&check_transfer("T", b"b", XferFacts { linked: Some(false), ..ok }, &[op(0x1000, 1, 1)], regd, none)),
        vec![RuleId::HixlXferNotConnected]
    );
    assert!(check_transfer("T", b"b", XferFacts { linked: None, ..ok }, &[op(0x1000, 1, 1)], regd, none).is_empty());
    assert_eq!(rules(&check_transfer("T", b"b", ok, &[], regd, none)), vec![RuleId::HixlXferEmpty]);
    let v = check_transfer("T", b"b", ok, &[op(0x1000, 1, 1), op(0x1000, 1, 0), op(0, 1, 1)], regd, none);
    assert_eq!(rules(&v), vec![RuleId::HixlXferEmpty]);
    assert!(v[0].problem.contains("op 1 of 3: len is 0 (and 1 more op(s))"), "{}", v[0].problem);
    let v = check_transfer("T", b"b", ok, &[op(0x1800, 1, 0x1000), op(0x3000, 1, 1)], regd, none);
    assert_eq!(rules(&v), vec![RuleId::HixlXferLocalUnregistered]);
    assert!(v[0].problem.contains("op 0 of 2") && v[0].problem.contains("1 more"), "{}", v[0].problem);
    assert_eq!(v[0].action, None, "hixl_cs refuses it");
    let nf = XferFacts { state: InstanceState::Constructed, linked: Some(false), ..ok };
    assert_eq!(rules(&check_transfer("T", b"b", nf, &[], regd, none)), vec![RuleId::HixlNotInitialized]);
}

#[test]
fn unregistered_transfers_by_engine() {
    use crate::rules::Action;
    let op = |l, r, n| TransferOpDesc { local_addr: l, remote_addr: r, len: n };
    // [0x1000, 0x2000) registered host, [0x10000, 0x20000) registered device.
    let regd = |a: usize, n: u64| {
        let end = a as u64 + n;
        if a >= 0x1000 && end <= 0x2000 {
            Some(MemKind::Host)
        } else if a >= 0x10000 && end <= 0x20000 {
            Some(MemKind::Device)
        } else {
            None
        }
    };
    let none = |_: usize, _: u64| RemoteView::Unknown;
    let comm = XferFacts {
        state: InstanceState::Initialized,
        linked: Some(true),
        engine: Some(Engine::Comm),
        pool: true,
        sync: true,
        fabric_host: false,
        connects_first: false,
    };
    let unreg = [op(0x1000, 1, 0x10), op(0x5000, 1, 0x10)];
    let staged = check_transfer("T", b"b", comm, &unreg, regd, none);
    assert_eq!(rules(&staged), vec![RuleId::HixlXferLocalUnregistered]);
    assert_eq!(staged[0].action, Some(Action::Warn), "staged through the pool: works");
    assert!(staged[0].problem.contains("staging buffer pool"), "{}", staged[0].problem);
    let off = check_transfer("T", b"b", XferFacts { pool: false, ..comm }, &unreg, regd, none);
    assert_eq!(off[0].action, None, "pool off: fails");
    assert!(off[0].problem.contains("0:0"), "{}", off[0].problem);
    let asynchronous = check_transfer("T", b"b", XferFacts { sync: false, ..comm }, &unreg, regd, none);
    assert_eq!(asynchronous[0].action, None, "TransferAsync is not staged");
    let mixed = check_transfer("T", b"b", comm, &[op(0x10000, 1, 0x10), op(0x5000, 1, 0x10)], regd, none);
    assert_eq!(mixed[0].action, None, "device op then an unregistered (host) op: PARAM_INVALID");
    assert!(mixed[0].problem.contains("one transfer type"), "{}", mixed[0].problem);
    let unknown = check_transfer("T", b"b", XferFacts { engine: None, ..comm }, &unreg, regd, none);
    assert_eq!(unknown[0].action, Some(Action::Warn), "engine unknown: no false rejection");
    let first = check_transfer("T", b"b", XferFacts { sync: false, connects_first: true, ..comm }, &unreg, regd, none);
    assert_eq!(first[0].action, Some(Action::Warn), "AutoConnect connects first: its answer may be NOT_CONNECTED");
    assert!(first[0].problem.contains("AutoConnect"), "{}", first[0].problem);
    let staged = check_transfer("T", b"b", XferFacts { connects_first: true, ..comm }, &unreg, regd, none);
    assert!(staged[0].problem.contains("staging buffer pool"), "staged either way: {}", staged[0].problem);
    let fabric = XferFacts { engine: Some(Engine::FabricMem), fabric_host: true, ..comm };
    let translated = check_transfer("T", b"b", fabric, &unreg, regd, none);
    assert_eq!(translated[0].action, None, "fabric memory translating host ranges: refused");
    assert!(translated[0].problem.contains("host registrations"), "{}", translated[0].problem);
    let untold = check_transfer("T", b"b", XferFacts { fabric_host: false, ..fabric }, &unreg, regd, none);
    assert_eq!(untold[0].action, Some(Action::Warn), "fabric memory, first op not registered: host or device unknown");
    assert!(untold[0].problem.contains("asks ACL"), "{}", untold[0].problem);
    assert!(check_transfer("T", b"b", comm, &[op(0x10000, 1, 0x10), op(0x1000, 1, 0x10)], regd, none).is_empty());
}

#[test]
fn remote_ranges_the_link_cannot_see() {
    use crate::rules::Action;
    let op = |l, r, n| TransferOpDesc { local_addr: l, remote_addr: r, len: n };
    let local = |_: usize, _: u64| Some(MemKind::Device);
    // The peer had [0x9000, 0xa000) when the link was made, and registered [0xa000, 0xb000) later.
    let remote = |a: usize, n: u64| {
        let end = a as u64 + n;
        if a >= 0x9000 && end <= 0xa000 {
            RemoteView::Registered(MemKind::Device)
        } else if a >= 0xa000 && end <= 0xb000 {
            RemoteView::Late
        } else {
            RemoteView::Unregistered
        }
    };
    let cs = XferFacts {
        state: InstanceState::Initialized,
        linked: Some(true),
        engine: Some(Engine::HixlCs),
        pool: false,
        sync: true,
        fabric_host: false,
        connects_first: false,
    };
    assert!(check_transfer("T", b"b", cs, &[op(0x1000, 0x9000, 0x100)], local, remote).is_empty());
    let late = check_transfer("T", b"b", cs, &[op(0x1000, 0xa000, 0x100)], local, remote);
    assert_eq!(rules(&late), vec![RuleId::HixlXferRemoteUnregistered]);
    assert_eq!(late[0].action, None, "hixl_cs refuses it");
    assert!(late[0].problem.contains("after this link was made") && late[0].problem.contains("remoteBuffer"));
    assert!(late[0].fix.contains("before peers connect"), "{}", late[0].fix);
    let past = check_transfer("T", b"b", cs, &[op(0x1000, 0x9f00, 0x200)], local, remote);
    assert!(past[0].problem.contains("not inside a registration"), "{}", past[0].problem);
    let comm = XferFacts { engine: Some(Engine::Comm), pool: true, ..cs };
    let staged = check_transfer("T", b"b", comm, &[op(0x1000, 0xa000, 0x100)], local, remote);
    assert_eq!(staged[0].action, Some(Action::Warn), "the comm engine stages it");
    let unknown = |_: usize, _: u64| RemoteView::Unknown;
    assert!(check_transfer("T", b"b", cs, &[op(0x1000, 0xa000, 0x100)], local, unknown).is_empty());
}

#[test]
fn peers_in_other_processes_count_as_links() {
    let opts = OptionsFacts::default();
    let mut f = facts(&opts);
    f.links = Some(LinkFacts { outgoing: vec![], incoming: vec![], foreign: 2 });
    let c = check_register(&hixl(0x1000, 0x100, 1), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegAfterConnect]);
    assert!(
        c.findings[0].problem.contains("2 connection(s) from peers in other processes"),
        "{}",
        c.findings[0].problem
    );
}

/// Without a link, the first finding is the vendor's first failure: an empty op list before
/// the link on the comm engine (the link first on hixl_cs), a NULL op address (the front end's
/// own check) before the link on every engine, a zero length after it.
#[test]
fn transfer_findings_come_in_the_vendors_order() {
    let f = XferFacts {
        state: InstanceState::Initialized,
        linked: Some(false),
        engine: Some(Engine::Comm),
        pool: false,
        sync: true,
        fabric_host: false,
        connects_first: false,
    };
    let op = |l, r, n| TransferOpDesc { local_addr: l, remote_addr: r, len: n };
    let regd = |_: usize, _: u64| Some(MemKind::Host);
    let none = |_: usize, _: u64| RemoteView::Unknown;
    let (not_connected, empty) = (RuleId::HixlXferNotConnected, RuleId::HixlXferEmpty);
    assert_eq!(rules(&check_transfer("T", b"b", f, &[], regd, none)), vec![empty, not_connected]);
    let cs = XferFacts { engine: Some(Engine::HixlCs), ..f };
    assert_eq!(rules(&check_transfer("T", b"b", cs, &[], regd, none)), vec![not_connected, empty]);
    for e in [f, cs] {
        assert_eq!(rules(&check_transfer("T", b"b", e, &[op(0, 1, 1)], regd, none)), vec![empty, not_connected]);
        assert_eq!(rules(&check_transfer("T", b"b", e, &[op(1, 0, 1)], regd, none)), vec![empty, not_connected]);
        assert_eq!(rules(&check_transfer("T", b"b", e, &[op(1, 1, 0)], regd, none)), vec![not_connected, empty]);
    }
}

#[test]
fn the_vendor_answers_first_only_where_it_fails_every_finding_itself() {
    for (engine, auto_connect, first) in [
        (Some(Engine::HixlCs), false, true),
        // Fabric memory passes an unregistered local device range on: warned on success.
        (Some(Engine::FabricMem), false, false),
        // AutoConnect: the vendor links first and drops the link when the transfer fails.
        (Some(Engine::HixlCs), true, false),
        (Some(Engine::FabricMem), true, false),
        // The comm engine's pool stages an unregistered TransferSync and succeeds.
        (Some(Engine::Comm), false, false),
        (None, false, false),
    ] {
        assert_eq!(vendor_answers_transfers(engine, auto_connect), first, "{engine:?}, AutoConnect {auto_connect}");
    }
}
