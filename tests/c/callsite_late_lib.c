/*
 * A library of the application that the program dlopens after regcheck has already reported a
 * finding (tests/c/callsite_late_main.c), built with -g: its bad registration is named by
 * file:line although it was loaded after the first call site was symbolised.
 */
#include <stdlib.h>

#include "acl/acl.h"

int __attribute__((noinline)) late_register(size_t size) {
    char *base = NULL;
    if (posix_memalign((void **)&base, 4096, size * 2) != 0) return 2;
    return aclrtHostRegisterV2(base + 64, size, ACL_HOST_REG_MAPPED); /* CALLSITE:late_lib */
}
