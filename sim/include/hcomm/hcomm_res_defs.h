/*
 * hcomm/hcomm_res_defs.h - the communication-resource types that cs/hixl_cs.h uses, written for
 * the regcheck simulator from the interface hicann/hixl declares (src/hixl/proxy/hcomm/
 * hcomm_res_defs.h): the protocol, address-type and location enums with their values, CommAddr,
 * EndpointLoc, EndpointDesc (160 bytes), CommMemType, CommMem and EndpointDescInit. C99 and C++.
 * Like the vendor's it brings in <arpa/inet.h> (struct in_addr, inet_pton).
 */
#ifndef ACLSIM_HCOMM_HCOMM_RES_DEFS_H_
#define ACLSIM_HCOMM_HCOMM_RES_DEFS_H_

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The vendor's structs have anonymous unions (C11, C++); in C99 with -pedantic GCC and Clang
 * take them as an extension. */
#if defined(__GNUC__) && !defined(__cplusplus)
#define ACLSIM_ANON_UNION __extension__ union
#else
#define ACLSIM_ANON_UNION union
#endif

typedef int32_t HcommResult;
typedef void *EndpointHandle;
typedef void *HcommMemHandle;

#define COMM_ADDR_EID_LEN 16

typedef enum {
  COMM_PROTOCOL_RESERVED = -1,
  COMM_PROTOCOL_HCCS = 0,
  COMM_PROTOCOL_ROCE = 1,
  COMM_PROTOCOL_PCIE = 2,
  COMM_PROTOCOL_SIO = 3,
  COMM_PROTOCOL_UBC_CTP = 4,
  COMM_PROTOCOL_UBC_TP = 5,
  COMM_PROTOCOL_UB_MEM = 6,
  COMM_PROTOCOL_UBOE = 7,
  COMM_PROTOCOL_HCCS_ONLY = 8,
  COMM_PROTOCOL_UBG = 9 /* UB_RTP */
} CommProtocol;

typedef enum {
  COMM_ADDR_TYPE_RESERVED = -1,
  COMM_ADDR_TYPE_IP_V4 = 0,
  COMM_ADDR_TYPE_IP_V6 = 1,
  COMM_ADDR_TYPE_ID = 2,
  COMM_ADDR_TYPE_EID = 3
} CommAddrType;

typedef struct {
  CommAddrType type;
  ACLSIM_ANON_UNION {
    uint8_t raws[36];
    struct in_addr addr;
    struct in6_addr addr6;
    uint32_t id;
    uint8_t eid[COMM_ADDR_EID_LEN];
  };
} CommAddr;

typedef enum { ENDPOINT_LOC_TYPE_RESERVED = -1, ENDPOINT_LOC_TYPE_DEVICE = 0, ENDPOINT_LOC_TYPE_HOST = 1 } EndpointLocType;

typedef struct {
  EndpointLocType locType;
  ACLSIM_ANON_UNION {
    uint8_t raws[60];
    struct {
      uint32_t devPhyId;
      uint32_t superDevId;
      uint32_t serverIdx;
      uint32_t superPodIdx;
    } device;
    struct {
      uint32_t id;
    } host;
  };
} EndpointLoc;

typedef struct {
  CommProtocol protocol;
  CommAddr commAddr;
  EndpointLoc loc;
  ACLSIM_ANON_UNION {
    uint8_t raws[52];
  };
} EndpointDesc;

typedef enum { COMM_MEM_TYPE_INVALID = -1, COMM_MEM_TYPE_DEVICE = 0, COMM_MEM_TYPE_HOST = 1 } CommMemType;

typedef struct {
  CommMemType type;
  void *addr;
  uint64_t size;
} CommMem;

/* Fills `num` descriptors with 0xFF bytes and marks protocol, address type and location
 * reserved; 2 (HCCL's pointer error) for NULL. */
static inline HcommResult EndpointDescInit(EndpointDesc *endpoint, uint32_t num) {
  uint32_t i;
  if (endpoint == NULL) return (HcommResult)2;
  for (i = 0; i < num; i++) {
    memset(&endpoint[i], 0xFF, sizeof(EndpointDesc));
    endpoint[i].protocol = COMM_PROTOCOL_RESERVED;
    endpoint[i].commAddr.type = COMM_ADDR_TYPE_RESERVED;
    endpoint[i].loc.locType = ENDPOINT_LOC_TYPE_RESERVED;
  }
  return (HcommResult)0;
}

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_HCOMM_HCOMM_RES_DEFS_H_ */
