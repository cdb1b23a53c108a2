// Ranges at the edges of the address space, one call each, for tests/edges.rs. Prints
// `rc <label> <code>` per call. The Hixl instance is initialised on a thread with a device.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <map>

#include "acl/acl.h"
#include "hixl/hixl.h"

namespace {

void rc(const char *label, long long code) { printf("rc %s %lld\n", label, code); }

uint32_t Reg(hixl::Hixl &h, uint64_t addr, uint64_t len, hixl::MemType type) {
  hixl::MemDesc mem{};
  mem.addr = static_cast<uintptr_t>(addr);
  mem.len = static_cast<size_t>(len);
  hixl::MemHandle handle = nullptr;
  return h.RegisterMem(mem, type, handle);
}

}  // namespace

int main() {
  if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0) return 2;
  const uint64_t kPage = 4096;
  const uint64_t kKernel = 0xffff800000000000ULL;
  const uint64_t kUserTop47 = 0x7ffffffff000ULL;
  void *dev = nullptr;

  // ACL: the end wraps to exactly 0; a size that wraps; the kernel half; past the top of user
  // space (47-bit or 56-bit: 2^60 is above both); the last page below the 47-bit top (inside
  // user space, but not mapped).
  rc("wrap_end_zero", aclrtHostRegisterV2(reinterpret_cast<void *>(0xfffffffffffff000ULL), kPage, ACL_HOST_REG_MAPPED));
  rc("wrap_size", aclrtHostRegisterV2(reinterpret_cast<void *>(0x1000), 0xfffffffffffff000ULL, ACL_HOST_REG_MAPPED));
  rc("kernel_half", aclrtHostRegisterV2(reinterpret_cast<void *>(kKernel), kPage, ACL_HOST_REG_MAPPED));
  rc("past_user_top", aclrtHostRegisterV2(reinterpret_cast<void *>(0x1000), 1ULL << 60, ACL_HOST_REG_MAPPED));
  rc("v1_kernel_half",
     aclrtHostRegister(reinterpret_cast<void *>(kKernel + kPage), kPage, ACL_HOST_REGISTER_MAPPED, &dev));
  rc("last_user_page_v2", aclrtHostRegisterV2(reinterpret_cast<void *>(kUserTop47 - kPage), kPage, ACL_HOST_REG_MAPPED));

  // HIXL: host memory in the kernel half; an end at 2^64; device addresses are the device's.
  hixl::Hixl h;
  std::map<hixl::AscendString, hixl::AscendString> options;
  if (h.Initialize("127.0.0.1", options) != hixl::SUCCESS) return 2;  // a client-only engine
  rc("hixl_kernel_half", Reg(h, kKernel, kPage, hixl::MEM_HOST));
  rc("hixl_past_user_top", Reg(h, 0x10000, 1ULL << 60, hixl::MEM_HOST));
  rc("hixl_wrap_end_zero", Reg(h, 0xfffffffffffff000ULL, kPage, hixl::MEM_HOST));
  h.Finalize();
  return 0;
}
