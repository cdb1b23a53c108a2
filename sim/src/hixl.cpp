// hixl::Hixl of the simulator (libcann_hixl.so): the vendor's documented interface.
//
// Engines that Initialize in this process register in a process-global table under their
// `local_engine` name; Connect finds the remote engine there. Links are per side: A.Connect(B)
// lets A transfer to and from B; B needs its own Connect(A) to start transfers itself.
// Transfers copy bytes immediately (READ: remote -> local, WRITE: local -> remote).
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <set>

#include "acl/acl_rt.h"
#include "aclsim.h"
#include "sim_format.h"
#include "hixl/hixl.h"
#include "hixl_common.h"

static_assert(sizeof(hixl::Hixl) == 8, "Hixl is one std::unique_ptr");
static_assert(sizeof(hixl::MemDesc) == 144, "MemDesc is 144 bytes");
static_assert(sizeof(hixl::TransferOpDesc) == 24, "TransferOpDesc is 24 bytes");
static_assert(sizeof(ge::AscendString) == 16, "AscendString is 16 bytes");

namespace aclsim {

std::mutex &HixlMutex() {
  static std::mutex *m = new std::mutex;  // never destroyed
  return *m;
}

std::string Fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    std::string out = aclsim_format::VFormat(f, ap);
    va_end(ap);
    return out;
}

void Note(const char *name, const std::string &args, long long code) { aclsimNoteCall(name, args.c_str(), code); }

void *NewHandle() {
  static std::atomic<uintptr_t> next{0x4e4c0000};
  return reinterpret_cast<void *>(next.fetch_add(0x10));
}

void *ToHost(uintptr_t addr) {
  void *h = aclsimDeviceToHost(reinterpret_cast<const void *>(addr));
  return h != nullptr ? h : reinterpret_cast<void *>(addr);
}

void RunCopies(const std::vector<Copy> &copies) {
  for (const Copy &c : copies) memmove(ToHost(c.dst), ToHost(c.src), c.len);
}

uint32_t RegTable::Add(uintptr_t addr, size_t len, int type, const std::string &tag, void *&handle) {
  if (addr == 0) return hixl::PARAM_INVALID;
  if (addr + len < addr) return hixl::PARAM_INVALID;
  const bool host = type != 0;
  auto &idx = by_addr_[host ? 1 : 0];
  uintptr_t end = addr + len;
  // identical registration: the same handle
  auto range = idx.equal_range(addr);
  for (auto it = range.first; it != range.second; ++it) {
    const Reg &r = by_handle_.at(it->second);
    if (r.len == len) {
      handle = it->second;
      return hixl::SUCCESS;
    }
  }
  // overlap with a non-identical registration of the same type
  if (len > 0) {
    auto it = idx.lower_bound(end);
    while (it != idx.begin()) {
      --it;
      const Reg &r = by_handle_.at(it->second);
      if (r.len == 0) continue;
      if (r.addr + r.len > addr) return hixl::PARAM_INVALID;
      break;
    }
  }
  void *h = NewHandle();
  by_handle_[h] = Reg{addr, len, host, tag};
  idx.emplace(addr, h);
  handle = h;
  return hixl::SUCCESS;
}

bool RegTable::Remove(void *handle) {
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return false;
  auto &idx = by_addr_[it->second.host ? 1 : 0];
  auto range = idx.equal_range(it->second.addr);
  for (auto j = range.first; j != range.second; ++j) {
    if (j->second == handle) {
      idx.erase(j);
      break;
    }
  }
  by_handle_.erase(it);
  return true;
}

bool RegTable::Contains(uintptr_t addr, size_t len) const {
  if (addr + len < addr) return false;
  for (const auto &idx : by_addr_) {
    auto it = idx.upper_bound(addr);
    while (it != idx.begin()) {
      --it;
      const Reg &r = by_handle_.at(it->second);
      if (r.len == 0) continue;
      if (addr - r.addr <= r.len && len <= r.len - (addr - r.addr)) return true;
      break;
    }
  }
  return false;
}

void RegTable::Clear() {
  by_handle_.clear();
  by_addr_[0].clear();
  by_addr_[1].clear();
}

}  // namespace aclsim

namespace hixl {

using aclsim::Fmt;
using aclsim::Note;

// The state of one engine. Hixl::HixlImpl is private to Hixl, so the helpers work on this base.
struct __attribute__((visibility("hidden"))) EngineState {
  bool initialized = false;
  std::string name;
  std::map<std::string, std::string> options;
  aclrtContext init_ctx = nullptr;
  aclsim::RegTable regs;
  std::set<std::string> links;  // outgoing links, by remote engine name
  std::map<std::string, AsyncConnectStatus> async_status;
  std::map<void *, const void *> completed_reqs;           // TransferAsync requests not yet queried
  std::vector<std::pair<std::string, std::string>> inbox;  // notifies received
};

class __attribute__((visibility("hidden"))) Hixl::HixlImpl : public EngineState {};

namespace {

std::map<std::string, EngineState *> &Engines() {
  static auto *m = new std::map<std::string, EngineState *>;
  return *m;
}

std::string Str(const AscendString &s) { return std::string(s.GetString(), s.GetLength()); }

// Live engine named `name`, or nullptr (call with the mutex held).
EngineState *FindEngine(const std::string &name) {
  auto it = Engines().find(name);
  return it == Engines().end() ? nullptr : it->second;
}

// Some engine has a link to `self` (call with the mutex held).
bool HasIncomingLinks(const EngineState *self) {
  for (const auto &kv : Engines())
    if (kv.second != self && kv.second->links.count(self->name) != 0) return true;
  return false;
}

// The checks and copies of TransferSync/TransferAsync. Fills `copies` (run after unlocking).
Status PrepareTransfer(EngineState *impl, const std::string &remote, TransferOp op,
                       const std::vector<TransferOpDesc> &descs, std::vector<aclsim::Copy> &copies) {
  if (!impl->initialized) return FAILED;
  if (impl->links.count(remote) == 0) return NOT_CONNECTED;
  EngineState *peer = FindEngine(remote);
  if (peer == nullptr) return NOT_CONNECTED;
  copies.reserve(descs.size());
  for (const TransferOpDesc &d : descs) {
    if (d.local_addr == 0 || d.remote_addr == 0 || d.len == 0) return PARAM_INVALID;
    if (!impl->regs.Contains(d.local_addr, d.len)) return PARAM_INVALID;
    if (!peer->regs.Contains(d.remote_addr, d.len)) return PARAM_INVALID;
    if (op == READ)
      copies.push_back(aclsim::Copy{d.local_addr, d.remote_addr, d.len});
    else if (op == WRITE)
      copies.push_back(aclsim::Copy{d.remote_addr, d.local_addr, d.len});
    else
      return PARAM_INVALID;
  }
  return SUCCESS;
}

}  // namespace

Hixl::Hixl() : impl_(new HixlImpl) { Note("Hixl::Hixl", Fmt("this=%p", static_cast<void *>(this)), 0); }

Hixl::~Hixl() {
  Note("Hixl::~Hixl", Fmt("this=%p", static_cast<void *>(this)), 0);
  Finalize();
}

Status Hixl::Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options) {
  std::string name = Str(local_engine);
  Status rc = SUCCESS;
  // Like the vendor, remember the calling thread's context (through the PLT: interposable).
  aclrtContext ctx = nullptr;
  aclError acl_rc = aclrtGetCurrentContext(&ctx);
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr) {
      rc = FAILED;
    } else if (impl_->initialized) {
      rc = FAILED;
    } else if (name.empty()) {
      rc = PARAM_INVALID;
    } else if (FindEngine(name) != nullptr) {
      rc = PARAM_INVALID;
    } else {
      impl_->initialized = true;
      impl_->name = name;
      impl_->options.clear();
      for (const auto &kv : options) impl_->options[Str(kv.first)] = Str(kv.second);
      impl_->init_ctx = acl_rc == ACL_SUCCESS ? ctx : nullptr;
      Engines()[name] = impl_.get();
    }
  }
  Note("Hixl::Initialize",
       Fmt("this=%p, \"%s\", options=%zu", static_cast<void *>(this), name.c_str(), options.size()), rc);
  return rc;
}

void Hixl::Finalize() {
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ != nullptr && impl_->initialized) {
      Engines().erase(impl_->name);
      impl_->regs.Clear();
      impl_->links.clear();
      impl_->async_status.clear();
      impl_->completed_reqs.clear();
      impl_->inbox.clear();
      impl_->options.clear();
      impl_->initialized = false;
    }
  }
  Note("Hixl::Finalize", Fmt("this=%p", static_cast<void *>(this)), 0);
}

Status Hixl::RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle) {
  Status rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized)
      rc = FAILED;
    else
      rc = impl_->regs.Add(mem.addr, mem.len, static_cast<int>(type), std::string(), mem_handle);
  }
  Note("Hixl::RegisterMem",
       Fmt("this=%p, addr=0x%llx, len=%llu, type=%d", static_cast<void *>(this),
           static_cast<unsigned long long>(mem.addr), static_cast<unsigned long long>(mem.len),
           static_cast<int>(type)),
       rc);
  return rc;
}

Status Hixl::DeregisterMem(MemHandle mem_handle) {
  Status rc = SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (mem_handle == nullptr) {
      rc = PARAM_INVALID;
    } else if (impl_ == nullptr || !impl_->initialized) {
      rc = FAILED;
    } else if (impl_->regs.All().count(mem_handle) == 0) {
      rc = SUCCESS;  // unknown or already deregistered: nothing to do
    } else if (!impl_->links.empty() || HasIncomingLinks(impl_.get())) {
      rc = FAILED;
    } else {
      impl_->regs.Remove(mem_handle);
    }
  }
  Note("Hixl::DeregisterMem", Fmt("this=%p, %p", static_cast<void *>(this), mem_handle), rc);
  return rc;
}

namespace {
Status DoConnect(EngineState *impl, const std::string &remote, int32_t timeout, bool async) {
  std::lock_guard<std::mutex> g(aclsim::HixlMutex());
  if (impl == nullptr || !impl->initialized) return FAILED;
  if (timeout <= 0) return PARAM_INVALID;
  if (impl->links.count(remote) != 0) return ALREADY_CONNECTED;
  if (FindEngine(remote) == nullptr) {
    if (async) {
      impl->async_status[remote] = AsyncConnectStatus::CONNECT_FAILED;
      return SUCCESS;
    }
    return TIMEOUT;
  }
  impl->links.insert(remote);
  impl->async_status[remote] = AsyncConnectStatus::CONNECTED;
  return SUCCESS;
}

Status DoDisconnect(EngineState *impl, const std::string &remote, int32_t timeout) {
  std::lock_guard<std::mutex> g(aclsim::HixlMutex());
  if (impl == nullptr || !impl->initialized) return FAILED;
  if (timeout <= 0) return PARAM_INVALID;
  if (impl->links.erase(remote) == 0) return NOT_CONNECTED;
  impl->async_status[remote] = AsyncConnectStatus::NOT_CONNECT;
  return SUCCESS;
}
}  // namespace

Status Hixl::Connect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  Status rc = DoConnect(impl_.get(), remote, timeout_in_millis, false);
  Note("Hixl::Connect", Fmt("this=%p, \"%s\", %d", static_cast<void *>(this), remote.c_str(), timeout_in_millis),
       rc);
  return rc;
}

Status Hixl::Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  Status rc = DoDisconnect(impl_.get(), remote, timeout_in_millis);
  Note("Hixl::Disconnect",
       Fmt("this=%p, \"%s\", %d", static_cast<void *>(this), remote.c_str(), timeout_in_millis), rc);
  return rc;
}

Status Hixl::ConnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  Status rc = DoConnect(impl_.get(), remote, timeout_in_millis, true);
  Note("Hixl::ConnectAsync",
       Fmt("this=%p, \"%s\", %d", static_cast<void *>(this), remote.c_str(), timeout_in_millis), rc);
  return rc;
}

Status Hixl::DisconnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  Status rc = DoDisconnect(impl_.get(), remote, timeout_in_millis);
  Note("Hixl::DisconnectAsync",
       Fmt("this=%p, \"%s\", %d", static_cast<void *>(this), remote.c_str(), timeout_in_millis), rc);
  return rc;
}

Status Hixl::GetAsyncConnectStatus(const AscendString &remote_engine, AsyncConnectStatus &status) {
  std::string remote = Str(remote_engine);
  Status rc = SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized) {
      rc = FAILED;
    } else if (impl_->links.count(remote) != 0) {
      status = AsyncConnectStatus::CONNECTED;
    } else {
      auto it = impl_->async_status.find(remote);
      status = it == impl_->async_status.end() ? AsyncConnectStatus::NOT_CONNECT : it->second;
      if (status == AsyncConnectStatus::CONNECTED) status = AsyncConnectStatus::NOT_CONNECT;
    }
  }
  Note("Hixl::GetAsyncConnectStatus", Fmt("this=%p, \"%s\"", static_cast<void *>(this), remote.c_str()), rc);
  return rc;
}

Status Hixl::GetAsyncConnectStatus(std::map<AscendString, AsyncConnectStatus> &statuses) {
  Status rc = SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized) {
      rc = FAILED;
    } else {
      statuses.clear();
      for (const auto &kv : impl_->async_status) {
        AsyncConnectStatus s = impl_->links.count(kv.first) != 0 ? AsyncConnectStatus::CONNECTED : kv.second;
        if (s == AsyncConnectStatus::CONNECTED && impl_->links.count(kv.first) == 0)
          s = AsyncConnectStatus::NOT_CONNECT;
        statuses[AscendString(kv.first.c_str(), kv.first.size())] = s;
      }
      for (const auto &l : impl_->links) statuses[AscendString(l.c_str(), l.size())] = AsyncConnectStatus::CONNECTED;
    }
  }
  Note("Hixl::GetAsyncConnectStatus", Fmt("this=%p, map", static_cast<void *>(this)), rc);
  return rc;
}

Status Hixl::TransferSync(const AscendString &remote_engine, TransferOp operation,
                          const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  std::vector<aclsim::Copy> copies;
  Status rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized)
      rc = FAILED;
    else if (timeout_in_millis <= 0)
      rc = PARAM_INVALID;
    else
      rc = PrepareTransfer(impl_.get(), remote, operation, op_descs, copies);
  }
  if (rc == SUCCESS) aclsim::RunCopies(copies);
  Note("Hixl::TransferSync",
       Fmt("this=%p, \"%s\", %s, ops=%zu, %d", static_cast<void *>(this), remote.c_str(),
           operation == READ ? "READ" : operation == WRITE ? "WRITE" : "?", op_descs.size(), timeout_in_millis),
       rc);
  return rc;
}

Status Hixl::TransferAsync(const AscendString &remote_engine, TransferOp operation,
                           const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                           TransferReq &req) {
  std::string remote = Str(remote_engine);
  std::vector<aclsim::Copy> copies;
  Status rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    rc = impl_ == nullptr ? FAILED : PrepareTransfer(impl_.get(), remote, operation, op_descs, copies);
    if (rc == SUCCESS) {
      req = aclsim::NewHandle();
      impl_->completed_reqs[req] = optional_args.user_data;
    }
  }
  if (rc == SUCCESS) aclsim::RunCopies(copies);
  Note("Hixl::TransferAsync",
       Fmt("this=%p, \"%s\", %s, ops=%zu", static_cast<void *>(this), remote.c_str(),
           operation == READ ? "READ" : operation == WRITE ? "WRITE" : "?", op_descs.size()),
       rc);
  return rc;
}

Status Hixl::GetTransferStatus(const TransferReq &req, TransferStatus &status) {
  Status rc = SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized) {
      rc = FAILED;
    } else if (impl_->completed_reqs.erase(req) == 0) {
      rc = PARAM_INVALID;
    } else {
      status = TransferStatus::COMPLETED;
    }
  }
  Note("Hixl::GetTransferStatus", Fmt("this=%p, %p", static_cast<void *>(this), req), rc);
  return rc;
}

Status Hixl::GetTransferStatus(const GetTransferStatusArgs &args, std::vector<TransferResult> &results) {
  Status rc = SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized) {
      rc = FAILED;
    } else {
      results.clear();
      auto it = impl_->completed_reqs.begin();
      while (it != impl_->completed_reqs.end() && results.size() < args.max_query_count) {
        TransferResult r;
        r.req = it->first;
        r.user_data = it->second;
        r.status = TransferStatus::COMPLETED;
        results.push_back(r);
        it = impl_->completed_reqs.erase(it);
      }
    }
  }
  Note("Hixl::GetTransferStatus", Fmt("this=%p, args", static_cast<void *>(this)), rc);
  return rc;
}

Status Hixl::SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis) {
  std::string remote = Str(remote_engine);
  Status rc = SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    EngineState *peer = FindEngine(remote);
    if (impl_ == nullptr || !impl_->initialized)
      rc = FAILED;
    else if (timeout_in_millis <= 0)
      rc = PARAM_INVALID;
    else if (impl_->links.count(remote) == 0 || peer == nullptr)
      rc = NOT_CONNECTED;
    else
      peer->inbox.emplace_back(Str(notify.name), Str(notify.notify_msg));
  }
  Note("Hixl::SendNotify",
       Fmt("this=%p, \"%s\", %d", static_cast<void *>(this), remote.c_str(), timeout_in_millis), rc);
  return rc;
}

Status Hixl::GetNotifies(std::vector<NotifyDesc> &notifies) {
  Status rc = SUCCESS;
  std::vector<std::pair<std::string, std::string>> got;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (impl_ == nullptr || !impl_->initialized)
      rc = FAILED;
    else
      got.swap(impl_->inbox);
  }
  if (rc == SUCCESS) {
    notifies.clear();
    for (const auto &n : got) {
      NotifyDesc d;
      d.name = AscendString(n.first.c_str(), n.first.size());
      d.notify_msg = AscendString(n.second.c_str(), n.second.size());
      notifies.push_back(d);
    }
  }
  Note("Hixl::GetNotifies", Fmt("this=%p", static_cast<void *>(this)), rc);
  return rc;
}

Status Hixl::GetCapability(FeatureType feature_type, int32_t &value) {
  switch (feature_type) {
    case AUTO_CONNECT:
    case CLIENT_SERVER_COMM:
      value = FEATURE_SUPPORTED;
      break;
    default:
      value = FEATURE_NOT_SUPPORTED;
      break;
  }
  Note("Hixl::GetCapability", Fmt("%d", static_cast<int>(feature_type)), SUCCESS);
  return SUCCESS;
}

}  // namespace hixl
