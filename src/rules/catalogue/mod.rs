//! The catalogue's data: every rule with its default, code, summary, fix, what the vendor
//! does and its source ([`acl`], [`hixl`], [`datadist`]: ADXL's own and LLM-DataDist's); and
//! the field reports the sources cite. `rules_md` renders it as `docs/rules.md`.

mod acl;
mod datadist;
mod hixl;

use super::RuleInfo;

const LEN: usize = acl::RULES.len() + hixl::RULES.len() + datadist::RULES.len();

/// The families' rules one after the other, at compile time.
const fn concat(parts: [&[RuleInfo]; 3]) -> [RuleInfo; LEN] {
    let mut out = [parts[0][0]; LEN];
    let (mut k, mut p) = (0, 0);
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[k] = parts[p][i];
            k += 1;
            i += 1;
        }
        p += 1;
    }
    out
}

static ALL: [RuleInfo; LEN] = concat([acl::RULES, hixl::RULES, datadist::RULES]);

/// The catalogue, in [`RuleId::ALL`](super::RuleId::ALL) order.
pub static CATALOGUE: &[RuleInfo] = &ALL;

/// The field reports the catalogue's sources cite ("field failure A1"): what users of the
/// vendor APIs hit, from public issue trackers (vllm-ascend, Mooncake, LMCache, HIXL,
/// torch_npu and others).
pub static FIELD_REPORTS: &[(&str, &str)] = &[
    ("A1", "malloc memory (not page-aligned) registered: 507899 or 107000 (\"not page alignment\"), then cascading HCCL errors (Mooncake #4055: on a 64 KiB-page host, \"Src_va is zero or not page alignment\", then HCCL/GE 503900)"),
    ("A2", "size not a multiple of the page size: 507899 on some versions"),
    ("A3", "NULL pointer, or a size rounded down to 0: 100000, or a whole pinning pipeline aborted"),
    ("A4", "flag 0, unknown bits, or the reserved IOMEMORY/READONLY: 107000"),
    ("A5", "ACL_HOST_REG_PINNED on aclrtMallocHost memory: an error on current CANN"),
    ("A6", "aclrtHostGetDevicePointer on memory not registered MAPPED, never registered, or with flag != 0 (argument order confused with CUDA's)"),
    ("A7", "the same or an overlapping range registered twice: 507910 (vllm-ascend PR #15624: one base registered by two components with different lengths)"),
    ("A8", "an interior pointer unregistered, or one unregistered twice: 507911 (vllm-ascend #10724: a handle gone already, unregistered again at shutdown)"),
    ("A9", "registration from a thread with no ACL context: 107002"),
    ("A10", "an old driver or an unsupported chip (310P): 207000"),
    ("A11", "containers with a low `ulimit -l` and no CAP_IPC_LOCK: \"Unable to pin host memory\""),
    ("A12", "one registration of hundreds of GB: 207001 (LMCache-Ascend #242: above ~200-250 GB per call)"),
    ("A13", "kernel 5.10 or older (openEuler 22.03, 5.4 hosts) with malloc memory: the documented exception"),
    ("A16", "memory freed while still registered: later corruption, pages reused while registered"),
    ("A17", "PINNED without MAPPED where bandwidth matters: ~8-9 GB/s instead of ~23 GB/s"),
    ("B1", "72-100 GB of host memory registered with HIXL on HDK < 25.5: HCCL error 19, \"out of PTEs\""),
    ("B2", "one region per tensor per layer (thousands): device OOM and connect time-outs"),
    ("B3", "overlapping regions (hybrid KV layouts): \"does not support overlapped memory region\", 103900"),
    ("B4", "addr 0, len 0 or addr + len overflow: 103900, or nothing until the transfer"),
    ("B5", "RegisterMem/DeregisterMem before Initialize or after Finalize: 503900, floods of \"memHandle is invalid\""),
    ("B6", "RegisterMem after Connect, or a peer registering late: \"Can't find remoteBuffer by key\""),
    ("B7", "DeregisterMem of an unknown handle, twice, or while links are up: SUCCESS silently, or FAILED"),
    ("B8", "host memory not from aclrtMallocHost on Atlas A2/A3: link failures, CheckMemCpyAttr errors"),
    ("B9", "aclrtMallocHost memory on Ascend 950 with a host RoCE NIC: registration failure"),
    ("B10", "device memory not HUGE_ONLY (or not 2 MiB aligned) over HCCS: EINVAL, link failures"),
    ("B11", "a MemType that does not match the memory: CheckMemCpyAttr"),
    ("B12", "RegisterMem from a thread without the Initialize context: failures on older releases"),
];
