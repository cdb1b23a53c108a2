// hixl::FabricMemTransferService::MallocMem / FreeMem of the simulator's libcann_hixl.so: the
// allocator the vendor's benchmarks take their buffers from. Follows the vendor's order
// (hicann/hixl src/hixl/fabric_mem/fabric_mem_allocator.cc): a pinned physical allocation
// (device: HBM huge pages on the current device; host: 1 GiB pages on the device's NUMA node,
// then on any node, then 2 MiB pages), a reserved virtual range, the mapping, and for host
// memory the device's access to it (aclrtMemSetAccess).
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "acl/acl_rt.h"
#include "fabric_mem/fabric_mem_transfer_service.h"

namespace hixl {
namespace {
constexpr uint64_t kReserveHugePage = 1U;  // aclrtReserveMemAddress flag the vendor passes

struct Allocation {
  aclrtDrvMemHandle physical;
  bool exported = false;  // the export is made once per allocation and kept
  aclrtMemFabricHandle handle = {};
};

constexpr uint64_t kExportNoPidCheck = 1U;  // ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION

std::mutex g_mutex;
std::unordered_map<uintptr_t, Allocation> &Allocations() {
  static auto *allocations = new std::unordered_map<uintptr_t, Allocation>();
  return *allocations;
}

aclError AllocatePhysical(MemType type, size_t size, int32_t device, aclrtDrvMemHandle *handle) {
  aclrtPhysicalMemProp prop = {};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  if (type == MEM_DEVICE) {
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = static_cast<uint32_t>(device);
    return aclrtMallocPhysical(handle, size, &prop, 0);
  }
  // the vendor's NUMA node of a device: two nodes per chip of four devices
  prop.memAttr = ACL_MEM_P2P_HUGE1G;
  prop.location.type = ACL_MEM_LOCATION_TYPE_HOST_NUMA;
  prop.location.id = static_cast<uint32_t>((device / 4) * 2);
  if (aclrtMallocPhysical(handle, size, &prop, 0) == ACL_SUCCESS) return ACL_SUCCESS;
  prop.location.type = ACL_MEM_LOCATION_TYPE_HOST;
  prop.location.id = 0;
  if (aclrtMallocPhysical(handle, size, &prop, 0) == ACL_SUCCESS) return ACL_SUCCESS;
  prop.memAttr = ACL_MEM_P2P_HUGE;
  return aclrtMallocPhysical(handle, size, &prop, 0);
}
}  // namespace

Status FabricMemTransferService::MallocMem(MemType type, size_t size, void **ptr) {
  if ((type != MEM_DEVICE && type != MEM_HOST) || size == 0 || ptr == nullptr) return PARAM_INVALID;
  int32_t device = 0;
  if (aclrtGetDevice(&device) != ACL_SUCCESS) return FAILED;
  aclrtDrvMemHandle physical = nullptr;
  if (AllocatePhysical(type, size, device, &physical) != ACL_SUCCESS) return FAILED;
  void *va = nullptr;
  if (aclrtReserveMemAddress(&va, size, 0, nullptr, kReserveHugePage) != ACL_SUCCESS) {
    (void)aclrtFreePhysical(physical);
    return FAILED;
  }
  if (aclrtMapMem(va, size, 0, physical, 0) != ACL_SUCCESS) {
    (void)aclrtReleaseMemAddress(va);
    (void)aclrtFreePhysical(physical);
    return FAILED;
  }
  // host memory: the device is granted access to the mapping (SetDeviceAccessForHostMappedVa,
  // with the driver's logical id of the current device)
  if (type == MEM_HOST) {
    int32_t logic = 0;
    aclrtMemAccessDesc access = {};
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    aclError acl = aclrtGetLogicDevIdByUserDevId(device, &logic);
    if (acl == ACL_SUCCESS) {
      access.location.id = static_cast<uint32_t>(logic);
      acl = aclrtMemSetAccess(va, size, &access, 1);
    }
    if (acl != ACL_SUCCESS) {
      (void)aclrtUnmapMem(va);
      (void)aclrtReleaseMemAddress(va);
      (void)aclrtFreePhysical(physical);
      return static_cast<Status>(acl);
    }
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  Allocations()[reinterpret_cast<uintptr_t>(va)] = Allocation{physical, false, {}};
  *ptr = va;
  return SUCCESS;
}

Status FabricMemTransferService::FreeMem(void *ptr) {
  if (ptr == nullptr) return PARAM_INVALID;
  aclrtDrvMemHandle physical = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = Allocations().find(reinterpret_cast<uintptr_t>(ptr));
    if (it == Allocations().end()) return FAILED;
    physical = it->second.physical;
    Allocations().erase(it);
  }
  (void)aclrtUnmapMem(ptr);
  (void)aclrtReleaseMemAddress(ptr);
  (void)aclrtFreePhysical(physical);
  return SUCCESS;
}

// FabricMemTransferService::ExportToShareableHandle and FabricMemAllocator::ExportToShareableHandle
// (fabric_mem_transfer_service.cc, fabric_mem_allocator.cc)
Status FabricMemTransferService::ExportToShareableHandle(void *addr, aclrtMemFabricHandle &share_handle) {
  if (addr == nullptr) return PARAM_INVALID;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = Allocations().find(reinterpret_cast<uintptr_t>(addr));
  if (it == Allocations().end()) return PARAM_INVALID;  // not from MallocMem, or already freed
  if (!it->second.exported) {
    aclError acl = aclrtMemExportToShareableHandleV2(it->second.physical, kExportNoPidCheck,
                                                     ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &it->second.handle);
    if (acl != ACL_SUCCESS) return static_cast<Status>(acl);
    it->second.exported = true;
  }
  share_handle = it->second.handle;
  return SUCCESS;
}
}  // namespace hixl
