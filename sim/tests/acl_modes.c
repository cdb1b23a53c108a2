/* Environment-driven behaviour of the simulated ACL runtime. Usage: acl_modes MODE [ARG]
 *   soc CODE           V2/V1/unregister/device-pointer on a page return CODE (product support)
 *   socname            prints the SoC name or "NULL"
 *   version            prints "<versionStr> <versionNum>" of "CANN" and of "driver"
 *   register KIND      registers one page of KIND memory (malloc, mallochost, mlock, pinned,
 *                      offset4k) with MAPPED; prints "rc=<code>" (may abort: kernel <= 5.10)
 *   count              prints the simulator's call count of aclrtSetDevice after 3 calls
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim.h"
#include "check.h"

static int usage(void) {
    fprintf(stderr, "usage: acl_modes soc CODE | socname | version | register KIND | count\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const char *mode = argv[1];
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        fprintf(stderr, "setup failed\n");
        return 3;
    }
    if (strcmp(mode, "soc") == 0 && argc == 3) {
        long want = strtol(argv[2], NULL, 10);
        void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        void *dev = NULL;
        EXPECT_EQ(aclrtHostRegisterV2(p, page, ACL_HOST_REG_MAPPED), want);
        if (want == ACL_SUCCESS) EXPECT_EQ(aclrtHostUnregister(p), ACL_SUCCESS);
        EXPECT_EQ(aclrtHostRegister(p, page, ACL_HOST_REGISTER_MAPPED, &dev), want);
        EXPECT_EQ(aclrtHostGetDevicePointer(p, &dev, 0), want == ACL_SUCCESS ? ACL_SUCCESS : want);
        EXPECT_EQ(aclrtHostUnregister(p), want);
        return CHECK_DONE();
    }
    if (strcmp(mode, "socname") == 0) {
        const char *s = aclrtGetSocName();
        printf("soc=%s\n", s ? s : "NULL");
        return 0;
    }
    if (strcmp(mode, "version") == 0) {
        char v[128] = {0}, d[128] = {0};
        int32_t vn = 0, dn = 0;
        aclError r1 = aclsysGetVersionStr((char *)"CANN", v);
        aclError r2 = aclsysGetVersionNum((char *)"CANN", &vn);
        aclError r3 = aclsysGetVersionStr((char *)"driver", d);
        aclError r4 = aclsysGetVersionNum((char *)"driver", &dn);
        printf("cann=%s %d rc=%d,%d\ndriver=%s %d rc=%d,%d\n", v, vn, r1, r2, d, dn, r3, r4);
        return 0;
    }
    if (strcmp(mode, "register") == 0 && argc == 3) {
        const char *kind = argv[2];
        void *p = NULL;
        uint32_t flag = ACL_HOST_REG_MAPPED;
        if (strcmp(kind, "malloc") == 0) {
            if (posix_memalign(&p, page, page) != 0) return 4;
        } else if (strcmp(kind, "mallochost") == 0) {
            if (aclrtMallocHost(&p, page) != ACL_SUCCESS) return 4;
        } else if (strcmp(kind, "mlock") == 0) {
            p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (mlock(p, page) != 0) {
                perror("mlock");
                return 4;
            }
        } else if (strcmp(kind, "pinned") == 0) {
            if (posix_memalign(&p, page, page) != 0) return 4;
            flag = ACL_HOST_REG_PINNED;
        } else if (strcmp(kind, "offset4k") == 0) {
            /* 4 KiB aligned but not 64 KiB aligned */
            char *big = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            uintptr_t a = ((uintptr_t)big + 65535) & ~(uintptr_t)65535;
            p = (void *)(a + 4096);
        } else {
            return usage();
        }
        aclError rc = aclrtHostRegisterV2(p, page, flag);
        printf("rc=%d\n", rc);
        return 0;
    }
    if (strcmp(mode, "count") == 0) {
        aclrtSetDevice(0);
        aclrtSetDevice(0);
        printf("count=%llu\n", (unsigned long long)aclsimGetCallCount("aclrtSetDevice"));
        return 0;
    }
    return usage();
}
