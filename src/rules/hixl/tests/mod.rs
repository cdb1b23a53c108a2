//! Unit tests of the HIXL rules.

use super::*;

mod transfer;

const GIB: u64 = 1 << 30;

fn hixl(addr: usize, len: u64, ty: i64) -> RegArgs {
    RegArgs { api: RegApi::Hixl, addr, len, ty }
}

fn reg(handle: usize, addr: usize, len: u64, kind: MemKind) -> HixlReg {
    HixlReg { handle, addr, len, kind, tag: String::new(), site: 0 }
}

fn rules(v: &[Finding]) -> Vec<RuleId> {
    v.iter().map(|f| f.rule).collect()
}

fn hdk(v: Option<&str>) -> HdkFact {
    HdkFact { version: v.and_then(HdkVersion::parse), describe: v.unwrap_or("unknown (no version.info)").into() }
}

/// Facts of a clean registration on an initialised A2 instance.
fn facts(opts: &OptionsFacts) -> RegFacts<'_> {
    RegFacts {
        state: InstanceState::Initialized,
        thread: Some(ThreadFacts { same_thread: true, init_ctx: Some(Some(1)), current_ctx: Some(Some(1)) }),
        links: Some(LinkFacts::default()),
        identical: None,
        overlap: None,
        live: 0,
        limit: 4000,
        near_warned: false,
        total_of_kind: 0,
        product: ProductClass::from_soc(Some("Ascend910B1")),
        hdk: hdk(Some("25.5.0")),
        options: opts,
        by_malloc_host: true,
        dev_alloc: Some(Alloc { base: 0x1000, len: 1 << 20, extra: 1 }),
        vmm: None,
        engine: Some(Engine::Comm),
        gaps: Some(vec![]),
    }
}

#[test]
fn clean_registrations_find_nothing() {
    let o = parse_options(&[(
        "GlobalResourceConfig".into(),
        r#"{"comm_resource_config.protocol_desc":"hccs:device"}"#.into(),
    )]);
    let f = facts(&o);
    let c = check_register(&hixl(0x1000, 4096, MEM_HOST), &f);
    assert!(c.findings.is_empty() && c.skipped.is_empty(), "{c:?}");
    // Device memory over HCCS: from a HUGE_ONLY allocation, on a 2 MiB boundary.
    let f = RegFacts { dev_alloc: Some(Alloc { base: 2 << 20, len: 4 << 20, extra: 1 }), ..facts(&o) };
    let c = check_register(&hixl(2 << 20, 4096, MEM_DEVICE), &f);
    assert!(c.findings.is_empty() && c.skipped.is_empty(), "{c:?}");
}

#[test]
fn argument_rules() {
    assert_eq!(rules(&check_args(&hixl(0, 1, 1))), vec![RuleId::HixlRegNullAddr]);
    assert_eq!(rules(&check_args(&hixl(1, 0, 1))), vec![RuleId::HixlRegLenZero]);
    assert_eq!(rules(&check_args(&hixl(0, 0, 1))), vec![RuleId::HixlRegNullAddr, RuleId::HixlRegLenZero]);
    // Ending exactly at 2^64 is an overflow to HIXL too (`len > UINT64_MAX - addr`).
    assert_eq!(rules(&check_args(&hixl(usize::MAX - 10, 11, 0))), vec![RuleId::HixlRegRangeOverflow]);
    assert_eq!(rules(&check_args(&hixl(usize::MAX - 10, 10, 0))), Vec::<RuleId>::new(), "ends at the last byte");
    assert_eq!(rules(&check_args(&hixl(usize::MAX - 10, 12, 0))), vec![RuleId::HixlRegRangeOverflow]);
    assert_eq!(rules(&check_args(&hixl(0x1000, 1, 2))), vec![RuleId::HixlRegMemtype]);
    let cs = RegArgs { api: RegApi::CsClient, addr: 0x1000, len: 1, ty: -1 };
    let f = check_args(&cs);
    assert_eq!(rules(&f), vec![RuleId::HixlRegMemtype]);
    assert_eq!(f[0].arg, "mem->type");
    assert!(f[0].fix.contains("COMM_MEM_TYPE_DEVICE"));
    assert_eq!(hixl(0x1000, 1, 7).kind(), MemKind::Host, "the vendor treats it as host");
    assert!(hixl(0, 1, 0).range().is_none());
}

#[test]
fn initialised_state() {
    assert!(check_initialized("x", InstanceState::Initialized).is_none());
    assert!(check_initialized("x", InstanceState::Unknown).is_none(), "unknown instances are not judged");
    let f = check_initialized("Hixl::RegisterMem", InstanceState::Constructed).unwrap();
    assert_eq!(f.rule, RuleId::HixlNotInitialized);
    assert!(f.problem.contains("not initialised"));
    assert!(check_initialized("x", InstanceState::Finalized).unwrap().problem.contains("finalised"));
    let o = OptionsFacts::default();
    let mut f = facts(&o);
    f.state = InstanceState::Finalized;
    let c = check_register(&hixl(0, 1, 1), &f);
    assert_eq!(c.findings[0].rule, RuleId::HixlNotInitialized, "first, like the vendor");
}

#[test]
fn thread_rule() {
    let t = |same, init, cur| ThreadFacts { same_thread: same, init_ctx: init, current_ctx: cur };
    assert_eq!(check_thread("c", &t(true, None, None)), Ok(None));
    assert_eq!(check_thread("c", &t(false, Some(Some(5)), Some(Some(5)))), Ok(None), "context was set");
    let f = check_thread("c", &t(false, Some(Some(5)), Some(None))).unwrap().unwrap();
    assert_eq!(f.rule, RuleId::HixlRegThread);
    assert!(f.problem.contains("none") && f.problem.contains("0x5"), "{}", f.problem);
    assert!(check_thread("c", &t(false, Some(Some(5)), Some(Some(6)))).unwrap().is_some());
    assert_eq!(check_thread("c", &t(false, None, Some(Some(6)))).unwrap_err().key, "no-context");
    assert!(check_thread("c", &t(false, Some(Some(1)), None)).is_err());
}

#[test]
fn after_connect() {
    let o = OptionsFacts::default();
    let mut f = facts(&o);
    f.links = Some(LinkFacts { outgoing: vec!["b".into()], incoming: vec![], foreign: 0 });
    let c = check_register(&hixl(0x1000, 1, 1), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegAfterConnect]);
    assert!(c.findings[0].problem.contains("links to \"b\""));
    f.links = Some(LinkFacts { outgoing: vec![], incoming: vec!["peer".into()], foreign: 0 });
    assert!(check_register(&hixl(0x1000, 1, 1), &f).has(RuleId::HixlRegAfterConnect), "a peer connected to us");
    let same = reg(9, 0x1000, 1, MemKind::Host);
    f.identical = Some(&same);
    assert!(!check_register(&hixl(0x1000, 1, 1), &f).has(RuleId::HixlRegAfterConnect), "identical: no new region");
    f.identical = None;
    f.links = None;
    let c = check_register(&hixl(0x1000, 1, 1), &f);
    assert!(c.findings.is_empty());
    assert_eq!(c.skipped[0].rule, RuleId::HixlRegAfterConnect);
}

#[test]
fn overlap() {
    let o = OptionsFacts::default();
    let mut f = facts(&o);
    let other = reg(0x77, 0x1000, 0x2000, MemKind::Host);
    f.overlap = Some(&other);
    let c = check_register(&hixl(0x2000, 0x2000, 1), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegOverlap]);
    assert!(c.findings[0].problem.contains("handle 0x77"));
    assert!(c.findings[0].fix.contains("DeregisterMem(0x77)"));
}

#[test]
fn count_and_near() {
    let o = OptionsFacts::default();
    let mut f = facts(&o);
    f.live = 3999;
    assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.iter().all(|x| x.rule == RuleId::HixlRegCountNear));
    f.near_warned = true;
    assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "4000th is allowed");
    f.live = 4000;
    let c = check_register(&hixl(0x1000, 1, 1), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegCount]);
    assert!(c.findings[0].problem.contains("4001"));
    let same = reg(1, 0x1000, 1, MemKind::Host);
    f.identical = Some(&same);
    assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "identical: same handle, no new one");
    f.identical = None;
    f.live = 3599;
    f.near_warned = false;
    assert_eq!(rules(&check_register(&hixl(0x1000, 1, 1), &f).findings), vec![RuleId::HixlRegCountNear]);
    f.live = 3598;
    assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty());
    assert_eq!(near_threshold(4000), 3600);
    assert_eq!(near_threshold(1), 1);
    assert_eq!(near_threshold(10), 9);
    f.limit = 2;
    f.live = 2;
    assert!(check_register(&hixl(0x1000, 1, 1), &f).has(RuleId::HixlRegCount), "settable limit");
    let cs = RegArgs { api: RegApi::CsServer, addr: 0x1000, len: 1, ty: 1 };
    assert!(!check_register(&cs, &f).has(RuleId::HixlRegCount), "not a HixlCS rule");
}

#[test]
fn caps() {
    let a2 = ProductClass::from_soc(Some("Ascend910_9391"));
    let mut sk = Vec::new();
    let old = hdk(Some("25.3.rc1"));
    let new = hdk(Some("25.5.0"));
    let unknown = hdk(None);
    assert!(check_caps(MemKind::Host, 20 * GIB, 0, &a2, &old, &mut sk).is_none(), "exactly the cap");
    let f = check_caps(MemKind::Host, 1, 20 * GIB, &a2, &old, &mut sk).unwrap();
    assert_eq!(f.rule, RuleId::HixlRegHostCap);
    assert!(f.problem.contains("20 GiB") && f.fix.contains("25.5.0"), "{f:?}");
    assert!(check_caps(MemKind::Host, 21 * GIB, 0, &a2, &new, &mut sk).is_none());
    assert!(check_caps(MemKind::Host, 1, 1 << 40, &a2, &new, &mut sk).is_some());
    let f = check_caps(MemKind::Host, 21 * GIB, 0, &a2, &unknown, &mut sk).unwrap();
    assert!(f.problem.contains("unknown") && f.fix.contains("REGCHECK_HDK_VERSION"), "says so: {f:?}");
    assert!(check_caps(MemKind::Device, 50 * GIB, 0, &a2, &new, &mut sk).is_none());
    assert_eq!(check_caps(MemKind::Device, 1, 50 * GIB, &a2, &new, &mut sk).unwrap().rule, RuleId::HixlRegDeviceCap);
    assert!(sk.is_empty());
    let p950 = ProductClass::from_soc(Some("Ascend950PR_9579"));
    assert!(check_caps(MemKind::Host, 2 << 40, 0, &p950, &old, &mut sk).is_none(), "A2/A3 only");
    assert!(check_caps(MemKind::Host, 2 << 40, 0, &ProductClass::Unknown, &old, &mut sk).is_none());
    assert_eq!(sk.len(), 1);
    assert_eq!(sk[0].key, "no-soc");
    check_caps(MemKind::Host, 2 << 40, 0, &ProductClass::from_soc(Some("Weird1")), &old, &mut sk);
    assert_eq!(sk[1].key, "unlisted-soc");
}

#[test]
fn host_origin_and_roce_950() {
    let o = OptionsFacts::default();
    let mut f = facts(&o);
    f.by_malloc_host = false;
    let c = check_register(&hixl(0x1000, 1, 1), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegHostOrigin]);
    assert!(c.findings[0].fix.contains("aclrtMallocHost"));
    f.product = ProductClass::from_soc(Some("Ascend950PR_1"));
    let c = check_register(&hixl(0x1000, 1, 1), &f);
    assert!(c.findings.is_empty());
    assert_eq!(c.skipped[0].rule, RuleId::HixlRegHostRoce950, "950 without transports: skipped");
    let roce = parse_options(&[(
        "GlobalResourceConfig".into(),
        r#"{"comm_resource_config.protocol_desc":["roce:host"]}"#.into(),
    )]);
    f.options = &roce;
    assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "malloc memory is right on 950");
    f.by_malloc_host = true;
    assert_eq!(rules(&check_register(&hixl(0x1000, 1, 1), &f).findings), vec![RuleId::HixlRegHostRoce950]);
    let dev = parse_options(&[(
        "GlobalResourceConfig".into(),
        r#"{"comm_resource_config.protocol_desc":["roce:device"]}"#.into(),
    )]);
    f.options = &dev;
    assert!(check_register(&hixl(0x1000, 1, 1), &f).findings.is_empty(), "device RoCE");
    let cs = RegArgs { api: RegApi::CsClient, addr: 0x1000, len: 1, ty: 1 };
    f.options = &roce;
    assert!(check_register(&cs, &f).has(RuleId::HixlRegHostRoce950), "applies to HixlCS");
    f.product = ProductClass::Unknown;
    f.by_malloc_host = false;
    let c = check_register(&hixl(0x1000, 1, 1), &f);
    assert!(c.findings.is_empty());
    assert!(c.skipped.iter().any(|s| s.rule == RuleId::HixlRegHostOrigin && s.key == "no-soc"));
}

#[test]
fn host_unmapped() {
    let o = OptionsFacts::default();
    let mut f = facts(&o);
    f.gaps = Some(vec![(0x2000, 0x3000)]);
    let c = check_register(&hixl(0x1000, 0x3000, 1), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegHostUnmapped]);
    assert!(c.findings[0].problem.contains("[0x2000, 0x3000)"));
    f.gaps = None;
    let c = check_register(&hixl(0x1000, 0x3000, 1), &f);
    assert_eq!(c.skipped[0].key, "no-memmap");
    f.gaps = Some(vec![(0x2000, 0x3000)]);
    assert!(check_register(&hixl(0x1000, 0x3000, 0), &f).findings.is_empty(), "device memory is not host-mapped");
}

#[test]
fn device_origin_and_huge() {
    let hccs = parse_options(&[("EnableUseFabricMem".into(), "1".into())]);
    let mut f = facts(&hccs);
    f.dev_alloc = None;
    assert_eq!(rules(&check_register(&hixl(0x1000, 1, 0), &f).findings), vec![RuleId::HixlRegDeviceOrigin]);
    const M2: usize = 2 << 20;
    f.dev_alloc = Some(Alloc { base: M2, len: 4096, extra: 0 });
    let c = check_register(&hixl(M2, 1, 0), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegDeviceHuge]);
    assert!(c.findings[0].problem.contains("ACL_MEM_MALLOC_HUGE_FIRST"), "{:?}", c.findings[0]);
    for ok in [1, 4, 6, 7, 0x1001] {
        f.dev_alloc = Some(Alloc { base: M2, len: 4096, extra: ok });
        assert!(check_register(&hixl(M2, 1, 0), &f).findings.is_empty(), "policy {ok:#x}");
    }
    f.dev_alloc = Some(Alloc { base: M2, len: 4096, extra: 0x1002 });
    assert!(check_register(&hixl(M2, 1, 0), &f).findings[0].problem.contains("NORMAL_ONLY | 0x1000"));
    // HCCS also wants a 2 MiB-aligned start.
    f.dev_alloc = Some(Alloc { base: M2, len: 2 * M2, extra: 1 });
    let c = check_register(&hixl(M2 + 0x1000, 1, 0), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegDeviceAlign]);
    assert!(c.findings[0].fix.contains("0x400000"), "{:?}", c.findings[0]);
    let none = OptionsFacts::default();
    f.options = &none;
    let c = check_register(&hixl(0x1000, 1, 0), &f);
    assert!(c.findings.is_empty());
    assert_eq!(c.skipped[0].key, "no-transport");
    let roce = parse_options(&[(
        "GlobalResourceConfig".into(),
        r#"{"comm_resource_config.protocol_desc":"roce:device"}"#.into(),
    )]);
    f.options = &roce;
    assert!(check_register(&hixl(0x1000, 1, 0), &f).findings.is_empty(), "not HCCS");
}

#[test]
fn options_parsing() {
    let o = |pairs: &[(&str, &str)]| {
        parse_options(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>())
    };
    assert_eq!(o(&[]).transports, None);
    let f = o(&[("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc":["roce:host","HCCS:device"]}"#)]);
    assert_eq!(f.transports_text(), "roce:host, hccs:device");
    assert_eq!(f.hccs(), Some(true));
    assert_eq!(f.roce_host(), Some(true));
    let f = o(&[("GlobalResourceConfig", r#"{"comm_resource_config": {"protocol_desc": "roce:device"}}"#)]);
    assert_eq!(f.transports, None, "HIXL reads only the flat key");
    assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
    let f = o(&[("GlobalResourceConfig", r#"{"connect_pool.thread_num":"2"}"#)]);
    assert_eq!(f.transports, None, "other global settings say nothing about transports");
    let f = o(&[("GlobalResourceConfig", "{not json")]);
    assert_eq!(f.transports, None);
    assert_eq!(f.invalid.len(), 1, "HIXL refuses it");
    let f = o(&[(
        "LocalCommRes",
        r#"{"version":"1.3","endpoint_list":[{"protocol":"roce","comm_id":"1.2.3.4","placement":"host"},{"protocol":"uboe","placement":"device"}]}"#,
    )]);
    assert_eq!(f.transports_text(), "roce:host, uboe:device");
    let f = o(&[
        (
            "LocalCommRes",
            r#"{"endpoint_list":[{"protocol":"roce","placement":"host"},{"protocol":"roce","placement":"device"}]}"#,
        ),
        ("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc":"roce:device"}"#),
    ]);
    assert_eq!(f.transports_text(), "roce:device", "filtered");
    let f = o(&[("LocalCommRes", r#"{"version":"1.3"}"#)]);
    assert_eq!(f.transports, None, "auto-generated endpoints: unknown");
    let f = o(&[("LocalCommRes", "")]);
    assert_eq!(f.transports, None);
    let f = o(&[("EnableUseFabricMem", "1"), ("AutoConnect", "1")]);
    assert_eq!(f.hccs(), Some(true));
    assert!(f.auto_connect && f.fabric_mem);
    assert!(f.transport_source.contains("EnableUseFabricMem"));
    let f = o(&[("EnableUseFabricMem", "0"), ("BufferPool", "4:8")]);
    assert_eq!(f.transports, None);
    assert!(!f.auto_connect);
    let f = parse_cs_config(Some(r#"{"comm_resource_config.protocol_desc":"hccs:device"}"#));
    assert_eq!(f.hccs(), Some(true));
    assert_eq!(parse_cs_config(None).transports, None);
    assert_eq!(parse_cs_config(Some("[1]")).invalid.len(), 1);
}

/// The option forms of the vendor's samples parse without a problem, and select the engine
/// the factory selects.
#[test]
fn option_forms_and_engine_selection() {
    let o = |pairs: &[(&str, &str)]| {
        parse_options(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>())
    };
    let a2 = Some("Ascend910B1");
    let clean = |f: &OptionsFacts| f.problems.is_empty() && f.invalid.is_empty();
    // Legacy flow: LocalCommRes 1.2, listen_port in the resource JSON, BufferPool off.
    let legacy = o(&[
        ("LocalCommRes", r#"{"version": "1.2"}"#),
        ("GlobalResourceConfig", r#"{"comm_resource_config.listen_port": 26000}"#),
        ("BufferPool", "0:0"),
    ]);
    assert!(clean(&legacy), "{legacy:?}");
    assert_eq!(legacy.buffer_pool, BufferPool::Disabled);
    let e = sel(&legacy, a2);
    assert_eq!(e.engine, Engine::Comm, "{}", e.reason);
    assert!(chk(&legacy, &e).is_empty());
    // LocalCommRes 1.3: hixl_cs, whatever else is given.
    let v13 = o(&[("LocalCommRes", r#"{"version": "1.3"}"#), ("GlobalResourceConfig", "")]);
    assert_eq!(sel(&v13, a2).engine, Engine::HixlCs);
    let num = o(&[("adxl.LocalCommRes", r#"{"version": 1.3}"#)]);
    assert_eq!(sel(&num, a2).engine, Engine::Comm, "a number is not the string \"1.3\"");
    // protocol_desc lists: hixl_cs.
    for desc in [r#""roce:device""#, r#"["hccs:device"]"#, r#"["ub_ctp:host","ub_ctp:device"]"#] {
        let f = o(&[("GlobalResourceConfig", &format!(r#"{{"comm_resource_config.protocol_desc": {desc}}}"#))]);
        assert!(clean(&f), "{desc}: {f:?}");
        let e = sel(&f, a2);
        assert_eq!(e.engine, Engine::HixlCs, "{desc}");
        assert!(chk(&f, &e).is_empty(), "{desc}");
    }
    let empty = o(&[("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc": []}"#)]);
    assert_eq!(sel(&empty, a2).engine, Engine::Comm, "an empty list selects nothing");
    // Fabric memory first of all.
    let fm = o(&[("EnableUseFabricMem", "1"), ("LocalCommRes", r#"{"version": "1.3"}"#)]);
    assert_eq!(sel(&fm, a2).engine, Engine::FabricMem);
    // The SoC last: an Ascend 950 selects hixl_cs (after 9.1); anything else, or nothing, comm.
    let none = o(&[]);
    assert_eq!(sel(&none, Some("Ascend950PR_9579")).engine, Engine::HixlCs, "after 9.1");
    assert_eq!(sel(&none, Some("Ascend910_9391")).engine, Engine::Comm);
    assert_eq!(sel(&none, None).engine, Engine::Comm);
    // What the engines' Initialize refuses.
    let bp = o(&[
        ("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc": "roce:device"}"#),
        ("BufferPool", "4:8"),
    ]);
    let f = chk(&bp, &sel(&bp, a2));
    assert_eq!(rules(&f), vec![RuleId::HixlInitOptions]);
    assert!(f[0].problem.contains("hixl_cs"), "{}", f[0].problem);
    let efm0 = o(&[
        ("EnableUseFabricMem", "0"),
        ("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc": "roce:device"}"#),
    ]);
    assert!(chk(&efm0, &sel(&efm0, a2))[0].problem.contains("EnableUseFabricMem"));
    let bad = o(&[("AutoConnect", ""), ("EnableUseFabricMem", "2"), ("Nope", "1"), ("BufferPool", "x")]);
    assert_eq!(chk(&bad, &sel(&bad, a2)).len(), 4, "{bad:?}");
    assert_eq!(BufferPool::parse("4:8"), BufferPool::Sized { count: 4, mb: 8 });
    assert!(matches!(BufferPool::parse("0:8"), BufferPool::Invalid(_)));
    assert!(BufferPool::parse("").stages() && !BufferPool::parse("0:0").stages());
}

#[test]
fn fabric_mem_needs_a3_and_hdk_25_5() {
    let on = OptionsFacts { fabric_mem: true, ..OptionsFacts::default() };
    let a3 = ProductClass::from_soc(Some("Ascend910_9391"));
    let a2 = ProductClass::from_soc(Some("Ascend910B1"));
    assert_eq!(check_fabric_mem(&on, &a3, &hdk(Some("25.5.0"))), Ok(None));
    assert_eq!(check_fabric_mem(&on, &a3, &hdk(Some("26.0.rc1"))), Ok(None));
    let old = check_fabric_mem(&on, &a3, &hdk(Some("25.3.rc1"))).unwrap().unwrap();
    assert_eq!(old.rule, RuleId::HixlInitFabricMem);
    assert!(old.problem.contains("25.5"), "{}", old.problem);
    let wrong = check_fabric_mem(&on, &a2, &hdk(Some("26.0.0"))).unwrap().unwrap();
    assert!(wrong.problem.contains("Atlas A3"), "{}", wrong.problem);
    assert!(check_fabric_mem(&on, &a3, &hdk(None)).is_err(), "unknown HDK: skipped");
    assert!(check_fabric_mem(&on, &ProductClass::Unknown, &hdk(Some("26.0.0"))).is_err());
    assert_eq!(check_fabric_mem(&OptionsFacts::default(), &a2, &hdk(None)), Ok(None));
}

#[test]
fn vmm_mapped_memory_is_device_memory() {
    let hccs = parse_options(&[(
        "GlobalResourceConfig".into(),
        r#"{"comm_resource_config.protocol_desc": "hccs:device"}"#.into(),
    )]);
    let mut f = facts(&hccs);
    f.dev_alloc = None;
    f.vmm = Some(Alloc { base: 0x20_0000, len: 4 << 20, extra: VmmAttr { mem_attr: 4, host: false } });
    assert!(check_register(&hixl(0x20_0000, 1 << 20, 0), &f).findings.is_empty(), "huge VMM memory: silent");
    f.vmm = Some(Alloc { base: 0x20_0000, len: 4 << 20, extra: VmmAttr { mem_attr: 5, host: false } });
    let c = check_register(&hixl(0x20_0000, 1 << 20, 0), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegDeviceHuge]);
    assert!(c.findings[0].problem.contains("ACL_HBM_MEM_NORMAL"), "{}", c.findings[0].problem);
    // The fabric memory engine registers VMM memory from HDK 26.0 only.
    f.vmm = Some(Alloc { base: 0x20_0000, len: 4 << 20, extra: VmmAttr { mem_attr: 13, host: false } });
    f.engine = Some(Engine::FabricMem);
    f.hdk = hdk(Some("25.5.0"));
    assert_eq!(rules(&check_register(&hixl(0x20_0000, 1 << 20, 0), &f).findings), vec![RuleId::HixlRegFabricVmm]);
    f.hdk = hdk(Some("26.0.0"));
    assert!(check_register(&hixl(0x20_0000, 1 << 20, 0), &f).findings.is_empty());
    assert!(vmm_attr_is_huge(13) && !vmm_attr_is_huge(12));
    assert_eq!(vmm_attr_name(99), "memAttr 99");
}

#[test]
fn engine_dependent_defaults() {
    use crate::rules::Action;
    let opts = OptionsFacts::default();
    let mut f = facts(&opts);
    let zero = &check_register(&hixl(0x1000, 0, 1), &f).findings;
    assert_eq!(rules(zero), vec![RuleId::HixlRegLenZero]);
    assert_eq!(zero[0].action, Some(Action::Error), "comm's HCCL refuses an empty region");
    assert_eq!(RuleId::HixlRegLenZero.info().default, Action::Warn);
    f.engine = Some(Engine::HixlCs);
    assert_eq!(check_register(&hixl(0x1000, 0, 1), &f).findings[0].action, None, "hixl_cs records it: warn");
    f.engine = Some(Engine::FabricMem);
    assert_eq!(check_register(&hixl(0x1000, 0, 1), &f).findings[0].action, Some(Action::Error));
    assert_eq!(RuleId::HixlRegLenZero.info().default_text(), "warn (fabric_mem: error, comm: error)");
    let client = RegArgs { api: RegApi::CsClient, addr: 0x1000, len: 0, ty: 1 };
    f.engine = None;
    assert_eq!(check_register(&client, &f).findings[0].action, Some(Action::Error), "the HixlCS client refuses it");
}

#[test]
fn option_json_never_panics() {
    // Generated inputs: every prefix of tricky texts, deep nesting, odd bytes.
    let seeds = [
        r#"{"comm_resource_config.protocol_desc": ["roce:host", "hccs:device"], "comm_resource_config.listen_port": 26000}"#,
        r#"{"version": "1.3", "endpoint_list": [{"protocol": "roce", "placement": "host"}, {"protocol": 7}]}"#,
        r#"{"a": [1, -2.5e3, true, false, null, "x\"\u0041\ud800"]}"#,
        "\u{feff}{\"version\":\"1.3\"}",
    ];
    let deep = "[".repeat(200) + &"]".repeat(200);
    let deep_obj = "{\"a\":".repeat(100) + "1" + &"}".repeat(100);
    for text in ["[".repeat(100_000), "{\"a\":".repeat(50_000) + "1" + &"}".repeat(50_000)] {
        let f = parse_options(&[("GlobalResourceConfig".into(), text.clone()), ("LocalCommRes".into(), text)]);
        assert_eq!(f.invalid.len(), 2, "too deep: refused, not a crash");
    }
    for text in seeds.iter().map(|s| s.to_string()).chain([deep, deep_obj]) {
        for cut in (0..=text.len()).filter(|i| text.is_char_boundary(*i)) {
            let t = &text[..cut];
            for key in ["GlobalResourceConfig", "LocalCommRes", "BufferPool", "AutoConnect", "EnableUseFabricMem"] {
                let f = parse_options(&[(key.to_string(), t.to_string())]);
                let _ = select_engine(&f, Some("Ascend950PR_9579"), None);
                let _ = chk(&f, &sel(&f, None));
            }
            let _ = parse_cs_config(Some(t));
        }
    }
    let mut x: u32 = 12345;
    for _ in 0..2000 {
        let bytes: Vec<u8> = (0..(x % 64))
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                b"{}[]\",:0123456789.-eE truefalsnul\\u"[(x >> 16) as usize % 33]
            })
            .collect();
        let t = String::from_utf8_lossy(&bytes).into_owned();
        let _ = parse_options(&[("GlobalResourceConfig".into(), t.clone()), ("LocalCommRes".into(), t)]);
    }
}

#[test]
fn dereg_rules() {
    let live = reg(0x42, 0x1000, 0x100, MemKind::Host);
    let f = |state, live, links: Option<LinkFacts>| DeregFacts {
        state,
        live,
        other_owner: None,
        dropped_by: None,
        links,
        engine: Some(Engine::FabricMem),
    };
    let ok = f(InstanceState::Initialized, Some(&live), Some(LinkFacts::default()));
    assert!(check_dereg(RegApi::Hixl, 0x42, &ok).is_empty());
    assert_eq!(rules(&check_dereg(RegApi::Hixl, 0, &ok)), vec![RuleId::HixlDeregNull]);
    let cs = check_dereg(RegApi::CsServer, 0, &ok);
    assert!(cs[0].fix.contains("HixlCSServerRegMem"));
    let linked = f(
        InstanceState::Initialized,
        Some(&live),
        Some(LinkFacts { outgoing: vec!["b".into()], incoming: vec![], foreign: 0 }),
    );
    let d = check_dereg(RegApi::Hixl, 0x42, &linked);
    assert_eq!(rules(&d), vec![RuleId::HixlDeregConnected]);
    assert_eq!(d[0].action, None, "fabric_mem refuses it: the rule's default (error)");
    let comm = DeregFacts { engine: Some(Engine::Comm), ..linked.clone() };
    assert_eq!(check_dereg(RegApi::Hixl, 0x42, &comm)[0].action, Some(crate::rules::Action::Warn), "comm accepts it");
    let cs_out = DeregFacts { engine: Some(Engine::HixlCs), ..linked.clone() };
    assert_eq!(check_dereg(RegApi::Hixl, 0x42, &cs_out)[0].action, None, "its own clients exist: refused");
    let cs_in = DeregFacts {
        engine: Some(Engine::HixlCs),
        links: Some(LinkFacts { outgoing: vec![], incoming: vec!["c".into()], foreign: 0 }),
        ..linked.clone()
    };
    assert!(check_dereg(RegApi::Hixl, 0x42, &cs_in).is_empty(), "links peers made to it are the usual teardown");
    let foreign =
        DeregFacts { links: Some(LinkFacts { outgoing: vec![], incoming: vec![], foreign: 2 }), ..comm.clone() };
    assert!(check_dereg(RegApi::Hixl, 0x42, &foreign).is_empty(), "peers in other processes likewise");
    let unknown = f(InstanceState::Initialized, None, Some(LinkFacts::default()));
    let u = check_dereg(RegApi::Hixl, 0x43, &unknown);
    assert_eq!(rules(&u), vec![RuleId::HixlDeregUnknown]);
    assert!(u[0].problem.contains("SUCCESS"));
    assert!(!u[0].problem.contains("buffer pool"), "fabric_mem has no pool: {}", u[0].problem);
    // The comm engine's map also holds its buffer pool's handles: a stale one may name them.
    let pooled = DeregFacts { engine: Some(Engine::Comm), ..unknown.clone() };
    let p = check_dereg(RegApi::Hixl, 0x43, &pooled);
    assert!(p[0].problem.contains("SUCCESS") && p[0].problem.contains("deregister the pool"), "{}", p[0].problem);
    // The HixlCS server and client refuse an unknown handle.
    let cs_unknown = DeregFacts { engine: None, ..unknown.clone() };
    let c = check_dereg(RegApi::CsServer, 0x43, &cs_unknown);
    assert!(
        c[0].problem.contains("refuses it (PARAM_INVALID)") && !c[0].problem.contains("SUCCESS"),
        "{}",
        c[0].problem
    );
    let other = DeregFacts { other_owner: Some("engine-b".into()), ..unknown.clone() };
    assert!(check_dereg(RegApi::Hixl, 0x43, &other)[0].problem.contains("engine-b"));
    // vllm-ascend #10724: HCCL's one shared handle, dropped by another comm engine
    let ok_comm = DeregFacts { engine: Some(Engine::Comm), ..ok.clone() };
    let dropped = DeregFacts { dropped_by: Some("engine-b".into()), ..ok_comm.clone() };
    let d = check_dereg(RegApi::Hixl, 0x42, &dropped);
    assert_eq!(rules(&d), vec![RuleId::HixlDeregUnknown]);
    assert!(d[0].problem.contains("engine-b deregistered it") && d[0].problem.contains("103900"), "{}", d[0].problem);
    let cs_dropped = DeregFacts { engine: Some(Engine::HixlCs), ..dropped.clone() };
    assert!(check_dereg(RegApi::Hixl, 0x42, &cs_dropped).is_empty(), "only the comm engine shares HCCL's handles");
    let unseen = f(InstanceState::Unknown, None, None);
    assert!(check_dereg(RegApi::CsClient, 0x43, &unseen).is_empty(), "endpoint not seen: no judgement");
    let fin = f(InstanceState::Finalized, None, None);
    assert_eq!(rules(&check_dereg(RegApi::Hixl, 0x43, &fin)), vec![RuleId::HixlNotInitialized]);
    assert_eq!(rules(&check_dereg(RegApi::Hixl, 0, &fin)), vec![RuleId::HixlDeregNull], "NULL first, like the vendor");
}

#[test]
fn leak() {
    assert!(check_leak("Finalize", None, std::iter::empty()).is_none());
    let regs: Vec<HixlReg> = (0..10).map(|i| reg(i + 1, 0x1000 * (i + 1), 0x10, MemKind::Host)).collect();
    let f = check_leak("Finalize", Some("a"), regs.iter()).unwrap();
    assert_eq!(f.rule, RuleId::HixlFinalizeLeak);
    assert!(f.problem.contains("10 registration(s)") && f.problem.contains("and 2 more"), "{}", f.problem);
    assert!(f.problem.contains("\"a\""));
}

#[test]
fn skips_have_messages() {
    let s = mem::no_transport(RuleId::HixlRegDeviceHuge);
    assert!(s.message().starts_with("HIXL-REG-DEVICE-HUGE skipped: "));
    assert_eq!(policy_name(1), "ACL_MEM_MALLOC_HUGE_ONLY");
    assert_eq!(policy_name(99), "an unknown policy");
    assert_eq!(Transport::parse(" ROCE : Host ").unwrap().text(), "roce:host");
    assert!(Transport::parse(" ").is_none());
    assert_eq!(Transport::parse("hccs").unwrap().text(), "hccs");
}

#[test]
fn connecting_to_oneself() {
    use crate::rules::Action;
    let f = check_connect_self("Hixl::Connect", Some(b"127.0.0.1:16000"), b"127.0.0.1:16000").unwrap();
    assert_eq!(f.rule, RuleId::HixlConnectSelf);
    assert!(f.problem.contains("own local engine"), "{}", f.problem);
    assert!(check_connect_self("Hixl::Connect", Some(b"127.0.0.1:16000"), b"127.0.0.1:16001").is_none());
    assert!(check_connect_self("Hixl::Connect", None, b"127.0.0.1:16000").is_none());
    // hixl_cs refuses it; the fabric memory engine links to itself; elsewhere a warning.
    let on = |e| f.clone().on_engine(Some(e)).action.unwrap_or(RuleId::HixlConnectSelf.info().default);
    assert_eq!(on(Engine::HixlCs), Action::Error);
    assert_eq!(on(Engine::FabricMem), Action::Off);
    assert_eq!(on(Engine::Comm), Action::Warn);
}

/// `adxl::AdxlEngine::RegisterMem` is judged by the same rules as `hixl::Hixl`'s, named as
/// ADXL's; with no transport named (what Mooncake passes), a device range on HCCS still has
/// to start on 2 MiB.
#[test]
fn adxl_registrations_share_the_hixl_rules() {
    let adxl = |addr: usize, len: u64, ty: i64| RegArgs { api: RegApi::Adxl, addr, len, ty };
    let f = check_args(&adxl(0x1000, 1, 2));
    assert_eq!(rules(&f), vec![RuleId::HixlRegMemtype]);
    assert!(f[0].fix.contains("adxl::MEM_DEVICE"), "{:?}", f[0]);
    assert_eq!((f[0].arg, RegApi::Adxl.call()), ("type", "AdxlEngine::RegisterMem"));
    let none = OptionsFacts::default();
    let mut f = facts(&none);
    f.state = InstanceState::Constructed;
    let c = check_register(&adxl(0x1000, 1, MEM_HOST), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlNotInitialized]);
    assert!(c.findings[0].fix.contains("AdxlEngine::RegisterMem"), "{:?}", c.findings[0]);
    const M2: usize = 2 << 20;
    let mut f = facts(&none);
    f.dev_alloc = Some(Alloc { base: M2, len: 2 * M2, extra: 1 });
    let c = check_register(&adxl(M2 + 0x1000, 1, MEM_DEVICE), &f);
    assert_eq!(rules(&c.findings), vec![RuleId::HixlRegDeviceAlign]);
    assert!(c.findings[0].problem.contains("no transport is named"), "{:?}", c.findings[0]);
    assert_eq!(c.skipped.iter().map(|s| s.rule).collect::<Vec<_>>(), vec![RuleId::HixlRegDeviceHuge]);
    assert!(check_register(&adxl(M2, 1, MEM_DEVICE), &f).findings.is_empty(), "aligned");
    // hixl::Hixl with no transport named: nothing is known, the rule is skipped.
    assert!(check_register(&hixl(M2 + 0x1000, 1, MEM_DEVICE), &f).findings.is_empty());
    // A deregistration before Initialize, on ADXL too.
    let d = DeregFacts {
        state: InstanceState::Finalized,
        live: None,
        other_owner: None,
        dropped_by: None,
        links: None,
        engine: None,
    };
    assert_eq!(rules(&check_dereg(RegApi::Adxl, 0x10, &d)), vec![RuleId::HixlNotInitialized]);
}

/// The engine selected on the vendor's master (CANN 9.2.0).
fn sel(o: &OptionsFacts, soc: Option<&str>) -> EngineChoice {
    select_engine(o, soc, crate::platform::release::CannRelease::parse("9.2.0")).expect("a known release")
}

/// `check_options` on the vendor's master (CANN 9.2.0).
fn chk(o: &OptionsFacts, e: &EngineChoice) -> Vec<Finding> {
    check_options(o, Some(e), crate::platform::release::CannRelease::parse("9.2.0"))
}

#[test]
fn a_hixl_cs_server_with_ub_endpoints_registers_only_what_an_endpoint_takes() {
    // hicann/hixl hixl_cs_server.cc ShouldRegisterEndpointForMem (tag v9.1.0 and master)
    let ep = |protocol, loc_type| CsEndpointFact { protocol, loc_type };
    let (ctp, tp, roce, uboe, dev, host) = (4, 5, 1, 7, 0, 1);
    let reg = |ty| RegArgs { api: RegApi::CsServer, addr: 0x1000, len: 4096, ty };
    let refused = |ty, eps: &[CsEndpointFact]| check_cs_server_endpoints(&reg(ty), eps).map(|f| f.problem);
    // test_hixl_cs_server.cc:321: a device-only UBC_TP server refuses host memory
    let p = refused(MEM_HOST, &[ep(tp, dev)]).expect("refused");
    assert!(p.contains("no endpoint matches mem type") && p.contains("UBC_TP on the device"), "{p}");
    assert_eq!(refused(MEM_DEVICE, &[ep(tp, dev)]), None);
    let p = refused(MEM_DEVICE, &[ep(ctp, host)]).expect("refused");
    assert!(p.contains("COMM_MEM_TYPE_DEVICE"), "{p}");
    // :284, :349, :418: a host endpoint, UBC_CTP all on the device (maps host memory), or a
    // non-UB endpoint takes host memory
    assert_eq!(refused(MEM_HOST, &[ep(ctp, host), ep(tp, dev)]), None);
    assert_eq!(refused(MEM_HOST, &[ep(ctp, dev), ep(tp, dev)]), None);
    assert_eq!(refused(MEM_HOST, &[ep(tp, dev), ep(roce, dev)]), None);
    assert_eq!(refused(MEM_HOST, &[ep(tp, dev), ep(uboe, dev)]), None);
    // a UBC_CTP host endpoint makes the device UBC_CTP one stop mapping host memory
    assert!(refused(MEM_DEVICE, &[ep(ctp, host)]).is_some());
    // a type neither host nor device, with a UB endpoint: "invalid mem type"
    assert!(refused(5, &[ep(tp, host), ep(tp, dev)]).unwrap().contains("invalid mem type"));
    // without a UB endpoint nothing is said; nor for the client or the C++ members
    assert_eq!(refused(5, &[ep(roce, dev)]), None);
    assert_eq!(check_cs_server_endpoints(&RegArgs { api: RegApi::CsClient, ..reg(MEM_HOST) }, &[ep(tp, dev)]), None);
}
