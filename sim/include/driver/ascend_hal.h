/* The simulator's stand-in of the driver's HAL header (libascend_hal.so): the host-registration
 * calls an application makes directly (LMCache-Ascend on drivers before 25) and the feature
 * query the runtime makes, with the vendor's prototypes (ascend_hal_base.h) and the values of
 * the vendor's enums drvRegisterTpye and drvFeature_t (ascend_hal_define.h). C99 and C++. */
#include <stdbool.h>
#ifndef ACLSIM_DRIVER_ASCEND_HAL_H
#define ACLSIM_DRIVER_ASCEND_HAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t UINT32;
typedef uint64_t UINT64;

/* the driver's error numbers this stand-in answers with */
typedef enum tagDrvError {
    DRV_ERROR_NONE = 0,
    DRV_ERROR_INVALID_VALUE = 3,
    DRV_ERROR_OUT_OF_MEMORY = 6,
    DRV_ERROR_NOT_EXIST = 11,
    DRV_ERROR_NOT_SUPPORT = 0xfffe
} drvError_t;

/* enables different options to be specified that affect the host register */
enum drvRegisterTpye {
    HOST_MEM_MAP_DEV = 0,
    HOST_SVM_MAP_DEV,
    DEV_SVM_MAP_HOST,
    HOST_MEM_MAP_DEV_PCIE_TH, /* host memory mapped to the device, accessed by PCIe pass-through */
    DEV_MEM_MAP_HOST,
    HOST_REGISTER_MAX_TPYE
};

/* the driver features this stand-in answers (the vendor's numbers; every other one: not supported) */
typedef enum tagDrvFeature {
    FEATURE_SVM_MEM_REGISTER_HOST_PINNED = 13, /* halHostRegister pins (MEM_REGISTER_HOST_PINNED) */
    FEATURE_MAX = 14
} drvFeature_t;

/* Whether the driver supports `type` for device `devId` (the runtime asks at device open: runtime
 * master RawDevice::InitRawDriver, FEATURE_SVM_MEM_REGISTER_HOST_PINNED for aclrtHostRegisterV2's
 * driver path). Simulated: ACLSIM_PIN_REGISTER, default from driver 26.0 (ACLSIM_DRIVER_VERSION). */
bool halSupportFeature(uint32_t devId, drvFeature_t type);

/* Map [srcPtr, srcPtr + size) (srcPtr page-aligned) for device `devid`; the device address in
 * *dstPtr. */
drvError_t halHostRegister(void *srcPtr, UINT64 size, UINT32 flag, UINT32 devid, void **dstPtr);
/* Unmap the registration whose base is srcPtr. */
drvError_t halHostUnregister(void *srcPtr, UINT32 devid);

#ifdef __cplusplus
}
#endif

#endif
