/* An application's own tracing layer over the ACL runtime: it defines aclrtHostRegisterV2,
 * counts the calls that reach it, and forwards each with dlsym(RTLD_NEXT, ...), the way
 * tracing and profiling layers do. Used by tests/audit.rs with regcheck preloaded before or
 * after it: every call is checked once, forwarded once, and never loops. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*register_fn)(void *, uint64_t, uint32_t);

static int traced;

int app_trace_count(void) { return traced; }

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    static register_fn next;
    if (next == NULL) next = (register_fn)dlsym(RTLD_NEXT, "aclrtHostRegisterV2");
    if (next == NULL) {
        fprintf(stderr, "app_trace: no next aclrtHostRegisterV2: %s\n", dlerror());
        abort();
    }
    traced++;
    return next(ptr, size, flag);
}
