/*
 * A library whose constructor makes ACL calls with findings (tests/callsite.rs's loader-lock
 * test): glibc runs it inside dlopen, holding the loader's lock, so regcheck's work on these
 * calls (finding the caller, the call site) must not wait for a thread that wants that lock.
 */
#include <stddef.h>

#include "acl/acl.h"

__attribute__((constructor)) static void ctor_registers(void) {
    void *p = NULL;
    if (aclrtMallocHost(&p, 4 * 4096) != 0 || p == NULL) return;
    /* A size that is not whole pages: a warning finding. */
    (void)aclrtHostRegisterV2(p, 4096 + 100, ACL_HOST_REG_MAPPED);
    (void)aclrtHostUnregister(p);
    (void)aclrtFreeHost(p);
}

int callsite_ctor_loaded(void) { return 1; }
