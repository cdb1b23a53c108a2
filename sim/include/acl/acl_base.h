/*
 * acl/acl_base.h - basic types and every error code of the regcheck SIMULATOR's ACL headers
 * (the same include chain as the vendor's: acl/acl_base_rt.h, error_codes/rt_error_codes.h).
 * Compiles as C99 and C++.
 */
#ifndef ACLSIM_ACL_ACL_BASE_H_
#define ACLSIM_ACL_ACL_BASE_H_

#include "acl/acl_base_rt.h"
#include "error_codes/rt_error_codes.h"

#endif /* ACLSIM_ACL_ACL_BASE_H_ */
