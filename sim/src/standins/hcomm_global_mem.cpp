// libhcomm.so of the simulator: HCCL's global-memory registration, which LLM-DataDist's comm
// backend resolves with dlopen("libhcomm.so") and dlsym (hicann/hixl
// src/llm_datadist/comm_adapter/comm_adapter.cc). HCCL is closed: the checks are the documented
// ones only (a NULL descriptor or handle pointer: HCCL_E_PTR; no address, no size or an
// unknown memory type: HCCL_E_PARA; a handle it did not give: HCCL_E_NOT_FOUND). Every call is
// counted (aclsimNoteCall) as `HcclRegisterGlobalMem` / `HcclDeregisterGlobalMem`.
#include <cstdint>
#include <mutex>
#include <set>

#include "aclsim.h"
#include "hccl/hccl_mem.h"

namespace {
struct Registration {
  CommMemType type;
  uintptr_t addr;
  uint64_t size;
};

std::mutex &Mutex() {
  static std::mutex *m = new std::mutex;
  return *m;
}

std::set<Registration *> &Live() {
  static std::set<Registration *> *live = new std::set<Registration *>;
  return *live;
}

HcclResult Register(CommMem *mem, void **handle) {
  if (mem == nullptr || handle == nullptr) return HCCL_E_PTR;
  if (mem->addr == nullptr || mem->size == 0) return HCCL_E_PARA;
  if (mem->type != COMM_MEM_TYPE_DEVICE && mem->type != COMM_MEM_TYPE_HOST) return HCCL_E_PARA;
  auto *r = new Registration{mem->type, reinterpret_cast<uintptr_t>(mem->addr), mem->size};
  std::lock_guard<std::mutex> lock(Mutex());
  Live().insert(r);
  *handle = r;
  return HCCL_SUCCESS;
}

HcclResult Deregister(void *handle) {
  if (handle == nullptr) return HCCL_E_PTR;
  std::lock_guard<std::mutex> lock(Mutex());
  auto it = Live().find(static_cast<Registration *>(handle));
  if (it == Live().end()) return HCCL_E_NOT_FOUND;
  delete *it;
  Live().erase(it);
  return HCCL_SUCCESS;
}
}  // namespace

extern "C" HcclResult HcclRegisterGlobalMem(CommMem *mem, void **memHandle) {
  HcclResult rc = Register(mem, memHandle);
  aclsimNoteCall("HcclRegisterGlobalMem", nullptr, rc);
  return rc;
}

extern "C" HcclResult HcclDeregisterGlobalMem(void *memHandle) {
  HcclResult rc = Deregister(memHandle);
  aclsimNoteCall("HcclDeregisterGlobalMem", nullptr, rc);
  return rc;
}
