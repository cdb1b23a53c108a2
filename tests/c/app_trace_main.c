/* Registers through the application's own tracing layer (app_trace.c): a misaligned pointer,
 * then a page-aligned one, through the PLT; prints `key=value` lines (codes, how many calls
 * the layer saw). Then asks dlsym(RTLD_NEXT) for a name nothing defines, to show dlerror()'s
 * text is the C library's, naming this program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aclrtSetDevice(int32_t);
int aclrtHostRegisterV2(void *, uint64_t, uint32_t);
int aclrtHostUnregister(void *);
int app_trace_count(void);

int main(void) {
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, 3 * 4096) != 0) return 2;
    memset(buf, 0, 3 * 4096);
    printf("set_device=%d\n", aclrtSetDevice(0));
    printf("bad.align=%d\n", aclrtHostRegisterV2((char *)buf + 8, 4096, 0x2));
    printf("good.register=%d\n", aclrtHostRegisterV2(buf, 2 * 4096, 0x2));
    printf("good.unregister=%d\n", aclrtHostUnregister(buf));
    printf("traced=%d\n", app_trace_count());
    void *none = dlsym(RTLD_NEXT, "no_such_function_anywhere");
    const char *err = dlerror();
    printf("next.none=%s\n", none == NULL ? "null" : "found");
    printf("next.error=%s\n", err ? err : "(none)");
    fflush(stdout);
    free(buf);
    return 0;
}
