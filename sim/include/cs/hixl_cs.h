/*
 * cs/hixl_cs.h - the HIXL client/server C API of libcann_hixl.so (the vendor's documented interface),
 * written for the regcheck simulator. Like the vendor's header it is C++-only (default member
 * initialisers), with extern "C" functions.
 */
#ifndef ACLSIM_CS_HIXL_CS_H_
#define ACLSIM_CS_HIXL_CS_H_

#include <cstdint>

#include "hcomm/hcomm_res_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *HixlServerHandle;
typedef void *HixlClientHandle;
typedef void *CompleteHandle;
typedef uint32_t HixlStatus;
typedef void *MemHandle;
static const uint32_t HIXL_SUCCESS = 0U;
static const uint32_t HIXL_PARAM_INVALID = 103900U;
static const uint32_t HIXL_TIMEOUT = 103901U;
static const uint32_t HIXL_FAILED = 503900U;
static const uint32_t HIXL_RESOURCE_EXHAUSTED = 203900U;

struct HixlServerConfig {
  const char *global_resource_config = nullptr;
  uint8_t reserved[120] = {};
};

struct HixlClientConfig {
  const char *global_resource_config = nullptr;
  uint8_t reserved[120] = {};
};

struct HixlClientDesc {
  const EndpointDesc *local_endpoint;
  const EndpointDesc *remote_endpoint;
  const char *server_ip;
  uint32_t server_port;
  uint8_t tc;  // RDMA traffic class
  uint8_t sl;  // RDMA service level
  uint8_t reserved[98] = {};
};

struct HixlServerDesc {
  const EndpointDesc *endpoint_list;
  const char *server_ip;
  uint32_t server_port;
  uint32_t endpoint_list_num;
  uint8_t reserved[104] = {};
};

struct HixlOneSideOpDesc {
  void *remote_buf;
  void *local_buf;
  uint64_t len;
};

enum HixlCompleteStatus {
  HIXL_COMPLETE_STATUS_WAITING,
  HIXL_COMPLETE_STATUS_COMPLETED,
  HIXL_COMPLETE_STATUS_TIMEOUT,
  HIXL_COMPLETE_STATUS_FAILED
};

HixlStatus HixlCSServerCreate(const HixlServerDesc *server_desc, const HixlServerConfig *config,
                              HixlServerHandle *server_handle);
HixlStatus HixlCSServerRegMem(HixlServerHandle server_handle, const char *mem_tag, const CommMem *mem,
                              MemHandle *mem_handle);
HixlStatus HixlCSServerListen(HixlServerHandle server_handle, uint32_t backlog);
HixlStatus HixlCSServerUnregMem(HixlServerHandle server_handle, MemHandle mem_handle);
HixlStatus HixlCSServerDestroy(HixlServerHandle server_handle);

HixlStatus HixlCSClientCreate(const HixlClientDesc *client_desc, const HixlClientConfig *config,
                              HixlClientHandle *client_handle);
HixlStatus HixlCSClientConnect(HixlClientHandle client_handle, uint32_t timeout_ms);
HixlStatus HixlCSClientGetRemoteMem(HixlClientHandle client_handle, CommMem **remote_mem_list, char ***mem_tag_list,
                                    uint32_t *list_num, uint32_t timeout_ms);
HixlStatus HixlCSClientRegMem(HixlClientHandle client_handle, const char *mem_tag, const CommMem *mem,
                              MemHandle *mem_handle);
HixlStatus HixlCSClientUnregMem(HixlClientHandle client_handle, MemHandle mem_handle);
HixlStatus HixlCSClientBatchPutAsync(HixlClientHandle client_handle, uint32_t list_num,
                                     const HixlOneSideOpDesc *desc_list, CompleteHandle *complete_handle);
HixlStatus HixlCSClientBatchGetAsync(HixlClientHandle client_handle, uint32_t list_num,
                                     const HixlOneSideOpDesc *desc_list, CompleteHandle *complete_handle);
HixlStatus HixlCSClientBatchPutSync(HixlClientHandle client_handle, uint32_t list_num,
                                    const HixlOneSideOpDesc *desc_list, uint32_t timeout_ms);
HixlStatus HixlCSClientBatchGetSync(HixlClientHandle client_handle, uint32_t list_num,
                                    const HixlOneSideOpDesc *desc_list, uint32_t timeout_ms);
HixlStatus HixlCSClientQueryCompleteStatus(HixlClientHandle client_handle, CompleteHandle complete_handle,
                                           HixlCompleteStatus *complete_status);
HixlStatus HixlCSClientDestroy(HixlClientHandle client_handle);

#ifdef __cplusplus
}
#endif

#endif  // ACLSIM_CS_HIXL_CS_H_
