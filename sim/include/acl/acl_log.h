/*
 * acl/acl_log.h - the ACL log entry points the regcheck SIMULATOR's libacl_rt.so exports
 * (the vendor declares them weak in its dfx header; libcann_hixl.so calls them when present).
 * Written for this project from the interface facts; not the vendor's header text.
 */
#ifndef ACLSIM_ACL_ACL_LOG_H_
#define ACLSIM_ACL_ACL_LOG_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when `logLevel` (0 debug, 1 info, 2 warning, 3 error) is enabled for `moduleId`, else 0. */
int32_t acllogCheckDebugLevel(int32_t moduleId, int32_t logLevel) __attribute__((weak));
void acllogRecord(int32_t moduleId, int32_t level, const char *fmt, ...) __attribute__((weak))
__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACL_ACL_LOG_H_ */
