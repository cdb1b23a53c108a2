/* A program that never loads the vendor library but does use dlopen + dlsym (on libm):
 * under LD_AUDIT + LD_PRELOAD it must run unchanged and the audit module must stay silent. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "audit_novendor: dlopen libm.so.6: %s\n", dlerror());
        return 2;
    }
    double (*cosine)(double) = (double (*)(double))dlsym(h, "cos");
    if (cosine == NULL) return 2;
    printf("cos0=%g\n", cosine(0.0));
    return 0;
}
