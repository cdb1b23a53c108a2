/*
 * A finding first (a misaligned registration from main, so that regcheck symbolises a call
 * site), then dlopen(argv[1]) (tests/c/callsite_late_lib.c) and a call of its late_register(),
 * which makes the same bad call. Prints "rc first <code>" and "rc late <code>".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

int main(int argc, char **argv) {
    if (argc < 2 || aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    char *base = NULL;
    if (posix_memalign((void **)&base, 4096, 8192) != 0) return 2;
    printf("rc first %d\n", aclrtHostRegisterV2(base + 64, 4096, ACL_HOST_REG_MAPPED)); /* CALLSITE:late_main */
    fflush(stdout);
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "callsite_late: %s\n", dlerror());
        return 2;
    }
    int (*late_register)(size_t) = (int (*)(size_t))dlsym(lib, "late_register");
    if (late_register == NULL) return 2;
    printf("rc late %d\n", late_register(4096));
    return 0;
}
