/* Opens libregcheck.so (argv[1]) after start-up and calls the vendor's functions through it:
 * regcheck loaded late cannot know what happened before it, so findings by its records stay
 * warnings that say so. Prints `key=value` lines. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*set_device_fn)(int32_t);
typedef int (*register_fn)(void *, uint64_t, uint32_t);
typedef int (*unregister_fn)(void *);

int aclrtGetDevice(int32_t *);

int main(int argc, char **argv) {
    int32_t dev = -1;
    if (argc < 2) return 2;
    printf("get_device=%d\n", aclrtGetDevice(&dev)); /* the vendor, linked */
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "late_load: %s\n", dlerror());
        return 2;
    }
    set_device_fn set_device = (set_device_fn)dlsym(h, "aclrtSetDevice");
    register_fn reg = (register_fn)dlsym(h, "aclrtHostRegisterV2");
    unregister_fn unreg = (unregister_fn)dlsym(h, "aclrtHostUnregister");
    if (set_device == NULL || reg == NULL || unreg == NULL) return 2;
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, 4096) != 0) return 2;
    memset(buf, 0, 4096);
    printf("set_device=%d\n", set_device(0));
    printf("register=%d\n", reg(buf, 4096, 0x2));
    printf("unregister=%d\n", unreg(buf));
    printf("unregister_again=%d\n", unreg(buf));
    fflush(stdout);
    free(buf);
    return 0;
}
