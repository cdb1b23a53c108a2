/* Linked with -lregcheck only, no vendor library loaded at first. Every call must return
 * ACL_ERROR_API_NOT_SUPPORT (200001), never crash, and the miss is logged once. With the
 * argument "late", the program then dlopens the vendor library itself (as Python's ctypes
 * does): regcheck must find it from the next call on. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);
int aclrtHostUnregister(void *ptr);

int main(int argc, char **argv) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, 4096) != 0) return 2;
    printf("rc register %d\n", aclrtHostRegisterV2(p, 4096, 0x2));
    printf("rc register_again %d\n", aclrtHostRegisterV2(p, 4096, 0x2));
    if (argc > 1 && strcmp(argv[1], "late") == 0) {
        void *acl = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
        if (acl == NULL) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 2;
        }
        int (*init)(const char *) = (int (*)(const char *))dlsym(acl, "aclInit");
        int (*set_device)(int32_t) = (int (*)(int32_t))dlsym(acl, "aclrtSetDevice");
        if (init == NULL || set_device == NULL || init(NULL) != 0 || set_device(0) != 0) return 2;
        printf("rc register_after_dlopen %d\n", aclrtHostRegisterV2(p, 4096, 0x2));
        printf("rc unregister %d\n", aclrtHostUnregister(p));
    }
    free(p);
    return 0;
}
