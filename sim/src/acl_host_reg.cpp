// libacl_rt.so of the simulator: host memory registration (aclrtHostRegisterV2,
// aclrtHostRegister, aclrtHostUnregister, aclrtHostGetDevicePointer) and the simulated driver's
// view of the process's memory map.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "acl_internal.h"

using namespace aclsim;

namespace {

// ---------------------------------------------------------------------------------------------
// /proc/self/maps and /proc/self/smaps
// ---------------------------------------------------------------------------------------------

struct MapEntry {
    uintptr_t start, end;
    std::string perms, path;
    bool locked;
};

bool parse_map_header(const std::string &line, MapEntry &e) {
    unsigned long long s = 0, en = 0;
    char perms[8] = {0};
    unsigned long long off = 0, inode = 0;
    char dev[32] = {0};
    int pos = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %31s %llu%n", &s, &en, perms, &off, dev, &inode, &pos) < 6)
        return false;
    e.start = static_cast<uintptr_t>(s);
    e.end = static_cast<uintptr_t>(en);
    e.perms = perms;
    std::string rest = line.substr(static_cast<size_t>(pos));
    size_t k = rest.find_first_not_of(" \t");
    e.path = k == std::string::npos ? std::string() : rest.substr(k);
    e.locked = false;
    return true;
}

std::vector<MapEntry> read_maps(bool with_flags) {
    std::vector<MapEntry> out;
    std::ifstream f(with_flags ? "/proc/self/smaps" : "/proc/self/maps");
    std::string line;
    while (std::getline(f, line)) {
        MapEntry e;
        if (!line.empty() && ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) &&
            line.find('-') != std::string::npos && parse_map_header(line, e)) {
            out.push_back(e);
        } else if (with_flags && !out.empty() && line.compare(0, 8, "VmFlags:") == 0) {
            std::string flags = " " + line.substr(8) + " ";
            out.back().locked = flags.find(" lo ") != std::string::npos;
        }
    }
    return out;
}

bool starts_with(const std::string &s, const char *p) { return s.compare(0, strlen(p), p) == 0; }

// A mapping of a regular file. Anonymous mappings, [heap]/[stack]/..., tmpfs shared memory
// under /dev/shm, memfd, SysV shm, shared anonymous memory (/dev/zero) and hugetlbfs are not.
bool is_regular_file_mapping(const std::string &path) {
    if (path.empty() || path[0] != '/') return false;
    static const char *const kOk[] = {"/dev/shm/", "/memfd:", "/SYSV", "/dev/zero", "/dev/hugepages",
                                      "/anon_hugepage"};
    for (const char *p : kOk)
        if (starts_with(path, p)) return false;
    return true;
}

// The PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11, include/uapi/linux/fs.h), declared
// here because older kernel headers lack it.
struct ProcmapQuery {
    uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104, "struct procmap_query is 104 bytes");
constexpr unsigned long kProcmapQuery = (3ul << 30) | (sizeof(ProcmapQuery) << 16) | ('f' << 8) | 17;
constexpr uint64_t kVmaReadable = 0x1, kVmaWritable = 0x2, kVmaExecutable = 0x4, kVmaShared = 0x8;
constexpr uint64_t kCoveringOrNext = 0x10;

// The mappings that intersect [base, end), in address order, with one PROCMAP_QUERY per
// mapping: what the driver sees, at a cost that does not grow with the number of mappings of
// the process. False when the kernel has no PROCMAP_QUERY (the caller reads /proc/self/maps).
bool query_maps(uintptr_t base, uintptr_t end, std::vector<MapEntry> &out) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = true;
    uintptr_t cur = base;
    char name[4096];
    for (;;) {
        ProcmapQuery q{};
        q.size = sizeof(q);
        q.query_flags = kCoveringOrNext;
        q.query_addr = cur;
        q.vma_name_addr = reinterpret_cast<uintptr_t>(name);
        q.vma_name_size = sizeof(name);
        if (ioctl(fd, kProcmapQuery, &q) != 0) {
            // ENOENT: nothing at or above `cur`; anything else: no PROCMAP_QUERY here.
            ok = errno == ENOENT;
            break;
        }
        MapEntry e;
        e.start = q.vma_start;
        e.end = q.vma_end;
        e.perms = {(q.vma_flags & kVmaReadable) ? 'r' : '-', (q.vma_flags & kVmaWritable) ? 'w' : '-',
                   (q.vma_flags & kVmaExecutable) ? 'x' : '-', (q.vma_flags & kVmaShared) ? 's' : 'p'};
        e.path = q.vma_name_size > 0 ? std::string(name) : std::string();
        e.locked = false;
        out.push_back(e);
        if (e.start > cur || e.end <= cur) break;  // a hole at `cur` (or a confused answer)
        cur = e.end;
        if (cur >= end) break;
    }
    close(fd);
    if (!ok) out.clear();
    return ok;
}

// The driver's view of [base, base+size): every page mapped, writable, not a regular file.
bool driver_range_ok(uintptr_t base, uint64_t size, std::string &why) {
    uintptr_t end = base + size;
    std::vector<MapEntry> maps;
    if (!query_maps(base, end, maps)) maps = read_maps(false);
    uintptr_t cur = base;
    for (const MapEntry &e : maps) {
        if (e.end <= cur) continue;
        if (e.start > cur) break;
        if (e.perms.size() < 2 || e.perms[1] != 'w') {
            why = fmt("the range is in a read-only mapping (%s %s)", e.perms.c_str(), e.path.c_str());
            return false;
        }
        if (is_regular_file_mapping(e.path)) {
            why = fmt("the range is in a mapping of the regular file %s", e.path.c_str());
            return false;
        }
        cur = e.end;
        if (cur >= end) return true;
    }
    why = fmt("address 0x%llx of the range is not mapped", static_cast<unsigned long long>(cur));
    return false;
}

// A fresh simulated device address for `size` bytes: 2 MiB aligned, followed by a 2 MiB guard,
// carved from the reserved device address space (State::dev_ranges), which grows by one
// PROT_NONE reservation (one mapping of the process, whatever the number of registrations) when
// the current one is used up. Addresses are never handed out twice. 0 when the address space is
// exhausted.
uintptr_t take_device_address(uint64_t size) {
    constexpr size_t kChunk = size_t{16} << 30;
    size_t len = round_up(size, kHugePage) + kHugePage;
    std::lock_guard<std::mutex> g(g_mu);
    State &s = st();
    if (s.dev_end - s.dev_next < len) {
        size_t chunk = len > kChunk ? len : kChunk;
        void *m = mmap(nullptr, chunk + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return 0;
        uintptr_t start = round_up(reinterpret_cast<uintptr_t>(m), kHugePage);
        s.dev_ranges[start] = chunk;
        s.dev_next = start;
        s.dev_end = start + chunk;
    }
    uintptr_t d = s.dev_next;
    s.dev_next += len;
    return d;
}

// Every page of the range is mlocked (VmFlags "lo" in /proc/self/smaps).
bool range_mlocked(uintptr_t base, uint64_t size) {
    uintptr_t end = base + size;
    std::vector<MapEntry> maps = read_maps(true);
    uintptr_t cur = base;
    for (const MapEntry &e : maps) {
        if (e.end <= cur) continue;
        if (e.start > cur) return false;
        if (!e.locked) return false;
        cur = e.end;
        if (cur >= end) return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// The simulated driver (halHostRegister, halHostUnregister, halMemHostGetDevPointer as the
// vendor's NpuDriver calls them, src/runtime/driver/npu_driver_mem.cc). Each takes one injected
// answer (aclsimInjectAnswer) first: a driver error is mapped as the runtime maps it; 0 is a
// driver that accepts without looking (the vendor's unit-test stubs: the device address is the
// host address).
// ---------------------------------------------------------------------------------------------

constexpr uint32_t kMapFlags = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY;

aclError not_supported(const char *api) {
    const char *soc = soc_name_raw();
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                fmt("host memory registration is not supported on %s", soc ? soc : "(unknown SoC)"));
}

// The driver's view of a range in an aclrtMapMem mapping: its header says host registration does
// not support VMM addresses (pkg_inc/driver/ascend_hal_base.h); the HIXL samples' README says HDK
// 26.0 manages the host memory of the fabric-memory scenario (VMM memory located on the host)
// with the ACL calls. Empty when the range is not VMM memory or may be registered.
std::string vmm_refusal(uintptr_t base, uint64_t size) {
    std::lock_guard<std::mutex> g(g_mu);
    auto &m = st().vm_maps;
    auto it = m.upper_bound(base + size - 1);
    if (it == m.begin()) return std::string();
    --it;
    if (it->first + it->second.size <= base) return std::string();
    bool host = it->second.phys->location_type == ACL_MEM_LOCATION_TYPE_HOST;
    if (host && driver_at_least(26, 0)) return std::string();
    return fmt("the range is VMM memory mapped with aclrtMapMem (%s-located), which host registration does not "
               "support with driver %s",
               host ? "host" : "device", host ? "below 26.0" : "of any version");
}

aclError drv_host_register(const char *api, void *ptr, uint64_t size, uint32_t flags, int32_t dev, uintptr_t *dev_out) {
    if (!soc_supports_host_register()) return not_supported(api);
    ACLSIM_COUNT("halHostRegister");
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    int32_t forced = 0;
    bool stub = take_answer("halHostRegister", &forced);
    if (stub && forced != 0) {
        // BUSY means "registered already" here (NpuDriver::HostRegister)
        aclError rc = forced == kDrvBusy ? ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED : drv_to_acl(forced);
        return fail(rc, api, fmt("driver error %d (injected)", forced));
    }
    bool mapped = (flags & kMapFlags) != 0;
    if (!stub) {
        size_t page = host_page_size();
        if (base % page != 0)
            return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api,
                        fmt("driver error: %p is not aligned to the host page size %zu", ptr, page));
        if (base + size < base)
            return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api, "driver error: the range wraps the address space");
        std::string why = vmm_refusal(base, size);
        if (!why.empty()) return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api, "driver error: " + why);
        if (!driver_range_ok(base, size, why))
            return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api, "driver error: " + why);
        bool from_malloc_host;
        {
            std::lock_guard<std::mutex> g(g_mu);
            if (const Registration *o = find_overlap_locked(dev, base, size)) {
                uintptr_t ob = o->base;
                uint64_t os = o->size;
                return fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, api,
                            fmt("driver busy: range overlaps the registration 0x%llx+%llu on device %d",
                                static_cast<unsigned long long>(ob), static_cast<unsigned long long>(os), dev));
            }
            from_malloc_host = in_malloc_host_locked(base, size);
        }
        if ((flags & ACL_HOST_REG_PINNED) != 0 && from_malloc_host)
            return fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "driver error: ACL_HOST_REG_PINNED on memory that is already page-locked");
        std::string rel = kernel_release();
        std::string thr = pageable_kernel_max();
        if (kernel_is_old(rel, thr) && !from_malloc_host && !range_mlocked(base, size)) {
            write_stderr(fmt("aclsim: simulated driver exception: kernel %s (<= %s) cannot register "
                             "non-page-locked memory %p+%llu\n",
                             rel.c_str(), thr.c_str(), ptr, static_cast<unsigned long long>(size)));
            abort();
        }
    }
    uintptr_t dev_addr = 0;
    if (mapped) {
        dev_addr = stub ? base : take_device_address(size);
        if (dev_addr == 0) return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "cannot reserve a device address range");
    }
    std::lock_guard<std::mutex> g(g_mu);
    if (!stub && find_overlap_locked(dev, base, size) != nullptr)  // lost a race with another thread
        return fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, api, "driver busy: range overlaps a registration");
    st().regs[dev][base] = Registration{base, size, flags, dev_addr};
    *dev_out = dev_addr;
    return ACL_SUCCESS;
}

aclError drv_host_unregister(const char *api, void *ptr, int32_t dev) {
    if (!soc_supports_host_register()) return not_supported(api);
    // the runtime calls halHostUnregister on the driver path, halHostUnregisterEx on the other
    if (pin_register_supported())
        ACLSIM_COUNT("halHostUnregister");
    else
        ACLSIM_COUNT("halHostUnregisterEx");
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    int32_t forced = 0;
    bool stub = take_answer("halHostUnregister", &forced);
    bool erased;
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto dit = st().regs.find(dev);
        erased = dit != st().regs.end() && dit->second.erase(base) != 0;
    }
    int32_t drv = stub ? forced : (erased ? 0 : kDrvNotExist);
    if (drv == 0) return ACL_SUCCESS;
    aclError rc = drv == kDrvNotExist ? ACL_ERROR_HOST_MEMORY_NOT_REGISTERED : drv_to_acl(drv);
    return fail(rc, api, fmt("driver: %p is not the base of a registration on device %d", ptr, dev));
}

// ---------------------------------------------------------------------------------------------
// The runtime (ApiErrorDecorator and ApiImpl of src/runtime/api/impl/api_error.cc, api_impl.cc):
// the driver path when the driver has the pinned-register feature, else the runtime's own
// process-wide tables (register_memory.cc).
// ---------------------------------------------------------------------------------------------

const char kEE1018Register[] =
    "Host memory address registration failed. Reason: The memory range has already been registered. "
    "ErrorCode=EE1018.";
const char kEE1018Unregister[] =
    "Unregistering host memory failed. Reason: The host pointer has not been registered for device memory "
    "mapping. ErrorCode=EE1018.";


// The runtime's FindOverlappingMemory (register_memory.cc): the first entry at or after the
// range's start when it begins inside the range, else the entry before the start when its last
// byte (base + size - 1, wrapping as the runtime computes it) reaches the start. When entries
// overlap each other (V1 registrations enter the mapped table without this check) it does not
// see every overlap, and neither does the runtime.
template <class Map, class Len>
bool find_overlapping(const Map &m, uintptr_t start, uintptr_t last, Len len) {
    if (m.empty()) return false;
    auto it = m.lower_bound(start);
    if (it != m.end() && it->first <= last) return true;
    if (it == m.begin()) return false;
    auto p = std::prev(it);
    return p->first + len(p->second) - 1 >= start;
}

// CheckMemoryRangeRegistered: the pinned table, then the mapped one.
bool overlaps_rt_tables_locked(uintptr_t base, uint64_t size) {
    State &s = st();
    uintptr_t last = base + size - 1;
    return find_overlapping(s.rt_pinned, base, last, [](uint64_t len) { return len; }) ||
           find_overlapping(s.rt_mapped, base, last, [](const std::pair<uint64_t, uintptr_t> &v) { return v.first; });
}

aclError rt_host_register_v2(const char *api, void *ptr, uint64_t size, uint32_t flag) {
    aclError rc = ACL_SUCCESS;
    if (runtime_answer("rtHostRegisterV2", api, &rc)) return rc;
    const uint32_t valid = kMapFlags | ACL_HOST_REG_PINNED;
    if ((flag & valid) == 0 || (flag & ~valid) != 0)
        return fail_raw(ACL_ERROR_RT_PARAM_INVALID,
                        fmt("Host memory address registration failed. Value %u for parameter flag is invalid. "
                            "Reason: The valid flag is an OR combination of RT_MEM_HOST_REGISTER_MAPPED(0x2U), "
                            "RT_MEM_HOST_REGISTER_IOMEMORY(0x4U), RT_MEM_HOST_REGISTER_READONLY(0x8U), and "
                            "RT_MEM_HOST_REGISTER_PINNED(0x10000000U). ErrorCode=EE1011.",
                            flag));
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    // Up to 9.1.0 the tables' overlap check is ApiErrorDecorator's, before the context
    // (v9.1.0 api_error.cc:1572); later it is ApiImpl's, after it.
    if (!cann_after_9_1()) {
        std::lock_guard<std::mutex> g(g_mu);
        if (overlaps_rt_tables_locked(base, size)) return fail_raw(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, kEE1018Register);
    }
    int32_t dev = current_device();
    if (dev < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    uintptr_t dev_addr = 0;
    if (pin_register_supported()) {
        rc = drv_host_register(api, ptr, size, flag, dev, &dev_addr);
    } else {
        {
            std::lock_guard<std::mutex> g(g_mu);
            if (overlaps_rt_tables_locked(base, size)) rc = ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
        }
        if (rc == ACL_SUCCESS && (flag & kMapFlags) != 0) {
            rc = drv_host_register(api, ptr, size, flag & ~ACL_HOST_REG_PINNED, dev, &dev_addr);
            if (rc == ACL_SUCCESS) {
                std::lock_guard<std::mutex> g(g_mu);
                st().rt_mapped.emplace(base, std::make_pair(size, dev_addr));
            }
        }
        if (rc == ACL_SUCCESS && (flag & ACL_HOST_REG_PINNED) != 0) {
            std::lock_guard<std::mutex> g(g_mu);
            st().rt_pinned.emplace(base, size);
        }
    }
    if (rc == ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED) fail_raw(rc, kEE1018Register);
    return rc;
}

aclError rt_host_register(const char *api, void *ptr, uint64_t size, uint32_t type, void **devPtr) {
    aclError rc = ACL_SUCCESS;
    if (runtime_answer("rtsHostRegister", api, &rc)) return rc;
    if ((type & ~uint32_t{ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY}) != 0)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                    fmt("type %u is not supported: valid types are combinations of 4 and 8, or 0", type));
    int32_t dev = current_device();
    if (dev < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    uintptr_t dev_addr = 0;
    rc = drv_host_register(api, ptr, size, ACL_HOST_REG_MAPPED | type, dev, &dev_addr);
    if (rc != ACL_SUCCESS) return rc;
    if (!pin_register_supported()) {
        std::lock_guard<std::mutex> g(g_mu);
        st().rt_mapped.emplace(reinterpret_cast<uintptr_t>(ptr), std::make_pair(size, dev_addr));
    }
    *devPtr = reinterpret_cast<void *>(dev_addr);
    return ACL_SUCCESS;
}

aclError rt_host_unregister(const char *api, void *ptr) {
    aclError rc = ACL_SUCCESS;
    if (runtime_answer("rtsHostUnregister", api, &rc)) return rc;
    int32_t dev = current_device();
    if (dev < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    if (pin_register_supported()) {
        rc = drv_host_unregister(api, ptr, dev);
    } else {
        bool is_mapped, is_pinned;
        {
            std::lock_guard<std::mutex> g(g_mu);
            is_mapped = st().rt_mapped.count(base) != 0;
            is_pinned = st().rt_pinned.count(base) != 0;
        }
        if (is_mapped) {
            rc = drv_host_unregister(api, ptr, dev);
            if (rc == ACL_SUCCESS) {
                std::lock_guard<std::mutex> g(g_mu);
                st().rt_mapped.erase(base);
            }
        }
        if (rc == ACL_SUCCESS && is_pinned) {
            std::lock_guard<std::mutex> g(g_mu);
            st().rt_pinned.erase(base);
        }
        if (!is_mapped && !is_pinned) rc = ACL_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    if (rc == ACL_ERROR_HOST_MEMORY_NOT_REGISTERED) fail_raw(rc, kEE1018Unregister);
    return rc;
}

aclError not_mapped(void *pHost) {
    return fail_raw(ACL_ERROR_RT_PARAM_INVALID,
                    fmt("Obtaining the on-device memory pointer based on the on-host virtual address failed. Value "
                        "%#llx for parameter pHost is invalid. Reason: The host pointer has not been registered for "
                        "device address mapping. ErrorCode=EE1011.",
                        static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(pHost))));
}

aclError rt_host_get_device_pointer(const char *api, void *pHost, void **pDevice) {
    aclError rc = ACL_SUCCESS;
    if (runtime_answer("rtHostGetDevicePointer", api, &rc)) return rc;
    int32_t dev = current_device();
    if (dev < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    uintptr_t p = reinterpret_cast<uintptr_t>(pHost);
    if (devptr_query_supported()) {
        ACLSIM_COUNT("halMemHostGetDevPointer");
        int32_t forced = 0;
        if (take_answer("halMemHostGetDevPointer", &forced)) {
            if (forced == kDrvNotExist) return not_mapped(pHost);
            if (forced == 0) return ACL_SUCCESS;
            return fail(drv_to_acl(forced), api, fmt("driver error %d (injected)", forced));
        }
        std::lock_guard<std::mutex> g(g_mu);
        const Registration *r = find_containing_locked(dev, p);
        if (r != nullptr && r->dev_addr != 0) {
            *pDevice = reinterpret_cast<void *>(r->dev_addr + (p - r->base));
            return ACL_SUCCESS;
        }
    } else {
        // the runtime's table, looked up by the registration's base address only
        std::lock_guard<std::mutex> g(g_mu);
        auto it = st().rt_mapped.find(p);
        if (it != st().rt_mapped.end()) {
            *pDevice = reinterpret_cast<void *>(it->second.second);
            return ACL_SUCCESS;
        }
        *pDevice = nullptr;
    }
    return not_mapped(pHost);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The ACL layer (src/acl/aclrt_impl/memory.cpp): argument checks, then the runtime.
// ---------------------------------------------------------------------------------------------

extern "C" {

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    static const char api[] = "aclrtHostRegisterV2";
    ACLSIM_COUNT(api);
    aclError rc;
    if (ptr == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    else if (size == 0)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    else
        rc = rt_host_register_v2(api, ptr, size, flag);
    ACLSIM_TRACE(api, fmt("%p, %llu, 0x%x", ptr, static_cast<unsigned long long>(size), flag), rc);
    return rc;
}

aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr) {
    static const char api[] = "aclrtHostRegister";
    ACLSIM_COUNT(api);
    uint32_t t = static_cast<uint32_t>(type);
    aclError rc;
    if (ptr == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    else if (devPtr == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    else if (size == 0)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    else
        rc = rt_host_register(api, ptr, size, t, devPtr);
    ACLSIM_TRACE(api,
          fmt("%p, %llu, %u, %p", ptr, static_cast<unsigned long long>(size), t, static_cast<void *>(devPtr)), rc);
    return rc;
}

aclError aclrtHostUnregister(void *ptr) {
    static const char api[] = "aclrtHostUnregister";
    ACLSIM_COUNT(api);
    aclError rc = ptr == nullptr ? fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL") : rt_host_unregister(api, ptr);
    ACLSIM_TRACE(api, fmt("%p", ptr), rc);
    return rc;
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag) {
    static const char api[] = "aclrtHostGetDevicePointer";
    ACLSIM_COUNT(api);
    aclError rc;
    if (pHost == nullptr || pDevice == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, pHost ? "pDevice is NULL" : "pHost is NULL");
    else if (flag != 0)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("flag must be 0, got %u", flag));
    else
        rc = rt_host_get_device_pointer(api, pHost, pDevice);
    ACLSIM_TRACE(api, fmt("%p, %p, %u", pHost, static_cast<void *>(pDevice), flag), rc);
    return rc;
}

}  // extern "C"

// ---------------------------------------------------------------------------------------------
// The driver's halHostRegister/halHostUnregister as an application calls them directly
// (LMCache-Ascend on drivers before 25: halHostRegister(ptr, size, HOST_MEM_MAP_DEV_PCIE_TH,
// dev, &devPtr) then mlock), exported by the libascend_hal.so stand-in
// (src/standins/hal_host_reg.cpp), which forwards here. The checks are the open driver's
// host-side ones for local host memory (`devmm_local_host_map_para_check`: the map type, a
// non-zero page-aligned source address, a non-zero size; then the overlap with what the driver
// has mapped, "Local memory has been mapped"), answered with the driver's codes. The driver's
// table is the one the ACL calls' driver path fills: an ACL registration overlapping a
// halHostRegister one is refused by the driver, and the other way round.
// ---------------------------------------------------------------------------------------------

namespace {
constexpr uint32_t kHostMemMapDev = 0, kHostMemMapDevPcieTh = 3, kHostRegisterMaxType = 5;
}  // namespace

extern "C" {

int32_t aclsim_hal_host_register(void *src, uint64_t size, uint32_t flag, uint32_t devid, void **dst) {
    ACLSIM_COUNT("halHostRegister");
    uintptr_t base = reinterpret_cast<uintptr_t>(src);
    int32_t rc = 0;
    std::string why;
    if (src == nullptr || dst == nullptr || flag >= kHostRegisterMaxType) {
        rc = kDrvInvalidValue;
        why = src == nullptr ? "srcPtr is NULL" : dst == nullptr ? "dstPtr is NULL" : "map type is invalid";
    } else if (flag != kHostMemMapDev && flag != kHostMemMapDevPcieTh) {
        rc = kDrvNotSupport;
        why = fmt("map type %u is not one for local host memory", flag);
    } else if (base % host_page_size() != 0 || size == 0) {
        rc = kDrvInvalidValue;
        why = fmt("Src_va is zero or not page alignment, or map size is zero (src_va=%p; page_size=%zu; size=%llu)",
                  src, host_page_size(), static_cast<unsigned long long>(size));
    } else if (devid >= device_count()) {
        rc = kDrvInvalidValue;
        why = fmt("device %u does not exist", devid);
    } else {
        size_t page = host_page_size();
        uint64_t len = (size + page - 1) / page * page;
        int32_t dev = static_cast<int32_t>(devid);
        // the device address is reserved outside the lock (take_device_address takes it)
        uintptr_t dev_addr = take_device_address(len);
        std::lock_guard<std::mutex> g(g_mu);
        if (const Registration *o = find_overlap_locked(dev, base, len)) {
            rc = kDrvInvalidValue;
            why = fmt("Local memory has been mapped (hostPtr=%p; size=%llu; devid=%u; overlaps 0x%llx+%llu)", src,
                      static_cast<unsigned long long>(len), devid, static_cast<unsigned long long>(o->base),
                      static_cast<unsigned long long>(o->size));
        } else if (dev_addr == 0) {
            rc = 6;  // DRV_ERROR_OUT_OF_MEMORY
            why = "cannot reserve a device address range";
        } else {
            st().regs[dev][base] = Registration{base, len, ACL_HOST_REG_MAPPED, dev_addr};
            *dst = reinterpret_cast<void *>(dev_addr);
        }
    }
    if (rc != 0) write_stderr(fmt("aclsim: halHostRegister: driver error %d: %s\n", rc, why.c_str()));
    ACLSIM_TRACE_LINE("halHostRegister", fmt("%p, %llu, %u, %u, %p", src, static_cast<unsigned long long>(size), flag, devid,
                                             static_cast<void *>(dst)),
                      fmt("%d", rc));
    return rc;
}

int32_t aclsim_hal_host_unregister(void *src, uint32_t devid) {
    ACLSIM_COUNT("halHostUnregister");
    bool erased;
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto dit = st().regs.find(static_cast<int32_t>(devid));
        erased = src != nullptr && dit != st().regs.end() && dit->second.erase(reinterpret_cast<uintptr_t>(src)) != 0;
    }
    int32_t rc = erased ? 0 : (src == nullptr ? kDrvInvalidValue : kDrvNotExist);
    ACLSIM_TRACE_LINE("halHostUnregister", fmt("%p, %u", src, devid), fmt("%d", rc));
    return rc;
}

}  // extern "C"
