//! A minimal wrong and right call for every rule (`regcheck explain`, the C API), as data.
//! C for the ACL rules, C++ for `hixl::Hixl` (`h` is an initialised instance, `d` a
//! `MemDesc`), C for `HixlCS*`, C++ for `adxl::AdxlEngine` (`e` an initialised engine). Kept
//! to a line or two each.

use super::RuleId;

/// A rule's example: what trips it, and what does not.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub rule: RuleId,
    pub wrong: &'static str,
    pub right: &'static str,
}

const fn ex(rule: RuleId, wrong: &'static str, right: &'static str) -> Example {
    Example { rule, wrong, right }
}

/// The example of `rule`.
pub fn of(rule: RuleId) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.rule == rule)
}

use RuleId::*;

/// Every rule's example.
pub static EXAMPLES: &[Example] = &[
    ex(AclHostregNull, "aclrtHostRegisterV2(NULL, size, ACL_HOST_REG_MAPPED);", "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);"),
    ex(
        AclHostregSizeZero,
        "aclrtHostRegisterV2(buf, bytes / 4096 * 4096, ACL_HOST_REG_MAPPED); /* bytes < 4096 */",
        "aclrtHostRegisterV2(buf, (bytes + 4095) / 4096 * 4096, ACL_HOST_REG_MAPPED);",
    ),
    ex(AclHostregRangeOverflow, "aclrtHostRegisterV2(buf, (uint64_t)-4096, ACL_HOST_REG_MAPPED);", "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);"),
    ex(
        AclHostregAlign,
        "void *buf = malloc(size);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "void *buf; posix_memalign(&buf, sysconf(_SC_PAGESIZE), size);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
    ),
    ex(AclHostregSizePages, "aclrtHostRegisterV2(buf, 6000, ACL_HOST_REG_MAPPED);", "aclrtHostRegisterV2(buf, 8192, ACL_HOST_REG_MAPPED); /* buf holds 8192 bytes */"),
    ex(AclHostregFlagInvalid, "aclrtHostRegisterV2(buf, size, 0);", "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);"),
    ex(AclHostregFlagReserved, "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_IOMEMORY);", "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);"),
    ex(
        AclHostregPinnedLocked,
        "aclrtMallocHost(&buf, size);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED);",
        "aclrtMallocHost(&buf, size);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregPageableOldKernel,
        "/* kernel 5.10 */ posix_memalign(&buf, 4096, size);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "aclrtMallocHost(&raw, size + 4096); buf = (void *)(((uintptr_t)raw + 4095) & ~(uintptr_t)4095);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregUnmapped,
        "munmap(buf, size);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED); /* while buf is mapped */",
    ),
    ex(
        AclHostregFileBacked,
        "buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, open(\"data.bin\", O_RDWR), 0);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregStack,
        "char local[8192] __attribute__((aligned(4096)));\naclrtHostRegisterV2(local, sizeof local, ACL_HOST_REG_MAPPED);",
        "posix_memalign(&buf, 4096, 8192);\naclrtHostRegisterV2(buf, 8192, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregReadonlyMapping,
        "buf = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregOverlap,
        "aclrtHostRegisterV2(buf, 2 * page, ACL_HOST_REG_MAPPED);\naclrtHostRegisterV2(buf + page, page, ACL_HOST_REG_MAPPED);",
        "aclrtHostRegisterV2(buf, 2 * page, ACL_HOST_REG_MAPPED); /* once; use offsets into it */",
    ),
    ex(
        AclHostregProduct,
        "/* Ascend310P3 */ aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "/* Atlas A2/A3 or Ascend 950 */ aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED); /* elsewhere: aclrtMemcpy */",
    ),
    ex(
        AclHostregNoContext,
        "/* new thread */ aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
        "/* new thread */ aclrtSetCurrentContext(ctx); /* or aclrtSetDevice(dev) */\naclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregMemlock,
        "/* ulimit -l 64 */ aclrtHostRegisterV2(buf, 1 << 30, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED);",
        "/* ulimit -l unlimited, or CAP_IPC_LOCK */ aclrtHostRegisterV2(buf, 1 << 30, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregLarge,
        "aclrtHostRegisterV2(buf, 200ULL << 30, ACL_HOST_REG_MAPPED);",
        "for (off = 0; off < total; off += 16ULL << 30) aclrtHostRegisterV2(buf + off, 16ULL << 30, ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostregPinnedOnly,
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_PINNED);",
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED);",
    ),
    ex(
        AclHostunregNotRegistered,
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);\naclrtHostUnregister(buf + 4096);",
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);\naclrtHostUnregister(buf);",
    ),
    ex(AclDevptrNull, "aclrtHostGetDevicePointer(buf, NULL, 0);", "void *dev; aclrtHostGetDevicePointer(buf, &dev, 0);"),
    ex(AclDevptrFlag, "aclrtHostGetDevicePointer(buf, &dev, 1);", "aclrtHostGetDevicePointer(buf, &dev, 0);"),
    ex(
        AclDevptrNotMapped,
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_PINNED);\naclrtHostGetDevicePointer(buf, &dev, 0);",
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED);\naclrtHostGetDevicePointer(buf, &dev, 0);",
    ),
    ex(
        AclDevptrInterior,
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);\naclrtHostGetDevicePointer(buf + 8, &dev, 0);",
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);\naclrtHostGetDevicePointer(buf, &dev, 0); dev = (char *)dev + 8;",
    ),
    ex(
        AclFreehostRegistered,
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED);\naclrtFreeHost(buf);",
        "aclrtHostUnregister(buf);\naclrtFreeHost(buf);",
    ),
    ex(
        HixlNotInitialized,
        "hixl::Hixl h; h.RegisterMem(d, hixl::MEM_HOST, handle);",
        "hixl::Hixl h; h.Initialize(\"10.0.0.1:16000\", options); h.RegisterMem(d, hixl::MEM_HOST, handle);",
    ),
    ex(HixlRegNullAddr, "d.addr = 0; h.RegisterMem(d, hixl::MEM_HOST, handle);", "d.addr = reinterpret_cast<uintptr_t>(buf); h.RegisterMem(d, hixl::MEM_HOST, handle);"),
    ex(HixlRegLenZero, "d.len = 0; h.RegisterMem(d, hixl::MEM_HOST, handle);", "d.len = bytes; h.RegisterMem(d, hixl::MEM_HOST, handle);"),
    ex(HixlRegRangeOverflow, "d.len = SIZE_MAX; h.RegisterMem(d, hixl::MEM_HOST, handle);", "d.len = bytes; h.RegisterMem(d, hixl::MEM_HOST, handle);"),
    ex(HixlRegMemtype, "h.RegisterMem(d, static_cast<hixl::MemType>(2), handle);", "h.RegisterMem(d, hixl::MEM_DEVICE, handle);"),
    ex(
        HixlRegOverlap,
        "h.RegisterMem({base, 2 * n}, hixl::MEM_HOST, a);\nh.RegisterMem({base + n, 2 * n}, hixl::MEM_HOST, b);",
        "h.RegisterMem({base, 3 * n}, hixl::MEM_HOST, a); /* one region covering both */",
    ),
    ex(
        HixlRegCount,
        "for (auto &t : tensors) h.RegisterMem({t.addr, t.len}, hixl::MEM_DEVICE, t.handle); /* 10000 tensors */",
        "h.RegisterMem({pool.addr, pool.len}, hixl::MEM_DEVICE, pool.handle); /* one pool, tensors inside it */",
    ),
    ex(
        HixlRegCountNear,
        "/* 3700 live registrations, one per tensor */",
        "/* a few registrations of whole pools */",
    ),
    ex(
        HixlRegHostCap,
        "/* HDK 25.3 */ h.RegisterMem({host, 64ULL << 30}, hixl::MEM_HOST, handle);",
        "/* HDK 25.3 */ h.RegisterMem({host, 16ULL << 30}, hixl::MEM_HOST, handle); /* or HDK >= 25.5.0 */",
    ),
    ex(
        HixlRegDeviceCap,
        "h.RegisterMem({dev, 64ULL << 30}, hixl::MEM_DEVICE, handle);",
        "h.RegisterMem({dev, 48ULL << 30}, hixl::MEM_DEVICE, handle);",
    ),
    ex(
        HixlRegAfterConnect,
        "h.Connect(\"10.0.0.2:16000\");\nh.RegisterMem(d, hixl::MEM_DEVICE, handle);",
        "h.RegisterMem(d, hixl::MEM_DEVICE, handle);\nh.Connect(\"10.0.0.2:16000\");",
    ),
    ex(
        HixlRegThread,
        "std::thread([&] { h.RegisterMem(d, hixl::MEM_DEVICE, handle); }).join();",
        "aclrtGetCurrentContext(&ctx); /* on the Initialize thread */\nstd::thread([&] { aclrtSetCurrentContext(ctx); h.RegisterMem(d, hixl::MEM_DEVICE, handle); }).join();",
    ),
    ex(
        HixlRegHostOrigin,
        "/* Atlas A2 */ void *p = malloc(n); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_HOST, handle);",
        "/* Atlas A2 */ void *p; aclrtMallocHost(&p, n); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_HOST, handle);",
    ),
    ex(
        HixlRegHostRoce950,
        "/* Ascend 950, roce:host */ aclrtMallocHost(&p, n); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_HOST, handle);",
        "/* Ascend 950, roce:host */ posix_memalign(&p, 4096, n); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_HOST, handle);",
    ),
    ex(
        HixlRegHostUnmapped,
        "free(p); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_HOST, handle);",
        "h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_HOST, handle); /* p allocated, n its size */",
    ),
    ex(
        HixlRegDeviceOrigin,
        "void *p = malloc(n); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_DEVICE, handle);",
        "aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_ONLY); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_DEVICE, handle);",
    ),
    ex(
        HixlRegDeviceHuge,
        "/* hccs */ aclrtMalloc(&p, n, ACL_MEM_MALLOC_NORMAL_ONLY); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_DEVICE, handle);",
        "/* hccs */ aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_ONLY); h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_DEVICE, handle);",
    ),
    ex(HixlDeregNull, "h.DeregisterMem(nullptr);", "h.DeregisterMem(handle); /* the handle RegisterMem returned */"),
    ex(HixlDeregUnknown, "h.DeregisterMem(handle);\nh.DeregisterMem(handle);", "h.DeregisterMem(handle); handle = nullptr;"),
    ex(
        HixlDeregConnected,
        "h.Connect(remote); h.DeregisterMem(handle);",
        "h.Disconnect(remote); h.DeregisterMem(handle);",
    ),
    ex(
        HixlXferNotConnected,
        "h.TransferSync(\"10.0.0.2:16000\", hixl::WRITE, ops);",
        "h.Connect(\"10.0.0.2:16000\"); h.TransferSync(\"10.0.0.2:16000\", hixl::WRITE, ops);",
    ),
    ex(
        HixlXferEmpty,
        "std::vector<hixl::TransferOpDesc> ops; h.TransferSync(remote, hixl::WRITE, ops);",
        "std::vector<hixl::TransferOpDesc> ops{{local, remote_addr, len}}; h.TransferSync(remote, hixl::WRITE, ops);",
    ),
    ex(
        HixlXferLocalUnregistered,
        "char tmp[4096]; ops = {{(uintptr_t)tmp, remote_addr, 4096}}; h.TransferSync(remote, hixl::READ, ops);",
        "ops = {{registered_base + off, remote_addr, 4096}}; h.TransferSync(remote, hixl::READ, ops);",
    ),
    ex(
        HixlFinalizeLeak,
        "h.RegisterMem(d, hixl::MEM_HOST, handle); h.Finalize();",
        "h.RegisterMem(d, hixl::MEM_HOST, handle); /* ... */ h.DeregisterMem(handle); h.Finalize();",
    ),
    ex(
        HixlRegDeviceAlign,
        "/* hccs */ h.RegisterMem({(uintptr_t)p + 4096, n}, hixl::MEM_DEVICE, handle);",
        "/* hccs */ h.RegisterMem({(uintptr_t)p, n}, hixl::MEM_DEVICE, handle); /* p from aclrtMalloc HUGE_ONLY */",
    ),
    ex(
        HixlInitOptions,
        "options[\"BufferPool\"] = \"4:8\"; /* hixl_cs engine */ h.Initialize(local, options);",
        "options[\"BufferPool\"] = \"0:0\"; h.Initialize(local, options);",
    ),
    ex(
        HixlInitFabricMem,
        "/* Atlas A2 */ options[\"EnableUseFabricMem\"] = \"1\"; h.Initialize(local, options);",
        "/* Atlas A3, HDK >= 25.5 */ options[\"EnableUseFabricMem\"] = \"1\"; h.Initialize(local, options);",
    ),
    ex(
        HixlRegFabricVmm,
        "/* fabric memory, HDK 25.5 */ aclrtMapMem(va, n, 0, phys, 0); h.RegisterMem({(uintptr_t)va, n}, hixl::MEM_DEVICE, handle);",
        "/* fabric memory, HDK >= 26.0 */ aclrtMapMem(va, n, 0, phys, 0); h.RegisterMem({(uintptr_t)va, n}, hixl::MEM_DEVICE, handle);",
    ),
    ex(
        HixlXferRemoteUnregistered,
        "a.Connect(\"b\"); b.RegisterMem(d, hixl::MEM_HOST, hb); a.TransferSync(\"b\", hixl::WRITE, {{la, d.addr, n}});",
        "b.RegisterMem(d, hixl::MEM_HOST, hb); a.Connect(\"b\"); a.TransferSync(\"b\", hixl::WRITE, {{la, d.addr, n}});",
    ),
    ex(
        AclHostregNotUserSpace,
        "aclrtHostRegisterV2((void *)0xffff888000000000, size, ACL_HOST_REG_MAPPED); /* a kernel address */",
        "aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED); /* buf allocated by this process */",
    ),
    ex(
        HixlConnectSelf,
        "h.Initialize(\"10.0.0.1:16000\", options); h.Connect(\"10.0.0.1:16000\");",
        "h.Initialize(\"10.0.0.1:16000\", options); h.Connect(\"10.0.0.2:16000\"); /* a peer */",
    ),
    ex(
        HixlRegNotUserSpace,
        "d.addr = dev_addr_from_peer; /* not this process's */ h.RegisterMem(d, hixl::MEM_HOST, handle);",
        "d.addr = reinterpret_cast<uintptr_t>(buf); /* allocated here */ h.RegisterMem(d, hixl::MEM_HOST, handle);",
    ),
    ex(AdxlTimeout, "e.TransferSync(peer, adxl::WRITE, ops, 0);", "e.TransferSync(peer, adxl::WRITE, ops, 10000);"),
    ex(
        AdxlStatusNullReq,
        "adxl::TransferReq req = nullptr; e.GetTransferStatus(req, status);",
        "adxl::TransferReq req; e.TransferAsync(peer, adxl::WRITE, ops, {}, req); e.GetTransferStatus(req, status);",
    ),
    ex(
        AdxlXferContext,
        "std::thread([&] { e.TransferSync(peer, adxl::WRITE, ops, 10000); }); /* no context set */",
        "std::thread([&] { aclrtSetCurrentContext(engine_ctx); e.TransferSync(peer, adxl::WRITE, ops, 10000); });",
    ),
    ex(
        HixlFreeRegistered,
        "dd.RegisterKvCache(desc, {(uint64_t)k}, {}, id);\naclrtFree(k);",
        "dd.UnregisterKvCache(id);\naclrtFree(k);",
    ),
    ex(
        HixlRegNoEndpoint,
        "/* endpoint_list: UBC_TP on the device only */ CommMem m{COMM_MEM_TYPE_HOST, buf, n}; HixlCSServerRegMem(srv, \"kv\", &m, &h);",
        "/* endpoint_list: UBC_TP on the device only */ CommMem m{COMM_MEM_TYPE_DEVICE, dev, n}; HixlCSServerRegMem(srv, \"kv\", &m, &h);",
    ),
    ex(DatadistNotInitialized, "llm_datadist::LlmDataDist dd(0, kPrompt); dd.RegisterKvCache(desc, addrs, {}, id);", "dd.Initialize({{\"llm.DeviceId\", \"0\"}}); dd.RegisterKvCache(desc, addrs, {}, id);"),
    ex(DatadistAddrsEmpty, "dd.RegisterKvCache(desc, {}, {}, id);", "dd.RegisterKvCache(desc, {(uint64_t)k}, {}, id);"),
    ex(DatadistAddrsCount, "desc.num_tensors = 2; dd.RegisterKvCache(desc, {(uint64_t)k}, {}, id);", "desc.num_tensors = 1; dd.RegisterKvCache(desc, {(uint64_t)k}, {}, id);"),
    ex(DatadistAddrNull, "dd.RegisterKvCache(desc, {(uint64_t)k, 0}, {}, id);", "dd.RegisterKvCache(desc, {(uint64_t)k, (uint64_t)v}, {}, id);"),
    ex(DatadistShape, "desc.shape = {}; dd.RegisterKvCache(desc, addrs, {}, id);", "desc.shape = {blocks, block_size, heads, head_dim}; dd.RegisterKvCache(desc, addrs, {}, id);"),
    ex(DatadistTensorSize, "desc.data_type = llm_datadist::DT_UNDEFINED; dd.RegisterKvCache(desc, addrs, {}, id);", "desc.data_type = llm_datadist::DT_BF16; dd.RegisterKvCache(desc, addrs, {}, id);"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_one_short_example() {
        for id in RuleId::ALL {
            let n = EXAMPLES.iter().filter(|e| e.rule == *id).count();
            assert_eq!(n, 1, "{id} has {n} examples");
            let e = of(*id).unwrap();
            assert!(!e.wrong.is_empty() && !e.right.is_empty() && e.wrong != e.right, "{id}");
            assert!(e.wrong.lines().count() <= 3 && e.right.lines().count() <= 3, "{id}: keep it short");
        }
    }
}
