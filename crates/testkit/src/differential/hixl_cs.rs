//! The HixlCS family: one server and one client of this process, their endpoints (RoCE, UBOE,
//! UBC_CTP, UB_RTP, HCCS, on the device or the host), registrations and one-sided transfers,
//! through the PLT or dlsym.

use super::gen::{Family, Gen, Mem, Step};
use super::hixl::{range_near, region};

const PROTOCOLS: [&str; 5] = ["ROCE", "UBOE", "UBC_CTP", "UB_RTP", "HCCS"];
const LOCATIONS: [&str; 2] = ["device", "host"];

/// What the family made and registered (whatever the answers).
#[derive(Debug, Default)]
pub struct HixlCs {
    server: bool,
    client: bool,
    server_regs: Vec<(Mem, u64)>,
    client_regs: Vec<(Mem, u64)>,
}

fn endpoint(g: &mut Gen) -> (u64, u64) {
    let p = g.rng.pick(&[(2, 0u64), (3, 1), (2, 2), (1, 3), (1, 4)]);
    let l = if g.rng.chance(3, 4) { 0 } else { 1 };
    (p, l)
}

impl HixlCs {
    fn simple(g: &mut Gen, out: &mut Vec<Step>, op: &str, name: &str, what: &str) {
        let (v, vt) = g.via();
        out.push(Step::new(format!("{op} {v}"), format!("{name}{vt}({what})")));
    }

    fn set_up(&mut self, g: &mut Gen, out: &mut Vec<Step>) {
        let (v, vt) = g.via();
        let (p, l) = endpoint(g);
        out.push(Step::new(
            format!("sc {v} {p} {l}"),
            format!("HixlCSServerCreate{vt}(endpoint {} {})", PROTOCOLS[p as usize], LOCATIONS[l as usize]),
        ));
        Self::simple(g, out, "sl", "HixlCSServerListen", "server");
        let (v, vt) = g.via();
        let (p, l) = if g.rng.chance(1, 2) { (p, l) } else { endpoint(g) };
        let rl = if g.rng.chance(2, 3) { 0 } else { 1 };
        out.push(Step::new(
            format!("cc {v} {p} {l} {rl}"),
            format!(
                "HixlCSClientCreate{vt}(local {} {}, remote {})",
                PROTOCOLS[p as usize], LOCATIONS[l as usize], LOCATIONS[rl as usize]
            ),
        ));
        Self::simple(g, out, "cn", "HixlCSClientConnect", "client");
        self.server = true;
        self.client = true;
    }

    fn reg(&mut self, g: &mut Gen, out: &mut Vec<Step>, server: bool) {
        let (m, len, t) = region(g);
        let (v, vt) = g.via();
        let (op, name) = if server { ("sr", "HixlCSServerRegMem") } else { ("cr", "HixlCSClientRegMem") };
        if g.rng.chance(1, 12) {
            // address 0, or a range ending exactly at 2^64 (the driver's kind -1 has no base:
            // the address is the offset)
            let page = g.page;
            let (off, text) =
                if g.rng.chance(1, 2) { (0i64, "NULL".to_string()) } else { (-(page as i64), "2^64-1p".to_string()) };
            out.push(
                Step::new(format!("{op} {v} -1 0 {off} {page} {t}"), format!("{name}{vt}({text}, 1p, type {t})"))
                    .may_crash(),
            );
            return;
        }
        let tt = match t {
            0 => "DEVICE",
            1 => "HOST",
            _ => "type 2",
        };
        out.push(
            Step::new(
                format!("{op} {v} {} {len} {t}", m.args()),
                format!("{name}{vt}({}, {}, {tt})", m.text(), g.size_text(len)),
            )
            .may_crash(),
        );
        let regs = if server { &mut self.server_regs } else { &mut self.client_regs };
        regs.push((m, len));
        if regs.len() > 24 {
            regs.remove(0);
        }
    }
}

impl Family for HixlCs {
    fn name(&self) -> &'static str {
        "hixl_cs"
    }

    fn weight(&self) -> u64 {
        2
    }

    fn step(&mut self, g: &mut Gen, out: &mut Vec<Step>) {
        let setup_weight = if self.server && self.client { 1 } else { 10 };
        match g.rng.pick(&[
            (setup_weight, "setup"),
            (4, "sr"),
            (4, "cr"),
            (1, "su"),
            (1, "cu"),
            (5, "cx"),
            (1, "cn"),
            (1, "cd"),
            (1, "sd"),
        ]) {
            "setup" => self.set_up(g, out),
            "sr" => self.reg(g, out, true),
            "cr" => self.reg(g, out, false),
            "su" | "cu" => {
                let (v, vt) = g.via();
                let i = g.rng.below(64);
                let server = g.rng.chance(1, 2);
                let (op, name) = if server { ("su", "HixlCSServerUnregMem") } else { ("cu", "HixlCSClientUnregMem") };
                out.push(Step::new(format!("{op} {v} {i}"), format!("{name}{vt}(handle #{i})")));
            }
            "cx" => {
                let (local, len) = range_near(g, &self.client_regs);
                let (remote, _) = range_near(g, &self.server_regs);
                let (v, vt) = g.via();
                let put = g.rng.chance(1, 2);
                let (d, name) = if put { (1, "HixlCSClientBatchPutSync") } else { (0, "HixlCSClientBatchGetSync") };
                out.push(Step::new(
                    format!("cx {v} {d} {} {} {len}", local.args(), remote.args()),
                    format!("{name}{vt}(local {}, remote {}, {})", local.text(), remote.text(), g.size_text(len)),
                ));
            }
            "cn" => Self::simple(g, out, "cn", "HixlCSClientConnect", "client"),
            "cd" => {
                Self::simple(g, out, "cd", "HixlCSClientDestroy", "client");
                self.client = false;
                self.client_regs.clear();
            }
            _ => {
                Self::simple(g, out, "sd", "HixlCSServerDestroy", "server");
                self.server = false;
                self.server_regs.clear();
            }
        }
    }
}
