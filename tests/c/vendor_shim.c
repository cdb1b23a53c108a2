/*
 * A test-only layer between regcheck and the vendor library: linked after regcheck and before
 * libascendcl, it is the "vendor" regcheck finds (dlsym(RTLD_NEXT)). Each function passes the
 * call on to the real vendor function, after doing what a vendor library may do while regcheck
 * waits for it:
 *
 *  - aclrtGetDevice (which regcheck asks while it checks a call), once after shim_arm_reentry():
 *    calls the interposed aclrtHostRegisterV2 with a misaligned pointer through the PLT, so
 *    the call re-enters regcheck from inside regcheck's own check. Prints "reentered_rc <code>".
 *  - aclrtHostRegisterV2, once after shim_arm_lock_probe(): while the vendor "runs", another
 *    thread calls regcheck's C API and a checked ACL function, both of which take regcheck's
 *    state lock; the join is bounded (10 s). Prints "probe finished" or "probe blocked".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        fprintf(stderr, "vendor_shim: no next %s\n", name);
        abort();
    }
    return f;
}

static int reentry_armed, probe_armed;

void shim_arm_reentry(void) { reentry_armed = 1; }
void shim_arm_lock_probe(void) { probe_armed = 1; }

aclError aclrtGetDevice(int32_t *device) {
    if (reentry_armed) {
        reentry_armed = 0;
        static char buf[3 * 4096] __attribute__((aligned(4096)));
        int code = aclrtHostRegisterV2(buf + 16, 4096, ACL_HOST_REG_MAPPED);
        printf("reentered_rc %d\n", code);
        fflush(stdout);
    }
    return ((aclError(*)(int32_t *))next("aclrtGetDevice"))(device);
}

/* regcheck's C API; weak, so that the library loads without regcheck too (and a program that
 * links libregcheck.a exports it to this library). */
size_t regcheck_live_host_registrations(void) __attribute__((weak));

static void *other_thread(void *arg) {
    size_t n = regcheck_live_host_registrations ? regcheck_live_host_registrations() : (size_t)-1;
    void *dev = NULL;
    int code = aclrtHostGetDevicePointer(arg, &dev, 0);
    printf("probe live=%zu devptr_rc=%d\n", n, code);
    fflush(stdout);
    return NULL;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    if (probe_armed) {
        probe_armed = 0;
        pthread_t t;
        if (pthread_create(&t, NULL, other_thread, ptr) != 0) abort();
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        int e = pthread_timedjoin_np(t, NULL, &until);
        printf("probe %s\n", e == 0 ? "finished" : "blocked");
        fflush(stdout);
        if (e != 0) _exit(3); /* the other thread is stuck on a lock regcheck holds */
    }
    return ((aclError(*)(void *, uint64_t, uint32_t))next("aclrtHostRegisterV2"))(ptr, size, flag);
}
