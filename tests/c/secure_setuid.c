/* Run set-user-ID by tests/secure.rs, linked with -lregcheck only (no vendor library loaded),
 * so that regcheck has to search for the vendor. Prints whether the process is in
 * secure-execution mode, then one bad call (a NULL pointer: regcheck must still reject it) and
 * one good call (forwarded to whatever vendor regcheck found; 200001 when none). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);

int main(void) {
    printf("secure %lu uid %d euid %d\n", getauxval(AT_SECURE), (int)getuid(), (int)geteuid());
    void *p = NULL;
    if (posix_memalign(&p, 4096, 4096) != 0) return 2;
    printf("rc null %d\n", aclrtHostRegisterV2(NULL, 4096, 0x2));
    printf("rc good %d\n", aclrtHostRegisterV2(p, 4096, 0x2));
    fflush(stdout);
    free(p);
    return 0;
}
