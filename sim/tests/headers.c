/* Compile-only check: the simulator's C headers build as C99 and as C++ with all warnings. */
#include "acl/acl.h"
#include "acl/acl_base.h"
#include "acl/acl_rt.h"
#include "aclsim.h"
#include "hccl/hccl_res.h"
#include "hcomm/hcomm_res_defs.h"
#include "securec.h"

/* the vendor's EndpointDesc layout (src/hixl/proxy/hcomm/hcomm_res_defs.h): 160 bytes */
typedef char endpoint_desc_is_160_bytes[sizeof(EndpointDesc) == 160 ? 1 : -1];
/* the runtime's layouts (include/external/acl/acl_rt.h) */
typedef char fabric_handle_is_128_bytes[sizeof(aclrtMemFabricHandle) == 128 ? 1 : -1];
typedef char memcpy_batch_attr_is_32_bytes[sizeof(aclrtMemcpyBatchAttr) == 32 ? 1 : -1];
typedef char mem_access_desc_is_24_bytes[sizeof(aclrtMemAccessDesc) == 24 ? 1 : -1];

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
    EndpointDesc ep;
    HcclResult hr = HCCL_SUCCESS;
    (void)EndpointDescInit(&ep, 1);
    ep.protocol = COMM_PROTOCOL_UBC_CTP;
    ep.commAddr.type = COMM_ADDR_TYPE_IP_V4;
    ep.commAddr.id = 1;
    ep.loc.locType = ENDPOINT_LOC_TYPE_DEVICE;
    ep.loc.device.devPhyId = 0;
    if (ep.protocol != COMM_PROTOCOL_UBC_CTP || hr != HCCL_SUCCESS) return -1;
    return (int)t + (int)p + (int)k + (int)prop.memAttr + (h == NULL) + info.kind + e + (int)m.type + ACL_SUCCESS +
           ACL_ERROR_NONE + (int)(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED) + (aclsimGetCallCount("x") == 0) +
           (ACL_ERROR_RT_PARAM_INVALID == 107000) + (EOVERLAP_AND_RESET == 182);
}
