/* regcheck's own C API, with regcheck.h and the vendor's acl.h in one translation unit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "regcheck.h"

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "api_test: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

int main(void) {
    CHECK(strcmp(regcheck_version(), REGCHECK_VERSION_STRING) == 0);
    CHECK(REGCHECK_VERSION_MAJOR == 0 && REGCHECK_VERSION_MINOR >= 1);
    CHECK(strcmp(regcheck_status_str(REGCHECK_STATUS_OK), "ok") == 0);

    size_t n = regcheck_rule_count();
    CHECK(n >= 48);
    regcheck_rule_info info;
    CHECK(regcheck_rule_get(0, &info) == REGCHECK_STATUS_OK);
    CHECK(strcmp(info.name, "ACL-HOSTREG-NULL") == 0 && info.id == 1 && info.vendor_code == 100000);
    CHECK(regcheck_rule_get(n, &info) == REGCHECK_STATUS_NOT_FOUND);
    CHECK(regcheck_rule_get(0, NULL) == REGCHECK_STATUS_NULL_ARGUMENT);
    for (size_t i = 0; i < n; i++) {
        CHECK(regcheck_rule_get(i, &info) == REGCHECK_STATUS_OK);
        CHECK(info.name && info.summary && info.fix && info.source && info.calls);
    }
    CHECK(regcheck_rule_find("acl-hostreg-align", &info) == REGCHECK_STATUS_OK);
    CHECK(strcmp(info.name, "ACL-HOSTREG-ALIGN") == 0);
    CHECK(info.default_action == REGCHECK_ACTION_ERROR && info.action == REGCHECK_ACTION_ERROR);
    CHECK(regcheck_rule_find("NOPE", &info) == REGCHECK_STATUS_NOT_FOUND);
    CHECK(regcheck_get_mode() == REGCHECK_MODE_ENFORCE);

    CHECK(aclInit(NULL) == 0 && aclrtSetDevice(0) == 0);
    char *buf = NULL;
    CHECK(posix_memalign((void **)&buf, 4096, 4 * 4096) == 0);

    /* Dry run: the findings, without registering. */
    regcheck_report *report = NULL;
    CHECK(regcheck_check_host_register(buf + 8, 4096, ACL_HOST_REG_MAPPED, &report) == REGCHECK_STATUS_OK);
    CHECK(regcheck_report_count(report) == 1);
    regcheck_finding f;
    CHECK(regcheck_report_get(report, 0, &f) == REGCHECK_STATUS_OK);
    CHECK(strcmp(f.rule_name, "ACL-HOSTREG-ALIGN") == 0 && f.vendor_code == 100000);
    CHECK(strcmp(f.argument, "ptr") == 0 && strstr(f.message, "posix_memalign") != NULL);
    CHECK(regcheck_report_get(report, 1, &f) == REGCHECK_STATUS_NOT_FOUND);
    regcheck_report_free(report);
    CHECK(regcheck_check_host_register(buf, 4096, ACL_HOST_REG_MAPPED, &report) == REGCHECK_STATUS_OK);
    CHECK(regcheck_report_count(report) == 0);
    regcheck_report_free(report);
    regcheck_report_free(NULL);
    CHECK(regcheck_live_host_registrations() == 0);
    CHECK(regcheck_check_host_register(buf, 4096, 0, NULL) == REGCHECK_STATUS_NULL_ARGUMENT);

    /* Rejection, the thread's last rejection message, and run-time actions. */
    uint64_t seq0 = regcheck_findings_last_seq();
    size_t kept0 = regcheck_findings_count();
    CHECK(regcheck_last_rejection(NULL, 0) == 0);
    CHECK(aclrtHostRegisterV2(buf + 8, 4096, ACL_HOST_REG_MAPPED) == ACL_ERROR_INVALID_PARAM);
    char msg[512];
    size_t len = regcheck_last_rejection(msg, sizeof msg);
    CHECK(len > 0 && strstr(msg, "[ACL-HOSTREG-ALIGN]") != NULL);
    char small[8];
    CHECK(regcheck_last_rejection(small, sizeof small) == len && strlen(small) == 7);
    CHECK(regcheck_rule_set_action("ACL-HOSTREG-ALIGN", REGCHECK_ACTION_WARN) == REGCHECK_STATUS_OK);
    CHECK(regcheck_rule_find("ACL-HOSTREG-ALIGN", &info) == REGCHECK_STATUS_OK && info.action == REGCHECK_ACTION_WARN);
    CHECK(aclrtHostRegisterV2(buf + 8, 4096, ACL_HOST_REG_MAPPED) == ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    CHECK(regcheck_rule_set_action("ACL-HOSTREG-*", REGCHECK_ACTION_ERROR) == REGCHECK_STATUS_OK);
    CHECK(regcheck_rule_set_action("NOPE-*", REGCHECK_ACTION_ERROR) == REGCHECK_STATUS_NOT_FOUND);
    CHECK(regcheck_rule_set_action(NULL, REGCHECK_ACTION_ERROR) == REGCHECK_STATUS_NULL_ARGUMENT);
    CHECK(regcheck_rule_set_action("ACL-HOSTREG-ALIGN", 9) == REGCHECK_STATUS_INVALID_ARGUMENT);
    CHECK(aclrtHostRegisterV2(buf + 8, 4096, ACL_HOST_REG_MAPPED) == ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtHostRegisterV2(buf, 4096, ACL_HOST_REG_MAPPED) == 0);
    CHECK(regcheck_live_host_registrations() == 1);
    CHECK(aclrtHostUnregister(buf) == 0);

    /* The findings log: the three misaligned calls above, in order, since seq0. */
    CHECK(regcheck_logged_finding_size() == sizeof(regcheck_logged_finding));
    CHECK(regcheck_findings_last_seq() == seq0 + 3 && regcheck_findings_count() == kept0 + 3);
    CHECK(regcheck_findings_dropped() == 0);
    regcheck_logged_finding lf;
    uint64_t seq = seq0;
    int seen = 0;
    while (regcheck_finding_next(seq, &lf) == REGCHECK_STATUS_OK) {
        CHECK(lf.seq == seq + 1);
        seq = lf.seq;
        seen++;
        CHECK(strcmp(lf.rule_name, "ACL-HOSTREG-ALIGN") == 0 && strcmp(lf.call, "aclrtHostRegisterV2") == 0);
        CHECK(strstr(lf.message, "[ACL-HOSTREG-ALIGN] aclrtHostRegisterV2(") != NULL);
        CHECK(strncmp(lf.call_site, "main (", 6) == 0 && strstr(lf.call_site, "api_test.c:") != NULL);
        CHECK(lf.tid != 0);
        if (seen == 2) { /* the warning: forwarded, the vendor's own answer */
            CHECK(lf.severity == REGCHECK_ACTION_WARN && !lf.rejected && lf.code == 0);
        } else {
            CHECK(lf.severity == REGCHECK_ACTION_ERROR && lf.rejected && lf.code == ACL_ERROR_INVALID_PARAM);
        }
    }
    CHECK(seen == 3);
    CHECK(regcheck_finding_get(kept0 + 2, &lf) == REGCHECK_STATUS_OK && lf.seq == seq0 + 3);
    CHECK(regcheck_finding_get(kept0 + 3, &lf) == REGCHECK_STATUS_NOT_FOUND);
    CHECK(regcheck_finding_get(0, NULL) == REGCHECK_STATUS_NULL_ARGUMENT);
    CHECK(regcheck_finding_next(0, NULL) == REGCHECK_STATUS_NULL_ARGUMENT);

    /* The detected environment. */
    regcheck_environment env;
    CHECK(regcheck_environment_get(&env) == REGCHECK_STATUS_OK);
    CHECK(env.page_size == 4096 && env.kernel_release[0] != '\0' && env.kernel_major >= 3);
    CHECK(strcmp(env.pageable_kernel_max, "5.10") == 0);
    CHECK(strcmp(env.soc_name, "Ascend910B1") == 0 && env.product == REGCHECK_PRODUCT_ATLAS_A2);
    CHECK(strcmp(env.hdk_version, "25.3.rc1") == 0 && env.hdk_known);
    CHECK(env.mode == REGCHECK_MODE_ENFORCE);
    CHECK(regcheck_environment_get(NULL) == REGCHECK_STATUS_NULL_ARGUMENT);
    printf("api ok\n");
    return 0;
}
