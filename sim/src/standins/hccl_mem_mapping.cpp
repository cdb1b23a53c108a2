// libhccl.so of the simulator: hccl::MemMappingManager, the host-to-device mapping table of
// HCCL that programs resolve directly (LMCache-Ascend's hcomm_devva.cc calls GetInstance and
// GetDevVA). Semantics of the vendor's (hcomm src/platform/.../mem_mapping_manager.cc): one
// table per device (an id out of range gets device 0's); GetDevVA returns the device address
// of a range already mapped (any range inside a mapping, at the same offset) and counts the
// reference, or maps the range through the driver; ReleaseDevVA drops a reference and unmaps
// at zero (HCCL_E_PARA when the range is not mapped). The vendor maps through the driver's
// host-register call, outside ACL; the simulator's devices address host memory directly, so
// a new mapping's device address is the host address itself.
#include <cstdint>
#include <map>
#include <mutex>

#include "hccl/hccl_types.h"

namespace hccl {
using s32 = int;
using u64 = unsigned long long;

class MemMappingManager {
 public:
  static MemMappingManager &GetInstance(s32 deviceLogicID);
  HcclResult GetDevVA(s32 deviceLogicID, void *addr, u64 size, void *&devVA);
  HcclResult ReleaseDevVA(s32 deviceLogicID, void *addr, u64 size);

 private:
  struct Mapping {
    u64 size;
    uintptr_t dev_va;
    u64 refs;
  };
  std::map<uintptr_t, Mapping>::iterator FindContaining(uintptr_t addr, u64 size);

  std::mutex mutex_;
  std::map<uintptr_t, Mapping> mappings_;  // by host address
};

namespace {
constexpr s32 kMaxDevices = 64;
}

MemMappingManager &MemMappingManager::GetInstance(s32 deviceLogicID) {
  static MemMappingManager *instances = new MemMappingManager[kMaxDevices];
  if (deviceLogicID < 0 || deviceLogicID >= kMaxDevices) return instances[0];
  return instances[deviceLogicID];
}

std::map<uintptr_t, MemMappingManager::Mapping>::iterator MemMappingManager::FindContaining(uintptr_t addr,
                                                                                             u64 size) {
  for (auto it = mappings_.begin(); it != mappings_.end(); ++it) {
    if (addr >= it->first && addr + size <= it->first + it->second.size) return it;
  }
  return mappings_.end();
}

HcclResult MemMappingManager::GetDevVA(s32 /*deviceLogicID*/, void *addr, u64 size, void *&devVA) {
  if (addr == nullptr || size == 0) return HCCL_E_PARA;  // the driver refuses to register these
  const auto host = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = FindContaining(host, size);
  if (it != mappings_.end()) {
    it->second.refs += 1;
    devVA = reinterpret_cast<void *>(it->second.dev_va + (host - it->first));
    return HCCL_SUCCESS;
  }
  mappings_[host] = Mapping{size, host, 1};
  devVA = addr;
  return HCCL_SUCCESS;
}

HcclResult MemMappingManager::ReleaseDevVA(s32 /*deviceLogicID*/, void *addr, u64 size) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = FindContaining(reinterpret_cast<uintptr_t>(addr), size);
  if (it == mappings_.end()) return HCCL_E_PARA;
  if (--it->second.refs == 0) mappings_.erase(it);
  return HCCL_SUCCESS;
}
}  // namespace hccl
