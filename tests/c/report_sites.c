/*
 * The exit summary, repeats and suppressions, as a team meets them. Run as
 *   report_sites <scenario>
 * Scenarios:
 *   repeats  150 misaligned registrations from hot_loop() (one call site), 2 from
 *            cold_path() (another call site); prints "rc hot <code>" once and "rc cold <code>"
 *            for each cold call.
 *   clean    only valid calls.
 * The lines of the calls carry a CALLSITE marker that the Rust test looks up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

static char *buffer(void) {
    char *base = NULL;
    if (posix_memalign((void **)&base, 4096, 8192) != 0) exit(2);
    return base;
}

static void __attribute__((noinline)) hot_loop(char *base) {
    int rc = 0;
    for (int i = 0; i < 150; i++) {
        rc = aclrtHostRegisterV2(base + 64, 4096, ACL_HOST_REG_MAPPED); /* CALLSITE:hot */
    }
    printf("rc hot %d\n", rc);
}

static void __attribute__((noinline)) cold_path(char *base) {
    int rc = aclrtHostRegisterV2(base + 128, 4096, ACL_HOST_REG_MAPPED); /* CALLSITE:cold */
    printf("rc cold %d\n", rc);
}

int main(int argc, char **argv) {
    const char *scenario = argc > 1 ? argv[1] : "repeats";
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) {
        fprintf(stderr, "report_sites: setup failed\n");
        return 2;
    }
    char *base = buffer();
    if (strcmp(scenario, "repeats") == 0) {
        hot_loop(base);
        cold_path(base);
        cold_path(base);
    } else if (strcmp(scenario, "clean") == 0) {
        void *host = NULL;
        printf("rc malloc %d\n", aclrtMallocHost(&host, 4096));
        aclrtFreeHost(host);
    } else {
        fprintf(stderr, "report_sites: unknown scenario %s\n", scenario);
        return 2;
    }
    fflush(stdout);
    return 0;
}
