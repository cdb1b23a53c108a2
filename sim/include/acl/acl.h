/*
 * acl/acl.h - umbrella header of the regcheck ACL simulator: everything is in acl_rt.h
 * (which includes acl_base.h), as in the vendor's current packages.
 */
#ifndef ACLSIM_ACL_ACL_H_
#define ACLSIM_ACL_ACL_H_

#include "acl_rt.h"

#endif /* ACLSIM_ACL_ACL_H_ */
