// The engines behind the simulator's hixl::Hixl (see hixl_engine.h and sim/README.md, which
// cites the vendor code each behaviour follows).
#include "hixl_engine.h"

#include <dlfcn.h>
#include <string.h>

#include <chrono>

#include "acl/acl_rt.h"
#include "aclsim.h"
#include "dl_beside.h"
#include "hccl/hccl_mem.h"

namespace aclsim {

namespace {

// hixl::TransferStatus and hixl::AsyncConnectStatus values
constexpr int kCompleted = 1;
constexpr int kXferFailed = 3;
constexpr int kNotConnect = 0;
constexpr int kConnectPending = 1;
constexpr int kConnecting = 2;
constexpr int kConnected = 3;
constexpr int kConnectFailed = 4;
constexpr int kDisconnectPending = 5;
constexpr int kDisconnecting = 6;

constexpr int kAsyncTransferTimeoutMs = 3000;  // what the engines use for TransferAsync
constexpr int kAutoConnectTimeoutMs = 3000;    // auto-connect of TransferAsync, and of fabric memory
constexpr size_t kConnectQueueCapacity = 128;
constexpr int kConnectWorkers = 2;

bool IsHost(const RegTable::Reg *r) { return r == nullptr || r->host; }  // unregistered counts as host

// HCCL's global-memory registration as the comm engine reaches it (hicann/hixl
// src/llm_datadist/comm_adapter/comm_adapter.cc, CommAdapter::LoadSo): dlopen("libhcomm.so",
// RTLD_NOW | RTLD_GLOBAL) once per process, then dlsym. Loaded at the comm engine's Initialize
// (AdxlInnerEngine::Initialize); a library or function missing fails it.
using HcclRegisterFn = HcclResult (*)(CommMem *, void **);
using HcclDeregisterFn = HcclResult (*)(void *);
struct HcclFns {
  HcclRegisterFn reg = nullptr;
  HcclDeregisterFn dereg = nullptr;
};

const HcclFns *LoadHccl() {
  static std::mutex mu;
  static HcclFns fns;
  std::lock_guard<std::mutex> g(mu);
  if (fns.reg == nullptr || fns.dereg == nullptr) {
    void *so = aclsim_dl::OpenBeside("libhcomm.so", reinterpret_cast<const void *>(&LoadHccl));
    if (so == nullptr) {
      Log("CommAdapter initialize failed: open hccl so:libhcomm.so failed");
      return nullptr;
    }
    fns.reg = reinterpret_cast<HcclRegisterFn>(dlsym(so, "HcclRegisterGlobalMem"));
    fns.dereg = reinterpret_cast<HcclDeregisterFn>(dlsym(so, "HcclDeregisterGlobalMem"));
    if (fns.reg == nullptr || fns.dereg == nullptr) {
      Log("CommAdapter initialize failed: failed to get function HcclRegisterGlobalMem/HcclDeregisterGlobalMem");
      return nullptr;
    }
  }
  return &fns;
}

// ConvertCommErrorToAdxlStatus (src/llm_datadist/adxl/adxl_utils.cc)
uint32_t FromHccl(HcclResult r) {
  switch (r) {
    case HCCL_SUCCESS: return hixl::SUCCESS;
    case HCCL_E_PARA: return hixl::PARAM_INVALID;
    case HCCL_E_TIMEOUT: return hixl::TIMEOUT;
    case HCCL_E_NOT_SUPPORT: return hixl::UNSUPPORTED;
    default: return hixl::FAILED;
  }
}

// hixl::TemporaryRtContext (src/hixl/common/hixl_utils.cc): the engine's context for a scope;
// the caller's restored only when it had one.
class EngineContext {
 public:
  explicit EngineContext(void *ctx) {
    (void)aclrtGetCurrentContext(&prev_);
    if (ctx != nullptr && prev_ != ctx) (void)aclrtSetCurrentContext(ctx);
  }
  ~EngineContext() {
    if (prev_ != nullptr) (void)aclrtSetCurrentContext(prev_);
  }
  EngineContext(const EngineContext &) = delete;
  EngineContext &operator=(const EngineContext &) = delete;

 private:
  aclrtContext prev_ = nullptr;
};

}  // namespace

uint32_t Engine::HcclRegister(uintptr_t addr, size_t len, int type, void *&handle) {
  const HcclFns *hccl = LoadHccl();
  if (hccl == nullptr) return hixl::FAILED;
  CommMem mem{type == 0 ? COMM_MEM_TYPE_DEVICE : COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(addr),
              static_cast<uint64_t>(len)};
  HcclResult r;
  {
    EngineContext scope(ctx_);
    r = hccl->reg(&mem, &handle);
  }
  if (r != HCCL_SUCCESS) Log("Failed to register mem, HcclRegisterGlobalMem ret:%d", static_cast<int>(r));
  return FromHccl(r);
}

uint32_t Engine::HcclDeregister(void *handle) {
  const HcclFns *hccl = LoadHccl();
  if (hccl == nullptr) return hixl::FAILED;
  HcclResult r;
  {
    EngineContext scope(ctx_);
    r = hccl->dereg(handle);
  }
  if (r != HCCL_SUCCESS) Log("Failed to deregister mem, HcclDeregisterGlobalMem ret:%d", static_cast<int>(r));
  return FromHccl(r);
}

bool Engine::Initialized() {
  std::lock_guard<std::mutex> g(mu_);
  return initialized_;
}

uint32_t Engine::Initialize(const std::map<std::string, std::string> &options) {
  EngineOptions o;
  uint32_t rc = ParseEngineOptions(options, o);
  if (rc != hixl::SUCCESS) return rc;
  kind_ = SelectEngine(o);
  auto_connect_ = o.auto_connect;
  rc = CheckEngineOptions(kind_, o, pool_bytes_);
  if (rc != hixl::SUCCESS) return rc;
  if (kind_ == EngineKind::kComm && LoadHccl() == nullptr) return hixl::FAILED;  // CommAdapter::Initialize
  std::string ip;
  int port = -1;
  if (!ParseEndpoint(name_, ip, port) || port > 65535) {
    Log("local_engine \"%s\" is invalid: expected \"ip:port\" or \"ip\" (client only)", name_.c_str());
    return hixl::PARAM_INVALID;
  }
  // the engine's own context on the current device (restoring the caller's afterwards)
  uint32_t count = 0;
  aclError acl = aclrtGetDeviceCount(&count);
  if (acl != ACL_SUCCESS) return static_cast<uint32_t>(acl);
  if (count > 0) {
    int32_t device = -1;
    acl = aclrtGetDevice(&device);
    if (acl != ACL_SUCCESS) return static_cast<uint32_t>(acl);
    aclrtContext prev = nullptr;
    bool had = aclrtGetCurrentContext(&prev) == ACL_SUCCESS;
    acl = aclrtCreateContext(&ctx_, device);
    if (had) (void)aclrtSetCurrentContext(prev);
    if (acl != ACL_SUCCESS) {
      ctx_ = nullptr;
      return static_cast<uint32_t>(acl);
    }
  }
  if (port > 0) {
    if (service_.Listen(ip, port, 128) != hixl::SUCCESS) {
      Log("cannot listen on %s:%d (address in use or not local)", ip.c_str(), port);
      Finalize();
      return hixl::FAILED;
    }
    listening_ = true;
  }
  // the comm engine's staging pool: two device pools, allocated and registered here
  if (pool_bytes_ > 0) {
    for (int i = 0; i < 2; i++) {
      void *p = nullptr;
      acl = aclrtMalloc(&p, pool_bytes_,
                        static_cast<aclrtMemMallocPolicy>(ACL_MEM_TYPE_HIGH_BAND_WIDTH | ACL_MEM_MALLOC_HUGE_FIRST));
      if (acl != ACL_SUCCESS) {
        Finalize();
        return hixl::FAILED;
      }
      pool_mem_.push_back(p);
      void *handle = nullptr;  // registered like the vendor's (device memory, with HCCL), not by the caller
      if (HcclRegister(reinterpret_cast<uintptr_t>(p), static_cast<size_t>(pool_bytes_), 0, handle) != hixl::SUCCESS) {
        Finalize();
        return hixl::FAILED;
      }
      std::lock_guard<std::mutex> g(mu_);
      hccl_handles_.insert(handle);
      regs_.Insert(handle, RegTable::Reg{reinterpret_cast<uintptr_t>(p), static_cast<size_t>(pool_bytes_), false,
                                         "buffer_pool"});
    }
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    initialized_ = true;
    stopping_ = false;
  }
  if (listening_) {
    service_.Start(
        [this](Service::Conn &c, const WireReq &r, const std::string &p, std::string &out) {
          return Serve(c, r, p, out);
        });
  }
  return hixl::SUCCESS;
}

void Engine::Finalize() {
  std::map<std::string, std::shared_ptr<Peer>> links;
  {
    std::lock_guard<std::mutex> g(mu_);
    initialized_ = false;
    stopping_ = true;
    tasks_.clear();
    links.swap(links_);
  }
  task_cv_.notify_all();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> g(mu_);
    workers.swap(workers_);
  }
  for (auto &t : workers)
    if (t.joinable()) t.join();
  for (auto &kv : links) kv.second->link->Close();
  service_.Stop();
  listening_ = false;
  // the comm engine gives HCCL back every handle it still holds, errors ignored
  // (ChannelMsgHandler::Finalize), before its pool memory goes
  std::set<void *> handles;
  {
    std::lock_guard<std::mutex> g(mu_);
    handles.swap(hccl_handles_);
  }
  for (void *h : handles) (void)HcclDeregister(h);
  for (void *p : pool_mem_) (void)aclrtFree(p);
  pool_mem_.clear();
  if (ctx_ != nullptr) {
    (void)aclrtDestroyContext(ctx_);
    ctx_ = nullptr;
  }
  std::lock_guard<std::mutex> g(mu_);
  regs_.Clear();
  inbox_.clear();
  reqs_.clear();
  async_.clear();
}

uint32_t Engine::RegisterMem(uintptr_t addr, size_t len, int type, void *&handle) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!initialized_) return hixl::FAILED;
    if (kind_ != EngineKind::kComm) return regs_.Add(addr, len, type, std::string(), handle);
  }
  // The comm engine (ChannelMsgHandler::RegisterMem): the range must not wrap; then HCCL decides
  // (no overlap or length check of its own): an identical registration, by this engine or any
  // other user on the device, gets HCCL's one shared handle.
  if (addr + len < addr) return hixl::PARAM_INVALID;
  void *h = nullptr;
  uint32_t rc = HcclRegister(addr, len, type, h);
  if (rc != hixl::SUCCESS) return rc;
  std::lock_guard<std::mutex> g(mu_);
  if (hccl_handles_.insert(h).second) regs_.Insert(h, RegTable::Reg{addr, len, type != 0, std::string()});
  handle = h;
  return hixl::SUCCESS;
}

uint32_t Engine::DeregisterMem(void *handle) {
  std::unique_lock<std::mutex> g(mu_);
  if (!initialized_) return hixl::FAILED;
  if (kind_ == EngineKind::kComm) {
    // ChannelMsgHandler::DeregisterMem: a handle this engine does not hold is SUCCESS (a
    // warning); else its range goes, then HCCL's registration, whose failure is the answer
    // (the handle then stays held). HCCL keeps one handle for identical registrations, with no
    // count: once another user deregistered it, HCCL answers HCCL_E_PARA, so PARAM_INVALID.
    if (hccl_handles_.count(handle) == 0) return hixl::SUCCESS;
    regs_.Remove(handle);
    g.unlock();
    uint32_t rc = HcclDeregister(handle);
    if (rc != hixl::SUCCESS) return rc;
    g.lock();
    hccl_handles_.erase(handle);
    return hixl::SUCCESS;
  }
  if (regs_.All().count(handle) == 0) return hixl::SUCCESS;  // unknown or already deregistered
  // hixl_cs and fabric memory refuse while this engine has channels of its own (its clients)
  if (kind_ != EngineKind::kComm && !links_.empty()) {
    Log("Failed to deregister mem. All clients must be disconnected before deregistration, mem_handle: %p, "
        "local_engine: %s",
        handle, name_.c_str());
    return hixl::FAILED;
  }
  regs_.Remove(handle);
  return hixl::SUCCESS;
}

std::shared_ptr<Engine::Peer> Engine::FindPeer(const std::string &remote) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = links_.find(remote);
  return it == links_.end() ? nullptr : it->second;
}

uint32_t Engine::Connect(const std::string &remote, int timeout_ms) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!initialized_) return hixl::FAILED;
    // No connection with oneself: hixl_cs refuses the name (hixl/engine/hixl_engine.cc,
    // HixlEngine::Connect), the comm engine its own device (llm_datadist/adxl/
    // channel_msg_handler.cc, "not support connect with self device"); the fabric memory
    // engine links (the vendor's kv benchmark connects each rank to itself).
    if (remote == name_ && kind_ != EngineKind::kFabric) return hixl::PARAM_INVALID;
    if (links_.count(remote) != 0) return hixl::ALREADY_CONNECTED;
  }
  std::string ip;
  int port = -1;
  if (!ParseEndpoint(remote, ip, port)) return hixl::PARAM_INVALID;
  if (port <= 0 || port > 65535) return hixl::FAILED;  // a client-only engine cannot be connected to
  const int64_t deadline = NowMs() + timeout_ms;
  int fd = -1;
  uint32_t rc = ConnectTo(ip, port, timeout_ms, fd);
  if (rc != hixl::SUCCESS) return rc;
  auto peer = std::make_shared<Peer>();
  peer->name = remote;
  peer->link.reset(new Link(fd));
  WireReq req{kOpHello, 0, static_cast<uint64_t>(kind_), 0, name_.size()};
  uint32_t status = hixl::FAILED;
  std::string rsp;
  int left = static_cast<int>(deadline - NowMs());
  rc = peer->link->Call(req, name_.data(), left > 0 ? left : 1, status, rsp);
  if (rc != hixl::SUCCESS) return rc;
  if (status != hixl::SUCCESS) return status;
  uint32_t kind = 0;
  if (rsp.size() < sizeof kind) return hixl::FAILED;
  memcpy(&kind, rsp.data(), sizeof kind);
  peer->kind = static_cast<EngineKind>(kind);
  if (!DecodeRegs(rsp, sizeof kind, peer->regs)) return hixl::FAILED;
  std::lock_guard<std::mutex> g(mu_);
  if (!initialized_) return hixl::FAILED;
  if (links_.count(remote) != 0) return hixl::ALREADY_CONNECTED;
  links_[remote] = peer;
  return hixl::SUCCESS;
}

uint32_t Engine::Disconnect(const std::string &remote) {
  std::shared_ptr<Peer> peer;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!initialized_) return hixl::FAILED;
    auto it = links_.find(remote);
    if (it == links_.end()) return hixl::NOT_CONNECTED;
    peer = it->second;
    links_.erase(it);
  }
  peer->link->Close();
  return hixl::SUCCESS;
}

void Engine::SetAsync(const std::string &remote, int status) {
  // the vendor keeps the status in line with the caller's latest request
  auto it = async_.find(remote);
  if ((status == kConnecting || status == kConnected || status == kConnectFailed) && it != async_.end() &&
      it->second == kDisconnectPending)
    return;
  if ((status == kDisconnecting || status == kNotConnect) && it != async_.end() && it->second == kConnectPending)
    return;
  if (status == kNotConnect)
    async_.erase(remote);
  else
    async_[remote] = status;
}

uint32_t Engine::Submit(bool connect, const std::string &remote, int timeout_ms) {
  std::lock_guard<std::mutex> g(mu_);
  if (!initialized_) return hixl::FAILED;
  if (tasks_.size() >= kConnectQueueCapacity) return hixl::RESOURCE_EXHAUSTED;
  StartWorkers();
  SetAsync(remote, connect ? kConnectPending : kDisconnectPending);
  tasks_.push_back(Task{connect, remote, timeout_ms});
  task_cv_.notify_one();
  return hixl::SUCCESS;
}

void Engine::StartWorkers() {
  // started with the first asynchronous request (the vendor's start at Initialize)
  for (int i = static_cast<int>(workers_.size()); i < kConnectWorkers; i++)
    workers_.emplace_back([this]() { Worker(); });
}

void Engine::Worker() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    auto runnable = tasks_.end();
    auto ready = [this, &runnable]() {
      if (stopping_) return true;
      for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
        if (doing_.count(it->remote) == 0) {
          runnable = it;
          return true;
        }
      }
      return false;
    };
    // A timed wait: the untimed std::condition_variable::wait is a GCC 12 symbol
    // (GLIBCXX_3.4.30, above what sim/src/portable.h keeps to); the timed one is inline.
    while (!ready()) task_cv_.wait_for(lk, std::chrono::seconds(1));
    if (stopping_) return;
    Task task = *runnable;
    tasks_.erase(runnable);
    doing_.insert(task.remote);
    SetAsync(task.remote, task.connect ? kConnecting : kDisconnecting);
    lk.unlock();
    uint32_t rc = task.connect ? Connect(task.remote, task.timeout_ms) : Disconnect(task.remote);
    lk.lock();
    if (task.connect)
      SetAsync(task.remote, rc == hixl::SUCCESS || rc == hixl::ALREADY_CONNECTED ? kConnected : kConnectFailed);
    else
      SetAsync(task.remote, kNotConnect);
    doing_.erase(task.remote);
    task_cv_.notify_all();
  }
}

int Engine::AsyncStatus(const std::string &remote) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = async_.find(remote);
  return it == async_.end() ? kNotConnect : it->second;
}

std::map<std::string, int> Engine::AsyncStatuses() {
  std::lock_guard<std::mutex> g(mu_);
  return async_;
}

uint32_t Engine::PlanFabric(const Peer &peer, const std::vector<XferOp> &ops) {
  // FabricMemTransferService::ResolveTransferAddrs (fabric_mem_transfer_service.cc): remote
  // ranges are translated through the peer's segments (adjacent ones chunk by chunk); local
  // ranges only when this engine has host memory registered and the first op's local address is
  // host memory (NeedTransLocalAddr, aclrtPointerGetAttributes), then through the local host
  // registrations (FabricMemLocalMemory::TranslateLocalHostOpAddrs). Local device ranges are
  // not looked up at all.
  for (const XferOp &d : ops) {
    if (d.len == 0 || d.local + d.len < d.local || d.remote + d.len < d.remote) return hixl::PARAM_INVALID;
    if (!peer.regs.ContainsMerged(d.remote, d.len)) {
      Log("Remote fabric mem address:%llu is not registered.", static_cast<unsigned long long>(d.remote));
      return hixl::PARAM_INVALID;
    }
  }
  if (ops.empty() || !regs_.HasHost()) return hixl::SUCCESS;
  aclsimMemInfo info{};
  const bool local_device = aclsimQueryMemory(reinterpret_cast<const void *>(ops[0].local), 1, &info) == 1 &&
                            (info.kind == ACLSIM_MEM_DEVICE || info.kind == ACLSIM_MEM_DEVICE_VMM);
  if (local_device) return hixl::SUCCESS;
  for (const XferOp &d : ops) {
    if (!regs_.ContainsMerged(d.local, d.len, 1)) {
      Log("Local host fabric mem address:%llu is not registered.", static_cast<unsigned long long>(d.local));
      return hixl::PARAM_INVALID;
    }
  }
  return hixl::SUCCESS;
}

uint32_t Engine::Plan(const Peer &peer, int op, const std::vector<XferOp> &ops, bool async, bool &staged) {
  staged = false;
  if (op != 0 && op != 1) return hixl::PARAM_INVALID;
  std::lock_guard<std::mutex> g(mu_);
  if (kind_ == EngineKind::kFabric) return PlanFabric(peer, ops);
  if (kind_ != EngineKind::kComm) {
    // hixl_cs: every range inside registrations, adjacent ones merged (the client's memory store,
    // HixlMemStore::CheckMemoryForAccess)
    for (const XferOp &d : ops) {
      if (d.len == 0 || !regs_.ContainsMerged(d.local, d.len) || !peer.regs.ContainsMerged(d.remote, d.len)) {
        Log("Validate address failed: local 0x%llx or remote 0x%llx (len %llu) not inside registered memory",
            static_cast<unsigned long long>(d.local), static_cast<unsigned long long>(d.remote),
            static_cast<unsigned long long>(d.len));
        return hixl::PARAM_INVALID;
      }
    }
    return hixl::SUCCESS;
  }
  // comm engine: ops whose local or remote range is unregistered go through the buffer pool
  // (synchronous transfers only), all of one transfer type
  bool need_buffer = false;
  int first_type = -1;
  for (size_t i = 0; i < ops.size(); i++) {
    const XferOp &d = ops[i];
    if (d.len == 0) return hixl::PARAM_INVALID;
    const RegTable::Reg *l = regs_.Find(d.local, d.len);
    const RegTable::Reg *r = peer.regs.Find(d.remote, d.len);
    need_buffer = need_buffer || l == nullptr || r == nullptr;
    int type = op * 4 + (IsHost(l) ? 2 : 0) + (IsHost(r) ? 1 : 0);
    if (i > 0 && need_buffer && type != first_type) {
      Log("All transfer type need be same in buffer transfer mode.");
      return hixl::PARAM_INVALID;
    }
    first_type = type;
  }
  if (!need_buffer) return hixl::SUCCESS;
  if (pool_bytes_ > 0 && !async) {
    staged = true;
    return hixl::SUCCESS;
  }
  for (const XferOp &d : ops) {
    if (!peer.regs.Contains(d.remote, d.len)) {
      Log("HCCL: Can't find remoteBuffer by key {%p, %llu} (remote engine %s)", reinterpret_cast<void *>(d.remote),
          static_cast<unsigned long long>(d.len), peer.name.c_str());
      return hixl::FAILED;
    }
    if (!regs_.Contains(d.local, d.len)) {
      Log("HCCL: Can't find localBuffer by key {%p, %llu}", reinterpret_cast<void *>(d.local),
          static_cast<unsigned long long>(d.len));
      return hixl::FAILED;
    }
  }
  return hixl::SUCCESS;
}

uint32_t Engine::Move(Peer &peer, int op, const std::vector<XferOp> &ops, bool staged, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  std::string buf, rsp;
  for (const XferOp &d : ops) {
    int left = static_cast<int>(deadline - NowMs());
    if (left <= 0) return hixl::TIMEOUT;
    uint32_t status = hixl::FAILED;
    uint32_t rc;
    if (op == 0) {  // READ: remote -> local
      WireReq req{kOpRead, staged ? kWireStaged : 0U, d.remote, d.len, 0};
      rc = peer.link->Call(req, nullptr, left, status, rsp);
      if (rc == hixl::SUCCESS && status == hixl::SUCCESS && (rsp.size() != d.len || !SafeCopy(ToHost(d.local), rsp.data(), d.len)))
        status = hixl::FAILED;
    } else {  // WRITE: local -> remote
      buf.resize(d.len);
      if (!SafeCopy(&buf[0], ToHost(d.local), d.len)) return hixl::FAILED;
      WireReq req{kOpWrite, staged ? kWireStaged : 0U, d.remote, d.len, d.len};
      rc = peer.link->Call(req, buf.data(), left, status, rsp);
    }
    if (rc != hixl::SUCCESS) {
      Log("transfer to %s failed: %s", peer.name.c_str(),
          rc == hixl::TIMEOUT ? "no answer within the timeout" : "the connection is lost");
      return rc;
    }
    if (status != hixl::SUCCESS) return status;
  }
  return hixl::SUCCESS;
}

uint32_t Engine::Transfer(const std::string &remote, int op, const std::vector<XferOp> &ops, bool async,
                          int timeout_ms, uint32_t &moved) {
  bool auto_connect;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!initialized_) return hixl::FAILED;
    auto_connect = auto_connect_;
  }
  if (kind_ != EngineKind::kHixlCs && ops.empty()) return hixl::PARAM_INVALID;  // comm, fabric: first
  std::shared_ptr<Peer> peer = FindPeer(remote);
  if (peer == nullptr && auto_connect) {
    // AutoConnect: the first transfer to a peer links it. hixl_cs refuses itself and passes the
    // connection's failure on (HixlEngine::AutoConnect); fabric memory links with 3 s
    // (FabricMemEngine::EnsureAutoConnected); the comm engine ignores the connection's answer and
    // looks the channel up (AdxlInnerEngine::ConnectWhenTransfer: NOT_CONNECTED without one).
    if (kind_ == EngineKind::kHixlCs && remote == name_) {
      Log("Do not support connection with self, please check remote engine. local_engine:%s, remote_engine:%s",
          name_.c_str(), remote.c_str());
      return hixl::PARAM_INVALID;
    }
    const int connect_ms = async || kind_ == EngineKind::kFabric ? kAutoConnectTimeoutMs : timeout_ms;
    uint32_t rc = Connect(remote, connect_ms);
    if (kind_ != EngineKind::kComm && rc != hixl::SUCCESS && rc != hixl::ALREADY_CONNECTED) return rc;
    peer = FindPeer(remote);
  }
  if (peer == nullptr) return hixl::NOT_CONNECTED;
  // AutoConnect: a failed transfer disconnects (HixlEngine::AutoDisconnect, FabricMemEngine::
  // DisconnectOnTransferError, AdxlInnerEngine::DisconnectOnError after the channel's transfer:
  // not on the comm engine's own buffer-mode checks)
  auto disconnect_on = [&](uint32_t rc) {
    if (auto_connect && rc != hixl::SUCCESS && (kind_ != EngineKind::kComm || rc != hixl::PARAM_INVALID))
      (void)Disconnect(remote);
    return rc;
  };
  if (ops.empty()) return disconnect_on(hixl::PARAM_INVALID);
  bool staged = false;
  uint32_t rc = Plan(*peer, op, ops, async, staged);
  if (rc != hixl::SUCCESS) return disconnect_on(rc);
  moved = disconnect_on(Move(*peer, op, ops, staged, timeout_ms));
  return hixl::SUCCESS;
}

uint32_t Engine::TransferSync(const std::string &remote, int op, const std::vector<XferOp> &ops, int timeout_ms) {
  uint32_t moved = hixl::FAILED;
  uint32_t rc = Transfer(remote, op, ops, false, timeout_ms, moved);
  return rc != hixl::SUCCESS ? rc : moved;
}

uint32_t Engine::TransferAsync(const std::string &remote, int op, const std::vector<XferOp> &ops,
                               const void *user_data, void *&req) {
  // issued and completed here: the status is known at the first query
  uint32_t moved = hixl::FAILED;
  uint32_t rc = Transfer(remote, op, ops, true, kAsyncTransferTimeoutMs, moved);
  if (rc != hixl::SUCCESS) return rc;
  std::lock_guard<std::mutex> g(mu_);
  req = NewHandle();
  reqs_[req] = AsyncReq{user_data, moved == hixl::SUCCESS ? kCompleted : kXferFailed, moved, remote};
  return hixl::SUCCESS;
}

uint32_t Engine::TransferStatusOf(void *req, int &status) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = reqs_.find(req);
  if (it == reqs_.end()) {
    status = kXferFailed;
    return hixl::PARAM_INVALID;
  }
  AsyncReq r = it->second;
  reqs_.erase(it);
  if (kind_ == EngineKind::kComm) {
    // AdxlInnerEngine::GetTransferStatus looks the channel up first: gone (disconnected, or torn
    // down after a failure) -> NOT_CONNECTED with status FAILED, the request forgotten
    auto link = links_.find(r.remote);
    if (link == links_.end() || link->second->link->Broken()) {
      status = kXferFailed;
      return hixl::NOT_CONNECTED;
    }
  }
  status = r.status;
  // the comm engine passes the channel's failure on; hixl_cs reports it in the status only
  if (r.status == kXferFailed && kind_ != EngineKind::kHixlCs) return r.code;
  return hixl::SUCCESS;
}

uint32_t Engine::TransferStatuses(uint32_t max_count, std::vector<Result> &out) {
  out.clear();
  if (kind_ != EngineKind::kHixlCs) return hixl::UNSUPPORTED;
  std::lock_guard<std::mutex> g(mu_);
  auto it = reqs_.begin();
  while (it != reqs_.end() && out.size() < max_count) {
    out.push_back(Result{it->first, it->second.user_data, it->second.status});
    it = reqs_.erase(it);
  }
  return hixl::SUCCESS;
}

uint32_t Engine::SendNotify(const std::string &remote, const std::string &name, const std::string &msg,
                            int timeout_ms) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!initialized_) return hixl::FAILED;
  }
  std::shared_ptr<Peer> peer = FindPeer(remote);
  if (peer == nullptr) return hixl::NOT_CONNECTED;
  std::string payload = name;
  payload.push_back('\0');
  payload += msg;
  WireReq req{kOpNotify, 0, 0, 0, payload.size()};
  uint32_t status = hixl::FAILED;
  std::string rsp;
  uint32_t rc = peer->link->Call(req, payload.data(), timeout_ms, status, rsp);
  return rc != hixl::SUCCESS ? rc : status;
}

uint32_t Engine::GetNotifies(std::vector<std::pair<std::string, std::string>> &out) {
  std::lock_guard<std::mutex> g(mu_);
  if (!initialized_) return hixl::FAILED;
  out.swap(inbox_);
  inbox_.clear();
  return hixl::SUCCESS;
}

uint32_t Engine::Serve(Service::Conn &conn, const WireReq &req, const std::string &payload, std::string &rsp) {
  switch (req.op) {
    case kOpHello: {
      std::lock_guard<std::mutex> g(mu_);
      if (!initialized_) return hixl::FAILED;
      conn.peer = payload;
      uint32_t kind = static_cast<uint32_t>(kind_);
      rsp.assign(reinterpret_cast<const char *>(&kind), sizeof kind);
      rsp += EncodeRegs(regs_);
      return hixl::SUCCESS;
    }
    case kOpRegs: {
      std::lock_guard<std::mutex> g(mu_);
      rsp = EncodeRegs(regs_);
      return hixl::SUCCESS;
    }
    case kOpRead:
    case kOpWrite: {
      {
        std::lock_guard<std::mutex> g(mu_);
        if (!initialized_) return hixl::FAILED;
        const bool registered = kind_ == EngineKind::kComm ? regs_.Contains(req.a, req.b) : regs_.ContainsMerged(req.a, req.b);
        if ((req.flags & kWireStaged) == 0 && !registered) {
          Log("memory 0x%llx (len %llu) asked for by %s is not registered on %s",
              static_cast<unsigned long long>(req.a), static_cast<unsigned long long>(req.b), conn.peer.c_str(),
              name_.c_str());
          return hixl::FAILED;
        }
      }
      if (req.op == kOpRead) {
        rsp.resize(req.b);
        if (!SafeCopy(&rsp[0], ToHost(req.a), req.b)) {
          rsp.clear();
          return hixl::FAILED;
        }
        return hixl::SUCCESS;
      }
      if (payload.size() != req.b) return hixl::FAILED;
      return SafeCopy(ToHost(req.a), payload.data(), req.b) ? hixl::SUCCESS : hixl::FAILED;
    }
    case kOpNotify: {
      size_t nul = payload.find('\0');
      std::lock_guard<std::mutex> g(mu_);
      if (!initialized_) return hixl::FAILED;
      inbox_.emplace_back(payload.substr(0, nul), nul == std::string::npos ? std::string() : payload.substr(nul + 1));
      return hixl::SUCCESS;
    }
    default:
      return hixl::FAILED;
  }
}

}  // namespace aclsim
