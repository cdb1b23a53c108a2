/*
 * A permissive stand-in for the ACL runtime (libacl_rt.so), used only by `cargo xtask bench`.
 *
 * Every function accepts its arguments and returns at once, so that a benchmark run under
 * regcheck shows regcheck's own cost and nothing of a vendor's. It keeps no state: a
 * registration is not recorded, a device pointer is the host pointer itself. It exports what
 * the benchmark driver calls and what regcheck asks the vendor (current device and context,
 * SoC name, versions, the last error text).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))

typedef int aclError;

EXPORT aclError aclInit(const char *configPath) { (void)configPath; return 0; }
EXPORT aclError aclFinalize(void) { return 0; }
EXPORT aclError aclrtSetDevice(int32_t deviceId) { (void)deviceId; return 0; }
EXPORT aclError aclrtResetDevice(int32_t deviceId) { (void)deviceId; return 0; }

EXPORT aclError aclrtGetDevice(int32_t *deviceId) {
  if (deviceId == NULL) return 100000;
  *deviceId = 0;
  return 0;
}

EXPORT aclError aclrtGetDeviceCount(uint32_t *count) {
  if (count == NULL) return 100000;
  *count = 1;
  return 0;
}

/* One fixed, non-NULL context for every thread. */
static char context_token;

EXPORT aclError aclrtGetCurrentContext(void **context) {
  if (context == NULL) return 100000;
  *context = &context_token;
  return 0;
}

EXPORT aclError aclrtSetCurrentContext(void *context) { (void)context; return 0; }
EXPORT const char *aclrtGetSocName(void) { return "Ascend910B1"; }
EXPORT const char *aclGetRecentErrMsg(void) { return NULL; }

EXPORT aclError aclsysGetVersionStr(char *pkgName, char *versionStr) {
  if (versionStr == NULL) return 100000;
  strcpy(versionStr, pkgName != NULL && strcmp(pkgName, "driver") == 0 ? "25.3.rc1" : "8.5.0");
  return 0;
}

EXPORT aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum) {
  if (versionNum == NULL) return 100000;
  *versionNum = pkgName != NULL && strcmp(pkgName, "driver") == 0 ? 25030001 : 80500000;
  return 0;
}

EXPORT aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
  (void)ptr; (void)size; (void)flag;
  return 0;
}

EXPORT aclError aclrtHostRegister(void *ptr, uint64_t size, int type, void **devPtr) {
  (void)size; (void)type;
  if (devPtr != NULL) *devPtr = ptr;
  return 0;
}

EXPORT aclError aclrtHostUnregister(void *ptr) { (void)ptr; return 0; }

EXPORT aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag) {
  (void)flag;
  if (pDevice == NULL) return 100000;
  *pDevice = pHost;
  return 0;
}

static aclError map_pages(void **out, size_t size) {
  if (out == NULL || size == 0) return 100000;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 207001;
  *out = p;
  return 0;
}

/* The allocators do not remember sizes: the benchmark never frees what it allocates. */
EXPORT aclError aclrtMallocHost(void **hostPtr, size_t size) { return map_pages(hostPtr, size); }
EXPORT aclError aclrtFreeHost(void *hostPtr) { (void)hostPtr; return 0; }
EXPORT aclError aclrtMalloc(void **devPtr, size_t size, int policy) { (void)policy; return map_pages(devPtr, size); }
EXPORT aclError aclrtFree(void *devPtr) { (void)devPtr; return 0; }
