/* Loads PLUGIN (audit_plugin.c) with RTLD_DEEPBIND and registers through it: the plugin's
 * PLT bindings resolve inside its own scope, to the vendor library.
 *
 *   audit_deepbind PLUGIN [lazy|now]
 *
 * `lazy` (default) opens it RTLD_LAZY: each PLT slot is bound at its first call. `now` opens
 * it RTLD_NOW: every slot is bound while it is loaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*init_fn)(void);
typedef int (*register_fn)(void *, uint64_t);
typedef int (*unregister_fn)(void *);

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: audit_deepbind PLUGIN [lazy|now]\n");
        return 2;
    }
    int bind = (argc > 2 && strcmp(argv[2], "now") == 0) ? RTLD_NOW : RTLD_LAZY;
    void *h = dlopen(argv[1], bind | RTLD_LOCAL | RTLD_DEEPBIND);
    if (h == NULL) {
        fprintf(stderr, "audit_deepbind: dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    init_fn init = (init_fn)dlsym(h, "audit_plugin_init");
    register_fn reg = (register_fn)dlsym(h, "audit_plugin_register");
    unregister_fn unreg = (unregister_fn)dlsym(h, "audit_plugin_unregister");
    if (init == NULL || reg == NULL || unreg == NULL) return 2;

    void *buf = NULL;
    if (posix_memalign(&buf, 4096, 8192) != 0) return 2;
    memset(buf, 0, 8192);
    printf("init=%d\n", init());
    printf("bad.null=%d\n", reg(NULL, 4096));
    printf("bad.size0=%d\n", reg(buf, 0));
    printf("good.register=%d\n", reg(buf, 8192));
    printf("good.unregister=%d\n", unreg(buf));
    printf("bad.unregister_again=%d\n", unreg(buf));
    fflush(stdout);
    free(buf);
    return 0;
}
