/* A test-only vendor library group, second half: built as libacl_rt_impl.so, a minimal ACL
 * runtime (no simulator behind it). tests/c/audit_group_front.c, built as libacl_rt.so,
 * forwards aclrtHostRegisterV2 and aclrtHostUnregister here under the same names, as a vendor
 * front library forwards to its implementation library. Each call is traced on stderr:
 * "[group] impl <name>(...) -> <code>". */
#include <stdint.h>
#include <stdio.h>

static void trace(const char *name, const void *p, int code) {
    fprintf(stderr, "[group] impl %s(%p) -> %d\n", name, p, code);
}

int aclInit(const char *config) {
    (void)config;
    return 0;
}

int aclrtSetDevice(int32_t device) { return device == 0 ? 0 : 107001; }

int aclrtGetDevice(int32_t *device) {
    *device = 0;
    return 0;
}

int aclrtGetCurrentContext(void **ctx) {
    static int the_context;
    *ctx = &the_context;
    return 0;
}

const char *aclrtGetSocName(void) { return "Ascend910B1"; }

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    (void)size;
    (void)flag;
    trace("aclrtHostRegisterV2", ptr, 0);
    return 0;
}

int aclrtHostUnregister(void *ptr) {
    trace("aclrtHostUnregister", ptr, 0);
    return 0;
}
