/*
 * acl_demo: the host-registration mistakes users make every day, then a correct
 * registration. Run it bare against the vendor library (or regcheck's simulator of it) and
 * you get the vendor's codes; run it under regcheck and every mistake is explained.
 *
 *   cc acl_demo.c -I<acl headers> -L<acl libs> -lascendcl -o acl_demo
 *   ./acl_demo                                   # bare
 *   LD_PRELOAD=libregcheck.so ./acl_demo         # checked
 *
 * Exit status: 0 when the correct registration at the end worked, 1 otherwise. The
 * mistakes' return codes are printed, not judged (they differ bare and under regcheck).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl.h"

/* The ACL-level codes (ACL_SUCCESS, ACL_ERROR_INVALID_PARAM, ...) are `static const int` in the
 * vendor's headers, not macros: C cannot use them as `case` labels. */
static const char *code_name(int code) {
    if (code == ACL_SUCCESS) return "ACL_SUCCESS";
    if (code == ACL_ERROR_INVALID_PARAM) return "ACL_ERROR_INVALID_PARAM";
    if (code == ACL_ERROR_API_NOT_SUPPORT) return "ACL_ERROR_API_NOT_SUPPORT";
    switch (code) {
    case ACL_ERROR_RT_PARAM_INVALID: return "ACL_ERROR_RT_PARAM_INVALID";
    case ACL_ERROR_RT_CONTEXT_NULL: return "ACL_ERROR_RT_CONTEXT_NULL";
    case ACL_ERROR_RT_FEATURE_NOT_SUPPORT: return "ACL_ERROR_RT_FEATURE_NOT_SUPPORT";
    case ACL_ERROR_RT_DRV_INTERNAL_ERROR: return "ACL_ERROR_RT_DRV_INTERNAL_ERROR";
    case ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: return "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED";
    default: return "?";
    }
}

static int step_no = 0;

static int show(const char *what, int code) {
    printf("  step %d: %-62s -> %d %s\n", ++step_no, what, code, code_name(code));
    fflush(stdout);
    fflush(stderr);
    return code;
}

/* A mistake that registered anyway (bare, the vendor accepts some) is undone, quietly, so that
 * each later step starts from the state its label describes. */
static void undo(int code, void *ptr) {
    if (code == ACL_SUCCESS) aclrtHostUnregister(ptr);
}

int main(void) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    printf("acl_demo: host memory registration, mistakes first\n");
    fflush(stdout);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        fprintf(stderr, "acl_demo: aclInit/aclrtSetDevice failed\n");
        return 1;
    }

    /* step 1: malloc memory is not page-aligned (field failure A1). */
    char *heap = malloc(3 * page);
    undo(show("register malloc() memory (not page-aligned)", aclrtHostRegisterV2(heap + 16, page, ACL_HOST_REG_MAPPED)),
         heap + 16);

    /* The buffer used from here on: page-locked memory from aclrtMallocHost, which only
     * guarantees 64-byte alignment, so over-allocate by a page and round up (the way the
     * vendor's own code does it). This memory is fine on every kernel. */
    void *raw = NULL;
    if (aclrtMallocHost(&raw, 9 * page) != ACL_SUCCESS) {
        fprintf(stderr, "acl_demo: aclrtMallocHost failed\n");
        return 1;
    }
    char *buf = (char *)(((uintptr_t)raw + page - 1) & ~(uintptr_t)(page - 1));

    /* step 2: flag 0 (A4). */
    undo(show("register with flag 0", aclrtHostRegisterV2(buf, page, 0)), buf);

    /* step 3: PINNED on memory that is page-locked already (A5): the vendor registers it, so it
     * is undone before step 4 registers buf. */
    undo(show("register aclrtMallocHost memory with PINNED",
              aclrtHostRegisterV2(buf, page, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED)),
         buf);

    /* steps 4-5: the same buffer twice, overlapping (A7). */
    show("register buf (correct)", aclrtHostRegisterV2(buf, 4 * page, ACL_HOST_REG_MAPPED));
    undo(show("register buf + 1 page again (overlaps the first)",
              aclrtHostRegisterV2(buf + page, 2 * page, ACL_HOST_REG_MAPPED)),
         buf + page);

    /* step 6: CUDA habits: flag where the out-pointer goes (A6). */
    void *dev = NULL;
    show("aclrtHostGetDevicePointer(buf, &dev, 1)", aclrtHostGetDevicePointer(buf, &dev, 1));

    /* steps 7-8: unregister an interior pointer (A8), then the base. */
    show("unregister buf + 1 page (not the registered base)", aclrtHostUnregister(buf + page));
    show("unregister buf (correct)", aclrtHostUnregister(buf));

    /* step 9: a file-backed mapping. */
    char path[] = "acl_demo_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0 && ftruncate(fd, (off_t)(2 * page)) == 0) {
        void *file = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (file != MAP_FAILED) {
            undo(show("register an mmap() of a regular file", aclrtHostRegisterV2(file, 2 * page, ACL_HOST_REG_MAPPED)),
                 file);
            munmap(file, 2 * page);
        }
        close(fd);
    }
    unlink(path);

    /* steps 10-12: the right way. */
    int ok = show("register page-aligned memory, MAPPED", aclrtHostRegisterV2(buf, 8 * page, ACL_HOST_REG_MAPPED)) == 0;
    ok &= show("aclrtHostGetDevicePointer(buf, &dev, 0)", aclrtHostGetDevicePointer(buf, &dev, 0)) == 0 && dev != NULL;
    ok &= show("unregister buf", aclrtHostUnregister(buf)) == 0;

    /* step 13: pageable memory: fine on kernels after 5.10, an "exception" on 5.10 and older (A13). */
    char *pageable = NULL;
    if (posix_memalign((void **)&pageable, page, 4 * page) != 0) return 1;
    memset(pageable, 1, 4 * page);
    int rc = show("register pageable (posix_memalign) memory", aclrtHostRegisterV2(pageable, 4 * page, ACL_HOST_REG_MAPPED));
    if (rc == 0) aclrtHostUnregister(pageable);

    printf("acl_demo: %s\n", ok ? "the correct registration worked" : "the correct registration FAILED");
    free(pageable);
    aclrtFreeHost(raw);
    free(heap);
    aclrtResetDevice(0);
    aclFinalize();
    return ok ? 0 : 1;
}
