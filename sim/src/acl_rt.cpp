// libacl_rt.so of the simulator: the whole ACL runtime state and every ACL entry point.
//
// Behaviour follows the vendor's public documentation (the runtime's own checks,
// then the "driver"'s). Every exported function is also exported as `aclsim_impl_<name>`
// (see acl_api.def) for the forwarding stubs of libascendcl.so.
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
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
#include "sim_format.h"

namespace {

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

struct Context {
    int32_t device;
    bool is_default;
    bool alive;
};

struct Registration {
    uintptr_t base;
    uint64_t size;
    uint32_t flags;     // V2 flags; V1 registrations are recorded as ACL_HOST_REG_MAPPED
    uintptr_t dev_addr; // 0 unless MAPPED
};

struct Allocation {
    size_t len;          // usable bytes from the returned pointer (the key)
    uint32_t policy;     // aclrtMalloc policy as passed
    uintptr_t map_base;  // the mmap behind it
    size_t map_len;
};

struct State {
    bool initialized = false;
    std::map<int32_t, Context *> default_ctx;  // device -> default context
    std::map<int32_t, int> device_refs;        // aclrtSetDevice reference counts
    std::set<Context *> contexts;              // every context ever created (never freed)
    std::map<uintptr_t, Allocation> host_allocs;  // aclrtMallocHost base -> allocation
    std::map<uintptr_t, Allocation> dev_allocs;   // aclrtMalloc base -> allocation
    std::map<int32_t, std::map<uintptr_t, Registration>> regs;  // device -> base -> registration
    uintptr_t next_dev_addr = 0x7e0000000000ULL;
    std::map<std::string, uint64_t> counts;
    std::set<std::string> interned;
};

// The one mutex of the simulated ACL runtime. Never held while calling out of the library,
// while reading /proc, or while printing.
std::mutex g_mu;

State &st() {
    static State *s = new State;  // never destroyed: usable from atexit handlers and threads
    return *s;
}

thread_local Context *t_ctx = nullptr;
thread_local std::string t_err;

void atfork_prepare() { g_mu.lock(); }
void atfork_parent() { g_mu.unlock(); }
void atfork_child() { g_mu.unlock(); }

__attribute__((constructor)) void aclsim_init_fork_handlers() {
    (void)st();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

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

void count(const char *name) {
    std::lock_guard<std::mutex> g(g_mu);
    st().counts[name]++;
}

bool trace_enabled() {
    const char *e = getenv("ACLSIM_TRACE");
    return e != nullptr && strcmp(e, "1") == 0;
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
    if (!trace_enabled()) return;
    write_stderr("[aclsim] " + std::string(name) + "(" + args + ") -> " + result + "\n");
}

void trace(const char *name, const std::string &args, long long code) {
    trace_line(name, args, std::to_string(code));
}

aclError fail(aclError code, const char *api, const std::string &why) {
    t_err = fmt("%s failed, error code %d: %s", api, code, why.c_str());
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

// Host registration is supported on A2, A3, 950PR and 950DT (the later API reference);
// an unknown SoC string is treated as supported.
bool soc_supports_host_register() {
    switch (soc_family(soc_name_raw())) {
        case Family::A200I500A2:
        case Family::Inference:
        case Family::Training:
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

// The driver's view of [base, base+size): every page mapped, writable, not a regular file.
bool driver_range_ok(uintptr_t base, uint64_t size, std::string &why) {
    uintptr_t end = base + size;
    std::vector<MapEntry> maps = read_maps(false);
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
// Lookups (call with g_mu held)
// ---------------------------------------------------------------------------------------------

bool ctx_valid_locked(Context *c) { return c != nullptr && c->alive && st().contexts.count(c) != 0; }

// The current device of the calling thread, or -1 without a (live) current context.
int32_t current_device() {
    std::lock_guard<std::mutex> g(g_mu);
    if (!ctx_valid_locked(t_ctx)) return -1;
    return t_ctx->device;
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

// ---------------------------------------------------------------------------------------------
// Host registration core (shared by V1 and V2)
// ---------------------------------------------------------------------------------------------

aclError do_register(const char *api, void *ptr, uint64_t size, uint32_t flags, void **dev_out) {
    if (!soc_supports_host_register()) {
        const char *soc = soc_name_raw();
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                    fmt("host memory registration is not supported on %s", soc ? soc : "(unknown SoC)"));
    }
    int32_t dev = current_device();
    if (dev < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");

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

    std::lock_guard<std::mutex> g(g_mu);
    if (find_overlap_locked(dev, base, size) != nullptr)  // lost a race with another thread
        return fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, api, "range overlaps a registration");
    Registration r{base, size, flags, 0};
    if ((flags & ACL_HOST_REG_MAPPED) != 0) {
        r.dev_addr = st().next_dev_addr;
        st().next_dev_addr += round_up(size, 2u << 20) + (2u << 20);
    }
    st().regs[dev][base] = r;
    if (dev_out != nullptr) *dev_out = reinterpret_cast<void *>(r.dev_addr);
    return ACL_SUCCESS;
}

}  // namespace

// =============================================================================================
// Exported ACL API
// =============================================================================================

extern "C" {

aclError aclInit(const char *configPath) {
    count("aclInit");
    aclError rc = ACL_SUCCESS;
    struct stat sb;
    if (configPath != nullptr && *configPath != '\0' && stat(configPath, &sb) != 0) {
        rc = fail(ACL_ERROR_INVALID_FILE, "aclInit", fmt("config file %s cannot be read", configPath));
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (st().initialized)
            rc = ACL_ERROR_REPEAT_INITIALIZE;
        else
            st().initialized = true;
    }
    if (rc == ACL_ERROR_REPEAT_INITIALIZE) fail(rc, "aclInit", "aclInit was already called");
    trace("aclInit", configPath ? fmt("\"%s\"", configPath) : "NULL", rc);
    return rc;
}

aclError aclFinalize(void) {
    count("aclFinalize");
    aclError rc = ACL_SUCCESS;
    {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        if (!s.initialized) {
            rc = ACL_ERROR_REPEAT_FINALIZE;
        } else {
            s.initialized = false;
            for (Context *c : s.contexts) c->alive = false;
            s.default_ctx.clear();
            s.device_refs.clear();
            s.regs.clear();
        }
    }
    if (rc != ACL_SUCCESS) fail(rc, "aclFinalize", "aclFinalize without aclInit");
    t_ctx = nullptr;
    trace("aclFinalize", "", rc);
    return rc;
}

namespace {
// aclrtSetDevice/aclrtResetDevice preconditions: initialised, and a device that exists.
aclError device_state_error(const State &s, int32_t deviceId, uint32_t n) {
    if (!s.initialized) return ACL_ERROR_UNINITIALIZE;
    if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= n) return ACL_ERROR_RT_INVALID_DEVICEID;
    return ACL_SUCCESS;
}
}  // namespace

aclError aclrtSetDevice(int32_t deviceId) {
    count("aclrtSetDevice");
    aclError rc = ACL_SUCCESS;
    uint32_t n = device_count();
    {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        rc = device_state_error(s, deviceId, n);
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
    if (rc == ACL_ERROR_UNINITIALIZE) fail(rc, "aclrtSetDevice", "aclInit has not been called");
    if (rc == ACL_ERROR_RT_INVALID_DEVICEID)
        fail(rc, "aclrtSetDevice", fmt("device %d does not exist (%u devices)", deviceId, n));
    trace("aclrtSetDevice", fmt("%d", deviceId), rc);
    return rc;
}

aclError aclrtResetDevice(int32_t deviceId) {
    count("aclrtResetDevice");
    aclError rc = ACL_SUCCESS;
    uint32_t n = device_count();
    {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        rc = device_state_error(s, deviceId, n);
        if (rc == ACL_SUCCESS) {
            int &refs = s.device_refs[deviceId];
            if (refs > 0) refs--;
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
    if (rc != ACL_SUCCESS) fail(rc, "aclrtResetDevice", "invalid state or device id");
    trace("aclrtResetDevice", fmt("%d", deviceId), rc);
    return rc;
}

aclError aclrtGetDevice(int32_t *deviceId) {
    count("aclrtGetDevice");
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
    trace("aclrtGetDevice", fmt("%p", static_cast<void *>(deviceId)), rc);
    return rc;
}

aclError aclrtGetDeviceCount(uint32_t *countOut) {
    count("aclrtGetDeviceCount");
    aclError rc = ACL_SUCCESS;
    if (countOut == nullptr)
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count is NULL");
    else
        *countOut = device_count();
    trace("aclrtGetDeviceCount", fmt("%p", static_cast<void *>(countOut)), rc);
    return rc;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
    count("aclrtCreateContext");
    aclError rc = ACL_SUCCESS;
    uint32_t n = device_count();
    if (context == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext", "context is NULL");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        State &s = st();
        if (!s.initialized) {
            rc = ACL_ERROR_UNINITIALIZE;
        } else if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= n) {
            rc = ACL_ERROR_RT_INVALID_DEVICEID;
        } else {
            Context *c = new Context{deviceId, false, true};
            s.contexts.insert(c);
            t_ctx = c;
            *context = c;
        }
    }
    if (rc == ACL_ERROR_UNINITIALIZE) fail(rc, "aclrtCreateContext", "aclInit has not been called");
    if (rc == ACL_ERROR_RT_INVALID_DEVICEID) fail(rc, "aclrtCreateContext", "invalid device id");
    trace("aclrtCreateContext", fmt("%p, %d", static_cast<void *>(context), deviceId), rc);
    return rc;
}

aclError aclrtDestroyContext(aclrtContext context) {
    count("aclrtDestroyContext");
    aclError rc = ACL_SUCCESS;
    Context *c = static_cast<Context *>(context);
    if (c == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext", "context is NULL");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (!ctx_valid_locked(c) || c->is_default) {
            rc = ACL_ERROR_RT_PARAM_INVALID;
        } else {
            c->alive = false;
            if (t_ctx == c) t_ctx = nullptr;
        }
    }
    if (rc == ACL_ERROR_RT_PARAM_INVALID)
        fail(rc, "aclrtDestroyContext", "not a live context created by aclrtCreateContext");
    trace("aclrtDestroyContext", fmt("%p", context), rc);
    return rc;
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
    count("aclrtGetCurrentContext");
    aclError rc = ACL_SUCCESS;
    if (context == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext", "context is NULL");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (!ctx_valid_locked(t_ctx))
            rc = ACL_ERROR_RT_CONTEXT_NULL;
        else
            *context = t_ctx;
    }
    if (rc == ACL_ERROR_RT_CONTEXT_NULL)
        fail(rc, "aclrtGetCurrentContext", "no current context on the calling thread");
    trace("aclrtGetCurrentContext", fmt("%p", static_cast<void *>(context)), rc);
    return rc;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
    count("aclrtSetCurrentContext");
    aclError rc = ACL_SUCCESS;
    Context *c = static_cast<Context *>(context);
    if (c == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext", "context is NULL");
    } else {
        std::lock_guard<std::mutex> g(g_mu);
        if (!ctx_valid_locked(c))
            rc = ACL_ERROR_RT_PARAM_INVALID;
        else
            t_ctx = c;
    }
    if (rc == ACL_ERROR_RT_PARAM_INVALID) fail(rc, "aclrtSetCurrentContext", "not a live context");
    trace("aclrtSetCurrentContext", fmt("%p", context), rc);
    return rc;
}

const char *aclrtGetSocName(void) {
    count("aclrtGetSocName");
    const char *raw = soc_name_raw();
    const char *out = raw ? intern(raw) : nullptr;
    if (out == nullptr) fail(ACL_ERROR_INTERNAL_ERROR, "aclrtGetSocName", "the SoC name is unknown");
    trace_line("aclrtGetSocName", "", out ? fmt("\"%s\"", out) : "NULL");
    return out;
}

const char *aclGetRecentErrMsg(void) {
    count("aclGetRecentErrMsg");
    const char *out = t_err.empty() ? nullptr : t_err.c_str();
    trace_line("aclGetRecentErrMsg", "", out ? fmt("\"%s\"", out) : "NULL");
    return out;
}

namespace {
// The simulated version of a package: ACLSIM_DRIVER_VERSION for "driver", ACLSIM_CANN_VERSION
// for anything else (empty: the version file is missing).
const char *package_version(const char *pkgName) {
    bool driver = strcmp(pkgName, "driver") == 0;
    const char *v = getenv(driver ? "ACLSIM_DRIVER_VERSION" : "ACLSIM_CANN_VERSION");
    return v != nullptr ? v : (driver ? "25.3.rc1" : "8.5.0");
}
}  // namespace

aclError aclsysGetVersionStr(char *pkgName, char *versionStr) {
    count("aclsysGetVersionStr");
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
    trace("aclsysGetVersionStr", fmt("\"%s\", %p", pkgName ? pkgName : "(null)", static_cast<void *>(versionStr)),
          rc);
    return rc;
}

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum) {
    count("aclsysGetVersionNum");
    aclError rc = ACL_SUCCESS;
    if (pkgName == nullptr || versionNum == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionNum", "pkgName or versionNum is NULL");
    } else {
        const char *v = package_version(pkgName);
        // X.Y.Z[.M] | X.Y.rcN[.M] | X.Y.alphaN | X.Y.betaN
        unsigned long major = 0, minor = 0, patch = 0, pre = 0;
        long pre_base = 0;
        char tail[32] = {0};
        int n = sscanf(v, "%lu.%lu.%31s", &major, &minor, tail);
        if (n < 3) {
            rc = fail(ACL_ERROR_INVALID_FILE, "aclsysGetVersionNum", fmt("unparsable version \"%s\"", v));
        } else {
            if (strncasecmp(tail, "rc", 2) == 0) {
                pre_base = 100;
                pre = strtoul(tail + 2, nullptr, 10);
            } else if (strncasecmp(tail, "beta", 4) == 0) {
                pre_base = 200;
                pre = strtoul(tail + 4, nullptr, 10);
            } else if (strncasecmp(tail, "alpha", 5) == 0) {
                pre_base = 300;
                pre = strtoul(tail + 5, nullptr, 10);
            } else {
                patch = strtoul(tail, nullptr, 10);
            }
            long long num = static_cast<long long>(major) * 10000000LL + static_cast<long long>(minor) * 100000LL +
                            static_cast<long long>(patch) * 1000LL - pre_base + static_cast<long long>(pre);
            *versionNum = static_cast<int32_t>(num);
        }
    }
    trace("aclsysGetVersionNum", fmt("\"%s\", %p", pkgName ? pkgName : "(null)", static_cast<void *>(versionNum)),
          rc);
    return rc;
}

aclError aclrtMallocHost(void **hostPtr, size_t size) {
    count("aclrtMallocHost");
    aclError rc = ACL_SUCCESS;
    if (hostPtr == nullptr || size == 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost", hostPtr ? "size is 0" : "hostPtr is NULL");
    } else {
        size_t off = malloc_host_offset();
        size_t len = round_up(size + off, host_page_size());
        void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            rc = fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMallocHost", fmt("mmap of %zu bytes failed", len));
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
                st().host_allocs[user] = Allocation{len - off, 0, reinterpret_cast<uintptr_t>(p), len};
            }
            *hostPtr = reinterpret_cast<void *>(user);
        }
    }
    trace("aclrtMallocHost", fmt("%p, %zu", static_cast<void *>(hostPtr), size), rc);
    return rc;
}

aclError aclrtFreeHost(void *hostPtr) {
    count("aclrtFreeHost");
    aclError rc = ACL_SUCCESS;
    if (hostPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost", "hostPtr is NULL");
    } else {
        Allocation a{0, 0, 0, 0};
        {
            std::lock_guard<std::mutex> g(g_mu);
            auto it = st().host_allocs.find(reinterpret_cast<uintptr_t>(hostPtr));
            if (it != st().host_allocs.end()) {
                a = it->second;
                st().host_allocs.erase(it);
            }
        }
        if (a.map_len == 0)
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtFreeHost", "not a pointer returned by aclrtMallocHost");
        else
            munmap(reinterpret_cast<void *>(a.map_base), a.map_len);
    }
    trace("aclrtFreeHost", fmt("%p", hostPtr), rc);
    return rc;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    count("aclrtMalloc");
    aclError rc = ACL_SUCCESS;
    uint32_t pol = static_cast<uint32_t>(policy);
    if (devPtr == nullptr || size == 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc", devPtr ? "size is 0" : "devPtr is NULL");
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
            st().dev_allocs[p] = Allocation{len, pol, base, map_len};
            *devPtr = reinterpret_cast<void *>(p);
        }
    }
    trace("aclrtMalloc", fmt("%p, %zu, 0x%x", static_cast<void *>(devPtr), size, pol), rc);
    return rc;
}

aclError aclrtFree(void *devPtr) {
    count("aclrtFree");
    aclError rc = ACL_SUCCESS;
    if (devPtr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, "aclrtFree", "devPtr is NULL");
    } else {
        size_t len = 0;
        uintptr_t base = 0;
        {
            std::lock_guard<std::mutex> g(g_mu);
            auto it = st().dev_allocs.find(reinterpret_cast<uintptr_t>(devPtr));
            if (it != st().dev_allocs.end()) {
                len = it->second.map_len;
                base = it->second.map_base;
                st().dev_allocs.erase(it);
            }
        }
        if (len == 0)
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtFree", "not a pointer returned by aclrtMalloc");
        else
            munmap(reinterpret_cast<void *>(base), len);
    }
    trace("aclrtFree", fmt("%p", devPtr), rc);
    return rc;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    static const char api[] = "aclrtHostRegisterV2";
    count(api);
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
    trace(api, fmt("%p, %llu, 0x%x", ptr, static_cast<unsigned long long>(size), flag), rc);
    return rc;
}

aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr) {
    static const char api[] = "aclrtHostRegister";
    count(api);
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
    trace(api,
          fmt("%p, %llu, %u, %p", ptr, static_cast<unsigned long long>(size), t, static_cast<void *>(devPtr)), rc);
    return rc;
}

aclError aclrtHostUnregister(void *ptr) {
    static const char api[] = "aclrtHostUnregister";
    count(api);
    aclError rc = ACL_SUCCESS;
    if (ptr == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
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
    trace(api, fmt("%p", ptr), rc);
    return rc;
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag) {
    static const char api[] = "aclrtHostGetDevicePointer";
    count(api);
    aclError rc = ACL_SUCCESS;
    if (pHost == nullptr || pDevice == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, pHost ? "pDevice is NULL" : "pHost is NULL");
    } else if (flag != 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("flag must be 0, got %u", flag));
    } else if (!soc_supports_host_register()) {
        rc = fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api, "host memory registration is not supported on this SoC");
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
    trace(api, fmt("%p, %p, %u", pHost, static_cast<void *>(pDevice), flag), rc);
    return rc;
}

// ---- simulator-only hooks ----

uint64_t aclsimGetCallCount(const char *name) {
    if (name == nullptr) return 0;
    std::lock_guard<std::mutex> g(g_mu);
    auto it = st().counts.find(name);
    return it == st().counts.end() ? 0 : it->second;
}

void aclsimResetCallCounts(void) {
    std::lock_guard<std::mutex> g(g_mu);
    st().counts.clear();
}

void *aclsimDeviceToHost(const void *devPtr) {
    uintptr_t d = reinterpret_cast<uintptr_t>(devPtr);
    if (d == 0) return nullptr;
    std::lock_guard<std::mutex> g(g_mu);
    for (const auto &dev : st().regs)
        for (const auto &kv : dev.second) {
            const Registration &r = kv.second;
            if (r.dev_addr != 0 && d >= r.dev_addr && d - r.dev_addr < r.size)
                return reinterpret_cast<void *>(r.base + (d - r.dev_addr));
        }
    return nullptr;
}

void aclsimNoteCall(const char *name, const char *args, long long code) {
    if (name == nullptr) return;
    count(name);
    trace(name, args ? args : "", code);
}

// ---- the internal aliases used by libascendcl.so ----
#define ACLSIM_API(ret, name, params, args) ret aclsim_impl_##name params __attribute__((alias(#name)));
#include "acl_api.def"
#undef ACLSIM_API

}  // extern "C"
