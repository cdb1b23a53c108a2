// libacl_rt.so of the simulator: virtual memory management (aclrtReserveMemAddress,
// aclrtReleaseMemAddress, aclrtMallocPhysical, aclrtFreePhysical, aclrtMapMem, aclrtUnmapMem,
// aclrtMemRetainAllocationHandle, aclrtMemGetAllocationGranularity).
//
// A reservation is a PROT_NONE range of this process's address space (2 MiB aligned); a
// physical allocation is a memfd; aclrtMapMem maps the memfd over part of a reservation
// (MAP_SHARED | MAP_FIXED, so a handle mapped twice shows the same bytes) and aclrtUnmapMem
// puts PROT_NONE back. The runtime layer's checks (NULL pointers, zero sizes, flags, the
// property fields) follow the vendor's acl layer; the driver's (alignment, handles, ranges) are
// documented only and answer 107000 (the runtime's code for the driver's "invalid value").
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "acl_internal.h"

using namespace aclsim;

namespace {

bool attr_known(uint32_t attr) {
    // the vendor's acl layer knows every aclrtMemAttr but the bare ACL_DDR_MEM and ACL_HBM_MEM
    return attr >= ACL_DDR_MEM_HUGE && attr <= ACL_MEM_P2P_HUGE1G;
}

bool attr_is_ddr(uint32_t attr) {
    return attr == ACL_DDR_MEM_HUGE || attr == ACL_DDR_MEM_NORMAL || attr == ACL_DDR_MEM_P2P_HUGE ||
           attr == ACL_DDR_MEM_P2P_NORMAL;
}

PageType attr_page(uint32_t attr) {
    switch (attr) {
        case ACL_DDR_MEM_NORMAL:
        case ACL_HBM_MEM_NORMAL:
        case ACL_DDR_MEM_P2P_NORMAL:
        case ACL_HBM_MEM_P2P_NORMAL:
        case ACL_MEM_NORMAL:
        case ACL_MEM_P2P_NORMAL:
            return PageType::Normal;
        case ACL_HBM_MEM_HUGE1G:
        case ACL_HBM_MEM_P2P_HUGE1G:
        case ACL_MEM_HUGE1G:
        case ACL_MEM_P2P_HUGE1G:
            return PageType::Huge1G;
        default:
            return PageType::Huge;
    }
}

size_t granularity_of(PageType p) { return p == PageType::Huge1G ? (size_t{1} << 30) : kHugePage; }

// The acl layer's checks of a physical memory property (shared by aclrtMallocPhysical and
// aclrtMemGetAllocationGranularity); ACL_SUCCESS or the code, with the message recorded.
aclError check_prop(const char *api, const aclrtPhysicalMemProp *prop) {
    uint32_t loc = static_cast<uint32_t>(prop->location.type);
    uint32_t attr = static_cast<uint32_t>(prop->memAttr);
    if (loc == ACL_MEM_LOCATION_TYPE_UNREGISTERED || loc == ACL_MEM_LOCATION_TYPE_MANAGED)
        return fail(ACL_ERROR_INVALID_PARAM, api, fmt("prop->location.type %u is not supported", loc));
    if (loc == ACL_MEM_LOCATION_TYPE_DEVICE && attr_is_ddr(attr))
        return fail(ACL_ERROR_INVALID_PARAM, api,
                    fmt("memAttr %u (DDR) needs location type HOST (0) or HOST_NUMA (4)", attr));
    if (!attr_known(attr))
        return fail(ACL_ERROR_INVALID_PARAM, api, fmt("memAttr %u is not supported", attr));
    return ACL_SUCCESS;
}

// A pointer argument and its name, for the messages of first_checks.
struct NamedArg {
    const char *name;
    const void *value;
};

// The acl layer's first checks of aclrtMallocPhysical and aclrtMapMem, in their order: neither
// pointer argument NULL, size not 0, flags 0. ACL_SUCCESS, or 100000 with the message recorded.
aclError first_checks(const char *api, NamedArg a, NamedArg b, size_t size, uint64_t flags) {
    if (a.value == nullptr) return fail(ACL_ERROR_INVALID_PARAM, api, fmt("%s is NULL", a.name));
    if (b.value == nullptr) return fail(ACL_ERROR_INVALID_PARAM, api, fmt("%s is NULL", b.name));
    if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    if (flags != 0)
        return fail(ACL_ERROR_INVALID_PARAM, api, fmt("flags must be 0, got %llu", (unsigned long long)flags));
    return ACL_SUCCESS;
}

void free_phys_locked(PhysMem *p) {
    st().phys.erase(p);
    close(p->fd);
    delete p;
}

}  // namespace

aclError aclsim::reserve_body(const char *api, void **virPtr, size_t size, size_t alignment, void *expectPtr,
                              uint64_t flags) {
    aclError rc = ACL_SUCCESS;
    if (virPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "virPtr is NULL");
    } else if (size == 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    } else if (flags != 0 && flags != 1) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("flags must be 0 (or 1), got %llu", (unsigned long long)flags));
    } else if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: alignment %zu is not a power of two", alignment));
    } else {
        size_t align = alignment > kHugePage ? alignment : kHugePage;
        size_t len = round_up(size, kHugePage);
        size_t map_len = len + align;
        void *hint = expectPtr;
        void *m = mmap(hint, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            rc = fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, fmt("cannot reserve %zu bytes", size));
        } else {
            uintptr_t base = reinterpret_cast<uintptr_t>(m);
            uintptr_t p = (base + align - 1) & ~static_cast<uintptr_t>(align - 1);
            if (expectPtr != nullptr && p != reinterpret_cast<uintptr_t>(expectPtr)) {
                munmap(m, map_len);
                rc = fail(ACL_ERROR_RT_PARAM_INVALID, api,
                          fmt("driver error: the range at expectPtr %p is not available", expectPtr));
            } else {
                std::lock_guard<std::mutex> g(g_mu);
                st().reservations[p] = Reservation{size, base, map_len};
                *virPtr = reinterpret_cast<void *>(p);
            }
        }
    }
    return rc;
}

// reserve_body, traced as `api`.
static aclError reserve_traced(const char *api, void **virPtr, size_t size, size_t alignment, void *expectPtr,
                               uint64_t flags) {
    aclError rc = reserve_body(api, virPtr, size, alignment, expectPtr, flags);
    ACLSIM_TRACE(api,
          fmt("%p, %zu, %zu, %p, %llu", static_cast<void *>(virPtr), size, alignment, expectPtr,
              (unsigned long long)flags),
          rc);
    return rc;
}

extern "C" {

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags) {
    static const char api[] = "aclrtReserveMemAddress";
    ACLSIM_COUNT(api);
    return reserve_traced(api, virPtr, size, alignment, expectPtr, flags);
}

// aclrtReserveMemAddressNoUCMemoryImpl (memory.cpp): the same checks (flags 0 or 1) and the same
// reservation; the flag it adds (no UC memory behind the range) changes nothing the simulator has.
aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                          uint64_t flags) {
    static const char api[] = "aclrtReserveMemAddressNoUCMemory";
    ACLSIM_COUNT(api);
    return reserve_traced(api, virPtr, size, alignment, expectPtr, flags);
}

aclError aclrtReleaseMemAddress(void *virPtr) {
    static const char api[] = "aclrtReleaseMemAddress";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (virPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "virPtr is NULL");
    } else {
        Reservation r{0, 0, 0};
        std::string why;
        {
            std::lock_guard<std::mutex> g(g_mu);
            uintptr_t p = reinterpret_cast<uintptr_t>(virPtr);
            auto it = st().reservations.find(p);
            if (it == st().reservations.end()) {
                why = fmt("driver error: %p is not an address returned by aclrtReserveMemAddress", virPtr);
            } else {
                auto m = st().vm_maps.lower_bound(p);
                if (m != st().vm_maps.end() && m->first < p + it->second.size) {
                    why = fmt("driver error: %p is still mapped (aclrtUnmapMem first)", reinterpret_cast<void *>(m->first));
                } else {
                    r = it->second;
                    st().reservations.erase(it);
                }
            }
        }
        if (!why.empty())
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, why);
        else
            munmap(reinterpret_cast<void *>(r.map_base), r.map_len);
    }
    ACLSIM_TRACE(api, fmt("%p", virPtr), rc);
    return rc;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                             uint64_t flags) {
    static const char api[] = "aclrtMallocPhysical";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if ((rc = first_checks(api, {"handle", handle}, {"prop", prop}, size, flags)) != ACL_SUCCESS) {
        // recorded by first_checks
    } else if (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api,
                  fmt("prop->handleType must be ACL_MEM_HANDLE_TYPE_NONE, got %d", (int)prop->handleType));
    } else if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api,
                  fmt("prop->allocationType must be ACL_MEM_ALLOCATION_TYPE_PINNED, got %d",
                      (int)prop->allocationType));
    } else if ((rc = check_prop(api, prop)) != ACL_SUCCESS) {
        // recorded by check_prop
    } else if (prop->location.type == ACL_MEM_LOCATION_TYPE_DEVICE && prop->location.id >= device_count()) {
        rc = fail(ACL_ERROR_RT_INVALID_DEVICEID, api, fmt("device %u does not exist", prop->location.id));
    } else if (prop->location.type == ACL_MEM_LOCATION_TYPE_HOST_NUMA && current_device() < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "HOST_NUMA memory needs a current context");
    } else {
        PageType page = attr_page(static_cast<uint32_t>(prop->memAttr));
        size_t gran = granularity_of(page);
        if (size % gran != 0) {
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api,
                      fmt("driver error: size %zu is not a multiple of the granularity %zu", size, gran));
        } else {
            int fd = memfd_create("aclsim-physical", MFD_CLOEXEC);
            if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
                if (fd >= 0) close(fd);
                rc = fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, fmt("cannot allocate %zu bytes", size));
            } else {
                PhysMem *p = new PhysMem{fd,
                                         size,
                                         static_cast<int32_t>(prop->location.id),
                                         static_cast<uint32_t>(prop->location.type),
                                         static_cast<uint32_t>(prop->memAttr),
                                         prop->reserve,
                                         page,
                                         0,
                                         false};
                std::lock_guard<std::mutex> g(g_mu);
                st().phys.insert(p);
                *handle = p;
            }
        }
    }
    ACLSIM_TRACE(api,
          fmt("%p, %zu, %p, %llu", static_cast<void *>(handle), size, static_cast<const void *>(prop),
              (unsigned long long)flags),
          rc);
    return rc;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
    static const char api[] = "aclrtFreePhysical";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (handle == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    } else {
        bool known;
        {
            std::lock_guard<std::mutex> g(g_mu);
            PhysMem *p = static_cast<PhysMem *>(handle);
            known = st().phys.count(p) != 0 && !p->released;
            if (known) {
                p->released = true;
                if (p->mappings == 0) free_phys_locked(p);
            }
        }
        if (!known) rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "driver error: not a live handle of aclrtMallocPhysical");
    }
    ACLSIM_TRACE(api, fmt("%p", handle), rc);
    return rc;
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
    static const char api[] = "aclrtMapMem";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if ((rc = first_checks(api, {"virPtr", virPtr}, {"handle", handle}, size, flags)) == ACL_SUCCESS) {
        uintptr_t p = reinterpret_cast<uintptr_t>(virPtr);
        std::string why;
        std::lock_guard<std::mutex> g(g_mu);
        PhysMem *ph = static_cast<PhysMem *>(handle);
        auto res = st().reservations.upper_bound(p);
        bool in_res = false;
        if (res != st().reservations.begin()) {
            --res;
            in_res = p - res->first < res->second.size && size <= res->second.size - (p - res->first);
        }
        auto next = st().vm_maps.lower_bound(p);
        bool overlaps = (next != st().vm_maps.end() && next->first < p + size) || find_vm_map_locked(p, nullptr);
        if (st().phys.count(ph) == 0 || ph->released)
            why = "not a live handle of aclrtMallocPhysical";
        else if (!in_res)
            why = fmt("%p+%zu is not inside a range reserved with aclrtReserveMemAddress", virPtr, size);
        else if (p % kHugePage != 0)
            why = fmt("%p is not aligned to 2 MiB", virPtr);
        else if (offset != 0)
            why = fmt("offset must be 0, got %zu", offset);
        else if (size != ph->size)
            why = fmt("size %zu differs from the physical allocation's size %zu", size, ph->size);
        else if (overlaps)
            why = fmt("%p+%zu overlaps a range already mapped", virPtr, size);
        if (why.empty()) {
            void *m = mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ph->fd, 0);
            if (m == MAP_FAILED) {
                why = fmt("mmap failed: %s", strerror(errno));
            } else {
                ph->mappings++;
                st().vm_maps[p] = VmMapping{size, ph};
            }
        }
        if (!why.empty()) rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "driver error: " + why);
    }
    ACLSIM_TRACE(api, fmt("%p, %zu, %zu, %p, %llu", virPtr, size, offset, handle, (unsigned long long)flags), rc);
    return rc;
}

aclError aclrtUnmapMem(void *virPtr) {
    static const char api[] = "aclrtUnmapMem";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (virPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "virPtr is NULL");
    } else {
        bool known = false;
        {
            std::lock_guard<std::mutex> g(g_mu);
            auto it = st().vm_maps.find(reinterpret_cast<uintptr_t>(virPtr));
            if (it != st().vm_maps.end()) {
                known = true;
                // back to a reserved, inaccessible range
                mmap(virPtr, it->second.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
                     0);
                PhysMem *ph = it->second.phys;
                st().vm_maps.erase(it);
                if (--ph->mappings == 0 && ph->released) free_phys_locked(ph);
            }
        }
        if (!known) rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: %p is not the start of a mapping", virPtr));
    }
    ACLSIM_TRACE(api, fmt("%p", virPtr), rc);
    return rc;
}

aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle) {
    static const char api[] = "aclrtMemRetainAllocationHandle";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (virPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "virPtr is NULL");
    } else if (handle == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    } else {
        PhysMem *ph = nullptr;
        {
            std::lock_guard<std::mutex> g(g_mu);
            const VmMapping *m = find_vm_map_locked(reinterpret_cast<uintptr_t>(virPtr), nullptr);
            if (m != nullptr) ph = m->phys;
        }
        if (ph == nullptr)
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: %p is not mapped with aclrtMapMem", virPtr));
        else
            *handle = ph;
    }
    ACLSIM_TRACE(api, fmt("%p, %p", virPtr, static_cast<void *>(handle)), rc);
    return rc;
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions option,
                                          size_t *granularity) {
    static const char api[] = "aclrtMemGetAllocationGranularity";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (prop == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "prop is NULL");
    } else if (granularity == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "granularity is NULL");
    } else if ((rc = check_prop(api, prop)) == ACL_SUCCESS) {
        if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM && option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: invalid option %d", (int)option));
        else
            *granularity = granularity_of(attr_page(static_cast<uint32_t>(prop->memAttr)));
    }
    ACLSIM_TRACE(api, fmt("%p, %d, %p", static_cast<void *>(prop), (int)option, static_cast<void *>(granularity)), rc);
    return rc;
}

}  // extern "C"
