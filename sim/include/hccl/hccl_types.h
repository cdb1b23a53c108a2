/*
 * hccl/hccl_types.h - stand-in of the vendor's HCCL base types, for programs built against the
 * regcheck simulator (HIXL's internal headers include it). Written from the interface facts
 * (the enumerator names and values of HcclResult in the CANN HCCL API reference); not the
 * vendor's file. Compiles as C99 and C++.
 */
#ifndef ACLSIM_HCCL_HCCL_TYPES_H_
#define ACLSIM_HCCL_HCCL_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of the HCCL functions. */
typedef enum {
    HCCL_SUCCESS = 0,
    HCCL_E_PARA = 1,
    HCCL_E_PTR = 2,
    HCCL_E_MEMORY = 3,
    HCCL_E_INTERNAL = 4,
    HCCL_E_NOT_SUPPORT = 5,
    HCCL_E_NOT_FOUND = 6,
    HCCL_E_UNAVAIL = 7,
    HCCL_E_SYSCALL = 8,
    HCCL_E_TIMEOUT = 9,
    HCCL_E_OPEN_FILE_FAILURE = 10,
    HCCL_E_TCP_CONNECT = 11,
    HCCL_E_ROCE_CONNECT = 12,
    HCCL_E_TCP_TRANSFER = 13,
    HCCL_E_ROCE_TRANSFER = 14,
    HCCL_E_RUNTIME = 15,
    HCCL_E_DRV = 16,
    HCCL_E_PROFILING = 17,
    HCCL_E_CCE = 18,
    HCCL_E_NETWORK = 19,
    HCCL_E_AGAIN = 20,
    HCCL_E_REMOTE = 21,
    HCCL_E_SUSPENDING = 22,
    HCCL_E_OPRETRY_FAIL = 23,
    HCCL_E_OOM = 24,
    HCCL_E_IN_STATUS = 1041,
    HCCL_E_RESERVED
} HcclResult;

/* Communicator handle (opaque). */
typedef void *HcclComm;

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_HCCL_HCCL_TYPES_H_ */
