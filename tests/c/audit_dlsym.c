/* Reaches the ACL functions the way framework adapters do: dlopen the vendor library after
 * start-up and dlsym the functions from its handle, a path that LD_PRELOAD does not reach.
 *
 *   audit_dlsym LIB [LIB2]
 *
 * LIB is opened RTLD_NOW | RTLD_LOCAL; when LIB2 (the vendor's other name) is given it is
 * opened too and aclrtHostUnregister is taken from its handle, so a registration made
 * through one name is released through the other. Prints `key=value` lines on stdout:
 * where each looked-up function lives (dladdr), then the return code of each call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*init_fn)(const char *);
typedef int (*set_device_fn)(int32_t);
typedef int (*get_device_fn)(int32_t *);
typedef int (*register_fn)(void *, uint64_t, uint32_t);
typedef int (*unregister_fn)(void *);

#define ACL_HOST_REG_MAPPED 0x2u

static const char *where(void *f) {
    Dl_info info;
    if (f == NULL) return "(null)";
    if (dladdr(f, &info) == 0 || info.dli_fname == NULL) return "(unknown)";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static void *open_lib(const char *name) {
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "audit_dlsym: dlopen %s: %s\n", name, dlerror());
        exit(2);
    }
    return h;
}

static void *sym(void *h, const char *name) {
    void *f = dlsym(h, name);
    if (f == NULL) {
        fprintf(stderr, "audit_dlsym: dlsym %s: %s\n", name, dlerror());
        exit(2);
    }
    return f;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: audit_dlsym LIB [LIB2]\n");
        return 2;
    }
    void *h = open_lib(argv[1]);
    void *h2 = argc > 2 ? open_lib(argv[2]) : h;

    init_fn acl_init = (init_fn)sym(h, "aclInit");
    set_device_fn set_device = (set_device_fn)sym(h, "aclrtSetDevice");
    get_device_fn get_device = (get_device_fn)sym(h, "aclrtGetDevice");
    register_fn reg = (register_fn)sym(h, "aclrtHostRegisterV2");
    unregister_fn unreg = (unregister_fn)sym(h2, "aclrtHostUnregister");

    printf("where.aclrtHostRegisterV2=%s\n", where((void *)reg));
    printf("where.aclrtHostUnregister=%s\n", where((void *)unreg));
    printf("where.aclrtGetDevice=%s\n", where((void *)get_device));

    printf("init=%d\n", acl_init(NULL));
    printf("set_device=%d\n", set_device(0));
    int32_t dev = -1;
    printf("get_device=%d\n", get_device(&dev));

    void *buf = NULL;
    if (posix_memalign(&buf, 4096, 8192) != 0) return 2;
    memset(buf, 0, 8192);

    printf("bad.null=%d\n", reg(NULL, 4096, ACL_HOST_REG_MAPPED));
    printf("bad.align=%d\n", reg((char *)buf + 1, 4096, ACL_HOST_REG_MAPPED));
    printf("bad.size0=%d\n", reg(buf, 0, ACL_HOST_REG_MAPPED));
    printf("good.register=%d\n", reg(buf, 8192, ACL_HOST_REG_MAPPED));
    printf("good.unregister=%d\n", unreg(buf));
    fflush(stdout);
    free(buf);
    return 0;
}
