// libruntime.so of the simulator: rtPointerGetAttributes (runtime/mem.h). Classifies an address
// as the vendor's driver does (hicann/runtime src/runtime/driver/npu_driver_mem.cc,
// NpuDriver::PointerGetAttributes; NULL checks in api_error.cc), from what the simulated ACL
// runtime knows of it. The lookups use the simulator's internal entry points, so a checked
// front end sees no extra ACL call. One difference: the simulator has no side-effect-free lookup
// of host registrations, so user memory (not from aclrtMalloc/aclrtMallocHost) is reported
// USER with location UNREGISTERED even while registered (the vendor then says location HOST).
#include <cstdint>

#include "acl/acl_rt.h"
#include "aclsim.h"
#include "runtime/mem.h"

namespace {
constexpr rtError_t kParamInvalid = 107000;  // ACL_ERROR_RT_PARAM_INVALID
constexpr uint32_t kSmallPage = 4096U;
constexpr uint32_t kHugePage = 2U * 1024U * 1024U;
constexpr uint32_t kHuge1GPage = 1024U * 1024U * 1024U;

uint32_t PageBytes(int page_type) {
  switch (page_type) {
    case 1: return kHugePage;
    case 2: return kHuge1GPage;
    default: return kSmallPage;
  }
}
}  // namespace

extern "C" rtError_t rtPointerGetAttributes(rtPointerAttributes_t *attributes, const void *ptr) {
  if (attributes == nullptr || ptr == nullptr) return kParamInvalid;
  aclsimMemInfo info{};
  if (aclsimQueryMemory(ptr, 1, &info) == 1 && info.kind != ACLSIM_MEM_HOST) {
    attributes->memoryType = RT_MEMORY_TYPE_DEVICE;
    attributes->locationType = RT_MEMORY_LOC_DEVICE;
    attributes->deviceID = info.device < 0 ? 0U : static_cast<uint32_t>(info.device);
    attributes->pageSize = PageBytes(info.page_type);
    return RT_ERROR_NONE;
  }
  attributes->deviceID = 0;
  attributes->pageSize = kSmallPage;
  if (info.kind == ACLSIM_MEM_HOST) {
    attributes->memoryType = RT_MEMORY_TYPE_HOST;
    attributes->locationType = RT_MEMORY_LOC_HOST;
    return RT_ERROR_NONE;
  }
  attributes->memoryType = RT_MEMORY_TYPE_USER;
  attributes->locationType = RT_MEMORY_LOC_UNREGISTERED;
  return RT_ERROR_NONE;
}
