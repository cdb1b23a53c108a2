/*
 * hccl/hccl_mem.h - HCCL's global-memory registration as LLM-DataDist's comm backend reaches it
 * (by dlsym in libhcomm.so: HcclRegisterGlobalMem, HcclDeregisterGlobalMem, with the prototypes
 * hicann/hixl declares for them in src/llm_datadist/comm_adapter/comm_adapter.h), written for
 * the regcheck simulator. C99 and C++.
 */
#ifndef ACLSIM_HCCL_HCCL_MEM_H_
#define ACLSIM_HCCL_HCCL_MEM_H_

#include "hccl/hccl_types.h"
#include "hcomm/hcomm_res_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers [mem->addr, mem->addr + mem->size) of mem->type; *memHandle receives the handle. */
HcclResult HcclRegisterGlobalMem(CommMem *mem, void **memHandle);
/* Releases a handle of HcclRegisterGlobalMem. */
HcclResult HcclDeregisterGlobalMem(void *memHandle);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_HCCL_HCCL_MEM_H_ */
