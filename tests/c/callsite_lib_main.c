/* Calls kv_register() of the stripped library tests/c/callsite_lib.c. */
#include <stdio.h>

#include "acl/acl.h"

int kv_register(size_t size);

int main(void) {
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    printf("rc register %d\n", kv_register(4096)); /* CALLSITE:lib_main */
    return 0;
}
