/*
 * A library of the application, built without debug information and stripped, whose exported
 * function makes the bad registration: the call site is named from the dynamic symbol table.
 */
#include <stdlib.h>

#include "acl/acl.h"

int kv_register(size_t size) {
    char *base = NULL;
    if (posix_memalign((void **)&base, 4096, size * 2) != 0) return 2;
    return aclrtHostRegisterV2(base + 64, size, ACL_HOST_REG_MAPPED);
}
