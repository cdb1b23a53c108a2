/*
 * adxl/adxl_types.h - ADXL types (CANN's libllm_datadist.so), as the vendor's interface declares
 * them (names, namespaces, values, layouts), written for the regcheck simulator. Like the vendor's,
 * it brings in the ACL runtime header (for aclrtMemFabricHandle) and metadef's error-code header
 * (std::map, std::string, ge::AscendString).
 */
#ifndef ACLSIM_ADXL_ADXL_TYPES_H_
#define ACLSIM_ADXL_ADXL_TYPES_H_

#include <cstddef>
#include <cstdint>

#include "acl/acl_rt.h"
#include "external/ge_common/api_error_codes.h"

#ifdef FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ASCEND_FUNC_VISIBILITY
#endif

namespace adxl {
using Status = uint32_t;
using AscendString = ge::AscendString;
using TransferReq = void *;

// options of Initialize (the HIXL engines take these spellings and the bare ones alike)
constexpr const char OPTION_RDMA_TRAFFIC_CLASS[] = "adxl.RdmaTrafficClass";
constexpr const char OPTION_RDMA_SERVICE_LEVEL[] = "adxl.RdmaServiceLevel";
constexpr const char OPTION_BUFFER_POOL[] = "adxl.BufferPool";
constexpr const char OPTION_LOCAL_COMM_RES[] = "adxl.LocalCommRes";
constexpr const char OPTION_AUTO_CONNECT[] = "AutoConnect";

// status codes (the same numbers as HIXL's)
constexpr Status SUCCESS = 0U;
constexpr Status PARAM_INVALID = 103900U;
constexpr Status TIMEOUT = 103901U;
constexpr Status NOT_CONNECTED = 103902U;
constexpr Status ALREADY_CONNECTED = 103903U;
constexpr Status NOTIFY_FAILED = 103904U;
constexpr Status UNSUPPORTED = 103905U;
constexpr Status FAILED = 503900U;
constexpr Status RESOURCE_EXHAUSTED = 203900U;

// capabilities asked with AdxlEngine::GetCapability (explicit values; new ones only at the end)
enum FeatureType : int32_t {
  AUTO_CONNECT = 0,
  CLIENT_SERVER_COMM = 1,
};

constexpr int32_t FEATURE_SUPPORTED = 1;
constexpr int32_t FEATURE_NOT_SUPPORTED = 0;

using MemHandle = void *;
using ShareableHandle = aclrtMemFabricHandle;

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

// ADXL's TransferArgs is all reserved bytes (HIXL's carries user_data in its first 8)
struct TransferArgs {
  uint8_t reserved[128] = {};
};

struct NotifyDesc {
  AscendString name;
  AscendString notify_msg;
};

static_assert(sizeof(MemDesc) == 144, "MemDesc is 144 bytes");
static_assert(sizeof(TransferOpDesc) == 24, "TransferOpDesc is 24 bytes");
static_assert(sizeof(TransferArgs) == 128, "TransferArgs is 128 bytes");
static_assert(sizeof(ShareableHandle) == 128, "aclrtMemFabricHandle is 128 bytes");
static_assert(sizeof(MemType) == 4 && sizeof(TransferOp) == 4, "enums are 32-bit");
}  // namespace adxl

#endif  // ACLSIM_ADXL_ADXL_TYPES_H_
