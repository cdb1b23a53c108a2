//! Cost of the ACL checks that run on every call, with many live registrations:
//! the registry look-ups behind aclrtHostGetDevicePointer (O(1) expected) and
//! aclrtHostRegisterV2's overlap check (O(log n)), neither with a system call, and the argument
//! rules.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use regcheck::rules::acl::{check_args, check_devptr, RegArgs, RegCall, MAPPED};
use regcheck::state::registry::{HostReg, HostRegApi, HostRegistry};

fn registry(n: usize) -> HostRegistry {
    let mut r = HostRegistry::default();
    for i in 0..n {
        r.insert(HostReg {
            device: 0,
            base: 0x1000_0000 + i * 0x10000,
            len: 0x8000,
            flags: MAPPED,
            api: HostRegApi::V2,
            after_reset: false,
        });
    }
    r
}

fn lookups(c: &mut Criterion) {
    let mut g = c.benchmark_group("registry");
    for n in [16usize, 4000, 100_000] {
        let r = registry(n);
        let mid = 0x1000_0000 + (n / 2) * 0x10000 + 0x100;
        g.bench_with_input(BenchmarkId::new("containing+devptr_rules", n), &r, |b, r| {
            b.iter(|| {
                let reg = r.containing(0, black_box(mid)).copied();
                black_box(check_devptr(mid, false, 0, 0, reg.as_ref()))
            })
        });
        g.bench_with_input(BenchmarkId::new("overlapping", n), &r, |b, r| {
            b.iter(|| black_box(r.overlapping(0, black_box(mid), mid + 0x1000).is_some()))
        });
    }
    g.finish();
}

fn argument_rules(c: &mut Criterion) {
    let a = RegArgs { call: RegCall::V2 { flag: MAPPED }, ptr: 0x7f00_0000_0000, size: 1 << 21 };
    c.bench_function("check_args (valid call)", |b| b.iter(|| black_box(check_args(black_box(&a), 4096, 64 << 30))));
}

criterion_group!(benches, lookups, argument_rules);
criterion_main!(benches);
