/* A library an attacker wants a privileged process to load (tests/secure.rs): its constructor
 * appends its own path to the file named by EVIL_MARKER, and its aclrtHostRegisterV2 returns
 * 4242, so a test sees both that it was loaded and that it was called. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void mark(void) __attribute__((constructor));

static void mark(void) {
    const char *marker = getenv("EVIL_MARKER");
    Dl_info info;
    if (marker == NULL || dladdr((void *)mark, &info) == 0) return;
    FILE *f = fopen(marker, "a");
    if (f == NULL) return;
    fprintf(f, "loaded %s\n", info.dli_fname);
    fclose(f);
}

int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    (void)ptr;
    (void)size;
    (void)flag;
    return 4242;
}
