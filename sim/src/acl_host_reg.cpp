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
// Host registration core (shared by V1 and V2)
// ---------------------------------------------------------------------------------------------

aclError do_register(const char *api, void *ptr, uint64_t size, uint32_t flags, void **dev_out) {
    int32_t dev = current_device();
    if (dev < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    if (!soc_supports_host_register()) {
        const char *soc = soc_name_raw();
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                    fmt("host memory registration is not supported on %s", soc ? soc : "(unknown SoC)"));
    }

    // ---- the "driver" ----
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    size_t page = host_page_size();
    if (base % page != 0)
        return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api,
                    fmt("driver error: %p is not aligned to the host page size %zu", ptr, page));
    if (base + size < base)
        return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api, "driver error: the range wraps the address space");
    std::string why;
    if (!driver_range_ok(base, size, why)) return fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api, "driver error: " + why);

    bool from_malloc_host;
    {
        std::lock_guard<std::mutex> g(g_mu);
        const Registration *o = find_overlap_locked(dev, base, size);
        if (o != nullptr) {
            uintptr_t ob = o->base;
            uint64_t os = o->size;
            return fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, api,
                        fmt("range overlaps the registration 0x%llx+%llu on device %d",
                            static_cast<unsigned long long>(ob), static_cast<unsigned long long>(os), dev));
        }
        from_malloc_host = in_malloc_host_locked(base, size);
    }
    if ((flags & ACL_HOST_REG_PINNED) != 0 && from_malloc_host)
        return fail(ACL_ERROR_RT_PARAM_INVALID, api, "ACL_HOST_REG_PINNED on memory that is already page-locked");

    std::string rel = kernel_release();
    std::string thr = pageable_kernel_max();
    if (kernel_is_old(rel, thr) && !from_malloc_host && !range_mlocked(base, size)) {
        write_stderr(fmt("aclsim: simulated driver exception: kernel %s (<= %s) cannot register "
                         "non-page-locked memory %p+%llu\n",
                         rel.c_str(), thr.c_str(), ptr, static_cast<unsigned long long>(size)));
        abort();
    }

    uintptr_t dev_addr = 0;
    if ((flags & ACL_HOST_REG_MAPPED) != 0) {
        dev_addr = take_device_address(size);
        if (dev_addr == 0) return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "cannot reserve a device address range");
    }
    std::lock_guard<std::mutex> g(g_mu);
    if (find_overlap_locked(dev, base, size) != nullptr)  // lost a race with another thread
        return fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, api, "range overlaps a registration");
    Registration r{base, size, flags, dev_addr};
    st().regs[dev][base] = r;
    if (dev_out != nullptr) *dev_out = reinterpret_cast<void *>(r.dev_addr);
    return ACL_SUCCESS;
}


}  // namespace

extern "C" {

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    static const char api[] = "aclrtHostRegisterV2";
    ACLSIM_COUNT(api);
    const uint32_t known = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;
    aclError rc;
    if (ptr == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    else if (size == 0)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    else if (flag == 0 || (flag & ~known) != 0)
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("invalid flag 0x%x", flag));
    else
        rc = do_register(api, ptr, size, flag, nullptr);
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
    else if (size == 0)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    else if (devPtr == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    else if (t != 0 && t != 4 && t != 8 && t != 12)
        rc = fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api, fmt("unsupported type %u", t));
    else
        rc = do_register(api, ptr, size, ACL_HOST_REG_MAPPED, devPtr);
    ACLSIM_TRACE(api,
          fmt("%p, %llu, %u, %p", ptr, static_cast<unsigned long long>(size), t, static_cast<void *>(devPtr)), rc);
    return rc;
}

aclError aclrtHostUnregister(void *ptr) {
    static const char api[] = "aclrtHostUnregister";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (ptr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    } else if (current_device() < 0) {
        rc = ACL_ERROR_RT_CONTEXT_NULL;
    } else if (!soc_supports_host_register()) {
        rc = fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api, "host memory registration is not supported on this SoC");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (!ctx_valid_locked(t_ctx)) {
            rc = ACL_ERROR_RT_CONTEXT_NULL;
        } else {
            auto dit = st().regs.find(t_ctx->device);
            if (dit == st().regs.end() || dit->second.erase(reinterpret_cast<uintptr_t>(ptr)) == 0)
                rc = ACL_ERROR_HOST_MEMORY_NOT_REGISTERED;
        }
    }
    if (rc == ACL_ERROR_RT_CONTEXT_NULL) fail(rc, api, "no current context on the calling thread");
    if (rc == ACL_ERROR_HOST_MEMORY_NOT_REGISTERED)
        fail(rc, api, fmt("%p is not the base of a registration on the current device", ptr));
    ACLSIM_TRACE(api, fmt("%p", ptr), rc);
    return rc;
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag) {
    static const char api[] = "aclrtHostGetDevicePointer";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (pHost == nullptr || pDevice == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, pHost ? "pDevice is NULL" : "pHost is NULL");
    } else if (flag != 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("flag must be 0, got %u", flag));
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (!ctx_valid_locked(t_ctx)) {
            rc = ACL_ERROR_RT_CONTEXT_NULL;
        } else {
            uintptr_t p = reinterpret_cast<uintptr_t>(pHost);
            const Registration *r = find_containing_locked(t_ctx->device, p);
            if (r == nullptr || (r->flags & ACL_HOST_REG_MAPPED) == 0) {
                *pDevice = nullptr;
                rc = ACL_ERROR_RT_PARAM_INVALID;
            } else {
                *pDevice = reinterpret_cast<void *>(r->dev_addr + (p - r->base));
            }
        }
    }
    if (rc == ACL_ERROR_RT_CONTEXT_NULL) fail(rc, api, "no current context on the calling thread");
    if (rc == ACL_ERROR_RT_PARAM_INVALID)
        fail(rc, api, fmt("%p is not inside a registration made with ACL_HOST_REG_MAPPED", pHost));
    ACLSIM_TRACE(api, fmt("%p, %p, %u", pHost, static_cast<void *>(pDevice), flag), rc);
    return rc;
}

}  // extern "C"
