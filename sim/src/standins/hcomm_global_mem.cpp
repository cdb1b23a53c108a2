// libhcomm.so of the simulator: HCCL's global-memory registration, which LLM-DataDist's comm
// backend (hicann/hixl src/llm_datadist/comm_adapter/comm_adapter.cc) and the HIXL/ADXL comm
// engine (src/llm_datadist/adxl/channel_msg_handler.cc, through the same CommAdapter) resolve
// with dlopen("libhcomm.so") and dlsym. Semantics of the vendor's (hicann/hcomm
// hccl_one_sided.cc HcclRegisterGlobalMem/HcclDeregisterGlobalMem, GlobalMemRegMgr::Reg/DeReg,
// GlobalMemRecord):
// - one table per device, the calling thread's current device (GetInstance; no device: a
//   reserve table of its own);
// - HcclRegisterGlobalMem: a NULL descriptor or handle pointer: HCCL_E_PTR; no address or no
//   size: HCCL_E_PARA; an unknown memory type: HCCL_E_PARA (documented only); a registration
//   identical to a live one (same type, address and size) gets THE SAME handle back, with no
//   reference count (CheckOverlapAndInsert); one overlapping a live one of the same type:
//   HCCL_E_PARA (other types are not compared);
// - HcclDeregisterGlobalMem: a handle that is not a live registration of the current device's
//   table, NULL included, is HCCL_E_PARA, logged "The parameter memHandle[%p] is invalid"
//   (HcclMemHandleParamCheck); else the record goes, whoever else was given the handle. So when
//   two users registered identical memory, the second deregistration fails (vllm-ascend #10724).
// Every call is counted (aclsimNoteCall) as `HcclRegisterGlobalMem` / `HcclDeregisterGlobalMem`.
#include <stdio.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "acl/acl_rt.h"
#include "aclsim.h"
#include "hccl/hccl_mem.h"

namespace {
struct Registration {
  CommMemType type;
  uintptr_t addr;
  uint64_t size;
};

// by device (-1: the reserve table, no current device), then by handle
using Table = std::map<Registration *, Registration>;

std::mutex &Mutex() {
  static std::mutex *m = new std::mutex;
  return *m;
}

Table &TableOfCurrentDevice() {
  static std::map<int32_t, Table> *tables = new std::map<int32_t, Table>;
  int32_t device = -1;
  if (aclrtGetDevice(&device) != ACL_SUCCESS || device < 0) device = -1;
  return (*tables)[device];
}

HcclResult Register(CommMem *mem, void **handle) {
  if (mem == nullptr || handle == nullptr) return HCCL_E_PTR;
  if (mem->addr == nullptr || mem->size == 0) return HCCL_E_PARA;
  if (mem->type != COMM_MEM_TYPE_DEVICE && mem->type != COMM_MEM_TYPE_HOST) return HCCL_E_PARA;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(mem->addr);
  const uint64_t size = mem->size;
  Table &table = TableOfCurrentDevice();
  std::lock_guard<std::mutex> lock(Mutex());
  for (auto &kv : table) {
    const Registration &r = kv.second;
    if (r.type != mem->type) continue;
    if (r.addr == addr && r.size == size) {
      *handle = kv.first;  // "has been registered already": the same record, the same handle
      return HCCL_SUCCESS;
    }
    if (addr < r.addr + r.size && r.addr < addr + size) {
      fprintf(stderr, "[aclsim] hccl: HcclRegisterGlobalMem: the new memory [0x%llx, +%llu) overlaps an existing one\n",
              static_cast<unsigned long long>(addr), static_cast<unsigned long long>(size));
      return HCCL_E_PARA;
    }
  }
  auto *key = new Registration{mem->type, addr, size};
  table[key] = *key;
  *handle = key;
  return HCCL_SUCCESS;
}

HcclResult Deregister(void *handle) {
  Table &table = TableOfCurrentDevice();
  std::lock_guard<std::mutex> lock(Mutex());
  auto it = table.find(static_cast<Registration *>(handle));
  if (it == table.end()) {
    fprintf(stderr, "[aclsim] hccl: HcclDeregisterGlobalMem: The parameter memHandle[%p] is invalid.\n", handle);
    return HCCL_E_PARA;
  }
  delete it->first;
  table.erase(it);
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
