// llm_datadist::LlmDataDist of the simulator (libllm_datadist.so): what its cache registration
// does in the vendor's code (hicann/hixl src/llm_datadist/api/llm_datadist_impl.cc,
// llm_datadist_v2.cc, cache_mgr/data_cache_engine.cc, cache_mgr/comm_mem_manager.cc,
// transfer_engine/*.cc, comm_adapter/comm_adapter.cc), in the vendor's order:
//
// - Initialize: the role, llm.DeviceId (required; "a;b" lists devices, the first is used),
//   the backend by llm.TransferBackend (absent: the comm backend, "hixl": a HIXL engine, anything
//   else fails), aclrtSetDevice and a context of its own, then the backend: the comm backend
//   dlopens libhcomm.so and resolves HcclRegisterGlobalMem/HcclDeregisterGlobalMem with dlsym; the
//   hixl backend needs llm.ListenIpInfo ("ip:port") and starts hixl::Hixl on it with
//   BufferPool "0:0" and the llm.* options HIXL knows, renamed.
// - RegisterKvCache: initialised (else LLM_FAILED); addrs non-empty, as many as num_tensors, no 0
//   (LLM_PARAM_INVALID); cfg ignored; a shape of 1 to 31 dimensions (LLM_PARAM_INVALID); the cache
//   id is taken (from 1, per instance) before the tensor size is computed (dims > 0, no overflow,
//   a data type with a size: else LLM_PARAM_INVALID, the id is lost); then one registration per
//   tensor address, product(shape) x the type's size bytes, of device or host memory by
//   placement, skipping an (address, size) pair this instance registered before. A failure of
//   the backend stops there: the tensors registered before it stay registered (the vendor keeps
//   them in its (address, size) set and under no cache id); comm: LLM_FAILED; hixl: HIXL's code
//   mapped (PARAM_INVALID -> LLM_PARAM_INVALID, FAILED -> LLM_FAILED, ...).
// - UnregisterKvCache: initialised (else LLM_FAILED); an unknown id is SUCCESS; the cache's
//   handles are deregistered (a failure stops there: LLM_FAILED or HIXL's code mapped).
// - Finalize (and the destructor): every cache's handles deregistered, errors ignored.
//
// The link and transfer members are not simulated: after the vendor's initialised check they
// answer LLM_FEATURE_NOT_ENABLED (AllocateCache, DeallocateCache, CopyKvCache and CopyKvBlocks
// answer it in the vendor's too). Every member is counted (aclsimNoteCall) as
// `LlmDataDist::<member>`.
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <climits>
#include <cstdint>

#include <cstdarg>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "acl/acl.h"
#include "aclsim.h"
#include "dl_beside.h"
#include "hccl/hccl_mem.h"
#include "hixl/hixl.h"
#include "llm_datadist/llm_datadist.h"
#include "sim_format.h"

// An address inside this library (where to look for libhcomm.so beside it).
static const char kThisLibrary = 0;

namespace llm_datadist {

namespace {

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

// metadef's sizes (bytes, or kDataTypeSizeBitOffset + bits); LLM-DataDist gives the string types
// 16 bytes. -1: no size.
int32_t TypeSize(DataType t) {
  static const int32_t kSizes[] = {
      4, 2, 1, 4, 1, -1, 2, 2, 4, 8, 8, 8, 1, 16, 1, 1, 8, 16, 1, 2, 4,
      1, 2, 8, 16, 5, 8, 2, -1,
      ge::kDataTypeSizeBitOffset + 4, ge::kDataTypeSizeBitOffset + 1, ge::kDataTypeSizeBitOffset + 2,
      ge::kDataTypeSizeBitOffset + 2, 4, 1, 1, 1, 1,
      ge::kDataTypeSizeBitOffset + 6, ge::kDataTypeSizeBitOffset + 6, ge::kDataTypeSizeBitOffset + 4,
      ge::kDataTypeSizeBitOffset + 4,
  };
  static_assert(sizeof(kSizes) / sizeof(kSizes[0]) == ge::DT_MAX, "one size per data type");
  const int v = static_cast<int>(t);
  if (v < 0 || v >= ge::DT_MAX) return -1;
  return kSizes[v];
}

bool MulOverflows(int64_t a, int64_t b) { return b != 0 && a > INT64_MAX / b; }

// LLMUtils::CalcTensorMemSize: false for a dim <= 0, an overflow or a type without a size.
bool TensorSize(const std::vector<int64_t> &shape, DataType type, int64_t &size) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0 || MulOverflows(n, d)) return false;
    n *= d;
  }
  const int32_t ts = TypeSize(type);
  if (ts <= 0) return false;
  if (ts > ge::kDataTypeSizeBitOffset) {
    const int64_t bits = ts - ge::kDataTypeSizeBitOffset;
    if (MulOverflows(n, bits)) return false;
    size = (n * bits + 7) / 8;
  } else {
    if (MulOverflows(n, ts)) return false;
    size = n * ts;
  }
  return true;
}

Status FromHixl(hixl::Status rc) {
  switch (rc) {
    case hixl::SUCCESS: return LLM_SUCCESS;
    case hixl::PARAM_INVALID: return LLM_PARAM_INVALID;
    case hixl::TIMEOUT: return LLM_TIMEOUT;
    case hixl::NOT_CONNECTED: return LLM_NOT_YET_LINK;
    case hixl::ALREADY_CONNECTED: return LLM_ALREADY_LINK;
    case hixl::UNSUPPORTED: return LLM_FEATURE_NOT_ENABLED;
    default: return LLM_FAILED;
  }
}

const char *Str(const AscendString &s) { return s.GetString() != nullptr ? s.GetString() : ""; }

const AscendString *Find(const std::map<AscendString, AscendString> &options, const char *key) {
  auto it = options.find(AscendString(key));
  return it == options.end() ? nullptr : &it->second;
}

// A decimal integer that fits an int32_t (LLMUtils::ToNumber).
bool ToInt(const std::string &s, int32_t &out) {
  if (s.empty()) return false;
  char *end = nullptr;
  errno = 0;
  long v = strtol(s.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v < INT32_MIN || v > INT32_MAX) return false;
  out = static_cast<int32_t>(v);
  return true;
}

// Makes `ctx` current for a scope and restores the caller's (hixl::TemporaryRtContext).
class ContextScope {
 public:
  explicit ContextScope(aclrtContext ctx) {
    if (aclrtGetCurrentContext(&saved_) != ACL_SUCCESS) saved_ = nullptr;
    if (ctx != nullptr) (void)aclrtSetCurrentContext(ctx);
  }
  ~ContextScope() {
    if (saved_ != nullptr) (void)aclrtSetCurrentContext(saved_);
  }
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

 private:
  aclrtContext saved_ = nullptr;
};

using RegisterFn = HcclResult (*)(CommMem *, void **);
using DeregisterFn = HcclResult (*)(void *);

}  // namespace

class __attribute__((visibility("hidden"))) LlmDataDist::LlmDataDistImpl {
 public:
  LlmDataDistImpl(uint64_t cluster, LlmRole r) : cluster_id(cluster), role(r) {}
  ~LlmDataDistImpl() { Finalize(); }

  Status Initialize(const std::map<AscendString, AscendString> &options);
  void Finalize();
  Status Register(const CacheDesc &desc, const std::vector<uint64_t> &addrs, int64_t &cache_id);
  Status Unregister(int64_t cache_id);
  bool initialized() {
    std::lock_guard<std::mutex> lock(mutex);
    return started;
  }

 private:
  struct Mems {
    std::vector<void *> handles;
    std::vector<std::pair<uintptr_t, int64_t>> keys;
  };
  Status RegisterMem(void *addr, int64_t size, bool device, void *&handle);
  Status DeregisterMem(void *handle);

  std::mutex mutex;
  uint64_t cluster_id;
  LlmRole role;
  bool started = false;
  bool hixl_backend = false;
  int32_t device_id = -1;
  aclrtContext context = nullptr;
  hixl::Hixl engine;
  RegisterFn hccl_register = nullptr;
  DeregisterFn hccl_deregister = nullptr;
  int64_t next_id = 1;
  std::set<std::pair<uintptr_t, int64_t>> registered;
  std::map<int64_t, Mems> caches;
};

Status LlmDataDist::LlmDataDistImpl::Initialize(const std::map<AscendString, AscendString> &options) {
  std::lock_guard<std::mutex> lock(mutex);
  if (started) return LLM_SUCCESS;
  if (role != LlmRole::kPrompt && role != LlmRole::kDecoder && role != LlmRole::kMix) return LLM_PARAM_INVALID;
  const AscendString *dev = Find(options, OPTION_DEVICE_ID);
  if (dev == nullptr || dev->GetLength() == 0) return LLM_PARAM_INVALID;
  std::string first = Str(*dev);
  first = first.substr(0, first.find(';'));
  if (!ToInt(first, device_id) || device_id < 0) return LLM_PARAM_INVALID;
  std::string listen;
  if (const AscendString *ip = Find(options, OPTION_LISTEN_IP_INFO)) {
    listen = Str(*ip);
    int32_t port = 0;
    const size_t colon = listen.rfind(':');
    if (colon == std::string::npos || !ToInt(listen.substr(colon + 1), port) || port < 0 || port > 65535)
      return LLM_PARAM_INVALID;
  }
  const AscendString *backend = Find(options, OPTION_TRANSFER_BACKEND);
  if (backend != nullptr && strcmp(Str(*backend), "hixl") != 0) return LLM_FAILED;  // the factory gives nothing
  hixl_backend = backend != nullptr;
  if (aclrtSetDevice(device_id) != ACL_SUCCESS) return LLM_FAILED;
  aclrtContext saved = nullptr;
  if (aclrtGetCurrentContext(&saved) != ACL_SUCCESS) saved = nullptr;
  if (aclrtCreateContext(&context, device_id) != ACL_SUCCESS) {
    (void)aclrtResetDevice(device_id);
    return LLM_FAILED;
  }
  Status rc = LLM_SUCCESS;
  if (!hixl_backend) {
    void *so = aclsim_dl::OpenBeside("libhcomm.so", &kThisLibrary);
    if (so != nullptr) {
      hccl_register = reinterpret_cast<RegisterFn>(dlsym(so, "HcclRegisterGlobalMem"));
      hccl_deregister = reinterpret_cast<DeregisterFn>(dlsym(so, "HcclDeregisterGlobalMem"));
    }
    if (hccl_register == nullptr || hccl_deregister == nullptr) rc = LLM_FAILED;
  } else if (listen.empty()) {
    rc = LLM_PARAM_INVALID;  // the hixl backend listens
  } else {
    std::map<AscendString, AscendString> hixl_options;
    hixl_options[AscendString(hixl::OPTION_BUFFER_POOL)] = AscendString("0:0");
    static const std::pair<const char *, const char *> kRenamed[] = {
        {"llm.RdmaTrafficClass", hixl::OPTION_RDMA_TRAFFIC_CLASS},
        {"llm.RdmaServiceLevel", hixl::OPTION_RDMA_SERVICE_LEVEL},
        {OPTION_LOCAL_COMM_RES, "adxl.LocalCommRes"},
        {OPTION_GLOBAL_RESOURCE_CONFIG, hixl::OPTION_GLOBAL_RESOURCE_CONFIG},
    };
    for (const auto &r : kRenamed)
      if (const AscendString *v = Find(options, r.first)) hixl_options[AscendString(r.second)] = *v;
    rc = FromHixl(engine.Initialize(AscendString(listen.c_str()), hixl_options));
  }
  if (saved != nullptr) (void)aclrtSetCurrentContext(saved);
  if (rc != LLM_SUCCESS) {
    (void)aclrtDestroyContext(context);
    context = nullptr;
    (void)aclrtResetDevice(device_id);
    return rc;
  }
  started = true;
  return LLM_SUCCESS;
}

void LlmDataDist::LlmDataDistImpl::Finalize() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!started) return;
  {
    ContextScope scope(context);
    for (auto &c : caches)
      for (void *h : c.second.handles) (void)DeregisterMem(h);
    caches.clear();
    registered.clear();
    if (hixl_backend) engine.Finalize();
  }
  (void)aclrtDestroyContext(context);
  context = nullptr;
  (void)aclrtResetDevice(device_id);
  started = false;
}

Status LlmDataDist::LlmDataDistImpl::RegisterMem(void *addr, int64_t size, bool device, void *&handle) {
  if (hixl_backend) {
    hixl::MemDesc desc{};
    desc.addr = reinterpret_cast<uintptr_t>(addr);
    desc.len = static_cast<size_t>(size);
    return FromHixl(engine.RegisterMem(desc, device ? hixl::MEM_DEVICE : hixl::MEM_HOST, handle));
  }
  CommMem mem{device ? COMM_MEM_TYPE_DEVICE : COMM_MEM_TYPE_HOST, addr, static_cast<uint64_t>(size)};
  return hccl_register(&mem, &handle) == HCCL_SUCCESS ? LLM_SUCCESS : LLM_FAILED;
}

Status LlmDataDist::LlmDataDistImpl::DeregisterMem(void *handle) {
  if (hixl_backend) return FromHixl(engine.DeregisterMem(handle));
  return hccl_deregister(handle) == HCCL_SUCCESS ? LLM_SUCCESS : LLM_FAILED;
}

Status LlmDataDist::LlmDataDistImpl::Register(const CacheDesc &desc, const std::vector<uint64_t> &addrs,
                                              int64_t &cache_id) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!started) return LLM_FAILED;
  if (addrs.empty() || addrs.size() != static_cast<size_t>(desc.num_tensors)) return LLM_PARAM_INVALID;
  for (uint64_t a : addrs)
    if (a == 0) return LLM_PARAM_INVALID;
  constexpr size_t kMaxDimNum = 32;
  if (desc.shape.empty() || desc.shape.size() >= kMaxDimNum) return LLM_PARAM_INVALID;
  const int64_t id = next_id++;
  int64_t size = 0;
  if (!TensorSize(desc.shape, desc.data_type, size)) return LLM_PARAM_INVALID;
  ContextScope scope(context);
  const bool device = desc.placement == CachePlacement::kDevice;
  Mems mems;
  for (uint64_t a : addrs) {
    auto key = std::make_pair(static_cast<uintptr_t>(a), size);
    if (registered.count(key) != 0) continue;
    void *handle = nullptr;
    Status rc = RegisterMem(reinterpret_cast<void *>(static_cast<uintptr_t>(a)), size, device, handle);
    if (rc != LLM_SUCCESS) return rc;
    mems.handles.push_back(handle);
    mems.keys.push_back(key);
    registered.insert(key);
  }
  caches[id] = std::move(mems);
  cache_id = id;
  return LLM_SUCCESS;
}

Status LlmDataDist::LlmDataDistImpl::Unregister(int64_t cache_id) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!started) return LLM_FAILED;
  auto it = caches.find(cache_id);
  if (it == caches.end()) return LLM_SUCCESS;
  ContextScope scope(context);
  for (void *h : it->second.handles) {
    Status rc = DeregisterMem(h);
    if (rc != LLM_SUCCESS) return rc;
  }
  for (const auto &k : it->second.keys) registered.erase(k);
  caches.erase(it);
  return LLM_SUCCESS;
}

LlmDataDist::LlmDataDist(uint64_t cluster_id, LlmRole role) : impl_(new LlmDataDistImpl(cluster_id, role)) {
  Note("LlmDataDist::LlmDataDist", 0, "this=%p, cluster_id=%llu, role=%d", static_cast<void *>(this),
       static_cast<unsigned long long>(cluster_id), static_cast<int>(role));
}

LlmDataDist::~LlmDataDist() { Note("LlmDataDist::~LlmDataDist", 0, "this=%p", static_cast<void *>(this)); }

Status LlmDataDist::Initialize(const std::map<AscendString, AscendString> &options) {
  Status rc = impl_->Initialize(options);
  Note("LlmDataDist::Initialize", rc, "this=%p, options=%zu", static_cast<void *>(this), options.size());
  return rc;
}

void LlmDataDist::Finalize() {
  impl_->Finalize();
  Note("LlmDataDist::Finalize", 0, "this=%p", static_cast<void *>(this));
}

Status LlmDataDist::RegisterKvCache(const CacheDesc &cache_desc, const std::vector<uint64_t> &addrs,
                                    const RegisterCfg &cfg, int64_t &cache_id) {
  (void)cfg;
  Status rc = impl_->Register(cache_desc, addrs, cache_id);
  Note("LlmDataDist::RegisterKvCache", rc, "this=%p, placement=%u, num_tensors=%u, data_type=%d, dims=%zu, addrs=%zu",
       static_cast<void *>(this), static_cast<unsigned>(cache_desc.placement), cache_desc.num_tensors,
       static_cast<int>(cache_desc.data_type), cache_desc.shape.size(), addrs.size());
  return rc;
}

Status LlmDataDist::UnregisterKvCache(int64_t cache_id) {
  Status rc = impl_->Unregister(cache_id);
  Note("LlmDataDist::UnregisterKvCache", rc, "this=%p, %lld", static_cast<void *>(this),
       static_cast<long long>(cache_id));
  return rc;
}

namespace {
// The members not simulated: the vendor's initialised check, then LLM_FEATURE_NOT_ENABLED.
Status NotSimulated(const char *name, const void *self, bool initialized) {
  Status rc = initialized ? LLM_FEATURE_NOT_ENABLED : LLM_FAILED;
  Note(name, rc, "this=%p", self);
  return rc;
}
}  // namespace

Status LlmDataDist::SetRole(LlmRole, const std::map<AscendString, AscendString> &) {
  return NotSimulated("LlmDataDist::SetRole", this, impl_->initialized());
}

Status LlmDataDist::LinkLlmClusters(const std::vector<ClusterInfo> &, std::vector<Status> &, int32_t) {
  return NotSimulated("LlmDataDist::LinkLlmClusters", this, impl_->initialized());
}

Status LlmDataDist::UnlinkLlmClusters(const std::vector<ClusterInfo> &, std::vector<Status> &, int32_t, bool) {
  return NotSimulated("LlmDataDist::UnlinkLlmClusters", this, impl_->initialized());
}

Status LlmDataDist::AllocateCache(const CacheDesc &, Cache &) {
  return NotSimulated("LlmDataDist::AllocateCache", this, true);
}

Status LlmDataDist::DeallocateCache(int64_t) { return NotSimulated("LlmDataDist::DeallocateCache", this, true); }

Status LlmDataDist::PullKvCache(const CacheIndex &, const Cache &, uint32_t, int64_t, const KvCacheExtParam &) {
  return NotSimulated("LlmDataDist::PullKvCache", this, impl_->initialized());
}

Status LlmDataDist::PullKvBlocks(const CacheIndex &, const Cache &, const std::vector<uint64_t> &,
                                 const std::vector<uint64_t> &, const KvCacheExtParam &) {
  return NotSimulated("LlmDataDist::PullKvBlocks", this, impl_->initialized());
}

Status LlmDataDist::CopyKvCache(const Cache &, const Cache &, uint32_t, uint32_t, uint64_t, int64_t) {
  return NotSimulated("LlmDataDist::CopyKvCache", this, true);
}

Status LlmDataDist::CopyKvBlocks(const Cache &, const Cache &, const std::vector<uint64_t> &,
                                 const std::vector<std::vector<uint64_t>> &) {
  return NotSimulated("LlmDataDist::CopyKvBlocks", this, true);
}

Status LlmDataDist::PushKvCache(const Cache &, const CacheIndex &, uint32_t, int64_t, const KvCacheExtParam &) {
  return NotSimulated("LlmDataDist::PushKvCache", this, impl_->initialized());
}

Status LlmDataDist::PushKvBlocks(const Cache &, const CacheIndex &, const std::vector<uint64_t> &,
                                 const std::vector<uint64_t> &, const KvCacheExtParam &) {
  return NotSimulated("LlmDataDist::PushKvBlocks", this, impl_->initialized());
}

}  // namespace llm_datadist
