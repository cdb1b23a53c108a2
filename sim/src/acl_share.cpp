// libacl_rt.so of the simulator: sharing memory between processes — IPC keys of aclrtMalloc
// memory (aclrtIpcMemGetExportKey, aclrtIpcMemImportByKey, aclrtIpcMemClose), shareable handles
// of physical allocations (aclrtMemExportToShareableHandleV2, aclrtMemImportFromShareableHandleV2)
// — and the access of a mapped range (aclrtMemSetAccess). The acl layer's checks follow
// hicann/runtime src/acl/aclrt_impl/memory.cpp; the driver's are documented only (107000).
//
// A physical allocation is a memfd, so its shareable handle names the exporting process and the
// descriptor: another process of the same user imports it by opening /proc/<pid>/fd/<fd>, and
// both see the same bytes. aclrtMalloc memory is private to its process: a key imports in the
// process that exported it (the same address), and elsewhere answers 207000 (not supported).
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

#include "acl_internal.h"

using namespace aclsim;

namespace {

constexpr char kHandleMagic[8] = {'a', 'c', 'l', 's', 'i', 'm', 'F', 'H'};

// What the simulator writes into an aclrtMemFabricHandle (128 bytes).
struct FabricHandle {
    char magic[8];
    int32_t pid;
    int32_t fd;
    uint64_t size;
    int32_t device;
    uint32_t location_type;
    uint32_t mem_attr;
    int32_t page;
};
static_assert(sizeof(FabricHandle) <= sizeof(aclrtMemFabricHandle), "fits a fabric handle");

struct IpcExport {
    uintptr_t addr;
    size_t size;
};

std::map<std::string, IpcExport> &ipc_exports() {  // with g_mu held; never freed
    static auto *exports = new std::map<std::string, IpcExport>();
    return *exports;
}

std::string ipc_key(uintptr_t addr) { return fmt("aclsim-ipc-%d-%llx", static_cast<int>(getpid()), (unsigned long long)addr); }

}  // namespace

extern "C" {

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags) {
    static const char api[] = "aclrtIpcMemGetExportKey";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (devPtr == nullptr || key == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, devPtr ? "key is NULL" : "devPtr is NULL");
    } else {
        uintptr_t p = reinterpret_cast<uintptr_t>(devPtr);
        std::string k = ipc_key(p);
        std::string why;
        {
            std::lock_guard<std::mutex> g(g_mu);
            auto it = st().dev_allocs.find(p);
            if (it == st().dev_allocs.end())
                why = fmt("%p is not an address returned by aclrtMalloc", devPtr);
            else if (size == 0 || size > it->second.len)
                why = fmt("size %zu is not in (0, %zu], the allocation's size", size, it->second.len);
            else if (k.size() + 1 > len)
                why = fmt("the key needs %zu bytes, len is %zu", k.size() + 1, len);
            else if (flags > 1)
                why = fmt("flags %llu is not ACL_RT_IPC_MEM_EXPORT_FLAG_*", (unsigned long long)flags);
            else
                ipc_exports()[k] = IpcExport{p, size};
        }
        if (why.empty())
            memcpy(key, k.c_str(), k.size() + 1);
        else
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "driver error: " + why);
    }
    ACLSIM_TRACE(api, fmt("%p, %zu, %p, %zu, %llu", devPtr, size, static_cast<void *>(key), len, (unsigned long long)flags), rc);
    return rc;
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags) {
    static const char api[] = "aclrtIpcMemImportByKey";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (devPtr == nullptr || key == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, devPtr ? "key is NULL" : "devPtr is NULL");
    } else {
        int pid = -1;
        unsigned long long addr = 0;
        bool ours = sscanf(key, "aclsim-ipc-%d-%llx", &pid, &addr) == 2 && pid == static_cast<int>(getpid());
        std::lock_guard<std::mutex> g(g_mu);
        auto it = ipc_exports().find(key);
        if (ours && it != ipc_exports().end())
            *devPtr = reinterpret_cast<void *>(it->second.addr);
        else if (pid > 0 && !ours)
            rc = fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                      "the simulator's device memory is private to its process: a key imports only where it was exported");
        else
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: \"%s\" is not an exported key", key));
    }
    ACLSIM_TRACE(api, fmt("%p, \"%s\", %llu", static_cast<void *>(devPtr), key ? key : "(null)", (unsigned long long)flags), rc);
    return rc;
}

aclError aclrtIpcMemClose(const char *key) {
    static const char api[] = "aclrtIpcMemClose";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (key == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "key is NULL");
    } else {
        bool known;
        {
            std::lock_guard<std::mutex> g(g_mu);
            known = ipc_exports().erase(key) != 0;
        }
        if (!known) rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("driver error: \"%s\" is not an exported key", key));
    }
    ACLSIM_TRACE(api, fmt("\"%s\"", key ? key : "(null)"), rc);
    return rc;
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags, aclrtMemSharedHandleType shareType,
                                           void *shareableHandle) {
    static const char api[] = "aclrtMemExportToShareableHandleV2";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (handle == nullptr || shareableHandle == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, handle ? "shareableHandle is NULL" : "handle is NULL");
    } else {
        FabricHandle h{};
        std::string why;
        {
            std::lock_guard<std::mutex> g(g_mu);
            PhysMem *p = static_cast<PhysMem *>(handle);
            if (st().phys.count(p) == 0 || p->released)
                why = "not a live handle of aclrtMallocPhysical";
            else
                h = FabricHandle{{}, static_cast<int32_t>(getpid()), p->fd, p->size, p->device, p->location_type,
                                 p->mem_attr, static_cast<int32_t>(p->page)};
        }
        memcpy(h.magic, kHandleMagic, sizeof h.magic);
        if (!why.empty()) {
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "driver error: " + why);
        } else if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC) {
            aclrtMemFabricHandle out{};
            memcpy(out.data, &h, sizeof h);
            memcpy(shareableHandle, &out, sizeof out);
        } else if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) {
            uint64_t v = (static_cast<uint64_t>(h.pid) << 32) | static_cast<uint32_t>(h.fd);
            memcpy(shareableHandle, &v, sizeof v);
        } else {
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("shareType %d is not supported", static_cast<int>(shareType)));
        }
    }
    ACLSIM_TRACE(api, fmt("%p, %llu, %d, %p", handle, (unsigned long long)flags, static_cast<int>(shareType), shareableHandle), rc);
    return rc;
}

aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType shareType, uint64_t flags,
                                             aclrtDrvMemHandle *handle) {
    static const char api[] = "aclrtMemImportFromShareableHandleV2";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    int32_t device = current_device();
    if (shareableHandle == nullptr || handle == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, handle ? "shareableHandle is NULL" : "handle is NULL");
    } else if (flags != 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("flags is reserved and must be 0, got %llu", (unsigned long long)flags));
    } else if (device < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    } else {
        FabricHandle h{};
        bool known = false;
        if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC) {
            memcpy(&h, shareableHandle, sizeof h);
            known = memcmp(h.magic, kHandleMagic, sizeof h.magic) == 0;
        } else if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) {
            uint64_t v = 0;
            memcpy(&v, shareableHandle, sizeof v);
            h.pid = static_cast<int32_t>(v >> 32);
            h.fd = static_cast<int32_t>(v & 0xffffffffu);
            h.device = device;
            h.location_type = ACL_MEM_LOCATION_TYPE_DEVICE;
            h.mem_attr = ACL_HBM_MEM_HUGE;
            h.page = static_cast<int32_t>(PageType::Huge);
            known = h.pid > 0;
        }
        int fd = -1;
        if (known) {
            std::string path = fmt("/proc/%d/fd/%d", h.pid, h.fd);
            fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
        }
        struct stat sb {};
        if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size <= 0) {
            if (fd >= 0) close(fd);
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api,
                      "driver error: not a shareable handle of a live physical allocation (of this user)");
        } else {
            PhysMem *p = new PhysMem{fd,      static_cast<size_t>(sb.st_size), h.device, h.location_type,
                                     h.mem_attr, 0, static_cast<PageType>(h.page), 0, false};
            std::lock_guard<std::mutex> g(g_mu);
            st().phys.insert(p);
            *handle = p;
        }
    }
    ACLSIM_TRACE(api, fmt("%p, %d, %llu, %p", shareableHandle, static_cast<int>(shareType), (unsigned long long)flags,
                          static_cast<void *>(handle)),
                 rc);
    return rc;
}

aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count) {
    static const char api[] = "aclrtMemSetAccess";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    std::string why;
    if (virPtr == nullptr || desc == nullptr || count == 0 || size == 0) {
        why = "virPtr, desc, size and count must be set";
    } else {
        for (size_t i = 0; why.empty() && i < count; i++) {
            aclrtMemAccessFlags f = desc[i].flags;
            if (f != ACL_RT_MEM_ACCESS_FLAGS_NONE && f != ACL_RT_MEM_ACCESS_FLAGS_READ &&
                f != ACL_RT_MEM_ACCESS_FLAGS_READWRITE)
                why = fmt("desc[%zu].flags %d is not ACL_RT_MEM_ACCESS_FLAGS_*", i, static_cast<int>(f));
        }
        if (why.empty()) {
            uintptr_t p = reinterpret_cast<uintptr_t>(virPtr);
            std::lock_guard<std::mutex> g(g_mu);
            uintptr_t base = 0;
            const VmMapping *m = find_vm_map_locked(p, &base);
            if (m == nullptr || size > m->size - (p - base))
                why = fmt("%p+%zu is not inside a range mapped with aclrtMapMem", virPtr, size);
        }
    }
    // the simulated devices reach all host memory: a valid request changes nothing
    if (!why.empty()) rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "driver error: " + why);
    ACLSIM_TRACE(api, fmt("%p, %zu, %p, %zu", virPtr, size, static_cast<void *>(desc), count), rc);
    return rc;
}

}  // extern "C"
