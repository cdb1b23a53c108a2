/* LMCache-Ascend's host path on drivers before 25 (csrc/common/managed_mem.cpp): an mmap buffer
 * registered with the driver's halHostRegister(ptr, size, HOST_MEM_MAP_DEV_PCIE_TH, dev, &devPtr)
 * and mlocked, past ACL; then an ACL registration of part of it, which the driver refuses
 * (it is mapped already); then the driver's unregistration, after which the ACL one succeeds.
 * Prints `rc <label> <code>` for each call. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "acl/acl.h"
#include "driver/ascend_hal.h"

#define SIZE (4u << 20)

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
    char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 3;
    memset(p, 0, SIZE);
    void *dev = NULL;
    printf("rc hal_register %d\n", (int)halHostRegister(p, SIZE, HOST_MEM_MAP_DEV_PCIE_TH, 0, &dev));
    printf("rc mlock %d\n", mlock(p, SIZE) == 0 ? 0 : -1);
    void *dev2 = NULL;
    printf("rc acl_register %d\n", (int)aclrtHostRegister(p + (1u << 20), 1u << 20, ACL_HOST_REGISTER_MAPPED, &dev2));
    printf("rc hal_unregister %d\n", (int)halHostUnregister(p, 0));
    printf("rc acl_register_after %d\n", (int)aclrtHostRegister(p + (1u << 20), 1u << 20, ACL_HOST_REGISTER_MAPPED, &dev2));
    printf("rc acl_unregister %d\n", (int)aclrtHostUnregister(p + (1u << 20)));
    munlock(p, SIZE);
    munmap(p, SIZE);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
