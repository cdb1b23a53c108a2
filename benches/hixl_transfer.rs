//! `TransferSync` validation cost per op with 4000 live registrations on the instance
//! (target: O(n log m), no allocation per op, no system call).
//!
//! Measures what the front end does for a transfer once the arguments are read: take the
//! state lock, find the instance, check the link, and check each op's local range against
//! the instance's registrations (`rules::hixl::check_transfer` over `RegSet::contains_range`).
//! Run with `cargo bench --bench hixl_transfer`; the throughput is in ops per second.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use regcheck::rules::hixl::{check_transfer, InstanceState, MemKind, RemoteView, TransferOpDesc, XferFacts};
use regcheck::state::hixl::{HixlReg, Instance, Phase};

const REGS: usize = 4000;
const REG_LEN: usize = 1 << 20;
const BASE: usize = 0x7f00_0000_0000;
const THIS: usize = 0x1000;

/// An initialised instance with 4000 registrations (host and device alternating), linked to "b".
fn setup() {
    regcheck::state::with(|s| {
        let mut i = Instance { phase: Phase::Initialized, local_engine: Some("a".into()), ..Instance::default() };
        i.links.insert(b"b".to_vec());
        for r in 0..REGS {
            let kind = if r % 2 == 0 { MemKind::Host } else { MemKind::Device };
            i.regs.insert(HixlReg {
                handle: 0x10 + r,
                addr: BASE + r * 2 * REG_LEN,
                len: REG_LEN as u64,
                kind,
                tag: String::new(),
                site: 0,
            });
        }
        s.hixl.instances.insert(THIS, i);
    });
}

/// `n` ops spread over the registrations, each inside one.
fn ops(n: usize) -> Vec<TransferOpDesc> {
    (0..n)
        .map(|k| {
            let r = (k * 7919) % REGS;
            TransferOpDesc { local_addr: BASE + r * 2 * REG_LEN + 4096, remote_addr: 0x9000_0000, len: 64 << 10 }
        })
        .collect()
}

/// What `frontend::hixl::check_transfer` does after reading the arguments.
fn validate(ops: &[TransferOpDesc], remote: &[u8]) -> usize {
    regcheck::state::with(|s| {
        let inst = s.hixl.instances.get(&THIS);
        let linked = inst.map(|i| i.links.contains(remote));
        let facts = XferFacts {
            state: InstanceState::Initialized,
            linked,
            engine: inst.and_then(|i| i.engine),
            pool: true,
            sync: true,
            fabric_host: false,
            connects_first: false,
        };
        let regs = inst.map(|i| &i.regs);
        check_transfer(
            "Hixl::TransferSync",
            b"b",
            facts,
            ops,
            |a, l| regs.and_then(|r| r.kind_of_range(a, l)),
            |_, _| RemoteView::Unknown,
        )
        .len()
    })
}

fn bench(c: &mut Criterion) {
    setup();
    let mut g = c.benchmark_group("TransferSync validation, 4000 live registrations");
    for n in [1usize, 16, 256, 4096] {
        let ops = ops(n);
        assert_eq!(validate(&ops, b"b"), 0, "every op is valid");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("ops", n), &ops, |b, ops| b.iter(|| validate(black_box(ops), b"b")));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
