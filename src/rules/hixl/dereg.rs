//! Deregistration rules (`DeregisterMem`, `HixlCS*UnregMem`).

use super::*;

/// Facts about one deregistration.
#[derive(Debug, Clone)]
pub struct DeregFacts<'a> {
    pub state: InstanceState,
    /// The live registration with this handle on this instance.
    pub live: Option<&'a HixlReg>,
    /// The engine that owns the handle, when it is another instance's.
    pub other_owner: Option<String>,
    /// Another instance that deregistered this very handle since this instance was given it
    /// (on the comm engine, HCCL's one shared handle for identical registrations).
    pub dropped_by: Option<String>,
    pub links: Option<LinkFacts>,
    /// The engine the instance runs (`None`: not known, or a HixlCS endpoint).
    pub engine: Option<Engine>,
}

/// `HIXL-DEREG-NULL`, `HIXL-NOT-INITIALIZED`, `HIXL-DEREG-CONNECTED`, `HIXL-DEREG-UNKNOWN`.
pub fn check_dereg(api: RegApi, handle: usize, f: &DeregFacts) -> Vec<Finding> {
    let call = api.dereg_call();
    let mut out = Vec::new();
    if handle == 0 {
        out.push(Finding::new(
            RuleId::HixlDeregNull,
            "mem_handle",
            "is NULL",
            format!("pass the handle {} returned", api.call()),
        ));
        return out;
    }
    if api.is_member() {
        out.extend(check_initialized(call, f.state));
        if !out.is_empty() {
            return out;
        }
    }
    match f.live {
        Some(r) => {
            // vllm-ascend #10724: the comm engine registers with HCCL's global memory, which
            // gives identical registrations (same type, address, size) one handle and counts no
            // references: another instance's deregistration dropped it, so HCCL refuses this one
            // ("memHandle is invalid", HCCL_E_PARA) and the engine answers 103900.
            if let (Some(o), Some(Engine::Comm)) = (f.dropped_by.as_ref(), f.engine) {
                out.push(Finding::new(
                    RuleId::HixlDeregUnknown,
                    "mem_handle",
                    format!(
                        "0x{handle:x} ([0x{:x}, 0x{:x}), {}) is live on this instance but no longer in HCCL: the comm engine registers with HCCL's global memory, which gave this instance and {o} one shared handle for the identical region and counts no references, and {o} deregistered it; HCCL answers \"memHandle is invalid\" (HCCL_E_PARA) and the engine 103900",
                        r.addr,
                        r.end(),
                        r.kind.name()
                    ),
                    "deregister a region registered on several comm engines once, on the last of them, or register it on one engine only",
                ));
            }
            // Only the instance's own links count. Links peers made to it (in this process or
            // from others) are the usual, correct teardown: the peer says it is done, the
            // server deregisters, the peer disconnects later. Every engine accepts that call,
            // and a warning there would fire on correct programs (the vendor's own samples).
            if let Some(l) = f.links.as_ref().filter(|l| !l.outgoing.is_empty()) {
                // hixl_cs and fabric_mem refuse it while their own links to peers (their
                // clients, channels) exist; comm accepts it.
                let why = match f.engine {
                    Some(Engine::Comm) => {
                        "the comm engine accepts it, but peers linked before keep the region in their view and their transfers into it fail"
                    }
                    Some(_) => "the engine refuses it while its own links are up (\"All clients must be disconnected\")",
                    None => "the engine may refuse it",
                };
                out.push(
                    Finding::new(
                        RuleId::HixlDeregConnected,
                        "mem_handle",
                        format!(
                            "0x{handle:x} ([0x{:x}, 0x{:x}), {}) is deregistered while the instance has {}: {why}",
                            r.addr,
                            r.end(),
                            r.kind.name(),
                            l.describe()
                        ),
                        "Disconnect every remote engine before DeregisterMem",
                    )
                    .on_engine(f.engine),
                );
            }
        }
        None if f.state == InstanceState::Unknown => {}
        None => {
            // Hixl and ADXL answer SUCCESS for a handle their map lacks; the HixlCS server and
            // client refuse it (hicann/hixl `src/hixl/cs/hixl_cs_server.cc`, `DeregisterMem`;
            // `hixl_cs_client.cc`, `UnRegMem`). The comm engine's map also holds its buffer
            // pool's registrations, made at Initialize (`adxl_inner_engine.cc`): a handle HCCL
            // freed may be handed out again, so a stale one can name the pool's.
            let vendor = match (api.is_member(), f.engine) {
                (false, _) => "the vendor refuses it (PARAM_INVALID)",
                (true, Some(Engine::Comm) | None) => {
                    "the vendor returns SUCCESS and does nothing, unless the engine now holds a registration of its own under that handle: the comm engine registers its buffer pool at Initialize, and HCCL may hand out a freed handle again, so a stale handle after Finalize and a new Initialize can deregister the pool"
                }
                (true, Some(_)) => "the vendor returns SUCCESS and does nothing",
            };
            let problem = match &f.other_owner {
                Some(o) => {
                    format!("0x{handle:x} is not a live registration of this instance (it belongs to {o}); {vendor}")
                }
                None => format!(
                    "0x{handle:x} is not a live registration of this instance (already deregistered, or never returned by {}); {vendor}",
                    api.call()
                ),
            };
            out.push(Finding::new(
                RuleId::HixlDeregUnknown,
                "mem_handle",
                problem,
                "deregister each handle once, on the instance that returned it",
            ));
        }
    }
    out
}
