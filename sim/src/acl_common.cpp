// libacl_rt.so of the simulator: the runtime's state and the helpers every ACL source file
// shares (declared in acl_internal.h).
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl_internal.h"
#include "driver/ascend_hal.h"

// the vendor runtime's weak reference (npu_driver_base.hpp)
extern "C" bool halSupportFeature(uint32_t devId, drvFeature_t type) __attribute__((weak));
#include "aclsim.h"
#include "sim_format.h"

namespace aclsim {

std::mutex g_mu;

State &st() {
    static State *s = new State;  // never destroyed: usable from atexit handlers and threads
    return *s;
}

thread_local Context *t_ctx = nullptr;
thread_local std::string t_err;

namespace {
void atfork_prepare() { g_mu.lock(); }
void atfork_parent() { g_mu.unlock(); }
void atfork_child() { g_mu.unlock(); }

__attribute__((constructor)) void aclsim_init_fork_handlers() {
    (void)st();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Helpers: formatting, counting, tracing, error messages
// ---------------------------------------------------------------------------------------------

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    std::string out = aclsim_format::VFormat(f, ap);
    va_end(ap);
    return out;
}

namespace {
std::atomic<CallCounter *> g_counters{nullptr};
}  // namespace

CallCounter::CallCounter(const char *n) : name(n) {
    CallCounter *head = g_counters.load(std::memory_order_relaxed);
    do {
        next = head;
    } while (!g_counters.compare_exchange_weak(head, this, std::memory_order_release, std::memory_order_relaxed));
}

CallCounter *first_counter() { return g_counters.load(std::memory_order_acquire); }

namespace {
CallCounter *find_counter(const char *name) {
    for (CallCounter *c = first_counter(); c != nullptr; c = c->next)
        if (strcmp(c->name, name) == 0) return c;
    return nullptr;
}
}  // namespace

CallCounter &counter_named(const char *name) {
    if (CallCounter *c = find_counter(name)) return *c;
    static std::mutex made_mu;  // serialises making counters, so that a name gets one
    std::lock_guard<std::mutex> g(made_mu);
    if (CallCounter *c = find_counter(name)) return *c;
    return *new CallCounter(strdup(name));
}

bool trace_enabled() {
    static const bool on = [] {
        const char *e = getenv("ACLSIM_TRACE");
        return e != nullptr && strcmp(e, "1") == 0;
    }();
    return on;
}

void write_stderr(const std::string &s) {
    const char *p = s.data();
    size_t left = s.size();
    while (left > 0) {
        ssize_t w = write(2, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        p += w;
        left -= static_cast<size_t>(w);
    }
}

void trace_line(const char *name, const std::string &args, const std::string &result) {
    write_stderr("[aclsim] " + std::string(name) + "(" + args + ") -> " + result + "\n");
}

void trace(const char *name, const std::string &args, long long code) {
    ACLSIM_TRACE_LINE(name, args, std::to_string(code));
}

aclError fail(aclError code, const char *api, const std::string &why) {
    t_err = fmt("%s failed, error code %d: %s", api, code, why.c_str());
    return code;
}

aclError fail_raw(aclError code, const std::string &msg) {
    t_err = msg;
    return code;
}

const char *intern(const std::string &s) {
    std::lock_guard<std::mutex> g(g_mu);
    return st().interned.insert(s).first->c_str();
}

// ---------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------

uint32_t device_count() {
    const char *e = getenv("ACLSIM_DEVICE_COUNT");
    if (e != nullptr && *e != '\0') {
        char *end = nullptr;
        unsigned long v = strtoul(e, &end, 10);
        if (end != nullptr && *end == '\0' && v > 0 && v <= 64) return static_cast<uint32_t>(v);
    }
    return 8;
}

// NULL when ACLSIM_SOC_NAME is set to the empty string.
const char *soc_name_raw() {
    const char *e = getenv("ACLSIM_SOC_NAME");
    if (e == nullptr) return "Ascend910B1";
    if (*e == '\0') return nullptr;
    return e;
}

enum class Family { A2, A3, P950PR, P950DT, A200I500A2, Inference, Training, Unknown };

struct SocEntry {
    const char *name;
    Family family;
};

// Product table (the vendor's documented interface), kept as data. Exact names; the 950 parts by prefix.
const SocEntry kSocTable[] = {
    {"Ascend910B1", Family::A2},        {"Ascend910B2", Family::A2},
    {"Ascend910B2C", Family::A2},       {"Ascend910B3", Family::A2},
    {"Ascend910B4", Family::A2},        {"Ascend910B4-1", Family::A2},
    {"Ascend910_9362", Family::A3},     {"Ascend910_9363", Family::A3},
    {"Ascend910_9372", Family::A3},     {"Ascend910_9381", Family::A3},
    {"Ascend910_9382", Family::A3},     {"Ascend910_9391", Family::A3},
    {"Ascend910_9392", Family::A3},     {"Ascend310B1", Family::A200I500A2},
    {"Ascend310B2", Family::A200I500A2}, {"Ascend310B3", Family::A200I500A2},
    {"Ascend310B4", Family::A200I500A2}, {"Ascend310P1", Family::Inference},
    {"Ascend310P3", Family::Inference}, {"Ascend310P5", Family::Inference},
    {"Ascend310P7", Family::Inference}, {"Ascend910A", Family::Training},
    {"Ascend910ProA", Family::Training}, {"Ascend910PremiumA", Family::Training},
    {"Ascend910B", Family::Training},   {"Ascend910ProB", Family::Training},
};

const struct {
    const char *prefix;
    Family family;
} kSocPrefixes[] = {
    {"Ascend950PR_", Family::P950PR},
    {"Ascend950DT_", Family::P950DT},
};

Family soc_family(const char *soc) {
    if (soc == nullptr) return Family::Unknown;
    for (const auto &e : kSocTable)
        if (strcmp(e.name, soc) == 0) return e.family;
    for (const auto &p : kSocPrefixes)
        if (strncmp(p.prefix, soc, strlen(p.prefix)) == 0) return p.family;
    return Family::Unknown;
}

// Host registration is a per-chip feature (RT_FEATURE_MEM_HOST_REGISTER in the vendor's
// src/runtime/config/*/dev_info_reg.cc): the cloud chip (training series, config/cloud), A2/A3
// (config/910_B_93) and the 950 parts (config/950) have it; the inference parts (config/dc) and
// the 200I/500 A2 parts (config/mini_v3) do not. The code wins over the product documentation,
// which lists the training series as unsupported. An unknown SoC string is treated as supported.
bool soc_supports_host_register() {
    switch (soc_family(soc_name_raw())) {
        case Family::A200I500A2:
        case Family::Inference:
            return false;
        default:
            return true;
    }
}

size_t host_page_size() {
    const char *e = getenv("ACLSIM_HOST_PAGE_SIZE");
    if (e != nullptr && *e != '\0') {
        char *end = nullptr;
        unsigned long v = strtoul(e, &end, 0);
        if (end != nullptr && *end == '\0' && v >= 4096 && (v & (v - 1)) == 0) return v;
    }
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<size_t>(p) : 4096;
}

size_t env_size(const char *name, size_t dflt) {
    const char *e = getenv(name);
    if (e == nullptr || *e == '\0') return dflt;
    char *end = nullptr;
    unsigned long long v = strtoull(e, &end, 0);
    if (end == nullptr || *end != '\0') return dflt;
    return static_cast<size_t>(v);
}

// Offset of aclrtMallocHost's returned pointer into its page-aligned mapping: the vendor only
// guarantees 64-byte alignment. A multiple of 64 below the page size, else 0.
size_t malloc_host_offset() {
    size_t off = env_size("ACLSIM_MALLOC_HOST_OFFSET", 0);
    return (off % 64 == 0 && off < host_page_size()) ? off : 0;
}

std::string kernel_release() {
    const char *e = getenv("ACLSIM_KERNEL_RELEASE");
    if (e != nullptr && *e != '\0') return e;
    struct utsname u;
    if (uname(&u) == 0) return u.release;
    return "0.0";
}

std::vector<unsigned long> parse_release(const std::string &s) {
    std::vector<unsigned long> v;
    size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        unsigned long n = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') n = n * 10 + static_cast<unsigned long>(s[i++] - '0');
        v.push_back(n);
        if (i < s.size() && s[i] == '.' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9')
            i++;
        else
            break;
    }
    return v;
}

std::string pageable_kernel_max() {
    const char *e = getenv("ACLSIM_PAGEABLE_KERNEL_MAX");
    if (e != nullptr && *e != '\0') return e;
    return "5.10";
}

// True when the release is <= the threshold, compared on the threshold's components
// ("5.10.0-60.oe2203" <= "5.10"; "5.4" <= "5.10"; "6.1" > "5.10").
bool kernel_is_old(const std::string &rel, const std::string &thr) {
    std::vector<unsigned long> r = parse_release(rel), t = parse_release(thr);
    if (t.empty()) return false;
    for (size_t i = 0; i < t.size(); i++) {
        unsigned long x = i < r.size() ? r[i] : 0;
        if (x < t[i]) return true;
        if (x > t[i]) return false;
    }
    return true;
}


bool driver_at_least(unsigned major, unsigned minor) {
    const char *e = getenv("ACLSIM_DRIVER_VERSION");
    unsigned long ma = 0, mi = 0;
    if (sscanf(e != nullptr ? e : "25.3.rc1", "%lu.%lu", &ma, &mi) < 2) return false;
    return ma > major || (ma == major && mi >= minor);
}

namespace {
// "1"/"0" forces a driver feature; anything else (unset): the default.
bool feature_setting(const char *name, bool dflt) {
    const char *e = getenv(name);
    if (e != nullptr && strcmp(e, "1") == 0) return true;
    if (e != nullptr && strcmp(e, "0") == 0) return false;
    return dflt;
}
}  // namespace

// The release profile (ACLSIM_CANN_VERSION, default the install root's release: 9.1.0, the release
// users run, or 9.2.0 in the 9.2.0 root): the vendor's master after 9.1 (9.2.0 betas on) differs
// from 9.1.0 (hicann/runtime tag v9.1.0).
const char *cann_version() {
    const char *e = getenv("ACLSIM_CANN_VERSION");
    return e != nullptr ? e : ACLSIM_DEFAULT_CANN_VERSION;
}

bool cann_after_9_1() {
    unsigned long ma = 0, mi = 0;
    if (sscanf(cann_version(), "%lu.%lu", &ma, &mi) < 2) return false;
    return ma > 9 || (ma == 9 && mi > 1);
}

namespace {
bool driver_pin_feature() { return feature_setting("ACLSIM_PIN_REGISTER", driver_at_least(26, 0)); }
}  // namespace

// The simulated driver's halSupportFeature (libascend_hal.so forwards to it): the
// pinned-register feature (13, FEATURE_SVM_MEM_REGISTER_HOST_PINNED) by ACLSIM_PIN_REGISTER;
// no other feature.
extern "C" int32_t aclsim_hal_support_feature(uint32_t devid, int32_t type) {
    (void)devid;
    return type == FEATURE_SVM_MEM_REGISTER_HOST_PINNED && driver_pin_feature() ? 1 : 0;
}

// The driver path of host registration: only a runtime after 9.1 asks the driver for the
// feature (runtime 71a3ea667; 9.1.0 always uses its own tables, api_impl.cc:2415-2446), as the
// vendor's runtime does: halSupportFeature(device, FEATURE_SVM_MEM_REGISTER_HOST_PINNED), a weak
// reference into the driver's library (npu_driver.cc CheckIsSupportFeature: a driver without the
// function has no feature). Asked at every use, not cached at device open as the vendor does, so
// that a test may change ACLSIM_PIN_REGISTER between cases.
bool pin_register_supported() {
    if (!cann_after_9_1() || &halSupportFeature == nullptr) return false;
    int32_t dev = current_device();
    return halSupportFeature(static_cast<uint32_t>(dev < 0 ? 0 : dev), FEATURE_SVM_MEM_REGISTER_HOST_PINNED);
}

// Default: with the driver's pinned-register feature (a driver path without the query would
// lose every device pointer: the runtime's tables are empty there).
bool devptr_query_supported() { return feature_setting("ACLSIM_DEVPTR_QUERY", driver_pin_feature()); }

// ---------------------------------------------------------------------------------------------
// Injected answers: a queue per internal call name. `g_any_answer` keeps the common path (no
// injection ever) free of the lock.
// ---------------------------------------------------------------------------------------------

namespace {
std::mutex g_answer_mu;
std::atomic<bool> g_any_answer{false};
std::map<std::string, std::vector<int32_t>> &answers() {
    static auto *m = new std::map<std::string, std::vector<int32_t>>;
    return *m;
}
std::map<std::string, int32_t> &stubs() {
    static auto *m = new std::map<std::string, int32_t>;
    return *m;
}
const char *const kInjectable[] = {
    "rtsHostRegister",         "rtHostRegisterV2",   "rtsHostUnregister",        "rtHostGetDevicePointer",
    "rtsMallocHost",           "rtFreeHost",         "rtsPointerGetAttributes",  "rtHostMemMapCapabilities",
    "rtDeviceResetForce",      "rtDeviceReset",      "halHostRegister",    "halHostUnregister",        "halMemHostGetDevPointer",
    "halHostRegisterCapabilities",
};
}  // namespace

bool take_answer(const char *call, int32_t *code) {
    if (!g_any_answer.load(std::memory_order_acquire)) return false;
    std::lock_guard<std::mutex> g(g_answer_mu);
    auto it = answers().find(call);
    if (it == answers().end() || it->second.empty()) {
        auto k = stubs().find(call);
        if (k == stubs().end()) return false;
        *code = k->second;
        return true;
    }
    *code = it->second.front();
    it->second.erase(it->second.begin());
    return true;
}

bool runtime_answer(const char *call, const char *api, aclError *rc) {
    int32_t code = 0;
    if (!take_answer(call, &code)) return false;
    *rc = code;
    if (code != ACL_SUCCESS) fail(code, api, fmt("%s answered %d (injected)", call, code));
    return true;
}

aclError drv_to_acl(int32_t drv) {
    switch (drv) {
        case 0:
            return ACL_SUCCESS;
        case kDrvInvalidValue:
            return ACL_ERROR_RT_PARAM_INVALID;
        case 6:  // DRV_ERROR_OUT_OF_MEMORY
            return ACL_ERROR_RT_MEMORY_ALLOCATION;
        case kDrvNotSupport:
            return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
        default:
            return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
    }
}

}  // namespace aclsim

namespace aclsim {
namespace {
int add_answer(const char *call, int32_t code, bool sticky) {
    if (call == nullptr) return -1;
    bool known = false;
    for (const char *k : kInjectable) known = known || strcmp(k, call) == 0;
    if (!known) return -1;
    std::lock_guard<std::mutex> g(g_answer_mu);
    if (sticky)
        stubs()[call] = code;
    else
        answers()[call].push_back(code);
    g_any_answer.store(true, std::memory_order_release);
    return 0;
}
}  // namespace
}  // namespace aclsim

extern "C" int aclsimInjectAnswer(const char *call, int32_t code) { return aclsim::add_answer(call, code, false); }

extern "C" int aclsimStubAnswer(const char *call, int32_t code) { return aclsim::add_answer(call, code, true); }

extern "C" void aclsimClearAnswers(void) {
    std::lock_guard<std::mutex> g(aclsim::g_answer_mu);
    aclsim::answers().clear();
    aclsim::stubs().clear();
}

namespace aclsim {


// ---------------------------------------------------------------------------------------------
// Lookups (call with g_mu held)
// ---------------------------------------------------------------------------------------------

bool ctx_valid_locked(Context *c) { return c != nullptr && c->alive && st().contexts.count(c) != 0; }

int32_t current_device_locked() { return ctx_valid_locked(t_ctx) ? t_ctx->device : -1; }

// The current device of the calling thread, or -1 without a (live) current context.
int32_t current_device() {
    Context *c = t_ctx;
    return c != nullptr && c->alive.load(std::memory_order_acquire) ? c->device : -1;
}

const Registration *find_containing_locked(int32_t dev, uintptr_t p) {
    auto dit = st().regs.find(dev);
    if (dit == st().regs.end()) return nullptr;
    auto &m = dit->second;
    auto it = m.upper_bound(p);
    if (it == m.begin()) return nullptr;
    --it;
    if (p - it->second.base < it->second.size) return &it->second;
    return nullptr;
}

const Registration *find_overlap_locked(int32_t dev, uintptr_t base, uint64_t size) {
    auto dit = st().regs.find(dev);
    if (dit == st().regs.end()) return nullptr;
    auto &m = dit->second;
    uintptr_t end = base + size;
    auto it = m.lower_bound(end);
    if (it == m.begin()) return nullptr;
    --it;
    if (it->second.base + it->second.size > base) return &it->second;
    return nullptr;
}

bool in_malloc_host_locked(uintptr_t base, uint64_t size) {
    auto &m = st().host_allocs;
    auto it = m.upper_bound(base);
    if (it == m.begin()) return false;
    --it;
    return base - it->first < it->second.len && size <= it->second.len - (base - it->first);
}

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

const Registration *find_by_device_address_locked(uintptr_t d) {
    for (const auto &dev : st().regs)
        for (const auto &kv : dev.second) {
            const Registration &r = kv.second;
            if (r.dev_addr != 0 && d >= r.dev_addr && d - r.dev_addr < r.size) return &r;
        }
    return nullptr;
}

bool in_device_range_locked(uintptr_t d) {
    auto &m = st().dev_ranges;
    auto it = m.upper_bound(d);
    if (it == m.begin()) return false;
    --it;
    return d - it->first < it->second;
}

const VmMapping *find_vm_map_locked(uintptr_t p, uintptr_t *base) {
    auto &m = st().vm_maps;
    auto it = m.upper_bound(p);
    if (it == m.begin()) return nullptr;
    --it;
    if (p - it->first >= it->second.size) return nullptr;
    if (base != nullptr) *base = it->first;
    return &it->second;
}

}  // namespace aclsim
