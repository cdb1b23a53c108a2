/* Both library names share one state: whichever of libacl_rt.so / libascendcl.so the program
 * links, the other one dlopened sees the same registrations, contexts and counters. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim.h"
#include "check.h"

typedef aclError (*reg_fn)(void *, uint64_t, uint32_t);
typedef aclError (*unreg_fn)(void *);
typedef uint64_t (*count_fn)(const char *);

int main(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *rt = dlopen("libacl_rt.so", RTLD_NOW | RTLD_LOCAL);
    void *legacy = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
    if (rt == NULL || legacy == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    reg_fn reg_rt = (reg_fn)dlsym(rt, "aclrtHostRegisterV2");
    reg_fn reg_legacy = (reg_fn)dlsym(legacy, "aclrtHostRegisterV2");
    unreg_fn unreg_rt = (unreg_fn)dlsym(rt, "aclrtHostUnregister");
    unreg_fn unreg_legacy = (unreg_fn)dlsym(legacy, "aclrtHostUnregister");
    count_fn count_rt = (count_fn)dlsym(rt, "aclsimGetCallCount");
    count_fn count_legacy = (count_fn)dlsym(legacy, "aclsimGetCallCount");
    EXPECT_TRUE(reg_rt != NULL && reg_legacy != NULL && unreg_rt != NULL && unreg_legacy != NULL);
    EXPECT_TRUE(count_rt != NULL && count_legacy != NULL);
    EXPECT_TRUE((void *)reg_rt != (void *)reg_legacy); /* two different definitions */

    /* the context set through the linked name is seen by both */
    EXPECT_EQ(aclInit(NULL), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    void *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_EQ(reg_rt(p, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(reg_legacy(p, page, ACL_HOST_REG_MAPPED), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_EQ(reg_legacy((char *)p + page, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(unreg_legacy(p), ACL_SUCCESS);
    EXPECT_EQ(unreg_rt(p), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(unreg_rt((char *)p + page), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister((char *)p + page), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);

    /* one set of counters: 3 V2 calls, made through both names */
    EXPECT_EQ(count_rt("aclrtHostRegisterV2"), 3);
    EXPECT_EQ(count_legacy("aclrtHostRegisterV2"), 3);
    EXPECT_EQ(aclsimGetCallCount("aclrtHostUnregister"), 4);
    return CHECK_DONE();
}
