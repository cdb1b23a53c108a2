/*
 * acl/acl_base_rt.h - basic ACL types and the ACL-level error codes of the regcheck SIMULATOR.
 * Written for this project from the public interface facts; not the vendor's header text.
 * Like the vendor's, the ACL-level codes (ACL_SUCCESS, ACL_ERROR_NONE, ACL_ERROR_INVALID_PARAM,
 * ...) are `static const int` objects, not macros: in C they cannot be `case` labels.
 * Compiles as C99 and C++.
 */
#ifndef ACLSIM_ACL_ACL_BASE_RT_H_
#define ACLSIM_ACL_ACL_BASE_RT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY
#endif

typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef int aclError;
typedef uint16_t aclFloat16;

static const int ACL_ERROR_NONE = 0;
static const int ACL_SUCCESS = 0;

static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_WRITE_FILE = 100004;
static const int ACL_ERROR_INVALID_FILE_SIZE = 100005;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_FILE_MISSING_ATTR = 100007;
static const int ACL_ERROR_FILE_ATTR_INVALID = 100008;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;

static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;

static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;

/* The SoC name of the current device (NULL when it cannot be read). */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACL_ACL_BASE_RT_H_ */
