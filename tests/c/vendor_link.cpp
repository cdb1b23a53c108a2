// Built by the packaging test with exactly the vendor samples' compiler flags and link line
// against the installed simulator: ACL without aclInit, device memory from aclrtMalloc and from
// the VMM calls, aclrtMemcpy both ways, securec.h's memset_s/memcpy_s (from libascend_hal.so).
// Prints "vendor_link ok" and exits 0 when every step did what the vendor documents.
#include <cstdint>
#include <cstdio>
#include <vector>
// no <iostream>: std::cerr comes through hixl/hixl.h's include chain, as the vendor samples expect

#include "acl/acl.h"
#include "hixl/hixl.h"
#include "securec.h"

namespace {
constexpr size_t kSize = 2UL * 1024UL * 1024UL;

#define STEP(x)                                                                   \
  do {                                                                            \
    aclError step_ret_ = (x);                                                     \
    if (step_ret_ != ACL_ERROR_NONE) {                                            \
      std::cerr << __LINE__ << ": " << #x << " -> " << step_ret_ << std::endl;    \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int Run() {
  STEP(aclrtSetDevice(0));  // no aclInit: the vendor's aclrtSetDevice does not need it
  void *dev = nullptr;
  STEP(aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_ONLY));

  void *va = nullptr;
  aclrtDrvMemHandle pa = nullptr;
  STEP(aclrtReserveMemAddress(&va, kSize, 0, nullptr, 1));
  aclrtPhysicalMemProp prop{};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  STEP(aclrtMallocPhysical(&pa, kSize, &prop, 0));
  STEP(aclrtMapMem(va, kSize, 0, pa, 0));

  std::vector<uint8_t> host(kSize);
  if (memset_s(host.data(), host.size(), 7, kSize) != EOK) return 2;
  if (memset_s(host.data(), 1, 0, 2) != ERANGE_AND_RESET) return 3;
  STEP(aclrtMemcpy(va, kSize, host.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));
  STEP(aclrtMemcpy(dev, kSize, va, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE));
  std::vector<uint8_t> back(kSize, 0);
  STEP(aclrtMemcpy(back.data(), kSize, dev, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
  if (back[0] != 0 || back[kSize - 1] != 7) return 4;  // byte 0 was reset by memset_s
  if (aclrtMemcpy(back.data(), 1, dev, 2, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_ERROR_RT_PARAM_INVALID) return 5;
  char word[8];
  if (memcpy_s(word, sizeof word, "regcheck", 8) != EOK) return 6;

  STEP(aclrtUnmapMem(va));
  STEP(aclrtFreePhysical(pa));
  STEP(aclrtReleaseMemAddress(va));
  STEP(aclrtFree(dev));
  STEP(aclrtResetDevice(0));
  return sizeof(hixl::Hixl) == 8 ? 0 : 7;
}
}  // namespace

int main() {
  int ret = Run();
  if (ret == 0) std::printf("vendor_link ok\n");
  return ret;
}
