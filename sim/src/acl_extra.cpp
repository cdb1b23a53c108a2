// libacl_rt.so of the simulator: the calls real programs use beside registration —
// aclrtMallocHostWithCfg, aclrtFreeHostWithDevSync, aclrtPointerGetAttributes,
// aclrtHostMemMapCapabilities, aclrtResetDeviceForce — and the log entry points libcann_hixl.so
// looks up weakly (acllogCheckDebugLevel, acllogRecord).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <string>

#include "acl/acl_log.h"
#include "acl/acl_rt.h"
#include "acl_internal.h"
#include "aclsim.h"

using namespace aclsim;

namespace {

// ApiImpl::HostMallocWithCfg (src/runtime/api/impl/api_impl.cc): cfg->attrs must not be NULL;
// each attribute is a module id or the UVA flag, anything else 107000 (EE1003).
aclError check_malloc_cfg(const char *api, const aclrtMallocConfig *cfg) {
    if (cfg == nullptr) return ACL_SUCCESS;
    if (cfg->attrs == nullptr) return fail(ACL_ERROR_RT_PARAM_INVALID, api, "cfg->attrs is NULL");
    for (size_t i = 0; i < cfg->numAttrs; i++) {
        aclrtMallocAttrType a = cfg->attrs[i].attr;
        if (a != ACL_RT_MEM_ATTR_MODULE_ID && a != ACL_RT_MEM_ATTR_VA_FLAG)
            return fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        fmt("attribute %d is not supported: only ACL_RT_MEM_ATTR_MODULE_ID and "
                            "ACL_RT_MEM_ATTR_VA_FLAG",
                            static_cast<int>(a)));
    }
    return ACL_SUCCESS;
}

uint32_t page_bytes(int page_type) {
    switch (page_type) {
        case 1:
            return 2u << 20;
        case 2:
            return 1u << 30;
        default:
            return 4096;
    }
}

bool registered_host(uintptr_t p) {
    std::lock_guard<std::mutex> g(g_mu);
    State &s = st();
    auto in = [p](uintptr_t base, uint64_t size) { return p >= base && p - base < size; };
    auto a = s.rt_pinned.upper_bound(p);
    if (a != s.rt_pinned.begin() && in(std::prev(a)->first, std::prev(a)->second)) return true;
    auto b = s.rt_mapped.upper_bound(p);
    if (b != s.rt_mapped.begin() && in(std::prev(b)->first, std::prev(b)->second.first)) return true;
    for (const auto &dev : s.regs)
        if (find_containing_locked(dev.first, p) != nullptr) return true;
    return false;
}

}  // namespace

extern "C" {

aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg) {
    static const char api[] = "aclrtMallocHostWithCfg";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (ptr == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    else if (size == 0)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    else if (!runtime_answer("rtsMallocHost", api, &rc) && (rc = check_malloc_cfg(api, cfg)) == ACL_SUCCESS)
        rc = malloc_host(api, ptr, round_up(static_cast<size_t>(size), 32));  // 32-byte rounding
    ACLSIM_TRACE(api, fmt("%p, %llu, %p", static_cast<void *>(ptr), static_cast<unsigned long long>(size),
                          static_cast<void *>(cfg)),
                 rc);
    return rc;
}

aclError aclrtFreeHostWithDevSync(void *hostPtr) {
    static const char api[] = "aclrtFreeHostWithDevSync";
    ACLSIM_COUNT(api);
    aclError rc = hostPtr == nullptr ? fail(ACL_ERROR_INVALID_PARAM, api, "hostPtr is NULL") : free_host(api, hostPtr);
    ACLSIM_TRACE(api, fmt("%p", hostPtr), rc);
    return rc;
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes) {
    static const char api[] = "aclrtPointerGetAttributes";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (ptr == nullptr || attributes == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, ptr ? "attributes is NULL" : "ptr is NULL");
    } else if (!runtime_answer("rtsPointerGetAttributes", api, &rc)) {
        aclsimMemInfo info;
        *attributes = aclrtPtrAttributes{};
        attributes->pageSize = static_cast<uint32_t>(host_page_size());
        if (aclsimQueryMemory(ptr, 1, &info) == 1 && info.kind != ACLSIM_MEM_HOST) {
            attributes->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
            attributes->location.id = static_cast<uint32_t>(info.device < 0 ? 0 : info.device);
            attributes->pageSize = page_bytes(info.page_type);
        } else if (info.kind == ACLSIM_MEM_HOST || registered_host(reinterpret_cast<uintptr_t>(ptr))) {
            attributes->location.type = ACL_MEM_LOCATION_TYPE_HOST;
        } else {
            attributes->location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
        }
    }
    ACLSIM_TRACE(api, fmt("%p, %p", ptr, static_cast<void *>(attributes)), rc);
    return rc;
}

aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType, aclrtHostMemMapCapability *capabilities) {
    static const char api[] = "aclrtHostMemMapCapabilities";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    int32_t drv = 0;
    if (capabilities == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "capabilities is NULL");
    else if (runtime_answer("rtHostMemMapCapabilities", api, &rc))
        ;
    else if (deviceId >= device_count())
        rc = fail(ACL_ERROR_RT_INVALID_DEVICEID, api, fmt("device %u does not exist", deviceId));
    else if (static_cast<uint32_t>(hacType) > ACL_RT_HAC_TYPE_CCU)
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("hacType %d is not in [0, 10)", static_cast<int>(hacType)));
    else if (current_device() < 0)
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    else if (take_answer("halHostRegisterCapabilities", &drv) && drv != 0)
        rc = fail(drv_to_acl(drv), api, fmt("driver error %d (injected)", drv));
    else
        *capabilities = soc_supports_host_register() ? ACL_RT_HOST_MEM_MAP_SUPPORTED : ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    ACLSIM_TRACE(api, fmt("%u, %d, %p", deviceId, static_cast<int>(hacType), static_cast<void *>(capabilities)), rc);
    return rc;
}

aclError aclrtResetDeviceForce(int32_t deviceId) {
    static const char api[] = "aclrtResetDeviceForce";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (!runtime_answer("rtDeviceResetForce", api, &rc)) rc = reset_device(api, deviceId, true);
    ACLSIM_TRACE(api, fmt("%d", deviceId), rc);
    return rc;
}

// The vendor's levels: 0 debug, 1 info, 2 warning, 3 error; ASCEND_GLOBAL_LOG_LEVEL sets the
// lowest level logged (default 3), ASCEND_SLOG_PRINT_TO_STDOUT=1 prints records (here to stderr).
// A negative module id is refused before any level (slog_api.cpp, acllogCheckDebugLevel);
// acllogRecord drops a record whose module id is outside [0, 0xffff] (acllogVaList).
int32_t acllogCheckDebugLevel(int32_t moduleId, int32_t logLevel) {
    ACLSIM_COUNT("acllogCheckDebugLevel");
    if (moduleId < 0) return 0;
    const char *e = getenv("ASCEND_GLOBAL_LOG_LEVEL");
    int32_t min = (e != nullptr && *e >= '0' && *e <= '4' && e[1] == '\0') ? *e - '0' : 3;
    return logLevel >= min && logLevel <= 3 ? 1 : 0;
}

void acllogRecord(int32_t moduleId, int32_t level, const char *fmt, ...) {
    ACLSIM_COUNT("acllogRecord");
    const char *e = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    if (moduleId < 0 || moduleId > 0xffff || fmt == nullptr || e == nullptr || strcmp(e, "1") != 0) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    write_stderr(aclsim::fmt("[aclsim log] module %d level %d: %s\n", moduleId, level, buf));
}

}  // extern "C"
