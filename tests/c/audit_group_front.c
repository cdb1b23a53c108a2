/* A test-only vendor library group, first half: built as libacl_rt.so, it needs
 * libacl_rt_impl.so (tests/c/audit_group_impl.c) and forwards aclrtHostRegisterV2 and
 * aclrtHostUnregister to the functions of the same names there, looked up with dlsym on the
 * implementation's handle, as a vendor front library forwards to its implementation. Under
 * LD_AUDIT that binding stays inside the group: were it redirected to regcheck, regcheck's
 * forward would come back to regcheck. Each call is traced on stderr: "[group] front <name>". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *impl(const char *name) {
    void *h = dlopen("libacl_rt_impl.so", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    void *f = h ? dlsym(h, name) : NULL;
    if (f == NULL) {
        fprintf(stderr, "[group] front: no %s in libacl_rt_impl.so\n", name);
        abort();
    }
    return f;
}

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    fprintf(stderr, "[group] front aclrtHostRegisterV2\n");
    return ((int (*)(void *, uint64_t, uint32_t))impl("aclrtHostRegisterV2"))(ptr, size, flag);
}

int aclrtHostUnregister(void *ptr) {
    fprintf(stderr, "[group] front aclrtHostUnregister\n");
    return ((int (*)(void *))impl("aclrtHostUnregister"))(ptr);
}
