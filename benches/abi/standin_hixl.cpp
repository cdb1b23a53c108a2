// A permissive stand-in for libcann_hixl.so, used only by `cargo xtask bench`: every member of
// hixl::Hixl that the benchmark driver calls accepts its arguments and returns SUCCESS at once
// (handles are distinct numbers; nothing is recorded, nothing is copied), so that a run under
// regcheck shows regcheck's own cost. ge::AscendString comes from the simulator's source.
#include <atomic>
#include <cstdint>

#include "hixl/hixl.h"

namespace hixl {

class Hixl::HixlImpl {};

namespace {
std::atomic<uintptr_t> next_handle{1};
}

Hixl::Hixl() = default;
Hixl::~Hixl() = default;

Status Hixl::Initialize(const AscendString &, const std::map<AscendString, AscendString> &) { return SUCCESS; }
void Hixl::Finalize() {}

Status Hixl::RegisterMem(const MemDesc &, MemType, MemHandle &mem_handle) {
  mem_handle = reinterpret_cast<MemHandle>(next_handle.fetch_add(1) << 4);
  return SUCCESS;
}

Status Hixl::DeregisterMem(MemHandle) { return SUCCESS; }
Status Hixl::Connect(const AscendString &, int32_t) { return SUCCESS; }
Status Hixl::Disconnect(const AscendString &, int32_t) { return SUCCESS; }

Status Hixl::TransferSync(const AscendString &, TransferOp, const std::vector<TransferOpDesc> &, int32_t) {
  return SUCCESS;
}

}  // namespace hixl
