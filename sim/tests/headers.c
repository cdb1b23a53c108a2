/* Compile-only check: the simulator's C headers build as C99 and as C++ with all warnings. */
#include "acl/acl.h"
#include "acl/acl_rt.h"
#include "aclsim.h"
#include "hcomm/hcomm_res_defs.h"

int headers_compile(void);
int headers_compile(void) {
    aclrtHostRegisterType t = ACL_HOST_REGISTER_MAPPED;
    aclrtMemMallocPolicy p = ACL_MEM_MALLOC_HUGE_ONLY;
    CommMem m = {COMM_MEM_TYPE_HOST, 0, 0};
    return (int)t + (int)p + (int)m.type + ACL_SUCCESS + (int)(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED) +
           (aclsimGetCallCount("x") == 0);
}
