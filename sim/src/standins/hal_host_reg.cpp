// libascend_hal.so of the simulator: the driver's halHostRegister/halHostUnregister as an
// application calls them directly (LMCache-Ascend on drivers before 25), and halSupportFeature,
// which the runtime asks. The simulated driver lives in libacl_rt.so (src/acl_host_reg.cpp),
// whose table these share with the ACL calls. As the vendor's, this library does not need the
// ACL runtime; the runtime needs it (libacl_rt.so links it, as the vendor's runtime links the
// driver's): the simulated driver is reached by weak references, resolved when libacl_rt.so is
// loaded (always, but in a program that links this library alone: then the driver has nothing).
#include <cstdint>

#include "driver/ascend_hal.h"

extern "C" int32_t aclsim_hal_host_register(void *src, uint64_t size, uint32_t flag, uint32_t devid, void **dst)
    __attribute__((weak));
extern "C" int32_t aclsim_hal_host_unregister(void *src, uint32_t devid) __attribute__((weak));
extern "C" int32_t aclsim_hal_support_feature(uint32_t devid, int32_t type) __attribute__((weak));

extern "C" drvError_t halHostRegister(void *srcPtr, UINT64 size, UINT32 flag, UINT32 devid, void **dstPtr) {
    if (aclsim_hal_host_register == nullptr) return DRV_ERROR_NOT_SUPPORT;
    return static_cast<drvError_t>(aclsim_hal_host_register(srcPtr, size, flag, devid, dstPtr));
}

extern "C" drvError_t halHostUnregister(void *srcPtr, UINT32 devid) {
    if (aclsim_hal_host_unregister == nullptr) return DRV_ERROR_NOT_SUPPORT;
    return static_cast<drvError_t>(aclsim_hal_host_unregister(srcPtr, devid));
}

extern "C" bool halSupportFeature(uint32_t devId, drvFeature_t type) {
    return aclsim_hal_support_feature != nullptr && aclsim_hal_support_feature(devId, type) != 0;
}
