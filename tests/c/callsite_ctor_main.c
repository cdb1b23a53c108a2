/*
 * tests/callsite.rs's loader-lock test: dlopen/dlclose a library whose constructor makes ACL
 * calls with findings (tests/c/callsite_ctor_lib.c), 200 times, while 4 threads make
 * misaligned registrations (an error finding on every call). Bare it ends at once; regcheck
 * must not turn it into a deadlock between the loader's lock and one of its own.
 * Usage: callsite_ctor_main LIB. Prints `loads N` and `registrations N` at the end.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

static atomic_int done;
static atomic_long registrations;

static void *misaligned(void *arg) {
    char *pages = arg;
    if (aclrtSetDevice(0) != 0) return NULL;
    while (!atomic_load(&done)) {
        (void)aclrtHostRegisterV2(pages + 64, 4096, ACL_HOST_REG_MAPPED);
        atomic_fetch_add(&registrations, 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    pthread_t threads[4];
    char *pages[4];
    for (int i = 0; i < 4; i++) {
        if (posix_memalign((void **)&pages[i], 4096, 2 * 4096) != 0) return 2;
        if (pthread_create(&threads[i], NULL, misaligned, pages[i]) != 0) return 2;
    }
    int loads = 0;
    for (int i = 0; i < 200; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 3;
        }
        loads++;
        dlclose(h);
    }
    atomic_store(&done, 1);
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    printf("loads %d\nregistrations %ld\n", loads, atomic_load(&registrations));
    return 0;
}
