// libascend_hal.so of the simulator: the driver's halHostRegister/halHostUnregister as an
// application calls them directly (LMCache-Ascend on drivers before 25). The simulated driver
// lives in libacl_rt.so (src/acl_host_reg.cpp), whose table these share with the ACL calls.
#include <cstdint>

#include "driver/ascend_hal.h"

extern "C" int32_t aclsim_hal_host_register(void *src, uint64_t size, uint32_t flag, uint32_t devid, void **dst);
extern "C" int32_t aclsim_hal_host_unregister(void *src, uint32_t devid);

extern "C" drvError_t halHostRegister(void *srcPtr, UINT64 size, UINT32 flag, UINT32 devid, void **dstPtr) {
    return static_cast<drvError_t>(aclsim_hal_host_register(srcPtr, size, flag, devid, dstPtr));
}

extern "C" drvError_t halHostUnregister(void *srcPtr, UINT32 devid) {
    return static_cast<drvError_t>(aclsim_hal_host_unregister(srcPtr, devid));
}
