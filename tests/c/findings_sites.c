/* Which findings of the log keep their call site: with `early` the program reads the log
 * before its calls (every finding keeps it), without it only afterwards (the findings beyond
 * REGCHECK_MAX_REPEATS, which are not logged, have none). Prints `site <seq> <call site>`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "regcheck.h"

__attribute__((noinline)) static aclError misaligned(char *buf) {
    return aclrtHostRegisterV2(buf + 8, 4096, ACL_HOST_REG_MAPPED);
}

int main(int argc, char **argv) {
    int early = argc > 1 && strcmp(argv[1], "early") == 0;
    uint64_t seq = early ? regcheck_findings_last_seq() : 0;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 1;
    char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, 2 * 4096) != 0) return 1;
    /* A warning, forwarded: the vendor refuses it and nothing is registered. */
    if (regcheck_rule_set_action("ACL-HOSTREG-ALIGN", REGCHECK_ACTION_WARN) != REGCHECK_STATUS_OK) return 1;
    for (int i = 0; i < 5; i++) misaligned(buf);
    regcheck_logged_finding f;
    while (regcheck_finding_next(seq, &f) == REGCHECK_STATUS_OK) {
        printf("site %llu %s\n", (unsigned long long)f.seq, f.call_site);
        seq = f.seq;
    }
    return 0;
}
