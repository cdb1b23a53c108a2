// adxl::AdxlEngine of the simulator (libllm_datadist.so): the vendor's public checks
// (hicann/hixl src/llm_datadist/api/adxl_engine_impl.cc), in the vendor's order, in front of the
// simulator's HIXL engines. Like the vendor's, the engine behind it is chosen by the options
// (hixl::EngineFactory: comm, hixl_cs, fabric memory): here through hixl::Hixl of
// libcann_hixl.so, whose engines are the ones both vendor front ends share.
//
// What differs from hixl::Hixl and is kept here: Initialize makes a new implementation each
// time and keeps it even when the engine does not start (later calls then answer FAILED after
// their own argument checks); TransferAsync has no timeout; TransferArgs is all reserved bytes;
// GetTransferStatus answers status FAILED with any failure; GetNotifies appends.
#include <string.h>

#include <cstdarg>
#include <string>

#include "adxl/adxl_engine.h"
#include "aclsim.h"
#include "fabric_mem/fabric_mem_transfer_service.h"
#include "hixl/hixl.h"
#include "sim_format.h"

static_assert(sizeof(adxl::AdxlEngine) == 8, "AdxlEngine is one std::unique_ptr");
static_assert(sizeof(adxl::TransferArgs) == sizeof(hixl::TransferArgs), "TransferArgs is copied as bytes");

namespace adxl {

namespace {

// Counts (and with ACLSIM_TRACE=1 traces) one member call as `AdxlEngine::<member>`.
void Note(const char *name, long long code, const char *f, ...) __attribute__((format(printf, 3, 4)));
void Note(const char *name, long long code, const char *f, ...) {
  static const bool tracing = aclsimTraceEnabled() != 0;
  if (!tracing) {
    aclsimNoteCall(name, nullptr, code);
    return;
  }
  va_list ap;
  va_start(ap, f);
  std::string args = aclsim_format::VFormat(f, ap);
  va_end(ap);
  aclsimNoteCall(name, args.c_str(), code);
}

const char *Str(const AscendString &s) { return s.GetString() != nullptr ? s.GetString() : ""; }

const char *OpName(TransferOp op) { return op == READ ? "READ" : op == WRITE ? "WRITE" : "?"; }

// CheckTransferOpDescs: no NULL address (before anything of the engine is looked at).
bool AddressesSet(const std::vector<TransferOpDesc> &ops) {
  for (const TransferOpDesc &d : ops)
    if (d.local_addr == 0 || d.remote_addr == 0) return false;
  return true;
}

std::vector<hixl::TransferOpDesc> HixlOps(const std::vector<TransferOpDesc> &ops) {
  std::vector<hixl::TransferOpDesc> out;
  out.reserve(ops.size());
  for (const TransferOpDesc &d : ops) out.push_back(hixl::TransferOpDesc{d.local_addr, d.remote_addr, d.len});
  return out;
}

constexpr size_t kMaxNotifyLength = 1024;

}  // namespace

class __attribute__((visibility("hidden"))) AdxlEngine::AdxlEngineImpl {
 public:
  // The engine started (the vendor's engine_ != nullptr && engine_->IsInitialized()).
  bool started = false;
  hixl::Hixl engine;
};

AdxlEngine::AdxlEngine() { Note("AdxlEngine::AdxlEngine", 0, "this=%p", static_cast<void *>(this)); }

AdxlEngine::~AdxlEngine() {
  Note("AdxlEngine::~AdxlEngine", 0, "this=%p", static_cast<void *>(this));
  Finalize();
}

Status AdxlEngine::Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options) {
  // a new implementation each time, kept whether or not its engine starts
  impl_.reset(new AdxlEngineImpl());
  Status rc = impl_->engine.Initialize(local_engine, options);
  impl_->started = rc == SUCCESS;
  Note("AdxlEngine::Initialize", rc, "this=%p, \"%s\", options=%zu", static_cast<void *>(this), Str(local_engine),
       options.size());
  return rc;
}

void AdxlEngine::Finalize() {
  if (impl_ != nullptr) {
    impl_->engine.Finalize();
    impl_.reset();
  }
  Note("AdxlEngine::Finalize", 0, "this=%p", static_cast<void *>(this));
}

Status AdxlEngine::RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle) {
  Status rc;
  if (impl_ == nullptr || !impl_->started)
    rc = FAILED;
  else if (mem.addr == 0)
    rc = PARAM_INVALID;
  else
    rc = impl_->engine.RegisterMem(hixl::MemDesc{mem.addr, mem.len}, static_cast<hixl::MemType>(type), mem_handle);
  Note("AdxlEngine::RegisterMem", rc, "this=%p, addr=0x%llx, len=%llu, type=%d", static_cast<void *>(this),
       static_cast<unsigned long long>(mem.addr), static_cast<unsigned long long>(mem.len), static_cast<int>(type));
  return rc;
}

Status AdxlEngine::DeregisterMem(MemHandle mem_handle) {
  Status rc;
  if (impl_ == nullptr || !impl_->started)
    rc = FAILED;
  else if (mem_handle == nullptr)
    rc = PARAM_INVALID;
  else
    rc = impl_->engine.DeregisterMem(mem_handle);
  Note("AdxlEngine::DeregisterMem", rc, "this=%p, %p", static_cast<void *>(this), mem_handle);
  return rc;
}

namespace {
// Connect and Disconnect: no implementation -> FAILED, timeout <= 0 -> PARAM_INVALID, the engine
// not started -> FAILED, then the engine.
template <typename Call>
Status LinkCall(const char *api, const void *self, bool have_impl, bool started, const AscendString &remote,
                int32_t timeout, Call call) {
  Status rc;
  if (!have_impl)
    rc = FAILED;
  else if (timeout <= 0)
    rc = PARAM_INVALID;
  else if (!started)
    rc = FAILED;
  else
    rc = call();
  Note(api, rc, "this=%p, \"%s\", %d", self, Str(remote), timeout);
  return rc;
}
}  // namespace

Status AdxlEngine::Connect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return LinkCall("AdxlEngine::Connect", this, impl_ != nullptr, impl_ != nullptr && impl_->started, remote_engine,
                  timeout_in_millis, [&]() { return impl_->engine.Connect(remote_engine, timeout_in_millis); });
}

Status AdxlEngine::Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return LinkCall("AdxlEngine::Disconnect", this, impl_ != nullptr, impl_ != nullptr && impl_->started, remote_engine,
                  timeout_in_millis, [&]() { return impl_->engine.Disconnect(remote_engine, timeout_in_millis); });
}

Status AdxlEngine::TransferSync(const AscendString &remote_engine, TransferOp operation,
                                const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis) {
  Status rc;
  if (impl_ == nullptr)
    rc = FAILED;
  else if (timeout_in_millis <= 0)
    rc = PARAM_INVALID;
  else if (!impl_->started)
    rc = FAILED;
  else if (!AddressesSet(op_descs))
    rc = PARAM_INVALID;
  else
    rc = impl_->engine.TransferSync(remote_engine, static_cast<hixl::TransferOp>(operation), HixlOps(op_descs),
                                    timeout_in_millis);
  Note("AdxlEngine::TransferSync", rc, "this=%p, \"%s\", %s, ops=%zu, %d", static_cast<void *>(this),
       Str(remote_engine), OpName(operation), op_descs.size(), timeout_in_millis);
  return rc;
}

Status AdxlEngine::TransferAsync(const AscendString &remote_engine, TransferOp operation,
                                 const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                                 TransferReq &req) {
  Status rc;
  if (impl_ == nullptr || !impl_->started) {
    rc = FAILED;
  } else if (!AddressesSet(op_descs)) {
    rc = PARAM_INVALID;
  } else {
    hixl::TransferArgs args;  // the vendor copies the 128 reserved bytes over HIXL's arguments
    memcpy(static_cast<void *>(&args), &optional_args, sizeof args);
    rc = impl_->engine.TransferAsync(remote_engine, static_cast<hixl::TransferOp>(operation), HixlOps(op_descs), args,
                                     req);
  }
  Note("AdxlEngine::TransferAsync", rc, "this=%p, \"%s\", %s, ops=%zu", static_cast<void *>(this), Str(remote_engine),
       OpName(operation), op_descs.size());
  return rc;
}

Status AdxlEngine::GetTransferStatus(const TransferReq &req, TransferStatus &status) {
  Status rc;
  if (impl_ == nullptr || req == nullptr || !impl_->started) {
    rc = FAILED;
  } else {
    hixl::TransferStatus s = hixl::TransferStatus::WAITING;
    rc = impl_->engine.GetTransferStatus(req, s);
    status = rc == SUCCESS ? static_cast<TransferStatus>(s) : TransferStatus::FAILED;
  }
  Note("AdxlEngine::GetTransferStatus", rc, "this=%p, %p", static_cast<void *>(this), req);
  return rc;
}

Status AdxlEngine::SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis) {
  Status rc;
  if (impl_ == nullptr)
    rc = FAILED;
  else if (notify.name.GetLength() > kMaxNotifyLength || notify.notify_msg.GetLength() > kMaxNotifyLength ||
           timeout_in_millis <= 0)
    rc = PARAM_INVALID;
  else if (!impl_->started)
    rc = FAILED;
  else
    rc = impl_->engine.SendNotify(remote_engine, hixl::NotifyDesc{notify.name, notify.notify_msg}, timeout_in_millis);
  Note("AdxlEngine::SendNotify", rc, "this=%p, \"%s\", %d", static_cast<void *>(this), Str(remote_engine),
       timeout_in_millis);
  return rc;
}

Status AdxlEngine::GetNotifies(std::vector<NotifyDesc> &notifies) {
  Status rc;
  std::vector<hixl::NotifyDesc> got;
  if (impl_ == nullptr || !impl_->started)
    rc = FAILED;
  else
    rc = impl_->engine.GetNotifies(got);
  if (rc == SUCCESS)
    for (const hixl::NotifyDesc &n : got) notifies.push_back(NotifyDesc{n.name, n.notify_msg});
  Note("AdxlEngine::GetNotifies", rc, "this=%p", static_cast<void *>(this));
  return rc;
}

Status AdxlEngine::MallocMem(MemType type, size_t size, void **ptr) {
  Status rc = hixl::FabricMemTransferService::MallocMem(static_cast<hixl::MemType>(type), size, ptr);
  Note("AdxlEngine::MallocMem", rc, "%d, %zu, %p", static_cast<int>(type), size, static_cast<void *>(ptr));
  return rc;
}

// After 9.1.0 only (hicann/hixl 6d1c2b6; absent at tag v9.1.0 and in 9.2.0-beta.1): the 9.1.0 install
// root's library has no such symbol, so a program's weak reference to it is NULL there, as on a real
// 9.1.0 (Mooncake then makes no Ascend shared segment).
#if ACLSIM_ROOT_RELEASE_9_2
Status AdxlEngine::ExportToShareableHandle(void *addr, ShareableHandle &handle) {
  Status rc = hixl::FabricMemTransferService::ExportToShareableHandle(addr, handle);
  Note("AdxlEngine::ExportToShareableHandle", rc, "%p", addr);
  return rc;
}
#endif

Status AdxlEngine::FreeMem(void *ptr) {
  Status rc = hixl::FabricMemTransferService::FreeMem(ptr);
  Note("AdxlEngine::FreeMem", rc, "%p", ptr);
  return rc;
}

Status AdxlEngine::GetCapability(FeatureType feature_type, int32_t &value) {
  Status rc = hixl::Hixl::GetCapability(static_cast<hixl::FeatureType>(feature_type), value);
  Note("AdxlEngine::GetCapability", rc, "%d", static_cast<int>(feature_type));
  return rc;
}

}  // namespace adxl
