/*
 * aclsim.h - hooks that exist only in the regcheck simulator of the vendor libraries.
 * Exported by libacl_rt.so and (forwarding) by libascendcl.so. Compiles as C99 and C++.
 */
#ifndef ACLSIM_ACLSIM_H_
#define ACLSIM_ACLSIM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of calls the simulator received for the API `name` in this process
 * (ACL names such as "aclrtHostRegisterV2", HIXL names such as "Hixl::RegisterMem"
 * or "HixlCSClientConnect"), and the simulated driver's calls "halHostRegister",
 * "halHostUnregister" (driver path), "halHostUnregisterEx" (runtime-table path),
 * "halMemHostGetDevPointer" (made by the runtime, as the vendor's makes
 * them). NULL or unknown name: 0. */
uint64_t aclsimGetCallCount(const char *name);

/* Sets every call counter back to 0. */
void aclsimResetCallCounts(void);

/* Host address behind a simulated device address (a MAPPED registration's device
 * address, or any address inside one); NULL when `devPtr` is not such an address. */
void *aclsimDeviceToHost(const void *devPtr);

/* What the simulated runtime knows of an address (aclsimQueryMemory). */
typedef enum aclsimMemKind {
    ACLSIM_MEM_UNKNOWN = 0,    /* not memory the simulated runtime handed out */
    ACLSIM_MEM_DEVICE = 1,     /* aclrtMalloc (simulated device memory) */
    ACLSIM_MEM_DEVICE_VMM = 2, /* mapped with aclrtMapMem (simulated device memory) */
    ACLSIM_MEM_HOST = 3        /* aclrtMallocHost (page-locked host memory) */
} aclsimMemKind;

typedef struct aclsimMemInfo {
    int kind;          /* aclsimMemKind */
    int32_t device;    /* aclrtMalloc/aclrtMallocHost: the current device at the call (-1: none);
                          VMM: the physical allocation's location.id */
    int page_type;     /* device memory: 0 normal pages, 1 huge (2 MiB), 2 huge 1 GiB (the values
                          of the vendor's aclrtMemPgType); host memory: 0 */
    uintptr_t base;    /* start of the allocation or aclrtMapMem mapping containing the address */
    size_t size;       /* its usable size */
    int fd;            /* VMM: the memfd behind the mapping (file offset 0 at `base`); else -1 */
} aclsimMemInfo;

/* Describes the memory containing [addr, addr + len) (len 0 counts as 1) in *info and returns
 * 1 when that whole range lies inside one allocation of aclrtMalloc or aclrtMallocHost, or one
 * aclrtMapMem mapping; otherwise returns 0 with info->kind = ACLSIM_MEM_UNKNOWN. NULL info: 0. */
int aclsimQueryMemory(const void *addr, size_t len, aclsimMemInfo *info);

/* Internal: used by libcann_hixl.so to count and trace its entry points through the
 * same counters (`args` is the text between the parentheses of the trace line). */
void aclsimNoteCall(const char *name, const char *args, long long code);

/* Internal: 1 when ACLSIM_TRACE=1 (read once, at the simulator's first call), else 0; lets
 * libcann_hixl.so format a trace line's arguments only when it will be printed. */
int aclsimTraceEnabled(void);

/* Queues one answer for the next call of an internal function of the simulated runtime or
 * driver, so that a program can set up what the vendor's unit tests set up with mocks. `call`:
 * a runtime function ("rtsHostRegister", "rtHostRegisterV2", "rtsHostUnregister",
 * "rtHostGetDevicePointer", "rtsMallocHost", "rtFreeHost", "rtsPointerGetAttributes",
 * "rtHostMemMapCapabilities", "rtDeviceResetForce", "rtDeviceReset"): `code` is the ACL code it returns, after
 * the ACL layer's own checks, instead of running (0: success, outputs untouched); or a driver
 * function ("halHostRegister", "halHostUnregister", "halMemHostGetDevPointer",
 * "halHostRegisterCapabilities"): `code` is the driver's error (DRV_ERROR_*: 3 invalid value,
 * 7 internal, 11 not exist, 13 busy, 0xfffe not support), mapped as the vendor's runtime maps
 * it; 0 is a driver that accepts without checking (a registration's device address is then its
 * host address). Several answers for one name are used in order. Returns 0, or -1 for an
 * unknown name. */
int aclsimInjectAnswer(const char *call, int32_t code);

/* The same answer for every later call of `call` (a mock's `.stubs().will(returnValue(code))`),
 * used once the queued answers of that name are used up. Returns 0, or -1 for an unknown name. */
int aclsimStubAnswer(const char *call, int32_t code);

/* Drops every queued and standing answer. */
void aclsimClearAnswers(void);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLSIM_H_ */
