//! The ACL family: devices set and reset, host registrations (V2 and V1) and unregistrations,
//! device-pointer look-ups, aclrtMallocHost/aclrtFreeHost, through the PLT or dlsym.

use super::gen::{kind, Family, Gen, Mem, Step, HUGE};

const MAPPED: u64 = 0x2;
const IOMEMORY: u64 = 0x4;
const READONLY: u64 = 0x8;
const PINNED: u64 = 0x1000_0000;

/// What the family registered (whatever the answer), to unregister and look up again.
#[derive(Debug, Default)]
pub struct Acl {
    regs: Vec<(Mem, u64)>,
}

fn flag_text(flag: u64) -> String {
    let mut parts = Vec::new();
    for (bit, name) in [(MAPPED, "MAPPED"), (IOMEMORY, "IOMEMORY"), (READONLY, "READONLY"), (PINNED, "PINNED")] {
        if flag & bit != 0 {
            parts.push(name.to_string());
        }
    }
    let rest = flag & !(MAPPED | IOMEMORY | READONLY | PINNED);
    if rest != 0 || parts.is_empty() {
        parts.push(format!("{rest:#x}"));
    }
    parts.join("|")
}

/// Memory for registrations: every kind, the page-locked ones and the heap most.
const KINDS: &[(u64, u64)] = &[
    (4, kind::HEAP),
    (4, kind::MALLOC_HOST),
    (3, kind::MALLOC_HOST_DLSYM),
    (2, kind::ANON),
    (1, kind::STACK),
    (1, kind::FILE),
    (1, kind::READ_ONLY),
    (1, kind::HOLE),
    (2, kind::LOCKED),
    (1, kind::KERNEL),
    (1, kind::DEVICE),
    (3, kind::SLOT0),
];

impl Acl {
    fn device(g: &mut Gen) -> u64 {
        if g.rng.chance(6, 7) {
            0
        } else {
            1
        }
    }

    fn set_reset(g: &mut Gen, out: &mut Vec<Step>, set: bool, d: u64) {
        let (v, vt) = g.via();
        let (op, name) = match (set, g.rng.chance(1, 4)) {
            (true, _) => ("set", "aclrtSetDevice"),
            (false, false) => ("reset", "aclrtResetDevice"),
            (false, true) => ("resetf", "aclrtResetDeviceForce"),
        };
        out.push(Step::new(format!("{op} {v} {d}"), format!("{name}{vt}({d})")).invisible_if(v == 1));
    }

    fn register(&mut self, g: &mut Gen, out: &mut Vec<Step>, mem: Mem, size: u64, flag: Option<u64>) {
        let (v, vt) = g.via();
        let st = g.size_text(size);
        match flag {
            Some(flag) => out.push(
                Step::new(
                    format!("r2 {v} {} {} {flag}", mem.args(), size as i64),
                    format!("aclrtHostRegisterV2{vt}({}, {st}, {})", mem.text(), flag_text(flag)),
                )
                .may_crash()
                .invisible_if(v == 1),
            ),
            None => {
                let ty = g.rng.pick(&[(6, 0u64), (1, 4), (1, 8), (1, 3)]);
                let tt = match ty {
                    0 => "MAPPED".to_string(),
                    4 => "IOMEMORY".to_string(),
                    8 => "READONLY".to_string(),
                    t => t.to_string(),
                };
                out.push(
                    Step::new(
                        format!("r1 {v} {} {} {ty}", mem.args(), size as i64),
                        format!("aclrtHostRegister{vt}({}, {st}, {tt}, &dev)", mem.text()),
                    )
                    .may_crash()
                    .invisible_if(v == 1),
                );
            }
        }
        self.regs.push((mem, size));
        if self.regs.len() > 24 {
            self.regs.remove(0);
        }
    }

    fn flag(g: &mut Gen) -> u64 {
        g.rng.pick(&[
            (8, MAPPED),
            (3, MAPPED | PINNED),
            (3, PINNED),
            (1, 0),
            (1, IOMEMORY),
            (1, MAPPED | READONLY),
            (1, 0x40),
        ])
    }

    /// An address near a registration made before (its base mostly, else inside it), or anywhere.
    fn known(&self, g: &mut Gen) -> Mem {
        if self.regs.is_empty() || g.rng.chance(1, 5) {
            let k = g.kind(KINDS);
            let mut m = g.mem_in(k, 1);
            m.off = g.misalign();
            return m;
        }
        let (m, size) = self.regs[g.rng.below(self.regs.len() as u64) as usize];
        let page = g.page;
        match g.rng.pick(&[(6, 0u64), (1, 1), (1, 2)]) {
            1 => m.plus(8, page),
            2 => m.plus(size.min(1 << 20) / page / 2 * page + page, page),
            _ => m,
        }
    }

    fn unregister(&self, g: &mut Gen, out: &mut Vec<Step>, m: Mem) {
        let (v, vt) = g.via();
        out.push(
            Step::new(format!("u {v} {}", m.args()), format!("aclrtHostUnregister{vt}({})", m.text()))
                .invisible_if(v == 1),
        );
    }
}

impl Family for Acl {
    fn name(&self) -> &'static str {
        "acl"
    }

    fn weight(&self) -> u64 {
        5
    }

    fn step(&mut self, g: &mut Gen, out: &mut Vec<Step>) {
        match g.rng.pick(&[
            (2, "set"),
            (2, "reset"),
            (8, "r2"),
            (3, "r1"),
            (5, "u"),
            (3, "dp"),
            (1, "mh"),
            (1, "fh"),
            (1, "pattern"),
        ]) {
            "set" => {
                let d = Self::device(g);
                Self::set_reset(g, out, true, d);
            }
            "reset" => {
                let d = Self::device(g);
                Self::set_reset(g, out, false, d);
            }
            "r2" | "r1" => {
                let k = g.kind(KINDS);
                let pages = g.pages().min(Mem::pool_pages(k));
                let mut mem = g.mem_in(k, pages);
                if g.rng.chance(1, 6) && !self.regs.is_empty() {
                    // next to, or over, a registration made before
                    let (m, size) = self.regs[g.rng.below(self.regs.len() as u64) as usize];
                    let next =
                        if g.rng.chance(1, 2) { m.plus(size.min(1 << 20), g.page) } else { m.plus(g.page, g.page) };
                    if next.page + pages <= Mem::pool_pages(next.kind) {
                        mem = next;
                    }
                }
                mem.off = g.misalign();
                // a size that runs past the end of the address space, now and then
                let size = if g.rng.chance(1, 40) { u64::MAX } else { g.size(pages) };
                if size == HUGE {
                    // 1 TiB is registered from the hole, as HIXL's is (`hixl::region`): a PINNED-only
                    // one enters the runtime's pinned table unchecked, and from another pool it would
                    // cover other pools in one run's address layout and not in another's.
                    mem = Mem { kind: kind::HOLE, page: mem.page.min(Mem::pool_pages(kind::HOLE) - 1), off: mem.off };
                }
                let flag = if g.rng.chance(8, 11) { Some(Self::flag(g)) } else { None };
                self.register(g, out, mem, size, flag);
            }
            "u" => {
                let m = self.known(g);
                self.unregister(g, out, m);
            }
            "dp" => {
                let m = self.known(g);
                let (v, vt) = g.via();
                out.push(
                    Step::new(
                        format!("dp {v} {}", m.args()),
                        format!("aclrtHostGetDevicePointer{vt}({}, &dev, 0)", m.text()),
                    )
                    .invisible_if(v == 1),
                );
            }
            "mh" | "fh" => {
                let (v, vt) = g.via();
                let s = g.rng.below(super::gen::SLOTS);
                let (op, name) = if g.rng.chance(1, 2) { ("mh", "aclrtMallocHost") } else { ("fh", "aclrtFreeHost") };
                out.push(Step::new(format!("{op} {v} {s}"), format!("{name}{vt}(slot{s})")).invisible_if(v == 1));
            }
            _ => {
                // register, then the last reset of the device and set it again, then unregister
                let k = g.kind(&[(2, kind::HEAP), (2, kind::MALLOC_HOST), (1, kind::ANON), (1, kind::LOCKED)]);
                let mem = g.mem_in(k, 4);
                let flag = g.rng.pick(&[(2, PINNED), (1, MAPPED), (1, MAPPED | PINNED)]);
                let size = 4 * g.page;
                self.register(g, out, mem, size, Some(flag));
                Self::set_reset(g, out, false, 0);
                Self::set_reset(g, out, true, 0);
                if g.rng.chance(1, 2) {
                    let (v, vt) = g.via();
                    out.push(
                        Step::new(
                            format!("dp {v} {}", mem.args()),
                            format!("aclrtHostGetDevicePointer{vt}({}, &dev, 0)", mem.text()),
                        )
                        .invisible_if(v == 1),
                    );
                }
                self.unregister(g, out, mem);
            }
        }
    }
}
