/*
 * runtime/mem.h - stand-in of the vendor runtime's memory header (the part programs built
 * against the regcheck simulator use: rtPointerGetAttributes), implemented by the simulator's
 * libruntime.so. Names, values and layout from the vendor's public headers (hicann/runtime
 * pkg_inc/runtime/runtime/mem.h, mem_base.h, base.h); not the vendor's file.
 * Compiles as C99 and C++.
 */
#ifndef ACLSIM_RUNTIME_MEM_H_
#define ACLSIM_RUNTIME_MEM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLSIM_RT_ERROR_T_DEFINED
#define ACLSIM_RT_ERROR_T_DEFINED
typedef int32_t rtError_t;
#endif
#ifndef RT_ERROR_NONE
#define RT_ERROR_NONE 0
#endif

/* What kind of memory an address is (rtPointerAttributes_t.memoryType). */
typedef enum tagRtMemoryType {
    RT_MEMORY_TYPE_HOST = 1,   /* page-locked host memory of the runtime (aclrtMallocHost) */
    RT_MEMORY_TYPE_DEVICE = 2, /* device memory (aclrtMalloc, VMM mappings) */
    RT_MEMORY_TYPE_SVM = 3,
    RT_MEMORY_TYPE_DVPP = 4,
    RT_MEMORY_TYPE_USER = 5 /* memory of the user's own allocator (malloc...), unknown to the runtime */
} rtMemoryType_t;

/* Where it lives (rtPointerAttributes_t.locationType). */
typedef enum {
    RT_MEMORY_LOC_HOST = 0,
    RT_MEMORY_LOC_DEVICE,
    RT_MEMORY_LOC_UNREGISTERED, /* user memory that is not registered with the runtime */
    RT_MEMORY_LOC_MANAGED,
    RT_MEMORY_LOC_HOST_NUMA,
    RT_MEMORY_LOC_MAX
} rtMemLocationType;

typedef struct tagRtPointerAttributes {
    rtMemoryType_t memoryType;
    rtMemLocationType locationType;
    uint32_t deviceID; /* the device of device memory (the user's device id) */
    uint32_t pageSize; /* the page size of the memory, in bytes */
} rtPointerAttributes_t;

/*
 * The attributes of the memory `ptr` points into. aclrtMalloc and mapped VMM memory: DEVICE,
 * location DEVICE; aclrtMallocHost memory: HOST, location HOST; any other address: USER, location
 * UNREGISTERED (the vendor says HOST while it lies in a host registration; the simulator does not).
 * 0 on success; 107000 (ACL_ERROR_RT_PARAM_INVALID) when `attributes` or `ptr` is NULL.
 * The vendor marks it deprecated in favour of aclrtPointerGetAttributes.
 */
rtError_t rtPointerGetAttributes(rtPointerAttributes_t *attributes, const void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_RUNTIME_MEM_H_ */
