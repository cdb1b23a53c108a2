/* Linked with -lregcheck only: no vendor library anywhere. Every call must return
 * ACL_ERROR_API_NOT_SUPPORT (200001), never crash, and the miss is logged once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);

int main(void) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, 4096) != 0) return 2;
    printf("rc register %d\n", aclrtHostRegisterV2(p, 4096, 0x2));
    printf("rc register_again %d\n", aclrtHostRegisterV2(p, 4096, 0x2));
    free(p);
    return 0;
}
