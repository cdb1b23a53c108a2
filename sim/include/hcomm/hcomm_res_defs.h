/*
 * hcomm/hcomm_res_defs.h - the communication-resource types used by cs/hixl_cs.h, written for
 * the regcheck simulator. CommMemType and CommMem follow the vendor's documented interface; EndpointDesc
 * is the simulator's own minimal stand-in (it is only passed by pointer and never read).
 */
#ifndef ACLSIM_HCOMM_HCOMM_RES_DEFS_H_
#define ACLSIM_HCOMM_HCOMM_RES_DEFS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { COMM_MEM_TYPE_INVALID = -1, COMM_MEM_TYPE_DEVICE = 0, COMM_MEM_TYPE_HOST = 1 } CommMemType;

typedef struct {
  CommMemType type;
  void *addr;
  uint64_t size;
} CommMem;

typedef struct EndpointDesc {
  uint32_t protocol;
  uint32_t placement;
  uint8_t reserved[120];
} EndpointDesc;

#ifdef __cplusplus
}
#endif

#endif  // ACLSIM_HCOMM_HCOMM_RES_DEFS_H_
