// libacl_rt.so of the simulator: the whole ACL runtime state and every ACL entry point.
//
// Behaviour follows the vendor's public documentation (the runtime's own checks,
// then the "driver"'s). Every exported function is also exported as `aclsim_impl_<name>`
// (see acl_api.def) for the forwarding stubs of libascendcl.so.
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl_rt.h"
#include "aclsim.h"
#include "acl_internal.h"
#include "sim_format.h"

using namespace aclsim;


// =============================================================================================
// Exported ACL API
// =============================================================================================

namespace {
// aclrtSetDevice/aclrtResetDevice precondition: a device that exists (neither needs aclInit).
aclError device_state_error(int32_t deviceId, uint32_t n) {
    if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= n) return ACL_ERROR_RT_INVALID_DEVICEID;
    return ACL_SUCCESS;
}
}  // namespace

aclError aclsim::reset_device(const char *api, int32_t deviceId, bool force) {
    aclError rc = ACL_SUCCESS;
    uint32_t n = device_count();
    {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        rc = device_state_error(deviceId, n);
        if (rc == ACL_SUCCESS) {
            int &refs = s.device_refs[deviceId];
            if (refs > 0) refs--;
            if (force) refs = 0;
            if (refs == 0) {
                auto it = s.default_ctx.find(deviceId);
                if (it != s.default_ctx.end()) {
                    it->second->alive = false;
                    s.default_ctx.erase(it);
                }
                s.regs.erase(deviceId);
            }
        }
    }
    if (rc != ACL_SUCCESS) fail(rc, api, fmt("device %d does not exist (%u devices)", deviceId, n));
    return rc;
}

extern "C" {

namespace {
// The vendor resolves the path (realpath) and opens it; either failing is 100003.
bool config_readable(const char *path) {
    char real[PATH_MAX];
    if (realpath(path, real) == nullptr) return false;
    FILE *f = fopen(real, "rb");
    if (f == nullptr) return false;
    fclose(f);
    return true;
}
}  // namespace

aclError aclInit(const char *configPath) {
    ACLSIM_COUNT("aclInit");
    aclError rc = ACL_SUCCESS;
    bool repeat;
    {
        std::lock_guard<std::mutex> g(g_mu);
        repeat = st().initialized;
    }
    if (repeat) {
        rc = fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit", "aclInit was already called");
    } else if (configPath != nullptr && *configPath != '\0' && !config_readable(configPath)) {
        rc = fail(ACL_ERROR_INVALID_FILE, "aclInit", fmt("config file %s cannot be read", configPath));
    } else if (soc_name_raw() == nullptr) {
        rc = fail(ACL_ERROR_INTERNAL_ERROR, "aclInit", "init SoC version failed: the SoC name cannot be read");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        st().initialized = true;
    }
    ACLSIM_TRACE("aclInit", configPath ? fmt("\"%s\"", configPath) : "NULL", rc);
    return rc;
}

// aclFinalize ends what aclInit started and nothing else: devices, contexts, allocations and
// registrations stay. A first aclFinalize without aclInit succeeds; another one before the next
// aclInit answers 100037.
aclError aclFinalize(void) {
    ACLSIM_COUNT("aclFinalize");
    aclError rc = ACL_SUCCESS;
    {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        if (!s.initialized && s.finalized_once) {
            rc = ACL_ERROR_REPEAT_FINALIZE;
        } else {
            s.initialized = false;
            s.finalized_once = true;
        }
    }
    if (rc != ACL_SUCCESS) fail(rc, "aclFinalize", "repeatedly finalized (aclFinalize without a new aclInit)");
    ACLSIM_TRACE("aclFinalize", "", rc);
    return rc;
}


aclError aclrtSetDevice(int32_t deviceId) {
    ACLSIM_COUNT("aclrtSetDevice");
    aclError rc = ACL_SUCCESS;
    uint32_t n = device_count();
    {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        rc = device_state_error(deviceId, n);
        if (rc == ACL_SUCCESS) {
            Context *&c = s.default_ctx[deviceId];
            if (c == nullptr) {
                c = new Context{deviceId, true, true};
                s.contexts.insert(c);
            }
            s.device_refs[deviceId]++;
            t_ctx = c;
        }
    }
    if (rc == ACL_ERROR_RT_INVALID_DEVICEID)
        fail(rc, "aclrtSetDevice", fmt("device %d does not exist (%u devices)", deviceId, n));
    ACLSIM_TRACE("aclrtSetDevice", fmt("%d", deviceId), rc);
    return rc;
}

aclError aclrtResetDevice(int32_t deviceId) {
    ACLSIM_COUNT("aclrtResetDevice");
    aclError rc = ACL_SUCCESS;
    if (!runtime_answer("rtDeviceReset", "aclrtResetDevice", &rc)) rc = reset_device("aclrtResetDevice", deviceId, false);
    ACLSIM_TRACE("aclrtResetDevice", fmt("%d", deviceId), rc);
    return rc;
}

aclError aclrtGetDevice(int32_t *deviceId) {
    ACLSIM_COUNT("aclrtGetDevice");
    aclError rc = ACL_SUCCESS;
    if (deviceId == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice", "deviceId is NULL");
    } else {
        int32_t d = current_device();
        if (d < 0)
            rc = fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice", "no current context on the calling thread");
        else
            *deviceId = d;
    }
    ACLSIM_TRACE("aclrtGetDevice", fmt("%p", static_cast<void *>(deviceId)), rc);
    return rc;
}

aclError aclrtGetDeviceCount(uint32_t *countOut) {
    ACLSIM_COUNT("aclrtGetDeviceCount");
    aclError rc = ACL_SUCCESS;
    if (countOut == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count is NULL");
    else
        *countOut = device_count();
    ACLSIM_TRACE("aclrtGetDeviceCount", fmt("%p", static_cast<void *>(countOut)), rc);
    return rc;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
    ACLSIM_COUNT("aclrtCreateContext");
    aclError rc = ACL_SUCCESS;
    uint32_t n = device_count();
    if (context == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext", "context is NULL");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= n) {
            rc = ACL_ERROR_RT_INVALID_DEVICEID;
        } else {
            Context *c = new Context{deviceId, false, true};
            s.contexts.insert(c);
            t_ctx = c;
            *context = c;
        }
    }
    if (rc == ACL_ERROR_RT_INVALID_DEVICEID) fail(rc, "aclrtCreateContext", "invalid device id");
    ACLSIM_TRACE("aclrtCreateContext", fmt("%p, %d", static_cast<void *>(context), deviceId), rc);
    return rc;
}

extern "C++" {
namespace {

// What aclrtDestroyContext and aclrtSetCurrentContext share: NULL is ACL_ERROR_INVALID_PARAM; a
// context that is not live (or, unless `allow_default`, a device's default context) is
// ACL_ERROR_RT_PARAM_INVALID, with `invalid` as the recent error message; `apply` runs under the
// lock on a context that passes.
template <typename Apply>
aclError on_live_context(const char *call, aclrtContext context, bool allow_default, const char *invalid,
                         Apply apply) {
    aclError rc = ACL_SUCCESS;
    Context *c = static_cast<Context *>(context);
    if (c == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, call, "context is NULL");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (!ctx_valid_locked(c) || (!allow_default && c->is_default))
            rc = ACL_ERROR_RT_PARAM_INVALID;
        else
            apply(c);
    }
    if (rc == ACL_ERROR_RT_PARAM_INVALID) fail(rc, call, invalid);
    ACLSIM_TRACE(call, fmt("%p", context), rc);
    return rc;
}

}  // namespace
}  // extern "C++"

aclError aclrtDestroyContext(aclrtContext context) {
    ACLSIM_COUNT("aclrtDestroyContext");
    return on_live_context("aclrtDestroyContext", context, false,
                           "not a live context created by aclrtCreateContext", [](Context *c) {
                               c->alive = false;
                               if (t_ctx == c) t_ctx = nullptr;
                           });
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
    ACLSIM_COUNT("aclrtGetCurrentContext");
    aclError rc = ACL_SUCCESS;
    if (context == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext", "context is NULL");
    } else if (current_device() < 0) {  // the thread's own state: no lock
        rc = ACL_ERROR_RT_CONTEXT_NULL;
    } else {
        *context = t_ctx;
    }
    if (rc == ACL_ERROR_RT_CONTEXT_NULL)
        fail(rc, "aclrtGetCurrentContext", "no current context on the calling thread");
    ACLSIM_TRACE("aclrtGetCurrentContext", fmt("%p", static_cast<void *>(context)), rc);
    return rc;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
    ACLSIM_COUNT("aclrtSetCurrentContext");
    return on_live_context("aclrtSetCurrentContext", context, true, "not a live context",
                           [](Context *c) { t_ctx = c; });
}

const char *aclrtGetSocName(void) {
    ACLSIM_COUNT("aclrtGetSocName");
    const char *raw = soc_name_raw();
    const char *out = raw ? intern(raw) : nullptr;
    if (out == nullptr) fail(ACL_ERROR_INTERNAL_ERROR, "aclrtGetSocName", "the SoC name is unknown");
    ACLSIM_TRACE_LINE("aclrtGetSocName", "", out ? fmt("\"%s\"", out) : "NULL");
    return out;
}

const char *aclGetRecentErrMsg(void) {
    ACLSIM_COUNT("aclGetRecentErrMsg");
    const char *out = t_err.empty() ? nullptr : t_err.c_str();
    ACLSIM_TRACE_LINE("aclGetRecentErrMsg", "", out ? fmt("\"%s\"", out) : "NULL");
    return out;
}

namespace {
// The simulated version of a package: ACLSIM_DRIVER_VERSION for "driver", ACLSIM_CANN_VERSION
// (default the install root's release, the release profile) for anything else (empty: the version file is missing).
const char *package_version(const char *pkgName) {
    bool driver = strcmp(pkgName, "driver") == 0;
    const char *v = getenv(driver ? "ACLSIM_DRIVER_VERSION" : "ACLSIM_CANN_VERSION");
    return driver ? (v != nullptr ? v : "25.3.rc1") : cann_version();
}
}  // namespace

aclError aclsysGetVersionStr(char *pkgName, char *versionStr) {
    ACLSIM_COUNT("aclsysGetVersionStr");
    aclError rc = ACL_SUCCESS;
    if (pkgName == nullptr || versionStr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr", "pkgName or versionStr is NULL");
    } else {
        const char *v = package_version(pkgName);
        if (*v == '\0') {
            rc = fail(ACL_ERROR_INVALID_FILE, "aclsysGetVersionStr", fmt("version file of %s missing", pkgName));
        } else {
            snprintf(versionStr, 128, "%s", v);
        }
    }
    ACLSIM_TRACE("aclsysGetVersionStr", fmt("\"%s\", %p", pkgName ? pkgName : "(null)", static_cast<void *>(versionStr)),
          rc);
    return rc;
}

namespace {
// std::stoi: leading white space, an optional sign, digits; what follows is ignored. False
// where stoi throws (no digits, out of the range of int).
bool stoi_like(const std::string &s, int32_t &out) {
    const char *p = s.c_str();
    char *end = nullptr;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno == ERANGE || v < INT32_MIN || v > INT32_MAX) return false;
    out = static_cast<int32_t>(v);
    return true;
}

// X.Y.Z, digits only for Z (ParseBaseVersion, hicann/runtime src/acl/aclrt_impl/acl.cpp):
// the value and where Z ends.
bool parse_base_version(const std::string &v, int64_t &base, size_t &end) {
    size_t dot1 = v.find('.');
    if (dot1 == std::string::npos || dot1 == 0) return false;
    size_t dot2 = v.find('.', dot1 + 1);
    if (dot2 == std::string::npos || dot2 == dot1 + 1) return false;
    size_t n = dot2 + 1;
    while (n < v.size() && isdigit(static_cast<unsigned char>(v[n]))) n++;
    if (n == dot2 + 1) return false;
    int32_t major = 0, minor = 0, patch = 0;
    if (!stoi_like(v.substr(0, dot1), major) || !stoi_like(v.substr(dot1 + 1, dot2 - dot1 - 1), minor) ||
        !stoi_like(v.substr(dot2 + 1, n - dot2 - 1), patch))
        return false;
    base = int64_t{major} * 10000000 + int64_t{minor} * 100000 + int64_t{patch} * 1000;
    end = n;
    return true;
}

// The number after the keyword (ParsePreNumStrict): empty is 0; else at most one '.' or '-',
// then digits to the end.
bool parse_pre_num(const std::string &s, int32_t &out) {
    if (s.empty()) {
        out = 0;
        return true;
    }
    size_t digit = std::string::npos;
    for (size_t i = 0; i < s.size(); i++) {
        if (isdigit(static_cast<unsigned char>(s[i]))) {
            digit = i;
            break;
        }
        if (s[i] != '.' && s[i] != '-') return false;
    }
    if (digit == std::string::npos || digit > 1) return false;
    std::string num = s.substr(digit);
    size_t n = 0;
    while (n < num.size() && isdigit(static_cast<unsigned char>(num[n]))) n++;
    return n == num.size() && stoi_like(num, out);
}

// What follows X.Y.Z (ParsePrereleasePart): "alpha", else "beta", else "rc" anywhere in it
// (case-insensitive), at most one character before it; alpha -300, beta -200, rc -100, plus
// the number after it.
bool parse_prerelease(const std::string &raw, int64_t &adjust) {
    std::string lower = raw;
    for (char &c : lower) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    static const struct {
        const char *word;
        int weight;
    } kKeywords[] = {{"alpha", 300}, {"beta", 200}, {"rc", 100}};
    for (const auto &k : kKeywords) {
        size_t at = lower.find(k.word);
        if (at == std::string::npos) continue;
        int32_t pre = 0;
        if (at > 1 || !parse_pre_num(raw.substr(at + strlen(k.word)), pre)) return false;
        adjust = -k.weight + pre;
        return true;
    }
    return false;
}
}  // namespace

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum) {
    ACLSIM_COUNT("aclsysGetVersionNum");
    aclError rc = ACL_SUCCESS;
    if (pkgName == nullptr || versionNum == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionNum", "pkgName or versionNum is NULL");
    } else {
        // CalculateVersionNum (hicann/runtime src/acl/aclrt_impl/acl.cpp): X.Y.Z, then nothing
        // or a prerelease part; anything else 500000.
        const std::string v = package_version(pkgName);
        int64_t base = 0, adjust = 0;
        size_t end = 0;
        if (v.empty()) {
            rc = fail(ACL_ERROR_INVALID_FILE, "aclsysGetVersionNum", fmt("version file of %s missing", pkgName));
        } else if (!parse_base_version(v, base, end) || (end < v.size() && !parse_prerelease(v.substr(end), adjust))) {
            rc = fail(ACL_ERROR_INTERNAL_ERROR, "aclsysGetVersionNum",
                      fmt("version \"%s\" is not X.Y.Z[prerelease]", v.c_str()));
        } else {
            *versionNum = static_cast<int32_t>(base + adjust);
        }
    }
    ACLSIM_TRACE("aclsysGetVersionNum", fmt("\"%s\", %p", pkgName ? pkgName : "(null)", static_cast<void *>(versionNum)),
          rc);
    return rc;
}

// ---- simulator-only hooks ----

uint64_t aclsimGetCallCount(const char *name) {
    if (name == nullptr) return 0;
    uint64_t n = 0;  // a name may have several counters (call sites); their sum
    for (CallCounter *c = first_counter(); c != nullptr; c = c->next)
        if (strcmp(c->name, name) == 0) n += c->calls.load(std::memory_order_relaxed);
    return n;
}

void aclsimResetCallCounts(void) {
    for (CallCounter *c = first_counter(); c != nullptr; c = c->next) c->calls.store(0, std::memory_order_relaxed);
}

void *aclsimDeviceToHost(const void *devPtr) {
    uintptr_t d = reinterpret_cast<uintptr_t>(devPtr);
    if (d == 0) return nullptr;
    std::lock_guard<std::mutex> g(g_mu);
    const Registration *r = find_by_device_address_locked(d);
    return r != nullptr ? reinterpret_cast<void *>(r->base + (d - r->dev_addr)) : nullptr;
}

int aclsimQueryMemory(const void *addr, size_t len, aclsimMemInfo *info) {
    if (info == nullptr) return 0;
    *info = aclsimMemInfo{ACLSIM_MEM_UNKNOWN, -1, 0, 0, 0, -1};
    uintptr_t p = reinterpret_cast<uintptr_t>(addr);
    size_t n = len == 0 ? 1 : len;
    std::lock_guard<std::mutex> g(g_mu);
    uintptr_t vbase = 0;
    if (const VmMapping *m = find_vm_map_locked(p, &vbase)) {
        if (n > m->size - (p - vbase)) return 0;
        *info = aclsimMemInfo{ACLSIM_MEM_DEVICE_VMM, m->phys->device, static_cast<int>(m->phys->page), vbase, m->size,
                              m->phys->fd};
        return 1;
    }
    const struct {
        std::map<uintptr_t, Allocation> *allocs;
        int kind;
    } tables[] = {{&st().dev_allocs, ACLSIM_MEM_DEVICE}, {&st().host_allocs, ACLSIM_MEM_HOST}};
    for (const auto &t : tables) {
        auto it = t.allocs->upper_bound(p);
        if (it == t.allocs->begin()) continue;
        --it;
        const Allocation &a = it->second;
        if (p - it->first >= a.len) continue;
        if (n > a.len - (p - it->first)) return 0;
        int page = 0;
        if (t.kind == ACLSIM_MEM_DEVICE) {
            uint32_t k = a.policy & 0xffu;
            page = (k == ACL_MEM_MALLOC_NORMAL_ONLY || k == ACL_MEM_MALLOC_NORMAL_ONLY_P2P) ? 0
                   : (k == ACL_MEM_MALLOC_HUGE1G_ONLY || k == ACL_MEM_MALLOC_HUGE1G_ONLY_P2P) ? 2
                                                                                          : 1;
        }
        *info = aclsimMemInfo{t.kind, a.device, page, it->first, a.len, -1};
        return 1;
    }
    return 0;
}

void aclsimNoteCall(const char *name, const char *args, long long code) {
    if (name == nullptr) return;
    counter_named(name).calls.fetch_add(1, std::memory_order_relaxed);
    ACLSIM_TRACE(name, args ? args : "", code);
}

int aclsimTraceEnabled(void) { return trace_enabled() ? 1 : 0; }

}  // extern "C"
