/* Runs a call script against the simulator under regcheck, for the model-based property test
 * (tests/model.rs). One operation per line on stdin:
 *
 *   r2 K P N FLAG MIS   aclrtHostRegisterV2(base(K) + P pages + MIS bytes, N pages, FLAG)
 *   r1 K P N            aclrtHostRegister(base(K) + P pages, N pages, MAPPED, &dev)
 *   u K P OFF           aclrtHostUnregister(base(K) + P pages + OFF bytes)
 *   d K P OFF           aclrtHostGetDevicePointer(base(K) + P pages + OFF bytes, &dev, 0)
 *   f S                 aclrtFreeHost(allocation S)
 *
 * Memory kinds K: 0 page-aligned heap, 1 aclrtMallocHost, 2 read-only mapping, 3 unmapped
 * hole, 4 file mapping (FILE, argv[1]), 5 kernel half, 6 the stack, 7.. the aclrtMallocHost
 * allocations S = K - 7 (4 pages each; `f` frees one). Pools 0-6 are 16 pages.
 *
 * Prints one line per operation: `op <i> rc <code> fwd <calls the simulator received> live
 * <regcheck_live_host_registrations()>`. */
#define _GNU_SOURCE
#include <aclsim.h>
#include <acl/acl.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "regcheck.h"

#define POOL_PAGES 16
#define SLOTS 4
#define SLOT_PAGES 4

static char *map(size_t len, int prot, int flags, int fd) {
    void *m = mmap(NULL, len, prot, flags, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = POOL_PAGES * page;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    char stack[(POOL_PAGES + 1) * 4096];
    memset(stack, 0, sizeof stack);
    char *base[7 + SLOTS];
    void *heap = NULL;
    if (posix_memalign(&heap, page, span) != 0) return 2;
    base[0] = heap;
    void *mh = NULL;
    if (aclrtMallocHost(&mh, span) != 0) return 2;
    base[1] = mh;
    base[2] = map(span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)span) != 0) return 2;
    base[4] = map(span, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
    base[5] = (char *)0xffff800000000000ULL;
    base[6] = (char *)(((uintptr_t)stack + page - 1) / page * page);
    for (int s = 0; s < SLOTS; s++) {
        void *p = NULL;
        if (aclrtMallocHost(&p, SLOT_PAGES * page) != 0) return 2;
        base[7 + s] = p;
    }
    base[3] = map(span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    munmap(base[3], span); /* last: no later mapping lands in the hole */

    char line[128];
    int i = 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        char op[4] = {0};
        unsigned long long a = 0, b = 0, c = 0, d = 0, e = 0;
        int n = sscanf(line, "%3s %llu %llu %llu %llu %llu", op, &a, &b, &c, &d, &e);
        if (n < 2 || a >= 7 + SLOTS) {
            fprintf(stderr, "bad line %s", line);
            return 2;
        }
        char *p = base[a] + b * page;
        const char *name;
        int rc;
        void *dev = NULL;
        if (!strcmp(op, "r2")) {
            name = "aclrtHostRegisterV2";
            uint64_t before = aclsimGetCallCount(name);
            rc = aclrtHostRegisterV2(p + e, c * page, (uint32_t)d);
            printf("op %d rc %d fwd %llu", i, rc, (unsigned long long)(aclsimGetCallCount(name) - before));
        } else if (!strcmp(op, "r1")) {
            name = "aclrtHostRegister";
            uint64_t before = aclsimGetCallCount(name);
            rc = aclrtHostRegister(p, c * page, ACL_HOST_REGISTER_MAPPED, &dev);
            printf("op %d rc %d fwd %llu", i, rc, (unsigned long long)(aclsimGetCallCount(name) - before));
        } else if (!strcmp(op, "u")) {
            name = "aclrtHostUnregister";
            uint64_t before = aclsimGetCallCount(name);
            rc = aclrtHostUnregister(p + c);
            printf("op %d rc %d fwd %llu", i, rc, (unsigned long long)(aclsimGetCallCount(name) - before));
        } else if (!strcmp(op, "d")) {
            name = "aclrtHostGetDevicePointer";
            uint64_t before = aclsimGetCallCount(name);
            rc = aclrtHostGetDevicePointer(p + c, &dev, 0);
            printf("op %d rc %d fwd %llu", i, rc, (unsigned long long)(aclsimGetCallCount(name) - before));
        } else if (!strcmp(op, "f")) {
            name = "aclrtFreeHost";
            uint64_t before = aclsimGetCallCount(name);
            rc = aclrtFreeHost(base[7 + a]);
            printf("op %d rc %d fwd %llu", i, rc, (unsigned long long)(aclsimGetCallCount(name) - before));
        } else {
            fprintf(stderr, "bad op %s\n", op);
            return 2;
        }
        printf(" live %zu\n", regcheck_live_host_registrations());
        fflush(stdout);
        i++;
    }
    close(fd);
    return 0;
}
