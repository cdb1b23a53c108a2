/*
 * hixl/hixl_types.h - HIXL types, as in the vendor's header (the vendor's documented interface), written
 * for the regcheck simulator.
 */
#ifndef ACLSIM_HIXL_HIXL_TYPES_H_
#define ACLSIM_HIXL_HIXL_TYPES_H_

#include <cstddef>
#include <cstdint>
// As in the vendor's header: std::map, std::string, std::cerr (<iostream>) and ge::AscendString
// come through metadef's ge_common/api_error_codes.h, and programs use them without including them.
#include "external/ge_common/api_error_codes.h"

#ifdef FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ASCEND_FUNC_VISIBILITY
#endif

namespace hixl {
using Status = uint32_t;
using AscendString = ge::AscendString;
using TransferReq = void *;

// options of Initialize
constexpr const char OPTION_ENABLE_USE_FABRIC_MEM[] = "EnableUseFabricMem";
constexpr const char OPTION_RDMA_TRAFFIC_CLASS[] = "RdmaTrafficClass";
constexpr const char OPTION_RDMA_SERVICE_LEVEL[] = "RdmaServiceLevel";
constexpr const char OPTION_BUFFER_POOL[] = "BufferPool";
constexpr const char OPTION_GLOBAL_RESOURCE_CONFIG[] = "GlobalResourceConfig";
constexpr const char OPTION_AUTO_CONNECT[] = "AutoConnect";
constexpr const char OPTION_LOCAL_COMM_RES[] = "LocalCommRes";

// status codes
constexpr Status SUCCESS = 0U;
constexpr Status PARAM_INVALID = 103900U;
constexpr Status TIMEOUT = 103901U;
constexpr Status NOT_CONNECTED = 103902U;
constexpr Status ALREADY_CONNECTED = 103903U;
constexpr Status NOTIFY_FAILED = 103904U;
constexpr Status UNSUPPORTED = 103905U;
constexpr Status FAILED = 503900U;
constexpr Status RESOURCE_EXHAUSTED = 203900U;

enum FeatureType : int32_t {
  AUTO_CONNECT = 0,
  CLIENT_SERVER_COMM = 1,
};

constexpr int32_t FEATURE_SUPPORTED = 1;
constexpr int32_t FEATURE_NOT_SUPPORTED = 0;

using MemHandle = void *;

enum MemType { MEM_DEVICE, MEM_HOST };

enum TransferOp { READ, WRITE };

struct MemDesc {
  uintptr_t addr;
  size_t len;
  uint8_t reserved[128] = {};
};

struct TransferOpDesc {
  uintptr_t local_addr;
  uintptr_t remote_addr;
  size_t len;
};

enum class TransferStatus { WAITING, COMPLETED, TIMEOUT, FAILED };

struct TransferArgs {
  const void *user_data = nullptr;
  uint8_t reserved[120] = {};
};

struct GetTransferStatusArgs {
  uint32_t max_query_count = UINT32_MAX;
  bool skip_waiting = false;
  uint8_t reserved[123] = {};
};

struct TransferResult {
  TransferReq req = nullptr;
  const void *user_data = nullptr;
  TransferStatus status = TransferStatus::WAITING;
  uint8_t reserved[108] = {};
};

struct NotifyDesc {
  AscendString name;
  AscendString notify_msg;
};

enum class AsyncConnectStatus {
  NOT_CONNECT,
  CONNECT_PENDING,
  CONNECTING,
  CONNECTED,
  CONNECT_FAILED,
  DISCONNECT_PENDING,
  DISCONNECTING
};

static_assert(sizeof(MemDesc) == 144, "MemDesc is 144 bytes");
static_assert(sizeof(TransferOpDesc) == 24, "TransferOpDesc is 24 bytes");
static_assert(sizeof(TransferArgs) == 128, "TransferArgs is 128 bytes");
static_assert(sizeof(MemType) == 4 && sizeof(TransferOp) == 4, "enums are 32-bit");
}  // namespace hixl

#endif  // ACLSIM_HIXL_HIXL_TYPES_H_
