/*
 * Call sites and aclGetRecentErrMsg under regcheck. Run as
 *   callsite <scenario>
 * Scenarios:
 *   align    register_buffers() (called by setup_pool(), called by main) registers a buffer
 *            that is not page-aligned; prints "rc register <code>", then what
 *            aclGetRecentErrMsg() returns ("errmsg <text>"), then makes a valid ACL call and
 *            prints aclGetRecentErrMsg() again ("errmsg-after <text>").
 *   thread   the same rejection on a second thread; the main thread's aclGetRecentErrMsg()
 *            stays the vendor's ("errmsg-main <text>").
 *   clean    only valid calls ("errmsg <text>").
 * After the rejection, regcheck's C API is asked for the call site ("site <text>",
 * "site-function <name>", "site-line <n>") and the rule ("rule <id>"), when it is reachable.
 * The lines of the calls carry a CALLSITE marker that the Rust test looks up.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "regcheck.h"

/* regcheck's own API, when regcheck is in the process (weak: a bare run has none). */
#pragma weak regcheck_last_rejection_site
#pragma weak regcheck_last_rejection_rule

static void print_errmsg(const char *label) {
    const char *m = aclGetRecentErrMsg();
    printf("%s %s\n", label, m ? m : "(null)");
    fflush(stdout);
}

static int __attribute__((noinline)) register_buffers(char *base, size_t size) {
    int rc = aclrtHostRegisterV2(base + 64, size, ACL_HOST_REG_MAPPED); /* CALLSITE:register */
    printf("rc register %d\n", rc);
    fflush(stdout);
    return rc;
}

static int __attribute__((noinline)) setup_pool(size_t size) {
    char *base = NULL;
    if (posix_memalign((void **)&base, 4096, size * 2) != 0) return 2;
    int rc = register_buffers(base, size); /* CALLSITE:setup_pool */
    print_errmsg("errmsg");
    if (regcheck_last_rejection_site && regcheck_last_rejection_rule) {
        regcheck_call_site site;
        if (regcheck_last_rejection_site(0, &site) == REGCHECK_STATUS_OK) {
            printf("site %s\nsite-function %s\nsite-line %u\n", site.text, site.function, site.line);
        }
        printf("rule %u\n", regcheck_last_rejection_rule());
    }
    void *host = NULL;
    if (aclrtMallocHost(&host, 4096) == 0) aclrtFreeHost(host);
    print_errmsg("errmsg-after");
    return rc;
}

static void *thread_main(void *arg) {
    (void)arg;
    if (aclrtSetDevice(0) != 0) return NULL;
    setup_pool(4096);
    return NULL;
}

int main(int argc, char **argv) {
    const char *scenario = argc > 1 ? argv[1] : "align";
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) {
        fprintf(stderr, "callsite: setup failed\n");
        return 2;
    }
    if (strcmp(scenario, "align") == 0) {
        setup_pool(4096); /* CALLSITE:main */
    } else if (strcmp(scenario, "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, NULL) != 0) return 2;
        pthread_join(t, NULL);
        print_errmsg("errmsg-main");
    } else if (strcmp(scenario, "clean") == 0) {
        void *host = NULL;
        printf("rc malloc %d\n", aclrtMallocHost(&host, 4096));
        print_errmsg("errmsg");
        aclrtFreeHost(host);
    } else {
        fprintf(stderr, "callsite: unknown scenario %s\n", scenario);
        return 2;
    }
    return 0;
}
