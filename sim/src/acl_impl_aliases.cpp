// libacl_rt.so of the simulator: every function of acl_api.def exported again as
// `aclsim_impl_<name>`, the entry points libascendcl.so's stubs forward to. The library is
// linked with -Bsymbolic, so these calls bind to this library's own definitions.
#include "acl/acl_rt.h"
#include "aclsim.h"

extern "C" {
#define ACLSIM_API(ret, name, params, args) \
    ret aclsim_impl_##name params;          \
    ret aclsim_impl_##name params { return name args; }
#include "acl_api.def"
#undef ACLSIM_API
}
