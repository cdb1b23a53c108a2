/*
 * acl/acl.h - umbrella header of the regcheck ACL simulator (see acl_rt.h).
 * aclInit/aclFinalize/aclsys* are declared in acl_rt.h.
 */
#ifndef ACLSIM_ACL_ACL_H_
#define ACLSIM_ACL_ACL_H_

#include "acl_rt.h"

#endif /* ACLSIM_ACL_ACL_H_ */
