/* One registry whatever the path: a program linked against the vendor library (its calls
 * bound by the linker, interposed by LD_PRELOAD) that also looks the same functions up with
 * dlsym on the vendor's handle (redirected by LD_AUDIT).
 *
 *   audit_mixed LIB
 *
 * Registers through one path and unregisters through the other, both ways round, then
 * unregisters once more (which regcheck must reject as not registered). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From the vendor's acl_rt.h (declared here so the program needs no header). */
extern int aclInit(const char *configPath);
extern int aclrtSetDevice(int32_t deviceId);
extern int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);
extern int aclrtHostUnregister(void *ptr);

typedef int (*register_fn)(void *, uint64_t, uint32_t);
typedef int (*unregister_fn)(void *);

#define ACL_HOST_REG_MAPPED 0x2u

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: audit_mixed LIB\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "audit_mixed: dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    register_fn dl_reg = (register_fn)dlsym(h, "aclrtHostRegisterV2");
    unregister_fn dl_unreg = (unregister_fn)dlsym(h, "aclrtHostUnregister");
    if (dl_reg == NULL || dl_unreg == NULL) {
        fprintf(stderr, "audit_mixed: dlsym: %s\n", dlerror());
        return 2;
    }

    printf("init=%d\n", aclInit(NULL));
    printf("set_device=%d\n", aclrtSetDevice(0));

    void *a = NULL, *b = NULL;
    if (posix_memalign(&a, 4096, 8192) != 0 || posix_memalign(&b, 4096, 8192) != 0) return 2;
    memset(a, 0, 8192);
    memset(b, 0, 8192);

    printf("linked.register=%d\n", aclrtHostRegisterV2(a, 8192, ACL_HOST_REG_MAPPED));
    printf("dlsym.unregister=%d\n", dl_unreg(a));
    fflush(stdout);
    printf("dlsym.unregister_again=%d\n", dl_unreg(a));

    printf("dlsym.register=%d\n", dl_reg(b, 8192, ACL_HOST_REG_MAPPED));
    printf("linked.unregister=%d\n", aclrtHostUnregister(b));
    fflush(stdout);
    printf("linked.unregister_again=%d\n", aclrtHostUnregister(b));
    fflush(stdout);
    free(a);
    free(b);
    return 0;
}
