// A C++ extension module as Python KV-cache connectors build them (LMCache-Ascend's
// hixl_npu_comms is a pybind11 module): hixl::Hixl driven from Python, its members called
// through this library's PLT. Plain `extern "C"` functions stand in for pybind11's bindings, so
// that tests/py/kv_two_process.py can load it with ctypes. Built by tests/audit.rs.
#include <stdint.h>

#include <map>
#include <vector>

#include "aclsim_port.h"
#include "hixl/hixl.h"

using Options = std::map<hixl::AscendString, hixl::AscendString>;

extern "C" {

int kv_claim_port(void) { return aclsimClaimPort(); }

void *kv_new(void) { return new hixl::Hixl(); }

uint32_t kv_init(void *h, const char *local) { return static_cast<hixl::Hixl *>(h)->Initialize(local, Options()); }

uint32_t kv_register(void *h, uintptr_t addr, uint64_t len, int type, void **handle) {
  hixl::MemDesc mem{};
  mem.addr = addr;
  mem.len = static_cast<size_t>(len);
  hixl::MemHandle out = nullptr;
  uint32_t rc = static_cast<hixl::Hixl *>(h)->RegisterMem(mem, static_cast<hixl::MemType>(type), out);
  *handle = out;
  return rc;
}

uint32_t kv_deregister(void *h, void *handle) { return static_cast<hixl::Hixl *>(h)->DeregisterMem(handle); }

uint32_t kv_connect(void *h, const char *remote) { return static_cast<hixl::Hixl *>(h)->Connect(remote, 3000); }

uint32_t kv_disconnect(void *h, const char *remote) { return static_cast<hixl::Hixl *>(h)->Disconnect(remote, 3000); }

uint32_t kv_read(void *h, const char *remote, uintptr_t local, uintptr_t far, uint64_t len) {
  std::vector<hixl::TransferOpDesc> ops{{local, far, static_cast<size_t>(len)}};
  return static_cast<hixl::Hixl *>(h)->TransferSync(remote, hixl::READ, ops, 3000);
}

// TransferAsync WRITE, then GetTransferStatus polled until it is no longer WAITING: the
// status code of the last poll in *status.
uint32_t kv_write_async(void *h, const char *remote, uintptr_t local, uintptr_t far, uint64_t len, int *status) {
  auto *x = static_cast<hixl::Hixl *>(h);
  std::vector<hixl::TransferOpDesc> ops{{local, far, static_cast<size_t>(len)}};
  hixl::TransferArgs args;
  hixl::TransferReq req = nullptr;
  uint32_t rc = x->TransferAsync(remote, hixl::WRITE, ops, args, req);
  if (rc != hixl::SUCCESS) return rc;
  hixl::TransferStatus st = hixl::TransferStatus::WAITING;
  for (int i = 0; i < 3000 && st == hixl::TransferStatus::WAITING; i++) {
    rc = x->GetTransferStatus(req, st);
    if (rc != hixl::SUCCESS) break;
  }
  *status = static_cast<int>(st);
  return rc;
}

void kv_delete(void *h) {
  auto *x = static_cast<hixl::Hixl *>(h);
  x->Finalize();
  delete x;
}
}
