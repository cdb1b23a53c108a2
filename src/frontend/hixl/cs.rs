//! The `HixlCS*` C API: servers and clients, their registrations and connections.

use super::*;

// --- HixlCS* ------------------------------------------------------------------------------

/// Server or client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsSide {
    Server,
    Client,
}

impl CsSide {
    fn api(self) -> RegApi {
        match self {
            CsSide::Server => RegApi::CsServer,
            CsSide::Client => RegApi::CsClient,
        }
    }

    fn map(self, s: &mut crate::state::State) -> &mut std::collections::HashMap<usize, CsEndpoint> {
        match self {
            CsSide::Server => &mut s.hixl.servers,
            CsSide::Client => &mut s.hixl.clients,
        }
    }
}

/// A NUL-terminated string at an address read out of a caller's struct whose layout differs
/// between HIXL releases: only read when the address lies in a readable mapping, and never
/// past that mapping's end or `max` bytes. `None` when it is not a UTF-8 string.
fn checked_c_string(p: *const c_char, max: usize) -> Option<String> {
    let start = p as usize;
    if start == 0 {
        return None;
    }
    let view = memmap::query(start, start.checked_add(1)?, false).ok()?;
    let m = view.mappings.first().filter(|m| m.readable && m.start <= start && start < m.end)?;
    let len = max.min(m.end - start);
    // SAFETY: [start, start + len) lies inside one readable mapping of the process.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    let n = bytes.iter().position(|&b| b == 0)?;
    let text = std::str::from_utf8(&bytes[..n]).ok()?;
    (!text.is_empty()).then(|| text.to_string())
}

/// `server_ip:server_port` of a `HixlServerDesc` / `HixlClientDesc`. Their layout changed
/// between HIXL releases (current: `endpoint_list, server_ip, server_port, ...`, 128 bytes for
/// the server, `local_endpoint, remote_endpoint, server_ip, server_port, ...` for the client;
/// earlier: `server_ip, server_port, ...` first), so both are tried, and a pointer is only
/// followed into readable memory. `None` when neither layout yields an address.
fn cs_key(side: CsSide, desc: *const c_void) -> Option<String> {
    if desc.is_null() {
        return None;
    }
    let current = match side {
        CsSide::Server => (8, 16),
        CsSide::Client => (16, 24),
    };
    [current, (0, 8)].into_iter().find_map(|(ip_off, port_off)| {
        // SAFETY: `desc` points to the application's descriptor, at least 32 bytes in every
        // release; the words are read unaligned and the pointer is checked before use.
        let (ip, port) = unsafe {
            let b = desc.cast::<u8>();
            (b.add(ip_off).cast::<*const c_char>().read_unaligned(), b.add(port_off).cast::<u32>().read_unaligned())
        };
        let ip = checked_c_string(ip, 256).filter(|ip| ip.chars().all(|c| c.is_ascii_graphic()))?;
        (port <= u32::from(u16::MAX)).then(|| format!("{ip}:{port}"))
    })
}

/// The most endpoints read from a server's descriptor.
const MAX_ENDPOINTS: u32 = 1024;
/// `sizeof(EndpointDesc)` (hcomm `hcomm_res_defs.h`): `protocol` at 0, `loc.locType` at 44.
const ENDPOINT_DESC_SIZE: usize = 160;
const ENDPOINT_LOC_TYPE_OFFSET: usize = 44;

/// The endpoints of a `HixlServerDesc` of the current layout (`endpoint_list` at 0,
/// `server_ip` at 8, `endpoint_list_num` at 20), read only when its `server_ip` is a readable
/// address string (that layout, as [`cs_key`] finds it) and the whole list lies in one readable
/// mapping. `None`: not read (the rules that need them are skipped).
fn cs_server_endpoints(desc: *const c_void) -> Option<Vec<CsEndpointFact>> {
    if desc.is_null() {
        return None;
    }
    // SAFETY: `desc` points to the application's descriptor (128 bytes in the current layout,
    // at least 32 in every release); words read unaligned, pointers checked before use.
    let (list, ip, num) = unsafe {
        let b = desc.cast::<u8>();
        (
            b.cast::<*const u8>().read_unaligned(),
            b.add(8).cast::<*const c_char>().read_unaligned(),
            b.add(20).cast::<u32>().read_unaligned(),
        )
    };
    checked_c_string(ip, 256).filter(|ip| ip.chars().all(|c| c.is_ascii_graphic()))?;
    if list.is_null() || num == 0 || num > MAX_ENDPOINTS {
        return None;
    }
    let start = list as usize;
    let end = start.checked_add(num as usize * ENDPOINT_DESC_SIZE)?;
    let view = memmap::query(start, end, false).ok()?;
    view.mappings.first().filter(|m| m.readable && m.start <= start && end <= m.end)?;
    Some(
        (0..num as usize)
            .map(|i| {
                // SAFETY: [start, end) lies inside one readable mapping; each element is 160 bytes.
                let e = unsafe { list.add(i * ENDPOINT_DESC_SIZE) };
                unsafe {
                    CsEndpointFact {
                        protocol: e.cast::<i32>().read_unaligned(),
                        loc_type: e.add(ENDPOINT_LOC_TYPE_OFFSET).cast::<i32>().read_unaligned(),
                    }
                }
            })
            .collect(),
    )
}

/// `HixlCSServerCreate(desc, config, &handle)` / `HixlCSClientCreate(desc, config, &handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_create(side: CsSide, desc: *const c_void, config: *const CsConfig, handle: *mut *mut c_void) -> u32 {
    let (call, sym) = match side {
        CsSide::Server => ("HixlCSServerCreate", &CS_SERVER_CREATE),
        CsSide::Client => ("HixlCSClientCreate", &CS_CLIENT_CREATE),
    };
    run(
        call,
        |rt| {
            let key = cs_key(side, desc);
            // SAFETY: `config` is the application's HixlServerConfig/HixlClientConfig.
            // Earlier releases have only reserved (zeroed) bytes there: checked before it is read.
            let grc = if config.is_null() {
                None
            } else {
                checked_c_string(
                    unsafe { std::ptr::addr_of!((*config).global_resource_config).read_unaligned() },
                    1 << 16,
                )
            };
            let opts = rules::parse_cs_config(grc.as_deref());
            note_options(rt, &format!("{call}({})", key.as_deref().unwrap_or("?")), &opts);
            let endpoints = match side {
                CsSide::Server => cs_server_endpoints(desc),
                CsSide::Client => None,
            };
            Ok((key, opts, endpoints))
        },
        || call_vendor!(sym, CsCreateFn, VENDOR_MISSING; desc, config, handle),
        |_, (key, options, endpoints), ret| {
            if *ret != code::SUCCESS || handle.is_null() {
                return;
            }
            // SAFETY: the vendor succeeded and wrote the handle.
            let h = unsafe { *handle } as usize;
            state::with(|s| {
                let connections = match side {
                    CsSide::Server => {
                        s.hixl.clients.values().filter(|c| c.connections > 0 && c.key.is_some() && c.key == key).count()
                    }
                    CsSide::Client => 0,
                };
                side.map(s).insert(
                    h,
                    CsEndpoint { key, regs: RegSet::default(), connections, options, seen_created: true, endpoints },
                );
            });
        },
    )
}

/// `HixlCSClientConnect(client, timeout_ms)`: a successful connection is recorded on the
/// client and on the servers at its address.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_client_connect(client: *mut c_void, timeout_ms: u32) -> u32 {
    run(
        "HixlCSClientConnect",
        |_| Ok(()),
        || call_vendor!(CS_CLIENT_CONNECT, CsConnectFn, VENDOR_MISSING; client, timeout_ms),
        |_, (), ret| {
            if *ret != code::SUCCESS {
                return;
            }
            state::with(|s| {
                let Some(c) = s.hixl.clients.get_mut(&(client as usize)) else { return };
                if c.connections > 0 {
                    return;
                }
                c.connections = 1;
                let key = c.key.clone();
                for srv in s.hixl.servers.values_mut().filter(|v| v.key.is_some() && v.key == key) {
                    srv.connections += 1;
                }
            });
        },
    )
}

/// `HixlCSServerRegMem` / `HixlCSClientRegMem(handle, mem_tag, const CommMem *mem, MemHandle *)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_reg_mem(
    side: CsSide,
    h: *mut c_void,
    tag: *const c_char,
    mem: *const CommMem,
    out: *mut *mut c_void,
) -> u32 {
    let api = side.api();
    let sym = if side == CsSide::Server { &CS_SERVER_REG_MEM } else { &CS_CLIENT_REG_MEM };
    run(
        api.call(),
        |rt| {
            if mem.is_null() {
                return Ok(None);
            }
            // SAFETY: `mem` is the application's `const CommMem *`.
            let (ty, addr, size) = unsafe { ((*mem).ty, (*mem).addr as usize, (*mem).size) };
            let a = RegArgs { api, addr, len: size, ty: i64::from(ty) };
            // Where it is made, quoted only if a later registration overlaps it.
            let site = crate::callsite::caller_ip().unwrap_or(0);
            let tag = c_string(tag);
            let mf = mem_facts(rt, &a);
            let product = ProductClass::from_soc(rt.soc());
            // A server's clients in other processes: connections accepted on its port.
            let peers = match side {
                CsSide::Server => {
                    let key = state::read(|s| s.hixl.servers.get(&(h as usize)).and_then(|e| e.key.clone()));
                    key.as_deref().map_or(0, crate::platform::net::engine_peers)
                }
                CsSide::Client => 0,
            };
            let (checks, overlapped) = state::with(|s| {
                let map = match side {
                    CsSide::Server => &s.hixl.servers,
                    CsSide::Client => &s.hixl.clients,
                };
                let empty = CsEndpoint::default();
                let ep = map.get(&(h as usize));
                let e = ep.unwrap_or(&empty);
                let range = a.range();
                let identical = range.and_then(|_| e.regs.identical(a.kind(), addr, size));
                let overlap = match (range, identical) {
                    (Some((start, end)), None) => e.regs.overlapping_reg(a.kind(), start, end),
                    _ => None,
                };
                let links = ep.filter(|e| e.seen_created).map(|e| match (side, e.connections) {
                    (CsSide::Server, 0) => LinkFacts { foreign: peers, ..LinkFacts::default() },
                    (_, 0) => LinkFacts::default(),
                    (CsSide::Client, _) => LinkFacts {
                        outgoing: vec![format!("server {}", e.key.as_deref().unwrap_or("?"))],
                        incoming: vec![],
                        foreign: 0,
                    },
                    (CsSide::Server, n) => LinkFacts {
                        outgoing: vec![],
                        incoming: vec![format!("{n} client(s) at {}", e.key.as_deref().unwrap_or("?"))],
                        foreign: peers.saturating_sub(n),
                    },
                });
                let facts = RegFacts {
                    state: if ep.is_some() { InstanceState::Initialized } else { InstanceState::Unknown },
                    thread: None,
                    links,
                    identical,
                    overlap,
                    live: e.regs.len(),
                    limit: u64::MAX,
                    near_warned: true,
                    total_of_kind: e.regs.total(a.kind()),
                    product,
                    hdk: HdkFact { version: None, describe: "".into() },
                    options: &e.options,
                    by_malloc_host: mf.by_malloc_host,
                    dev_alloc: mf.dev_alloc,
                    vmm: mf.vmm,
                    engine: None,
                    gaps: mf.gaps,
                };
                let mut checks = rules::check_register(&a, &facts);
                // The server's endpoints (put first below, before the address findings too).
                if let Some(f) = ep
                    .filter(|_| !out.is_null())
                    .and_then(|e| e.endpoints.as_deref())
                    .and_then(|list| rules::check_cs_server_endpoints(&a, list))
                {
                    checks.findings.push(f);
                }
                (checks, overlap.cloned())
            });
            note_skips(rt, &checks);
            let top = crate::platform::address::user_space_top();
            let mut findings =
                crate::rules::address::first_for_hixl(checks.findings, crate::rules::address::check_hixl(&a, top));
            // The server's endpoints take the memory or not before anything else is looked at.
            if let Some(i) = findings.iter().position(|f| f.rule == crate::rules::RuleId::HixlRegNoEndpoint) {
                let f = findings.remove(i);
                findings.insert(0, f);
            }
            if let Some(r) = overlapped {
                findings = overlap_sites(rt, findings, &a, &r, site);
            }
            reject_or(rt, Api::C, api.call(), || reg_args_text(&a, tag.as_deref()), &findings)?;
            Ok(Some((a, tag, site)))
        },
        || call_vendor!(sym, CsRegMemFn, VENDOR_MISSING; h, tag, mem, out),
        |_, a, ret| {
            let (Some((a, tag, site)), true, false) = (a, *ret == code::SUCCESS, out.is_null()) else { return };
            // SAFETY: the vendor succeeded and wrote the handle.
            let handle = unsafe { *out } as usize;
            state::with(|s| {
                side.map(s).entry(h as usize).or_default().regs.insert(HixlReg {
                    handle,
                    addr: a.addr,
                    len: a.len,
                    kind: a.kind(),
                    tag: tag.unwrap_or_default(),
                    site,
                });
            });
        },
    )
}

/// `HixlCSServerUnregMem` / `HixlCSClientUnregMem(handle, mem_handle)`.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_unreg_mem(side: CsSide, h: *mut c_void, mem_handle: *mut c_void) -> u32 {
    let api = side.api();
    let (call, sym) = match side {
        CsSide::Server => ("HixlCSServerUnregMem", &CS_SERVER_UNREG_MEM),
        CsSide::Client => ("HixlCSClientUnregMem", &CS_CLIENT_UNREG_MEM),
    };
    run(
        call,
        |rt| {
            let mh = mem_handle as usize;
            let findings = state::with(|s| {
                let ep = side.map(s).get(&(h as usize));
                let facts = DeregFacts {
                    state: match ep {
                        Some(e) if e.seen_created => InstanceState::Initialized,
                        _ => InstanceState::Unknown,
                    },
                    live: ep.and_then(|e| e.regs.get(mh)),
                    other_owner: None,
                    dropped_by: None,
                    links: None,
                    engine: None,
                };
                rules::check_dereg(api, mh, &facts)
            });
            reject_or(rt, Api::C, call, || format!("mem_handle=0x{mh:x}"), &findings)
        },
        || call_vendor!(sym, CsHandleFn, VENDOR_MISSING; h, mem_handle),
        |_, (), ret| {
            if *ret == code::SUCCESS {
                state::with(|s| {
                    if let Some(e) = side.map(s).get_mut(&(h as usize)) {
                        e.regs.remove(mem_handle as usize);
                    }
                });
            }
        },
    )
}

/// `HixlCSServerDestroy(server)` / `HixlCSClientDestroy(client)`: leaks are reported, the
/// state is dropped. Never rejected.
///
/// # Safety
/// The vendor's contract for this call (pointers and references valid, `this` a live object,
/// handles from the vendor); out-arguments are read only after the vendor succeeded.
pub unsafe fn cs_destroy(side: CsSide, h: *mut c_void) -> u32 {
    let (call, sym) = match side {
        CsSide::Server => ("HixlCSServerDestroy", &CS_SERVER_DESTROY),
        CsSide::Client => ("HixlCSClientDestroy", &CS_CLIENT_DESTROY),
    };
    run(
        call,
        |rt| {
            let ep = state::with(|s| side.map(s).get(&(h as usize)).cloned());
            if let Some(f) = ep.and_then(|e| rules::check_leak(call, e.key.as_deref(), e.regs.iter())) {
                let _ = decide(
                    rt,
                    Api::C,
                    call,
                    crate::report::Args::Write(&|o| crate::report::write_hex(o, "handle=", h as usize)),
                    &[f],
                );
            }
            Ok(())
        },
        || call_vendor!(sym, CsDestroyFn, VENDOR_MISSING; h),
        |_, (), ret| {
            if *ret != code::SUCCESS {
                return;
            }
            state::with(|s| {
                let Some(e) = side.map(s).remove(&(h as usize)) else { return };
                if side == CsSide::Client && e.connections > 0 {
                    for srv in s.hixl.servers.values_mut().filter(|v| v.key.is_some() && v.key == e.key) {
                        srv.connections = srv.connections.saturating_sub(1);
                    }
                }
            });
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc_with(words: &[(usize, u64)]) -> [u64; 16] {
        let mut d = [0u64; 16];
        for &(off, v) in words {
            d[off / 8] = v;
        }
        d
    }

    #[test]
    fn cs_descriptors_of_both_layouts_are_read_safely() {
        let ip = c"127.0.0.1";
        let ip_ptr = ip.as_ptr() as u64;
        // Current server layout: endpoint_list, server_ip, server_port, ...
        let d = desc_with(&[(0, 0x1000), (8, ip_ptr), (16, 26000)]);
        assert_eq!(cs_key(CsSide::Server, d.as_ptr().cast()), Some("127.0.0.1:26000".into()));
        // Earlier layout: server_ip, server_port, ...: the port word is not followed as a pointer.
        let d = desc_with(&[(0, ip_ptr), (8, 26000), (16, 0x1000)]);
        assert_eq!(cs_key(CsSide::Server, d.as_ptr().cast()), Some("127.0.0.1:26000".into()));
        // Current client layout: local_endpoint, remote_endpoint, server_ip, server_port.
        let d = desc_with(&[(16, ip_ptr), (24, 26000)]);
        assert_eq!(cs_key(CsSide::Client, d.as_ptr().cast()), Some("127.0.0.1:26000".into()));
        // Garbage pointers are never dereferenced.
        let d = desc_with(&[(0, 0x10), (8, 0xdead_0000_0000), (16, 7)]);
        assert_eq!(cs_key(CsSide::Server, d.as_ptr().cast()), None);
        assert_eq!(cs_key(CsSide::Server, std::ptr::null()), None);
        assert_eq!(checked_c_string(std::ptr::null(), 10), None);
    }

    #[test]
    fn cs_keys() {
        let ip = c"10.0.0.1";
        let mut server = [0u8; 128];
        server[8..16].copy_from_slice(&(ip.as_ptr() as usize).to_ne_bytes());
        server[16..20].copy_from_slice(&26000u32.to_ne_bytes());
        assert_eq!(cs_key(CsSide::Server, server.as_ptr().cast()).as_deref(), Some("10.0.0.1:26000"));
        let mut client = [0u8; 128];
        client[16..24].copy_from_slice(&(ip.as_ptr() as usize).to_ne_bytes());
        client[24..28].copy_from_slice(&7u32.to_ne_bytes());
        assert_eq!(cs_key(CsSide::Client, client.as_ptr().cast()).as_deref(), Some("10.0.0.1:7"));
        assert!(cs_key(CsSide::Client, std::ptr::null()).is_none());
        assert!(cs_key(CsSide::Server, [0u8; 128].as_ptr().cast()).is_none(), "NULL ip");
    }

    /// Addresses a descriptor word may hold, of every kind the reader must survive: a proper
    /// string, text running up to the end of a readable mapping with no NUL (the next page is
    /// PROT_NONE), a PROT_NONE page, unmapped and kernel addresses, small numbers.
    fn hostile_words() -> &'static [u64] {
        static WORDS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
        WORDS.get_or_init(|| {
            let page = 4096usize.max(crate::platform::page_size());
            // SAFETY: a fresh private anonymous mapping of two pages, the second made
            // inaccessible; it is never unmapped (the test process ends soon).
            let base = unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    2 * page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(p, libc::MAP_FAILED);
                std::ptr::write_bytes(p.cast::<u8>(), b'7', page);
                assert_eq!(libc::mprotect(p.cast::<u8>().add(page).cast(), page, libc::PROT_NONE), 0);
                p as u64
            };
            let page = page as u64;
            vec![
                c"127.0.0.1".as_ptr() as u64,
                c"".as_ptr() as u64,
                c"bad ip\twith space".as_ptr() as u64,
                base,
                base + page - 1,
                base + page,
                base + 2 * page,
                0,
                1,
                26000,
                u64::from(u32::MAX),
                0xffff_8000_0000_0000,
                u64::MAX,
                0x0000_7fff_ffff_f000,
            ]
        })
    }

    #[test]
    fn generated_descriptors_never_fault_and_yield_an_address_or_nothing() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngSeed, TestRunner};
        // `PROPTEST_CASES` lowers the count where each case is slow: under the emulator of
        // `cargo xtask cross`, where every system call of the probe is emulated
        let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2048);
        let config = Config {
            cases,
            rng_seed: RngSeed::Fixed(0x6373_6b65_7973),
            failure_persistence: None,
            ..Config::default()
        };
        let word = prop_oneof![prop::sample::select(hostile_words()), any::<u64>(), 0u64..70000];
        let strategy = (any::<bool>(), prop::collection::vec(word, 16));
        TestRunner::new(config)
            .run(&strategy, |(server, words)| {
                let desc: [u64; 16] = words.try_into().expect("16 words");
                let side = if server { CsSide::Server } else { CsSide::Client };
                if let Some(key) = cs_key(side, desc.as_ptr().cast()) {
                    let (ip, port) = key.rsplit_once(':').expect("ip:port");
                    prop_assert!(!ip.is_empty() && ip.chars().all(|c| c.is_ascii_graphic()), "{key}");
                    prop_assert!(port.parse::<u16>().is_ok(), "{key}");
                }
                Ok(())
            })
            .expect("every generated descriptor is read safely");
    }
}
