/*
 * Drives tests/c/vendor_shim.c: `shim_user reentry` or `shim_user lock`. Each call prints
 * "rc <label> <code>". Exit 0 unless the set-up failed (2); the shim exits 3 on a blocked probe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#ifdef REGCHECK_LINKED
#include "regcheck.h" /* linked with regcheck: its API is here, and exported to the shim */
#endif

void shim_arm_reentry(void);
void shim_arm_lock_probe(void);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    void *p = NULL;
    if (posix_memalign(&p, 4096, 2 * 4096) != 0) return 2;
#ifdef REGCHECK_LINKED
    if (regcheck_live_host_registrations() != 0) return 2;
#endif
    if (!strcmp(argv[1], "reentry")) {
        shim_arm_reentry();
    } else if (!strcmp(argv[1], "lock")) {
        shim_arm_lock_probe();
    } else {
        return 2;
    }
    printf("rc register %d\n", aclrtHostRegisterV2(p, 2 * 4096, ACL_HOST_REG_MAPPED));
    printf("rc unregister %d\n", aclrtHostUnregister(p));
    return 0;
}
