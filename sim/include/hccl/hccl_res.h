/*
 * hccl/hccl_res.h - HCCL's communication-resource header as programs include it, written for the
 * regcheck simulator: it brings the endpoint and memory types (hcomm/hcomm_res_defs.h) and HCCL's
 * result codes (hccl/hccl_types.h). No HCCL function is simulated.
 */
#ifndef ACLSIM_HCCL_HCCL_RES_H_
#define ACLSIM_HCCL_HCCL_RES_H_

#include "hccl/hccl_types.h"
#include "hcomm/hcomm_res_defs.h"

#endif /* ACLSIM_HCCL_HCCL_RES_H_ */
