/* A host pool carved from one aclrtMallocHost block that regcheck did not see allocated (the
 * block comes from the simulator's internal entry point, as a vendor-internal allocation or a
 * library that bypasses regcheck would), its pieces registered with aclrtHostRegisterV2.
 *
 *   annotate_pool plain      the pool says nothing
 *   annotate_pool annotated  the pool tells regcheck, with the header's weak-symbol macros:
 *                            REGCHECK_MALLOC_HOST_LIKE_BLOCK when it hands a piece out,
 *                            REGCHECK_FREE_LIKE_BLOCK when it takes it back
 *
 * Prints `rc <label> <code>` for each vendor call, and `annotate <label> <status>` for each
 * annotation (0 also where regcheck is absent: the macros then do nothing). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "regcheck.h"

/* libacl_rt.so's own entry point of aclrtMallocHost (sim/src/acl_impl_aliases.cpp) */
aclError aclsim_impl_aclrtMallocHost(void **hostPtr, size_t size);
aclError aclsim_impl_aclrtFreeHost(void *hostPtr);

#define BLOCK (4u << 20)
#define PIECE (1u << 20)

static int annotated;

/* The pool: piece i of the block. */
static void *pool_get(char *block, int i) {
    void *p = block + (size_t)i * PIECE;
    if (annotated) printf("annotate get%d %d\n", i, (int)REGCHECK_MALLOC_HOST_LIKE_BLOCK(p, PIECE));
    return p;
}

static void pool_put(void *p, int i) {
    if (annotated) printf("annotate put%d %d\n", i, (int)REGCHECK_FREE_LIKE_BLOCK(p));
}

int main(int argc, char **argv) {
    annotated = argc > 1 && strcmp(argv[1], "annotated") == 0;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
    void *block = NULL;
    if (aclsim_impl_aclrtMallocHost(&block, BLOCK) != ACL_SUCCESS) return 3;
    char *b = (char *)block;
    void *p1 = pool_get(b, 1);
    printf("rc register %d\n", (int)aclrtHostRegisterV2(p1, PIECE, ACL_HOST_REG_MAPPED));
    printf("rc unregister %d\n", (int)aclrtHostUnregister(p1));
    pool_put(p1, 1);
    void *p2 = pool_get(b, 2);
    printf("rc register_pinned %d\n", (int)aclrtHostRegisterV2(p2, PIECE, ACL_HOST_REG_PINNED));
    printf("rc unregister_pinned %d\n", (int)aclrtHostUnregister(p2));
    pool_put(p2, 2);
    aclsim_impl_aclrtFreeHost(block);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
