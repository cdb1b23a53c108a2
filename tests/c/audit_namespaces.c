/* LD_AUDIT and the dynamic linker's namespaces and unloading.
 *
 *   audit_namespaces dlmopen
 *     (LD_AUDIT + LD_PRELOAD) The vendor library opened in a new namespace (dlmopen) is left
 *     alone: its dlsym is the vendor's and its calls are not checked. In the application's
 *     namespace, the same look-up still goes to regcheck.
 *   audit_namespaces foreign_regcheck REGCHECK_PATH
 *     (LD_AUDIT only) libregcheck.so loaded in a new namespace is no target for the
 *     application's namespace: nothing is redirected there.
 *   audit_namespaces objclose REGCHECK_PATH
 *     (LD_AUDIT only) libregcheck.so dlopened, then dlclosed: after it is unloaded, look-ups
 *     are no longer redirected to it (they would point into unmapped memory).
 *
 * Prints key=value lines: where each looked-up function lives (dladdr), and call results. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*init_fn)(const char *);
typedef int (*set_device_fn)(int32_t);
typedef int (*register_fn)(void *, uint64_t, uint32_t);
typedef int (*unregister_fn)(void *);

static const char *where(void *f) {
    Dl_info info;
    if (f == NULL) return "(null)";
    if (dladdr(f, &info) == 0 || info.dli_fname == NULL) return "(unknown)";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static void *need(void *p, const char *what) {
    if (p == NULL) {
        fprintf(stderr, "audit_namespaces: %s: %s\n", what, dlerror());
        exit(2);
    }
    return p;
}

static void *aligned(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, n) != 0) exit(2);
    memset(p, 0, n);
    return p;
}

/* aclInit, aclrtSetDevice and a misaligned then a good registration through handle h. */
static void exercise(void *h, const char *prefix) {
    init_fn init = (init_fn)need(dlsym(h, "aclInit"), "aclInit");
    set_device_fn set_device = (set_device_fn)need(dlsym(h, "aclrtSetDevice"), "aclrtSetDevice");
    register_fn reg = (register_fn)need(dlsym(h, "aclrtHostRegisterV2"), "aclrtHostRegisterV2");
    unregister_fn unreg = (unregister_fn)need(dlsym(h, "aclrtHostUnregister"), "aclrtHostUnregister");
    printf("%s.where=%s\n", prefix, where((void *)reg));
    int rc = init(NULL);
    printf("%s.init=%d\n", prefix, rc == 100002 ? 0 : rc); /* 100002: initialised already */
    printf("%s.set_device=%d\n", prefix, set_device(0));
    char *p = aligned(3 * 4096);
    printf("%s.misaligned=%d\n", prefix, reg(p + 16, 4096, 0x2));
    printf("%s.register=%d\n", prefix, reg(p, 4096, 0x2));
    printf("%s.unregister=%d\n", prefix, unreg(p));
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "dlmopen")) {
        void *other = need(dlmopen(LM_ID_NEWLM, "libascendcl.so", RTLD_NOW | RTLD_LOCAL), "dlmopen");
        exercise(other, "newlm");
        void *base = need(dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL), "dlopen");
        exercise(base, "base");
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "foreign_regcheck")) {
        need(dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW | RTLD_LOCAL), "dlmopen regcheck");
        void *base = need(dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL), "dlopen");
        exercise(base, "base");
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "objclose")) {
        void *rc = need(dlopen(argv[2], RTLD_NOW | RTLD_LOCAL), "dlopen regcheck");
        void *vendor = need(dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL), "dlopen");
        printf("before.where=%s\n", where(dlsym(vendor, "aclrtHostRegisterV2")));
        dlclose(rc);
        int unloaded = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD) == NULL;
        printf("unloaded=%d\n", unloaded);
        fflush(stdout);
        if (unloaded) exercise(vendor, "after");
        return 0;
    }
    fprintf(stderr, "usage: audit_namespaces dlmopen | foreign_regcheck PATH | objclose PATH\n");
    return 2;
}
