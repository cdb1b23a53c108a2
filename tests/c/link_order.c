/* Linked with the vendor's library ahead of regcheck (-lascendcl -lregcheck) by tests/audit.rs:
 * registers a misaligned pointer (the vendor's 507899 territory: regcheck never sees it) and
 * prints its code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int aclrtSetDevice(int32_t);
int aclrtHostRegisterV2(void *, uint64_t, uint32_t);

int main(void) {
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, 2 * 4096) != 0) return 2;
    printf("set_device=%d\n", aclrtSetDevice(0));
    printf("bad.align=%d\n", aclrtHostRegisterV2((char *)buf + 8, 4096, 0x2));
    fflush(stdout);
    free(buf);
    return 0;
}
