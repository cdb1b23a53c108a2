/*
 * The application of tests/callsite.rs's vendor-call test: the same misaligned registration
 * made by a vendor library (tests/c/vendor_internal_lib.c) and by the application itself, then
 * an overlap with what the vendor library registered, by the application and by the vendor
 * library. Prints `rc <label> <code>` lines.
 */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

int vendor_register_misaligned(char *page);
int vendor_register(void *page);
int vendor_unregister(void *page);

int main(void) {
    char *pages = NULL;
    if (posix_memalign((void **)&pages, 4096, 4 * 4096) != 0) return 2;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    printf("rc vendor_misaligned %d\n", vendor_register_misaligned(pages));
    printf("rc app_misaligned %d\n", aclrtHostRegisterV2(pages + 4096 + 64, 4096, ACL_HOST_REG_MAPPED));
    printf("rc vendor_register %d\n", vendor_register(pages + 2 * 4096));
    printf("rc app_overlap %d\n", aclrtHostRegisterV2(pages + 2 * 4096, 4096, ACL_HOST_REG_MAPPED));
    printf("rc vendor_overlap %d\n", vendor_register(pages + 2 * 4096));
    printf("rc vendor_unregister %d\n", vendor_unregister(pages + 2 * 4096));
    fflush(stdout);
    return 0;
}
