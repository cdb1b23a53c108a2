// Internal to libacl_rt.so: the simulated runtime's state and the helpers its source files
// share (acl_common.cpp defines them). Not installed.
#ifndef ACLSIM_SRC_ACL_INTERNAL_H_
#define ACLSIM_SRC_ACL_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl_rt.h"

namespace aclsim {

// ---- state ----

// Contexts are never freed, and a thread's current context (t_ctx) is only ever set to one of
// them, so a thread may read its own t_ctx and `alive` without g_mu.
struct Context {
    int32_t device;
    bool is_default;
    std::atomic<bool> alive;
};

struct Registration {
    uintptr_t base;
    uint64_t size;
    uint32_t flags;      // V2 flags; V1 registrations are recorded as ACL_HOST_REG_MAPPED
    uintptr_t dev_addr;  // 0 unless MAPPED
};

struct Allocation {
    size_t len;          // usable bytes from the returned pointer (the key)
    uint32_t policy;     // aclrtMalloc policy as passed
    uintptr_t map_base;  // the mmap behind it
    size_t map_len;
    int32_t device;      // the current device at the allocation
};

// Page type of simulated device memory (the values of the vendor's aclrtMemPgType).
enum class PageType : int { Normal = 0, Huge = 1, Huge1G = 2 };

// aclrtMallocPhysical: a memfd of `size` bytes (so one handle can be mapped at several
// addresses, all seeing the same bytes).
struct PhysMem {
    int fd;
    size_t size;
    int32_t device;          // location.id
    uint32_t location_type;  // aclrtMemLocationType
    uint32_t mem_attr;       // aclrtMemAttr as passed
    uint64_t reserve;
    PageType page;
    int mappings;            // live aclrtMapMem mappings of this handle
    bool released;           // aclrtFreePhysical called; the fd closes with the last mapping
};

// aclrtReserveMemAddress: a PROT_NONE range.
struct Reservation {
    size_t size;         // as asked (the key is the returned address)
    uintptr_t map_base;  // the mmap behind it (aligned inside)
    size_t map_len;
};

// aclrtMapMem: [base, base + size) of a reservation shows `phys`.
struct VmMapping {
    size_t size;
    PhysMem *phys;
};

struct State {
    bool initialized = false;
    bool finalized_once = false;               // aclFinalize succeeded at least once
    std::map<int32_t, Context *> default_ctx;  // device -> default context
    std::map<int32_t, int> device_refs;        // aclrtSetDevice reference counts
    std::set<Context *> contexts;              // every context ever created (never freed)
    std::map<uintptr_t, Allocation> host_allocs;  // aclrtMallocHost base -> allocation
    std::map<uintptr_t, Allocation> dev_allocs;   // aclrtMalloc base -> allocation
    // The simulated driver's registrations: device -> base -> registration.
    std::map<int32_t, std::map<uintptr_t, Registration>> regs;
    // The runtime's own process-wide tables (register_memory.cc), used when the driver lacks
    // the pinned-register feature: base -> size, and base -> {size, device address}.
    std::map<uintptr_t, uint64_t> rt_pinned;
    std::map<uintptr_t, std::pair<uint64_t, uintptr_t>> rt_mapped;
    // The simulated device address space of MAPPED registrations: PROT_NONE reservations of
    // this process (start -> length), never released, so no other memory is ever placed there
    // and a stale device address stays recognisable. Addresses are handed out from
    // [dev_next, dev_end) of the newest one.
    std::map<uintptr_t, size_t> dev_ranges;
    uintptr_t dev_next = 0, dev_end = 0;
    std::map<uintptr_t, Reservation> reservations;  // aclrtReserveMemAddress base -> range
    std::set<PhysMem *> phys;                       // live aclrtMallocPhysical handles
    std::map<uintptr_t, VmMapping> vm_maps;         // aclrtMapMem base -> mapping
    std::set<std::string> interned;
};

// The one mutex of the simulated ACL runtime. Never held while calling out of the library,
// while reading /proc, or while printing.
extern std::mutex g_mu;
State &st();
extern thread_local Context *t_ctx;
extern thread_local std::string t_err;

// ---- formatting, counting, tracing, error messages ----

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

// The calls of one entry point (or, for names that come from libcann_hixl.so, of one name):
// counted with a relaxed atomic increment, no lock. Every counter links itself once into a
// list that aclsimGetCallCount sums by name and aclsimResetCallCounts sets back to 0.
struct CallCounter {
    explicit CallCounter(const char *name);  // links itself into the list
    const char *const name;
    std::atomic<uint64_t> calls{0};
    CallCounter *next = nullptr;
};
CallCounter *first_counter();
// The counter of a name known only at run time (found or made; never freed).
CallCounter &counter_named(const char *name);
// Counts one call of `name`, a string constant of the call site.
#define ACLSIM_COUNT(name)                                                \
    do {                                                                  \
        static ::aclsim::CallCounter aclsim_counter_(name);               \
        aclsim_counter_.calls.fetch_add(1, std::memory_order_relaxed);    \
    } while (0)
void write_stderr(const std::string &s);
// ACLSIM_TRACE=1 (read once). The TRACE macros below format their arguments only when it is on,
// so an untraced call costs no formatting.
bool trace_enabled();
void trace_line(const char *name, const std::string &args, const std::string &result);
void trace(const char *name, const std::string &args, long long code);
#define ACLSIM_TRACE(name, args, code) \
    do {                                   \
        if (::aclsim::trace_enabled()) ::aclsim::trace(name, args, code); \
    } while (0)
#define ACLSIM_TRACE_LINE(name, args, result) \
    do {                                          \
        if (::aclsim::trace_enabled()) ::aclsim::trace_line(name, args, result); \
    } while (0)
// Records `why` as the thread's recent error message and returns `code`.
aclError fail(aclError code, const char *api, const std::string &why);
// Records `msg` as it is (the vendor's own message, e.g. EE1011, EE1018) and returns `code`.
aclError fail_raw(aclError code, const std::string &msg);
const char *intern(const std::string &s);

// ---- environment ----

uint32_t device_count();
const char *soc_name_raw();  // NULL when ACLSIM_SOC_NAME is set to the empty string
bool soc_supports_host_register();
size_t host_page_size();
size_t env_size(const char *name, size_t dflt);
size_t malloc_host_offset();
std::string kernel_release();
std::string pageable_kernel_max();
bool kernel_is_old(const std::string &rel, const std::string &thr);
// The simulated driver version (ACLSIM_DRIVER_VERSION, default 25.3.rc1) is at least major.minor.
bool driver_at_least(unsigned major, unsigned minor);
// The CANN release simulated (ACLSIM_CANN_VERSION, default the install root's release: "9.1.0", or "9.2.0" in the 9.2.0 root), and whether it is the
// vendor's master after 9.1 (the release profiles: sim/README.md).
const char *cann_version();
bool cann_after_9_1();
// The runtime takes the driver path of host registration: a runtime after 9.1 on a driver with
// FEATURE_SVM_MEM_REGISTER_HOST_PINNED (ACLSIM_PIN_REGISTER; default: driver >= 26.0).
bool pin_register_supported();
// The driver's halMemHostGetDevPointer with FEATURE_SVM_MEM_REGISTER_QUERY_AND_GET_ATTR
// (ACLSIM_DEVPTR_QUERY; default: pin_register_supported()).
bool devptr_query_supported();

// ---- injected answers (aclsimInjectAnswer) ----

// The next injected answer for the internal call `call` (a runtime rt* function or a driver hal*
// function), consumed; false when none is queued.
bool take_answer(const char *call, int32_t *code);
// The injected answer of the runtime call `call` in *rc (recorded as `api`'s error when it is
// one): true when there was one, and the simulated runtime is not to run.
bool runtime_answer(const char *call, const char *api, aclError *rc);
// The ACL code the runtime makes of a driver error (errcode_manage.cc; BUSY and NOT_EXIST are
// mapped by the callers).
aclError drv_to_acl(int32_t drv);
constexpr int32_t kDrvInvalidValue = 3, kDrvInnerErr = 7, kDrvNotExist = 11, kDrvBusy = 13,
                  kDrvNotSupport = 0xfffe;

// ---- lookups (the _locked ones with g_mu held) ----

bool ctx_valid_locked(Context *c);
int32_t current_device();  // -1 without a live current context (reads no shared state)
int32_t current_device_locked();
const Registration *find_containing_locked(int32_t dev, uintptr_t p);
const Registration *find_overlap_locked(int32_t dev, uintptr_t base, uint64_t size);
bool in_malloc_host_locked(uintptr_t base, uint64_t size);
// The MAPPED registration (any device) whose simulated device range contains d, or NULL.
const Registration *find_by_device_address_locked(uintptr_t d);
// d lies in the reserved simulated device address space (registered there or not).
bool in_device_range_locked(uintptr_t d);
// The aclrtMapMem mapping containing p, or NULL (its base in *base).
const VmMapping *find_vm_map_locked(uintptr_t p, uintptr_t *base);
size_t round_up(size_t v, size_t a);

// ---- shared bodies of entry points (the name `api` in messages) ----

aclError malloc_host(const char *api, void **hostPtr, size_t size);  // aclrtMallocHost
aclError free_host(const char *api, void *hostPtr);                  // aclrtFreeHost without the NULL check
aclError reset_device(const char *api, int32_t deviceId, bool force);  // aclrtResetDevice[Force]
// aclrtMemcpy's checks and copy (also aclrtMemcpyAsync's and aclrtMemcpyBatch's: the simulated
// streams run a copy when it is issued)
aclError memcpy_body(const char *api, void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);
// aclrtReserveMemAddress's checks and reservation (also aclrtReserveMemAddressNoUCMemory's)
aclError reserve_body(const char *api, void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags);

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace aclsim

#endif  // ACLSIM_SRC_ACL_INTERNAL_H_
