// A device pool carved from aclrtMalloc blocks that regcheck did not see allocated (they come
// from the simulator's internal entry point, as a framework's caching allocator or a
// vendor-internal allocation would), its pieces registered with hixl::Hixl::RegisterMem
// (MEM_DEVICE) on an engine whose transport is HCCS.
//
//   annotate_device plain      the pool says nothing
//   annotate_device annotated  the pool tells regcheck, with the header's weak-symbol macros:
//                              REGCHECK_DEVICE_MALLOC_LIKE_BLOCK for each block and its policy,
//                              REGCHECK_FREE_LIKE_BLOCK when a block goes back
//
// Two blocks: one ACL_MEM_MALLOC_HUGE_ONLY (HCCS takes it), one ACL_MEM_MALLOC_NORMAL_ONLY
// (HCCS refuses it). Prints `rc <label> <code>` for each vendor call and `annotate <label>
// <status>` for each annotation (0 also where regcheck is absent: the macros do nothing).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <map>
#include <string>

#include "acl/acl.h"
#include "hixl/hixl.h"
#include "regcheck.h"

// libacl_rt.so's own entry point of aclrtMalloc (sim/src/acl_impl_aliases.cpp)
extern "C" aclError aclsim_impl_aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);

namespace {

const size_t kBlock = 2u << 20;
bool annotated = false;

void rc(const char *label, uint32_t code) { printf("rc %s %u\n", label, code); }

void *Block(aclrtMemMallocPolicy policy, const char *label) {
  void *p = nullptr;
  if (aclsim_impl_aclrtMalloc(&p, kBlock, policy) != ACL_SUCCESS) exit(3);
  if (annotated) printf("annotate %s %d\n", label, static_cast<int>(REGCHECK_DEVICE_MALLOC_LIKE_BLOCK(p, kBlock, policy)));
  return p;
}

void Release(void *p, const char *label) {
  if (annotated) printf("annotate %s %d\n", label, static_cast<int>(REGCHECK_FREE_LIKE_BLOCK(p)));
}

uint32_t Reg(hixl::Hixl &h, void *addr, hixl::MemHandle &handle) {
  hixl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(addr);
  mem.len = kBlock;
  return h.RegisterMem(mem, hixl::MEM_DEVICE, handle);
}

}  // namespace

int main(int argc, char **argv) {
  annotated = argc > 1 && strcmp(argv[1], "annotated") == 0;
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
  std::map<hixl::AscendString, hixl::AscendString> options;
  options[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] =
      hixl::AscendString("{\"comm_resource_config.protocol_desc\": \"hccs:device\"}");
  hixl::Hixl h;
  if (h.Initialize("127.0.0.1", options) != hixl::SUCCESS) return 2;  // a client-only engine
  void *huge = Block(ACL_MEM_MALLOC_HUGE_ONLY, "huge_block");
  void *normal = Block(ACL_MEM_MALLOC_NORMAL_ONLY, "normal_block");
  hixl::MemHandle huge_handle = nullptr, normal_handle = nullptr, again = nullptr;
  rc("huge", Reg(h, huge, huge_handle));
  rc("normal", Reg(h, normal, normal_handle));
  rc("dereg_huge", h.DeregisterMem(huge_handle));
  Release(huge, "huge_free");
  Release(normal, "normal_free");
  // Given back to the pool (and, for regcheck, no longer aclrtMalloc memory it knows).
  rc("after_free", Reg(h, huge, again));
  rc("dereg_after_free", h.DeregisterMem(again));
  h.Finalize();
  return 0;
}
