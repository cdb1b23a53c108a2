/* Compile-only check: the simulator's C headers build as C99 and as C++ with all warnings. */
#include "acl/acl.h"
#include "acl/acl_base.h"
#include "acl/acl_rt.h"
#include "aclsim.h"
#include "hcomm/hcomm_res_defs.h"
#include "securec.h"

int headers_compile(void);
int headers_compile(void) {
    aclrtHostRegisterType t = ACL_HOST_REGISTER_MAPPED;
    aclrtMemMallocPolicy p = ACL_MEM_MALLOC_HUGE_ONLY;
    aclrtMemcpyKind k = ACL_MEMCPY_DEVICE_TO_HOST;
    aclrtPhysicalMemProp prop = {ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_ALLOCATION_TYPE_PINNED, ACL_HBM_MEM_HUGE,
                                 {0, ACL_MEM_LOCATION_TYPE_DEVICE}, 0};
    aclrtDrvMemHandle h = NULL;
    aclsimMemInfo info = {ACLSIM_MEM_UNKNOWN, -1, 0, 0, 0, -1};
    errno_t e = EOK;
    CommMem m = {COMM_MEM_TYPE_HOST, 0, 0};
    return (int)t + (int)p + (int)k + (int)prop.memAttr + (h == NULL) + info.kind + e + (int)m.type + ACL_SUCCESS +
           ACL_ERROR_NONE + (int)(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED) + (aclsimGetCallCount("x") == 0) +
           (ACL_ERROR_RT_PARAM_INVALID == 107000) + (EOVERLAP_AND_RESET == 182);
}
