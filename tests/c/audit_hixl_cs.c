/* A C adapter that dlopens libcann_hixl.so and looks HixlCSClientRegMem up with dlsym, as
 * bindings to HIXL's C API do: under LD_AUDIT + LD_PRELOAD, regcheck checks the call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    int type; /* CommMemType: 0 device, 1 host */
    void *addr;
    uint64_t size;
} CommMem;

typedef uint32_t (*RegMemFn)(void *client, const char *tag, const CommMem *mem, void **handle);

int main(void) {
    void *h = dlopen("libcann_hixl.so", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    RegMemFn reg = (RegMemFn)dlsym(h, "HixlCSClientRegMem");
    if (reg == NULL) return 2;
    Dl_info info;
    if (dladdr((void *)reg, &info) != 0) printf("lib=%s\n", info.dli_fname);
    CommMem mem = {1, NULL, 4096};
    void *handle = NULL;
    printf("null_addr=%u\n", reg((void *)0x1, "kv", &mem, &handle));
    return 0;
}
