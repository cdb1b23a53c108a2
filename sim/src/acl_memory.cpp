// libacl_rt.so of the simulator: aclrtMallocHost, aclrtFreeHost, aclrtMalloc, aclrtFree,
// aclrtMemcpy, aclrtMemset. Simulated device memory is host memory of this process.
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <atomic>
#include <iterator>
#include <mutex>
#include <string>

#include "acl_internal.h"

using namespace aclsim;

namespace {

bool kind_known(int kind) {
    // the acl layer translates these; INNER/INTER_DEVICE_TO_DEVICE and anything else: 100000
    return kind >= ACL_MEMCPY_HOST_TO_HOST && kind <= ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE;
}

// aclrtFreeHost and aclrtFree: NULL -> 100000 (the acl layer); a pointer that `table` (the
// allocations of `allocator`) does not hold -> 107000 (the driver); else the mapping goes.
aclError free_allocation(const char *api, const char *arg, void *ptr, std::map<uintptr_t, Allocation> &table,
                         const char *allocator) {
    if (ptr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, api, fmt("%s is NULL", arg));
    Allocation a{0, 0, 0, 0, -1};
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto it = table.find(reinterpret_cast<uintptr_t>(ptr));
        if (it != table.end()) {
            a = it->second;
            table.erase(it);
        }
    }
    if (a.map_len == 0) return fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("not a pointer returned by %s", allocator));
    munmap(reinterpret_cast<void *>(a.map_base), a.map_len);
    return ACL_SUCCESS;
}

// Where the bytes of [p, p + len) live: the host memory behind a simulated device address of
// a MAPPED host registration, or p itself. NULL when p is a simulated device address handed out
// so far but not inside one registration for the whole length. The simulated device address
// space is reserved (State::dev_ranges), so real memory is never mistaken for a device address.
void *backing(void *p, size_t len) {
    uintptr_t d = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> g(g_mu);
    if (!in_device_range_locked(d)) return p;
    if (const Registration *r = find_by_device_address_locked(d))
        return len <= r->size - (d - r->dev_addr) ? reinterpret_cast<void *>(r->base + (d - r->dev_addr)) : nullptr;
    return nullptr;
}

}  // namespace

aclError aclsim::malloc_host(const char *api, void **hostPtr, size_t size) {
    aclError rc = ACL_SUCCESS;
    if (hostPtr == nullptr || size == 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, hostPtr ? "size is 0" : "hostPtr is NULL");
    } else if (current_device() < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    } else {
        size_t off = malloc_host_offset();
        size_t len = round_up(size + off, host_page_size());
        void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            rc = fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, fmt("mmap of %zu bytes failed", len));
        } else {
            // Real page-locked memory, except above ACLSIM_MLOCK_MAX (tests reserving huge
            // ranges must not fault them all in); the simulator counts it page-locked anyway.
            size_t mlock_max = env_size("ACLSIM_MLOCK_MAX", size_t(256) << 20);
            if (len <= mlock_max && mlock(p, len) != 0) {
                static std::atomic<bool> warned{false};
                if (!warned.exchange(true))
                    write_stderr(fmt("aclsim: warning: mlock of aclrtMallocHost memory failed (%s); the memory "
                                     "is kept but not page-locked\n",
                                     strerror(errno)));
            }
            uintptr_t user = reinterpret_cast<uintptr_t>(p) + off;
            {
                std::lock_guard<std::mutex> g(g_mu);
                st().host_allocs[user] = Allocation{len - off, 0, reinterpret_cast<uintptr_t>(p), len, current_device_locked()};
            }
            *hostPtr = reinterpret_cast<void *>(user);
        }
    }
    return rc;
}

aclError aclsim::free_host(const char *api, void *hostPtr) {
    return free_allocation(api, "hostPtr", hostPtr, st().host_allocs, "aclrtMallocHost");
}

aclError aclsim::memcpy_body(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                             aclrtMemcpyKind kind) {
    aclError rc = ACL_SUCCESS;
    if (count == 0) {
        // nothing to copy: success before any other check
    } else if (dst == nullptr || src == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, dst ? "src is NULL" : "dst is NULL");
    } else if (!kind_known(static_cast<int>(kind))) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("invalid kind %d", static_cast<int>(kind)));
    } else if (destMax == 0) {
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "destMax is 0");
    } else if (count > destMax) {
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("count %zu is larger than destMax %zu", count, destMax));
    } else if (dst == src) {
        // the runtime returns before looking for a context
    } else if (current_device() < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    } else {
        void *d = backing(dst, count);
        const void *s = backing(const_cast<void *>(src), count);
        if (d == nullptr || s == nullptr)
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api,
                      fmt("driver error: %p is not device memory for %zu bytes", d ? src : static_cast<const void *>(dst),
                          count));
        else
            memmove(d, s, count);
    }
    return rc;
}

extern "C" {

aclError aclrtMallocHost(void **hostPtr, size_t size) {
    ACLSIM_COUNT("aclrtMallocHost");
    aclError rc = malloc_host("aclrtMallocHost", hostPtr, size);
    ACLSIM_TRACE("aclrtMallocHost", fmt("%p, %zu", static_cast<void *>(hostPtr), size), rc);
    return rc;
}

aclError aclrtFreeHost(void *hostPtr) {
    ACLSIM_COUNT("aclrtFreeHost");
    aclError rc = ACL_SUCCESS;
    if (hostPtr == nullptr || !runtime_answer("rtFreeHost", "aclrtFreeHost", &rc)) rc = free_host("aclrtFreeHost", hostPtr);
    ACLSIM_TRACE("aclrtFreeHost", fmt("%p", hostPtr), rc);
    return rc;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    ACLSIM_COUNT("aclrtMalloc");
    aclError rc = ACL_SUCCESS;
    uint32_t pol = static_cast<uint32_t>(policy);
    if (devPtr == nullptr || size == 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc", devPtr ? "size is 0" : "devPtr is NULL");
    } else if (current_device() < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtMalloc", "no current context on the calling thread");
    } else {
        // Huge-page policies (every policy but NORMAL_ONLY and its P2P variant) give memory on
        // a 2 MiB boundary, as device huge pages do; normal pages only page alignment.
        uint32_t kind = pol & 0xffu;
        size_t align = (kind == ACL_MEM_MALLOC_NORMAL_ONLY || kind == ACL_MEM_MALLOC_NORMAL_ONLY_P2P)
                           ? host_page_size()
                           : (size_t{2} << 20);
        size_t len = round_up(round_up(size, 32), host_page_size());
        size_t map_len = len + (align > host_page_size() ? align : 0);
        void *m = mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            rc = fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc", fmt("cannot allocate %zu bytes", size));
        } else {
            uintptr_t base = reinterpret_cast<uintptr_t>(m);
            uintptr_t p = (base + align - 1) & ~static_cast<uintptr_t>(align - 1);
            std::lock_guard<std::mutex> g(g_mu);
            st().dev_allocs[p] = Allocation{len, pol, base, map_len, current_device_locked()};
            *devPtr = reinterpret_cast<void *>(p);
        }
    }
    ACLSIM_TRACE("aclrtMalloc", fmt("%p, %zu, 0x%x", static_cast<void *>(devPtr), size, pol), rc);
    return rc;
}

aclError aclrtFree(void *devPtr) {
    ACLSIM_COUNT("aclrtFree");
    aclError rc = free_allocation("aclrtFree", "devPtr", devPtr, st().dev_allocs, "aclrtMalloc");
    ACLSIM_TRACE("aclrtFree", fmt("%p", devPtr), rc);
    return rc;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
    static const char api[] = "aclrtMemcpy";
    ACLSIM_COUNT(api);
    aclError rc = memcpy_body(api, dst, destMax, src, count, kind);
    ACLSIM_TRACE(api, fmt("%p, %zu, %p, %zu, %d", dst, destMax, src, count, static_cast<int>(kind)), rc);
    return rc;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
    static const char api[] = "aclrtMemset";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (count == 0) {
        // nothing to set: success before any other check
    } else if (devPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    } else if (current_device() < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    } else if (count > maxCount) {
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api,
                  fmt("driver error: count %zu is larger than maxCount %zu", count, maxCount));
    } else {
        void *d = backing(devPtr, count);
        if (d == nullptr)
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: %p is not device memory for %zu bytes", devPtr, count));
        else
            memset(d, static_cast<unsigned char>(value), count);
    }
    ACLSIM_TRACE(api, fmt("%p, %zu, %d, %zu", devPtr, maxCount, value, count), rc);
    return rc;
}

}  // extern "C"
