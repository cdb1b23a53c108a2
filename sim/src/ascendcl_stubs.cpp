// libascendcl.so of the simulator: the legacy library name. Every function is a stub that
// forwards to the implementation exported by libacl_rt.so under `aclsim_impl_<name>`, so that
// both library names share one state (the vendor's libascendcl.so likewise forwards).
#include "acl/acl_rt.h"
#include "aclsim.h"

extern "C" {
#define ACLSIM_API(ret, name, params, args) \
    ret aclsim_impl_##name params;          \
    ret name params { return aclsim_impl_##name args; }
#include "acl_api.def"
#undef ACLSIM_API
}
