/*
 * acl/acl_rt.h - declarations of the Ascend ACL runtime functions implemented by the
 * regcheck SIMULATOR (sim/src). Written for this project from the public interface facts
 * (names, prototypes, numbers); it is not the vendor's header text. Compiles as C99 and C++.
 */
#ifndef ACLSIM_ACL_ACL_RT_H_
#define ACLSIM_ACL_ACL_RT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef void *aclrtContext;

/* ---- error codes (acl_base.h / acl_rt.h in the vendor product) ---- */
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INVALID_FILE 100003
#define ACL_ERROR_REPEAT_FINALIZE 100037
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_ADDR_UNALIGNED 107008
#define ACL_ERROR_MEMORY_ADDRESS_UNALIGNED 200003
#define ACL_ERROR_API_NOT_SUPPORT 200001
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_INTERNAL_ERROR 500000
#define ACL_ERROR_RT_DEV_SETUP_ERROR 507033
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR 507899
#define ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED 507910
#define ACL_ERROR_HOST_MEMORY_NOT_REGISTERED 507911

/* ---- aclrtHostRegisterV2 flags ---- */
#define ACL_HOST_REG_MAPPED 0x2UL
#define ACL_HOST_REG_IOMEMORY 0x4UL
#define ACL_HOST_REG_READONLY 0x8UL
#define ACL_HOST_REG_PINNED 0x10000000UL

/* ---- aclrtHostRegister (V1) type ---- */
typedef enum aclrtHostRegisterType {
    ACL_HOST_REGISTER_MAPPED = 0,
    ACL_HOST_REGISTER_IOMEMORY = 0x4,
    ACL_HOST_REGISTER_READONLY = 0x8
} aclrtHostRegisterType;

/* ---- aclrtMalloc policy (out-of-range and OR-ed values are accepted) ---- */
typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

/* ---- initialisation, devices, contexts ---- */
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);
aclError aclrtSetCurrentContext(aclrtContext context);
const char *aclrtGetSocName(void);
const char *aclGetRecentErrMsg(void);
aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum);

/* ---- memory ---- */
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);

/* ---- host memory registration ---- */
aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);
aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr);
aclError aclrtHostUnregister(void *ptr);
aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACL_ACL_RT_H_ */
