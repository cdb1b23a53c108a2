/* aclrtMemcpy, aclrtMemset and the VMM calls of the simulator: the checks in the vendor's order
 * and their codes, the kinds, destMax, maps and unmaps, and what aclsimQueryMemory reports.
 * Prints "checks=N failures=M". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim.h"
#include "check.h"

#define MIB2 ((size_t)2 << 20)

static void memcpy_and_memset(void) {
    char host[64], back[64];
    void *dev = NULL;
    memset(host, 'h', sizeof host);

    /* before any device: count 0 succeeds, argument checks answer, then 107002 */
    EXPECT_EQ(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, host, sizeof host, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, back, sizeof back, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS); /* dst == src */
    EXPECT_EQ(aclrtMemset(NULL, 0, 0, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemset(back, sizeof back, 0, 8), ACL_ERROR_RT_CONTEXT_NULL);

    EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
    EXPECT_EQ(((uintptr_t)dev) % MIB2, 0);

    /* argument checks of the acl layer (100000), then the runtime's (107000) */
    EXPECT_EQ(aclrtMemcpy(NULL, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(dev, 64, NULL, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, (aclrtMemcpyKind)42), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, (aclrtMemcpyKind)-1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(dev, 0, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(dev, 32, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID); /* destMax < count */
    EXPECT_TRUE(strstr(aclGetRecentErrMsg(), "destMax") != NULL);

    /* every valid kind copies */
    EXPECT_EQ(aclrtMemcpy(dev, 4096, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    memset(back, 0, sizeof back);
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(memcmp(back, host, 64), 0);
    EXPECT_EQ(aclrtMemcpy((char *)dev + 1024, 1024, dev, 64, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, (char *)dev + 1024, 64, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    EXPECT_EQ(memcmp(back, host, 64), 0);
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, host, 64, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE), ACL_SUCCESS);

    /* memset: NULL -> 100000, count > maxCount -> 107000, then the bytes */
    EXPECT_EQ(aclrtMemset(NULL, 64, 1, 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemset(dev, 32, 1, 64), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(dev, 4096, 0x5a, 4096), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, (char *)dev + 4000, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(back[0], 0x5a);
    EXPECT_EQ(back[63], 0x5a);

    /* the simulator's view of the allocation */
    aclsimMemInfo info;
    EXPECT_EQ(aclsimQueryMemory((char *)dev + 100, 16, &info), 1);
    EXPECT_EQ(info.kind, ACLSIM_MEM_DEVICE);
    EXPECT_EQ(info.page_type, 1);
    EXPECT_EQ(info.device, 0);
    EXPECT_TRUE(info.base == (uintptr_t)dev);
    EXPECT_EQ(aclsimQueryMemory(host, 16, &info), 0);
    EXPECT_EQ(info.kind, ACLSIM_MEM_UNKNOWN);
    void *normal = NULL;
    EXPECT_EQ(aclrtMalloc(&normal, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    EXPECT_EQ(aclsimQueryMemory(normal, 4096, &info), 1);
    EXPECT_EQ(info.page_type, 0);
    EXPECT_EQ(aclsimQueryMemory(normal, 4097, &info), 0); /* past its end */
    EXPECT_EQ(aclrtFree(normal), ACL_SUCCESS);
    void *pinned = NULL;
    EXPECT_EQ(aclrtMallocHost(&pinned, 100), ACL_SUCCESS);
    EXPECT_EQ(aclsimQueryMemory(pinned, 100, &info), 1);
    EXPECT_EQ(info.kind, ACLSIM_MEM_HOST);
    EXPECT_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);

    /* the device address of a MAPPED host registration reaches the host memory behind it */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *hostmem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *mapped = NULL;
    EXPECT_EQ(aclrtHostRegisterV2(hostmem, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostGetDevicePointer(hostmem, &mapped, 0), ACL_SUCCESS);
    EXPECT_TRUE(mapped != NULL && mapped != (void *)hostmem);
    EXPECT_EQ(aclrtMemcpy(mapped, page, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(memcmp(hostmem, host, 64), 0);
    EXPECT_EQ(aclrtMemcpy((char *)mapped + page - 8, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_RT_PARAM_INVALID); /* runs past the registration */
    EXPECT_EQ(aclrtHostUnregister(hostmem), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemset(mapped, 16, 0, 16), ACL_ERROR_RT_PARAM_INVALID); /* no longer registered */
    munmap(hostmem, page);
}

/* Lines of /proc/self/maps: the mappings of the process. */
static int count_mappings(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    if (f == NULL) return -1;
    while ((c = fgetc(f)) != EOF)
        if (c == '\n') n++;
    fclose(f);
    return n;
}

/* The device addresses of MAPPED registrations are reserved in the address space: the kernel
 * never places other memory there (memory it did place there would be taken for a simulated
 * device address: copies into it refused with 107000, or sent to the registered host memory). */
static void device_addresses_are_reserved(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char host[64];
    memset(host, 'r', sizeof host);
    char *hostmem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *mapped = NULL;
    EXPECT_EQ(aclrtHostRegisterV2(hostmem, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostGetDevicePointer(hostmem, &mapped, 0), ACL_SUCCESS);
    /* the device address itself, and the guard after the registration */
    char *probes[2] = {(char *)mapped, (char *)mapped + MIB2};
    for (int i = 0; i < 2; i++) {
        char *m = mmap(probes[i], page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        EXPECT_TRUE(m == MAP_FAILED);
        if (m != MAP_FAILED) {
            /* real memory there must still be plain host memory to aclrtMemcpy */
            EXPECT_EQ(aclrtMemcpy(m, page, host, sizeof host, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
            EXPECT_EQ(memcmp(m, host, sizeof host), 0);
            munmap(m, page);
        }
    }
    EXPECT_TRUE(hostmem[0] == 0);
    EXPECT_EQ(aclrtHostUnregister(hostmem), ACL_SUCCESS);
    /* still reserved after the unregistration: the address stays a stale device address */
    char *m = mmap(mapped, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    EXPECT_TRUE(m == MAP_FAILED);
    if (m != MAP_FAILED) munmap(m, page);
    munmap(hostmem, page);

    /* the reservation is one address space for all registrations, not one mapping each: a
     * program that registers and unregisters in a loop must not run out of mappings */
    enum { N = 64 };
    char *many = mmap(NULL, N * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int before = count_mappings();
    for (int i = 0; i < N; i++) {
        EXPECT_EQ(aclrtHostRegisterV2(many + (size_t)i * page, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
        EXPECT_EQ(aclrtHostUnregister(many + (size_t)i * page), ACL_SUCCESS);
    }
    EXPECT_TRUE(count_mappings() - before < 4);
    munmap(many, N * page);
}

static void vmm(void) {
    void *va = NULL, *va2 = NULL;
    aclrtDrvMemHandle h = NULL, h2 = NULL, got = NULL;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;

    /* aclrtReserveMemAddress */
    EXPECT_EQ(aclrtReserveMemAddress(NULL, MIB2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtReserveMemAddress(&va, 0, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtReserveMemAddress(&va, MIB2, 0, NULL, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(va == NULL);
    EXPECT_EQ(aclrtReserveMemAddress(&va, 2 * MIB2, 0, NULL, 1), ACL_SUCCESS); /* flags 1: kept for compatibility */
    EXPECT_EQ(((uintptr_t)va) % MIB2, 0);
    EXPECT_EQ(aclrtReserveMemAddress(&va2, MIB2, 0, NULL, 0), ACL_SUCCESS);

    /* aclrtMallocPhysical: the acl layer's checks, in its order */
    aclrtPhysicalMemProp bad = prop;
    EXPECT_EQ(aclrtMallocPhysical(NULL, MIB2, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocPhysical(&h, 0, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &prop, 1), ACL_ERROR_INVALID_PARAM);
    bad.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.allocationType = (aclrtMemAllocationType)1;
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.memAttr = ACL_DDR_MEM_HUGE; /* DDR on the device */
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad.memAttr = ACL_HBM_MEM; /* not in the acl layer's table */
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &bad, 0), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    bad.location.id = 99;
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &bad, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2 + 4096, &prop, 0), ACL_ERROR_RT_PARAM_INVALID); /* granularity */
    EXPECT_TRUE(h == NULL);
    size_t gran = 0;
    EXPECT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran), ACL_SUCCESS);
    EXPECT_EQ(gran, MIB2);
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &prop, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMallocPhysical(&h2, MIB2, &prop, 0), ACL_SUCCESS);

    /* aclrtMapMem */
    EXPECT_EQ(aclrtMapMem(NULL, MIB2, 0, h, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMapMem(va, MIB2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMapMem(va, 0, 0, h, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMapMem(va, MIB2, 0, h, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMapMem((char *)va + 4096, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID); /* not 2 MiB aligned */
    EXPECT_EQ(aclrtMapMem(va, 2 * MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);            /* not the handle's size */
    EXPECT_EQ(aclrtMapMem(va, MIB2, 4096, h, 0), ACL_ERROR_RT_PARAM_INVALID);             /* offset */
    char outside[16];
    EXPECT_EQ(aclrtMapMem(outside, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID); /* not reserved */
    EXPECT_EQ(aclrtMapMem(va, MIB2, 0, h, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMapMem(va, MIB2, 0, h2, 0), ACL_ERROR_RT_PARAM_INVALID); /* already mapped */
    EXPECT_EQ(aclrtMapMem((char *)va + MIB2, MIB2, 0, h2, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMapMem(va2, MIB2, 0, h, 0), ACL_SUCCESS); /* the same handle twice */

    /* the two mappings of h show the same bytes; device memory for aclrtMemcpy */
    memset(va, 0x11, 16);
    EXPECT_EQ(((unsigned char *)va2)[15], 0x11);
    EXPECT_EQ(aclrtMemset((char *)va + MIB2, MIB2, 0x22, MIB2), ACL_SUCCESS);
    char back[16];
    EXPECT_EQ(aclrtMemcpy(back, sizeof back, (char *)va + 2 * MIB2 - 16, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(back[0], 0x22);

    aclsimMemInfo info;
    EXPECT_EQ(aclsimQueryMemory((char *)va + 8, 8, &info), 1);
    EXPECT_EQ(info.kind, ACLSIM_MEM_DEVICE_VMM);
    EXPECT_EQ(info.page_type, 1);
    EXPECT_EQ(info.device, 0);
    EXPECT_TRUE(info.base == (uintptr_t)va);
    EXPECT_EQ(info.size, MIB2);
    EXPECT_TRUE(info.fd >= 0);
    EXPECT_EQ(aclsimQueryMemory(va, 2 * MIB2, &info), 0); /* spans two mappings */

    /* aclrtMemRetainAllocationHandle */
    EXPECT_EQ(aclrtMemRetainAllocationHandle(NULL, &got), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemRetainAllocationHandle(va, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemRetainAllocationHandle((char *)va + 100, &got), ACL_SUCCESS);
    EXPECT_TRUE(got == h);
    EXPECT_EQ(aclrtMemRetainAllocationHandle((char *)va + MIB2, &got), ACL_SUCCESS);
    EXPECT_TRUE(got == h2);

    /* unmapping, releasing, freeing */
    EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID); /* still mapped */
    EXPECT_EQ(aclrtUnmapMem(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtUnmapMem((char *)va + 4096), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtUnmapMem(va), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnmapMem(va), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclsimQueryMemory(va, 8, &info), 0);
    EXPECT_EQ(aclrtMemRetainAllocationHandle(va, &got), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtFreePhysical(h), ACL_SUCCESS); /* still mapped at va2: kept until unmapped */
    EXPECT_EQ(((unsigned char *)va2)[0], 0x11);
    EXPECT_EQ(aclrtFreePhysical(h), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtUnmapMem(va2), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnmapMem((char *)va + MIB2), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreePhysical(h2), ACL_SUCCESS);
    EXPECT_EQ(aclrtReleaseMemAddress(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtReleaseMemAddress((char *)va + MIB2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT_EQ(aclrtReleaseMemAddress(va2), ACL_SUCCESS);
    EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID);
}

/* Host registration of aclrtMapMem memory: the driver does not support VMM addresses
 * (hicann/runtime pkg_inc/driver/ascend_hal_base.h) -> 507899; from HDK 26.0 host-located physical
 * memory is managed by the ACL calls (hicann/hixl examples/cpp/README.md, fabric memory). */
static aclError register_vmm(aclrtMemLocationType where, aclrtMemAttr attr) {
    void *va = NULL;
    aclrtDrvMemHandle h = NULL;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = attr;
    prop.location.type = where;
    EXPECT_EQ(aclrtReserveMemAddress(&va, MIB2, 0, NULL, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &prop, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMapMem(va, MIB2, 0, h, 0), ACL_SUCCESS);
    aclError rc = aclrtHostRegisterV2(va, MIB2, ACL_HOST_REG_MAPPED);
    if (rc == ACL_SUCCESS) EXPECT_EQ(aclrtHostUnregister(va), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnmapMem(va), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    return rc;
}

static void vmm_registration(void) {
    EXPECT_EQ(register_vmm(ACL_MEM_LOCATION_TYPE_DEVICE, ACL_HBM_MEM_HUGE), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    EXPECT_EQ(register_vmm(ACL_MEM_LOCATION_TYPE_HOST, ACL_DDR_MEM_HUGE), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    setenv("ACLSIM_DRIVER_VERSION", "26.0.rc1", 1);
    EXPECT_EQ(register_vmm(ACL_MEM_LOCATION_TYPE_DEVICE, ACL_HBM_MEM_HUGE), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    EXPECT_EQ(register_vmm(ACL_MEM_LOCATION_TYPE_HOST, ACL_DDR_MEM_HUGE), ACL_SUCCESS);
    unsetenv("ACLSIM_DRIVER_VERSION");
}

int main(void) {
    memcpy_and_memset();
    vmm_registration();
    device_addresses_are_reserved();
    vmm();
    /* aclFinalize (the first one needs no aclInit) leaves the device and its context alone */
    int32_t dev = -1;
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT_EQ(dev, 0);
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    return CHECK_DONE();
}
