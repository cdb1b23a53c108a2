//! The hixl::Hixl family: two engines of this process (0 and 1), initialised with one of four
//! option sets (comm with and without its buffer pool, hixl_cs over RoCE or UBOE), their
//! registrations, links and transfers; and the run of adjacent one-page registrations a
//! transfer crosses (hixl_cs merges them for its check).

use super::gen::{kind, Family, Gen, Mem, Step, HUGE};

const OPTIONS: [&str; 4] = ["comm", "comm, BufferPool 0:0", "hixl_cs roce:device", "hixl_cs uboe:device"];

/// What the family registered on each engine (whatever the answer).
#[derive(Debug, Default)]
pub struct Hixl {
    regs: [Vec<(Mem, u64)>; 2],
    started: [bool; 2],
}

/// Memory for registrations.
pub(super) const KINDS: &[(u64, u64)] = &[
    (5, kind::MALLOC_HOST),
    (2, kind::MALLOC_HOST_DLSYM),
    (3, kind::HEAP),
    (1, kind::ANON),
    (2, kind::DEVICE),
    (1, kind::LOCKED),
    (1, kind::HOLE),
    (1, kind::READ_ONLY),
    (1, kind::STACK),
    (1, kind::KERNEL),
    (1, kind::SLOT0),
];

/// A registration's type: device memory as MEM_DEVICE mostly, the rest as MEM_HOST; now and
/// then the other one, or a value that is neither.
pub(super) fn mem_type(g: &mut Gen, k: u64) -> u64 {
    let natural = if k == kind::DEVICE { 0 } else { 1 };
    g.rng.pick(&[(12, natural), (1, 1 - natural), (1, 2)])
}

fn type_text(t: u64) -> &'static str {
    match t {
        0 => "MEM_DEVICE",
        1 => "MEM_HOST",
        _ => "type 2",
    }
}

/// Memory to register: an address, a length and a type.
pub(super) fn region(g: &mut Gen) -> (Mem, u64, u64) {
    let k = g.kind(KINDS);
    let pages = g.pages().min(Mem::pool_pages(k));
    let mut m = g.mem_in(k, pages);
    m.off = g.misalign();
    let len = g.size(pages);
    if len == HUGE {
        // 1 TiB (the documented host cap's case) is registered from the hole, unmapped at a
        // fixed address far from every other pool (tests/c/differential/main.cpp): from any
        // other pool so long a range covers other pools in one run's address layout and not
        // in another's (the loader's randomisation and regcheck's own mappings move them), and
        // the vendor would refuse a later registration there as an overlap in one run only.
        m = Mem { kind: kind::HOLE, page: m.page.min(Mem::pool_pages(kind::HOLE) - 1), off: m.off };
    }
    (m, len, mem_type(g, k))
}

/// A range to transfer from or to: inside (or across the end of) a registration made before,
/// or anywhere.
pub(super) fn range_near(g: &mut Gen, regs: &[(Mem, u64)]) -> (Mem, u64) {
    let page = g.page;
    if regs.is_empty() || g.rng.chance(1, 8) {
        let k = g.kind(KINDS);
        return (g.mem_in(k, 1), page);
    }
    let (m, len) = regs[g.rng.below(regs.len() as u64) as usize];
    let len = len.clamp(1, 32 * page);
    let off = if g.rng.chance(1, 3) { g.rng.below(len) / 64 * 64 } else { 0 };
    let n = match g.rng.pick(&[(5, 0u64), (1, 1), (1, 2)]) {
        1 => len - off + page, // past the end
        2 => 0,
        _ => (1 + g.rng.below(len - off)).min(len - off),
    };
    (m.plus(off, page), n)
}

impl Hixl {
    fn init(&mut self, out: &mut Vec<Step>, e: usize, o: u64) {
        out.push(Step::new(format!("hi {e} {o}"), format!("engine{e}.Initialize({})", OPTIONS[o as usize])));
        self.started[e] = true;
    }

    fn reg(&mut self, out: &mut Vec<Step>, g: &Gen, e: usize, m: Mem, len: u64, t: u64) {
        out.push(
            Step::new(
                format!("hr {e} {} {len} {t}", m.args()),
                format!("engine{e}.RegisterMem({}, {}, {})", m.text(), g.size_text(len), type_text(t)),
            )
            .may_crash(),
        );
        self.regs[e].push((m, len));
        if self.regs[e].len() > 24 {
            self.regs[e].remove(0);
        }
    }

    fn connect(out: &mut Vec<Step>, e: usize) {
        out.push(Step::new(format!("hc {e}"), format!("engine{e}.Connect(engine{})", 1 - e)));
    }

    fn xfer(out: &mut Vec<Step>, g: &Gen, e: usize, write: bool, local: Mem, remote: Mem, len: u64) {
        let (d, dt) = if write { (1, "WRITE") } else { (0, "READ") };
        out.push(Step::new(
            format!("hx {e} {d} {} {} {len}", local.args(), remote.args()),
            format!(
                "engine{e}.TransferSync(engine{}, {dt}, local {}, remote {}, {})",
                1 - e,
                local.text(),
                remote.text(),
                g.size_text(len)
            ),
        ));
    }

    /// `n` adjacent one-page registrations on engine `e` and one transfer across them (or one
    /// page past them), to a range of the other engine registered at once.
    fn adjacent(&mut self, g: &mut Gen, out: &mut Vec<Step>) {
        let e = g.rng.below(2) as usize;
        let page = g.page;
        if g.rng.chance(2, 3) {
            // both engines afresh (Finalize drops their registrations), mostly hixl_cs
            let o = g.rng.pick(&[(3, 2u64), (1, 0), (1, 1)]);
            for x in [0, 1] {
                out.push(Step::new(format!("hf {x}"), format!("engine{x}.Finalize()")));
                self.regs[x].clear();
                self.init(out, x, o);
            }
        }
        let n = if g.rng.chance(2, 3) { 62 + g.rng.below(8) } else { 2 + g.rng.below(6) };
        let k = g.rng.pick(&[(3, kind::MALLOC_HOST), (1, kind::MALLOC_HOST_DLSYM), (1, kind::HEAP)]);
        let start = g.rng.below(super::gen::POOL_PAGES - n);
        for i in 0..n {
            self.reg(out, g, e, Mem { kind: k, page: start + i, off: 0 }, page, 1);
        }
        let rk = g.rng.pick(&[(1, kind::MALLOC_HOST), (1, kind::ANON)]);
        let remote = Mem { kind: rk, page: 0, off: 0 };
        self.reg(out, g, 1 - e, remote, super::gen::POOL_PAGES * page, 1);
        Self::connect(out, e);
        let len = if g.rng.chance(1, 4) { (n + 1) * page } else { n * page };
        let write = g.rng.chance(1, 2);
        Self::xfer(out, g, e, write, Mem { kind: k, page: start, off: 0 }, remote, len);
    }
}

impl Family for Hixl {
    fn name(&self) -> &'static str {
        "hixl"
    }

    fn weight(&self) -> u64 {
        3
    }

    fn step(&mut self, g: &mut Gen, out: &mut Vec<Step>) {
        let e = g.rng.below(2) as usize;
        let init_weight = if self.started[e] { 1 } else { 12 };
        match g.rng.pick(&[
            (init_weight, "hi"),
            (1, "hf"),
            (6, "hr"),
            (2, "hd"),
            (3, "hc"),
            (1, "hu"),
            (6, "hx"),
            (1, "adjacent"),
        ]) {
            "hi" => {
                let o = g.rng.pick(&[(3, 0u64), (2, 1), (3, 2), (2, 3)]);
                self.init(out, e, o);
            }
            "hf" => {
                out.push(Step::new(format!("hf {e}"), format!("engine{e}.Finalize()")));
                self.started[e] = false;
            }
            "hr" => {
                let (m, len, t) = region(g);
                self.reg(out, g, e, m, len, t);
            }
            "hd" => {
                let i = g.rng.below(64);
                out.push(Step::new(format!("hd {e} {i}"), format!("engine{e}.DeregisterMem(handle #{i})")));
            }
            "hc" => Self::connect(out, e),
            "hu" => out.push(Step::new(format!("hu {e}"), format!("engine{e}.Disconnect(engine{})", 1 - e))),
            "hx" => {
                let (local, len) = range_near(g, &self.regs[e]);
                let (remote, _) = range_near(g, &self.regs[1 - e]);
                let write = g.rng.chance(1, 2);
                Self::xfer(out, g, e, write, local, remote, len);
            }
            _ => self.adjacent(g, out),
        }
    }
}
