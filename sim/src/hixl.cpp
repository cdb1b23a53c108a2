// hixl::Hixl of the simulator (libcann_hixl.so): the vendor's interface and its common checks
// (hicann/hixl src/hixl/engine/hixl_impl.cc); the engines are in hixl_engine.cpp.
//
// Like the vendor's, the object holds nothing until Initialize, which selects and starts an
// engine; Finalize drops it. Every member before Initialize or after Finalize returns FAILED.
#include <string.h>

#include "acl/acl_rt.h"
#include "aclsim.h"
#include "hixl/hixl.h"
#include "hixl_common.h"
#include "hixl_engine.h"

static_assert(sizeof(hixl::Hixl) == 8, "Hixl is one std::unique_ptr");
static_assert(sizeof(hixl::MemDesc) == 144, "MemDesc is 144 bytes");
static_assert(sizeof(hixl::TransferOpDesc) == 24, "TransferOpDesc is 24 bytes");
static_assert(sizeof(ge::AscendString) == 16, "AscendString is 16 bytes");

namespace hixl {

using aclsim::Fmt;

class __attribute__((visibility("hidden"))) Hixl::HixlImpl : public aclsim::Engine {
 public:
  using Engine::Engine;
};

namespace {

std::string Str(const AscendString &s) { return std::string(s.GetString(), s.GetLength()); }

const char *OpName(TransferOp op) { return op == READ ? "READ" : op == WRITE ? "WRITE" : "?"; }

// The vendor's CheckTransferOpDescs: no null address, before the link is looked up.
bool AddressesSet(const std::vector<TransferOpDesc> &ops) {
  for (const TransferOpDesc &d : ops)
    if (d.local_addr == 0 || d.remote_addr == 0) return false;
  return true;
}

std::vector<aclsim::XferOp> Ops(const std::vector<TransferOpDesc> &ops) {
  std::vector<aclsim::XferOp> out;
  out.reserve(ops.size());
  for (const TransferOpDesc &d : ops) out.push_back(aclsim::XferOp{d.local_addr, d.remote_addr, d.len});
  return out;
}

}  // namespace

Hixl::Hixl() { ACLSIM_NOTE("Hixl::Hixl", Fmt("this=%p", static_cast<void *>(this)), 0); }

Hixl::~Hixl() {
  ACLSIM_NOTE("Hixl::~Hixl", Fmt("this=%p", static_cast<void *>(this)), 0);
  Finalize();
}

Status Hixl::Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options) {
  std::string name = Str(local_engine);
  std::map<std::string, std::string> opts;
  for (const auto &kv : options) opts[Str(kv.first)] = Str(kv.second);
  // like the vendor: a new engine each time; it replaces the old one only when it starts
  std::unique_ptr<HixlImpl> impl(new HixlImpl(name));
  Status rc = impl->Initialize(opts);
  const char *kind = rc == SUCCESS ? aclsim::KindName(impl->Kind()) : "-";
  if (rc == SUCCESS) {
    impl_ = std::move(impl);
    aclsim::Event("[HixlEngine] initialize success, local_engine:%s, engine:%s", name.c_str(), kind);
  }
  ACLSIM_NOTE("Hixl::Initialize",
       Fmt("this=%p, \"%s\", options=%zu, engine=%s", static_cast<void *>(this), name.c_str(), options.size(), kind),
       rc);
  return rc;
}

void Hixl::Finalize() {
  if (impl_ != nullptr) {
    impl_->Finalize();
    impl_.reset();
  }
  ACLSIM_NOTE("Hixl::Finalize", Fmt("this=%p", static_cast<void *>(this)), 0);
}

Status Hixl::RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle) {
  Status rc;
  if (impl_ == nullptr || !impl_->Initialized())
    rc = FAILED;
  else if (mem.addr == 0)
    rc = PARAM_INVALID;
  else
    rc = impl_->RegisterMem(mem.addr, mem.len, static_cast<int>(type), mem_handle);
  ACLSIM_NOTE("Hixl::RegisterMem",
       Fmt("this=%p, addr=0x%llx, len=%llu, type=%d", static_cast<void *>(this),
           static_cast<unsigned long long>(mem.addr), static_cast<unsigned long long>(mem.len),
           static_cast<int>(type)),
       rc);
  return rc;
}

Status Hixl::DeregisterMem(MemHandle mem_handle) {
  Status rc;
  if (impl_ == nullptr || !impl_->Initialized())
    rc = FAILED;
  else if (mem_handle == nullptr)
    rc = PARAM_INVALID;
  else
    rc = impl_->DeregisterMem(mem_handle);
  ACLSIM_NOTE("Hixl::DeregisterMem", Fmt("this=%p, %p", static_cast<void *>(this), mem_handle), rc);
  return rc;
}

namespace {
// The four link calls: no engine -> FAILED, timeout <= 0 -> PARAM_INVALID, then the engine.
template <typename Call>
Status LinkCall(const char *api, const void *self, aclsim::Engine *impl, const std::string &remote, int32_t timeout,
                Call call) {
  Status rc;
  if (impl == nullptr)
    rc = FAILED;
  else if (timeout <= 0)
    rc = PARAM_INVALID;
  else
    rc = call(impl);
  ACLSIM_NOTE(api, Fmt("this=%p, \"%s\", %d", self, remote.c_str(), timeout), rc);
  return rc;
}
}  // namespace

Status Hixl::Connect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  return LinkCall("Hixl::Connect", this, impl_.get(), remote, timeout_in_millis,
                  [&](aclsim::Engine *e) { return e->Connect(remote, timeout_in_millis); });
}

Status Hixl::Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  return LinkCall("Hixl::Disconnect", this, impl_.get(), remote, timeout_in_millis,
                  [&](aclsim::Engine *e) { return e->Disconnect(remote); });
}

Status Hixl::ConnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  return LinkCall("Hixl::ConnectAsync", this, impl_.get(), remote, timeout_in_millis,
                  [&](aclsim::Engine *e) { return e->Submit(true, remote, timeout_in_millis); });
}

Status Hixl::DisconnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  return LinkCall("Hixl::DisconnectAsync", this, impl_.get(), remote, timeout_in_millis,
                  [&](aclsim::Engine *e) { return e->Submit(false, remote, timeout_in_millis); });
}

Status Hixl::GetAsyncConnectStatus(const AscendString &remote_engine, AsyncConnectStatus &status) {
  std::string remote = Str(remote_engine);
  Status rc = SUCCESS;
  if (impl_ == nullptr)
    rc = FAILED;
  else
    status = static_cast<AsyncConnectStatus>(impl_->AsyncStatus(remote));
  ACLSIM_NOTE("Hixl::GetAsyncConnectStatus", Fmt("this=%p, \"%s\"", static_cast<void *>(this), remote.c_str()), rc);
  return rc;
}

Status Hixl::GetAsyncConnectStatus(std::map<AscendString, AsyncConnectStatus> &statuses) {
  Status rc = SUCCESS;
  if (impl_ == nullptr) {
    rc = FAILED;
  } else {
    statuses.clear();
    for (const auto &kv : impl_->AsyncStatuses())
      statuses[AscendString(kv.first.c_str(), kv.first.size())] = static_cast<AsyncConnectStatus>(kv.second);
  }
  ACLSIM_NOTE("Hixl::GetAsyncConnectStatus", Fmt("this=%p, map", static_cast<void *>(this)), rc);
  return rc;
}

Status Hixl::TransferSync(const AscendString &remote_engine, TransferOp operation,
                          const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  Status rc;
  if (impl_ == nullptr)
    rc = FAILED;
  else if (timeout_in_millis <= 0)
    rc = PARAM_INVALID;
  else if (!impl_->Initialized())
    rc = FAILED;
  else if (!AddressesSet(op_descs))
    rc = PARAM_INVALID;
  else
    rc = impl_->TransferSync(remote, static_cast<int>(operation), Ops(op_descs), timeout_in_millis);
  ACLSIM_NOTE("Hixl::TransferSync",
       Fmt("this=%p, \"%s\", %s, ops=%zu, %d", static_cast<void *>(this), remote.c_str(), OpName(operation),
           op_descs.size(), timeout_in_millis),
       rc);
  return rc;
}

Status Hixl::TransferAsync(const AscendString &remote_engine, TransferOp operation,
                           const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                           TransferReq &req) {
  std::string remote = Str(remote_engine);
  Status rc;
  if (impl_ == nullptr || !impl_->Initialized())
    rc = FAILED;
  else if (!AddressesSet(op_descs))
    rc = PARAM_INVALID;
  else
    rc = impl_->TransferAsync(remote, static_cast<int>(operation), Ops(op_descs), optional_args.user_data, req);
  ACLSIM_NOTE("Hixl::TransferAsync",
       Fmt("this=%p, \"%s\", %s, ops=%zu", static_cast<void *>(this), remote.c_str(), OpName(operation),
           op_descs.size()),
       rc);
  return rc;
}

Status Hixl::GetTransferStatus(const TransferReq &req, TransferStatus &status) {
  Status rc;
  if (impl_ == nullptr || req == nullptr) {
    rc = FAILED;
  } else {
    int s = 0;
    rc = impl_->TransferStatusOf(req, s);
    status = static_cast<TransferStatus>(s);
  }
  ACLSIM_NOTE("Hixl::GetTransferStatus", Fmt("this=%p, %p", static_cast<void *>(this), req), rc);
  return rc;
}

Status Hixl::GetTransferStatus(const GetTransferStatusArgs &args, std::vector<TransferResult> &results) {
  Status rc;
  if (impl_ == nullptr) {
    rc = FAILED;
  } else {
    std::vector<aclsim::Engine::Result> got;
    rc = impl_->TransferStatuses(args.max_query_count, got);
    if (rc == SUCCESS) {
      results.clear();
      for (const auto &g : got) {
        TransferResult r;
        r.req = g.req;
        r.user_data = g.user_data;
        r.status = static_cast<TransferStatus>(g.status);
        results.push_back(r);
      }
    }
  }
  ACLSIM_NOTE("Hixl::GetTransferStatus", Fmt("this=%p, args", static_cast<void *>(this)), rc);
  return rc;
}

Status Hixl::SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  constexpr size_t kMaxNotifyLength = 1024;
  Status rc;
  if (impl_ == nullptr)
    rc = FAILED;
  else if (notify.name.GetLength() > kMaxNotifyLength || notify.notify_msg.GetLength() > kMaxNotifyLength ||
           timeout_in_millis <= 0)
    rc = PARAM_INVALID;
  else
    rc = impl_->SendNotify(remote, Str(notify.name), Str(notify.notify_msg), timeout_in_millis);
  ACLSIM_NOTE("Hixl::SendNotify",
       Fmt("this=%p, \"%s\", %d", static_cast<void *>(this), remote.c_str(), timeout_in_millis), rc);
  return rc;
}

Status Hixl::GetNotifies(std::vector<NotifyDesc> &notifies) {
  Status rc;
  std::vector<std::pair<std::string, std::string>> got;
  if (impl_ == nullptr)
    rc = FAILED;
  else
    rc = impl_->GetNotifies(got);
  if (rc == SUCCESS) {
    notifies.clear();
    for (const auto &n : got) {
      NotifyDesc d;
      d.name = AscendString(n.first.c_str(), n.first.size());
      d.notify_msg = AscendString(n.second.c_str(), n.second.size());
      notifies.push_back(d);
    }
  }
  ACLSIM_NOTE("Hixl::GetNotifies", Fmt("this=%p", static_cast<void *>(this)), rc);
  return rc;
}

Status Hixl::GetCapability(FeatureType feature_type, int32_t &value) {
  // hixl_impl.cc: a negative feature is refused; one it does not know is "not supported":
  // UNSUPPORTED on 9.1.0 (v9.1.0 hixl_impl.cc:421-433), SUCCESS with value 0 after (8687917)
  Status rc = SUCCESS;
  if (static_cast<int32_t>(feature_type) < 0)
    rc = PARAM_INVALID;
  else if (feature_type == AUTO_CONNECT || feature_type == CLIENT_SERVER_COMM)
    value = FEATURE_SUPPORTED;
  else if (!aclsim::ReleaseAfter91())
    rc = UNSUPPORTED;
  else
    value = FEATURE_NOT_SUPPORTED;
  ACLSIM_NOTE("Hixl::GetCapability", Fmt("%d", static_cast<int>(feature_type)), rc);
  return rc;
}

}  // namespace hixl
