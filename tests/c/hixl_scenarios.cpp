// HIXL scenarios for tests/hixl/: `hixl_scenarios <scenario>` makes the calls of one
// scenario against the simulator (optionally under regcheck) and prints one line per call:
// `rc <label> <code>`, plus `value <key> <n>` lines for facts the test checks. Exit 0 unless
// the scenario itself could not be set up.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "cs/hixl_cs.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"

using hixl::Hixl;
using hixl::MemDesc;
using hixl::MemHandle;
using hixl::TransferOpDesc;

// vllm-ascend PR #15624: two components of one program, each registering the KV buffer it was
// handed, the second with another length (scenario `same_base`). Outside the anonymous
// namespace and never inlined: the finding names each by its own name and line.
__attribute__((noinline)) uint32_t kv_component_a_register(Hixl &h, uintptr_t addr, uint64_t len, MemHandle *out) {
  MemDesc mem{};
  mem.addr = addr;
  mem.len = static_cast<size_t>(len);
  return h.RegisterMem(mem, hixl::MEM_HOST, *out);  // SITE:component_a
}

__attribute__((noinline)) uint32_t kv_component_b_register(Hixl &h, uintptr_t addr, uint64_t len, MemHandle *out) {
  MemDesc mem{};
  mem.addr = addr;
  mem.len = static_cast<size_t>(len);
  return h.RegisterMem(mem, hixl::MEM_HOST, *out);  // SITE:component_b
}

namespace {

// Engines listen on their ip:port (TCP), so each run takes ports that are free (tests run in
// parallel); set in main.
std::string g_a, g_b;
const char *kA = nullptr;
const char *kB = nullptr;
const size_t kPage = 4096;
const uint64_t kGiB = 1ULL << 30;

void rc(const char *label, uint32_t code) { printf("rc %s %u\n", label, code); }
void value(const char *key, long long v) { printf("value %s %lld\n", key, v); }

[[noreturn]] void die(const char *what) {
  fprintf(stderr, "hixl_scenarios: %s\n", what);
  exit(3);
}

using Options = std::map<hixl::AscendString, hixl::AscendString>;

Options Transports(const char *protocol_desc) {
  Options o;
  if (protocol_desc != nullptr) {
    std::string json = std::string("{\"comm_resource_config.protocol_desc\": ") + protocol_desc + "}";
    o[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] = hixl::AscendString(json.c_str());
  }
  return o;
}

void Init(Hixl &h, const char *name, const Options &o = Options()) {
  if (h.Initialize(name, o) != hixl::SUCCESS) die("Initialize");
}

uint32_t Reg(Hixl &h, uintptr_t addr, uint64_t len, int type, MemHandle *out = nullptr) {
  MemDesc mem{};
  mem.addr = addr;
  mem.len = static_cast<size_t>(len);
  MemHandle handle = nullptr;
  uint32_t code = h.RegisterMem(mem, static_cast<hixl::MemType>(type), handle);
  if (out != nullptr) *out = handle;
  return code;
}

uintptr_t MallocHost(size_t n) {
  void *p = nullptr;
  if (aclrtMallocHost(&p, n) != 0) die("aclrtMallocHost");
  return reinterpret_cast<uintptr_t>(p);
}

uintptr_t MallocDev(size_t n, aclrtMemMallocPolicy policy) {
  void *p = nullptr;
  if (aclrtMalloc(&p, n, policy) != 0) die("aclrtMalloc");
  return reinterpret_cast<uintptr_t>(p);
}

uintptr_t Heap(size_t n) {
  void *p = nullptr;
  if (posix_memalign(&p, kPage, n) != 0) die("posix_memalign");
  return reinterpret_cast<uintptr_t>(p);
}

// Address space only: nothing is touched, nothing is committed.
uintptr_t Reserve(uint64_t n) {
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) die("mmap MAP_NORESERVE");
  return reinterpret_cast<uintptr_t>(p);
}

std::vector<TransferOpDesc> Ops(uintptr_t local, uintptr_t remote, size_t len) { return {{local, remote, len}}; }

// Device memory from the VMM API: a reserved range mapped onto physical memory of `attr`.
uintptr_t MapVmm(size_t n, aclrtMemAttr attr, aclrtDrvMemHandle *phys) {
  void *va = nullptr;
  if (aclrtReserveMemAddress(&va, n, 0, nullptr, 0) != 0) die("aclrtReserveMemAddress");
  aclrtPhysicalMemProp prop{};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = attr;
  prop.location.id = 0;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  if (aclrtMallocPhysical(phys, n, &prop, 0) != 0) die("aclrtMallocPhysical");
  if (aclrtMapMem(va, n, 0, *phys, 0) != 0) die("aclrtMapMem");
  return reinterpret_cast<uintptr_t>(va);
}

// Initialize as 127.0.0.1:<a claimed port> with `o`; print the name and the code under `label`.
void InitRc(Hixl &h, const char *label, const Options &o) {
  std::string name = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  printf("name %s %s\n", label, name.c_str());
  rc(label, h.Initialize(name.c_str(), o));
}

// A transfer of unregistered local memory on an instance initialised with `o`.
void UnregisteredTransfer(const Options &o) {
  Hixl a, b;
  Init(a, kA, o);
  Init(b, kB, o);
  uintptr_t p = MallocHost(8 * kPage), q = MallocHost(8 * kPage);
  uintptr_t d = MallocDev(2 << 20, ACL_MEM_MALLOC_HUGE_ONLY);
  rc("register", Reg(a, p, 4 * kPage, hixl::MEM_HOST));
  rc("register_dev", Reg(a, d, 2 << 20, hixl::MEM_DEVICE));
  rc("register_b", Reg(b, q, 8 * kPage, hixl::MEM_HOST));
  rc("connect", a.Connect(kB, 1000));
  rc("sync", a.TransferSync(kB, hixl::WRITE, Ops(p + 4 * kPage, q, kPage), 1000));  // SITE:xfer_sync
  hixl::TransferArgs args;
  hixl::TransferReq req = nullptr;
  rc("async", a.TransferAsync(kB, hixl::WRITE, Ops(p + 4 * kPage, q, kPage), args, req));
  std::vector<TransferOpDesc> mixed = {{d, q, kPage}, {p + 5 * kPage, q + kPage, kPage}};
  rc("mixed", a.TransferSync(kB, hixl::WRITE, mixed, 1000));
  rc("disconnect", a.Disconnect(kB, 1000));
  a.Finalize();
  b.Finalize();
}

// Engine a linked to engine b, a with one page at p and the next at p + kPage registered (ha,
// ha2), b with four pages at q (hb): the set-up of the transfer scenarios that deregister a
// page. TearDown disconnects (its rc line), deregisters what is left and finalizes both.
struct LinkedPages {
  Hixl &a, &b;
  uintptr_t p, q;
  MemHandle ha = nullptr, ha2 = nullptr, hb = nullptr;
  LinkedPages(Hixl &a_, Hixl &b_, const Options &o) : a(a_), b(b_) {
    Init(a, kA, o);
    Init(b, kB, o);
    p = MallocHost(4 * kPage);
    q = MallocHost(4 * kPage);
    rc("register", Reg(a, p, kPage, hixl::MEM_HOST, &ha));
    rc("register_next", Reg(a, p + kPage, kPage, hixl::MEM_HOST, &ha2));
    rc("register_b", Reg(b, q, 4 * kPage, hixl::MEM_HOST, &hb));
    rc("connect", a.Connect(kB, 1000));
  }
  void TearDown() {
    rc("disconnect", a.Disconnect(kB, 1000));
    a.DeregisterMem(ha2);
    b.DeregisterMem(hb);
    a.Finalize();
    b.Finalize();
  }
};

struct EmptyRegistration {
  Hixl *h;
  uintptr_t q;
};

void *EmptyOnThread(void *p) {
  EmptyRegistration *e = static_cast<EmptyRegistration *>(p);
  rc("empty", Reg(*e->h, e->q, 0, hixl::MEM_HOST));
  rc("acl_register_again", aclrtHostRegisterV2(reinterpret_cast<void *>(e->q), 4 * kPage, ACL_HOST_REG_MAPPED));
  rc("acl_unregister_again", aclrtHostUnregister(reinterpret_cast<void *>(e->q)));
  return nullptr;
}

struct ThreadArg {
  Hixl *h;
  uintptr_t addr;
  aclrtContext ctx;  // set on the thread when not NULL
  int device;        // aclrtSetDevice on the thread when >= 0
  uint32_t reg;
  uint32_t dereg;
};

void *RegisterOnThread(void *p) {
  ThreadArg *t = static_cast<ThreadArg *>(p);
  if (t->ctx != nullptr && aclrtSetCurrentContext(t->ctx) != 0) die("aclrtSetCurrentContext");
  if (t->device >= 0 && aclrtSetDevice(t->device) != 0) die("aclrtSetDevice");
  MemHandle h = nullptr;
  t->reg = Reg(*t->h, t->addr, kPage, hixl::MEM_HOST, &h);
  t->dereg = t->reg == 0 ? t->h->DeregisterMem(h) : 0;
  return nullptr;
}

void RunThread(ThreadArg &arg) {
  pthread_t th;
  if (pthread_create(&th, nullptr, RegisterOnThread, &arg) != 0) die("pthread_create");
  pthread_join(th, nullptr);
}

int Run(const std::string &s) {
  Hixl a, b;
  if (s == "good") {
    Init(a, kA, Transports("[\"roce:device\", \"hccs:device\"]"));
    Init(b, kB, Transports("[\"roce:device\", \"hccs:device\"]"));
    uintptr_t src = MallocHost(64 * kPage), dst = MallocHost(64 * kPage);
    uintptr_t dev = MallocDev(64 * kPage, ACL_MEM_MALLOC_HUGE_ONLY);
    for (size_t i = 0; i < 64 * kPage; i++) reinterpret_cast<uint8_t *>(src)[i] = static_cast<uint8_t>(i * 13 + 1);
    MemHandle hs, hd, hv, again;
    rc("register_src", Reg(a, src, 64 * kPage, hixl::MEM_HOST, &hs));
    rc("register_dst", Reg(a, dst, 64 * kPage, hixl::MEM_HOST, &hd));
    rc("register_dev", Reg(b, dev, 64 * kPage, hixl::MEM_DEVICE, &hv));
    rc("register_identical", Reg(a, src, 64 * kPage, hixl::MEM_HOST, &again));
    value("same_handle", again == hs);
    rc("connect", a.Connect(kB, 1000));
    rc("write", a.TransferSync(kB, hixl::WRITE, Ops(src, dev, 64 * kPage), 1000));
    rc("read", a.TransferSync(kB, hixl::READ, Ops(dst + kPage, dev + kPage, 8 * kPage), 1000));
    hixl::TransferArgs args;
    hixl::TransferReq req = nullptr;
    rc("read_async", a.TransferAsync(kB, hixl::READ, Ops(dst, dev, kPage), args, req));
    hixl::TransferStatus st;
    rc("status", a.GetTransferStatus(req, st));
    value("same_bytes", memcmp(reinterpret_cast<void *>(src), reinterpret_cast<void *>(dst), 9 * kPage) == 0);
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("dereg_src", a.DeregisterMem(hs));
    rc("dereg_dst", a.DeregisterMem(hd));
    rc("dereg_dev", b.DeregisterMem(hv));
    a.Finalize();
    b.Finalize();
  } else if (s == "not_initialized") {
    uintptr_t p = MallocHost(kPage);
    rc("register", Reg(a, p, kPage, hixl::MEM_HOST));
    rc("connect", a.Connect(kB, 1000));
    rc("deregister", a.DeregisterMem(reinterpret_cast<MemHandle>(0x1234)));
    Init(a, kA);
    a.Finalize();
    rc("register_after_finalize", Reg(a, p, kPage, hixl::MEM_HOST));
    rc("transfer_after_finalize", a.TransferSync(kB, hixl::WRITE, Ops(p, p, kPage), 1000));
  } else if (s == "args") {
    Init(a, kA);
    uintptr_t p = MallocHost(kPage);
    rc("null_addr", Reg(a, 0, kPage, hixl::MEM_HOST));
    rc("len_zero", Reg(a, p, 0, hixl::MEM_HOST));
    rc("overflow", Reg(a, UINTPTR_MAX - 100, kPage, hixl::MEM_HOST));
    rc("memtype", Reg(a, p, kPage, 7));
    a.Finalize();
  } else if (s == "overlap") {
    Init(a, kA);
    uintptr_t p = MallocHost(4 * kPage);
    MemHandle h1, h2, h3;
    rc("first", Reg(a, p, 2 * kPage, hixl::MEM_HOST, &h1));
    rc("overlapping", Reg(a, p + kPage, 2 * kPage, hixl::MEM_HOST, &h2));
    rc("identical", Reg(a, p, 2 * kPage, hixl::MEM_HOST, &h3));
    value("same_handle", h1 == h3);
    rc("adjacent", Reg(a, p + 2 * kPage, 2 * kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "same_base") {
    Init(a, kA);
    uintptr_t p = MallocHost(4 * kPage);
    MemHandle ha = nullptr, hb = nullptr;
    rc("component_a", kv_component_a_register(a, p, 2 * kPage, &ha));
    rc("component_b", kv_component_b_register(a, p, 4 * kPage, &hb));
    rc("dereg", a.DeregisterMem(ha));
    a.Finalize();
  } else if (s == "count") {
    Init(a, kA);
    const int n = 4001;
    uintptr_t pool = MallocHost(n * kPage);
    uint32_t last_ok = 1, failed = 0;
    for (int i = 0; i < n - 1; i++) {
      uint32_t code = Reg(a, pool + i * kPage, kPage, hixl::MEM_HOST);
      if (code != 0) failed++;
      last_ok = code;
    }
    value("failed_before_limit", failed);
    rc("reg_4000", last_ok);
    rc("reg_4001", Reg(a, pool + (n - 1) * kPage, kPage, hixl::MEM_HOST));
    rc("reg_identical_at_limit", Reg(a, pool, kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "host_cap") {
    Init(a, kA);
    uintptr_t p = Reserve(24 * kGiB);
    rc("first_12g", Reg(a, p, 12 * kGiB, hixl::MEM_HOST));
    rc("second_12g", Reg(a, p + 12 * kGiB, 12 * kGiB, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "device_cap") {
    Init(a, kA);
    uintptr_t d = MallocDev(52 * kGiB, ACL_MEM_MALLOC_HUGE_ONLY);
    rc("first_26g", Reg(a, d, 26 * kGiB, hixl::MEM_DEVICE));
    rc("second_26g", Reg(a, d + 26 * kGiB, 26 * kGiB, hixl::MEM_DEVICE));
    a.Finalize();
  } else if (s == "after_connect") {
    Init(a, kA);
    Init(b, kB);
    uintptr_t p = MallocHost(4 * kPage);
    rc("before", Reg(a, p, kPage, hixl::MEM_HOST));
    rc("connect", a.Connect(kB, 1000));
    rc("after", Reg(a, p + kPage, kPage, hixl::MEM_HOST));
    rc("peer_late", Reg(b, p + 2 * kPage, kPage, hixl::MEM_HOST));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("after_disconnect", Reg(a, p + kPage, kPage, hixl::MEM_HOST));
    rc("connect_async", a.ConnectAsync(kB, 1000));
    rc("after_connect_async", Reg(a, p + 3 * kPage, kPage, hixl::MEM_HOST));
    a.Finalize();
    b.Finalize();
  } else if (s == "thread") {
    Init(a, kA);
    aclrtContext ctx = nullptr;
    if (aclrtGetCurrentContext(&ctx) != 0) die("aclrtGetCurrentContext");
    uintptr_t p = MallocHost(kPage);
    ThreadArg none{&a, p, nullptr, -1, 0, 0};
    RunThread(none);
    rc("no_context", none.reg);
    ThreadArg set{&a, p, ctx, -1, 0, 0};
    RunThread(set);
    rc("set_context", set.reg);
    rc("set_context_dereg", set.dereg);
    ThreadArg other{&a, p, nullptr, 1, 0, 0};
    RunThread(other);
    rc("other_device", other.reg);
    MemHandle h;
    rc("same_thread", Reg(a, p, kPage, hixl::MEM_HOST, &h));
    rc("same_thread_dereg", a.DeregisterMem(h));
    a.Finalize();
  } else if (s == "host_origin") {
    Init(a, kA);
    rc("heap", Reg(a, Heap(kPage), kPage, hixl::MEM_HOST));
    rc("malloc_host", Reg(a, MallocHost(kPage), kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "host_origin_dlsym") {
    // LMCache-Ascend's shape: host memory from aclrtMallocHost through a handle of its own
    // (Python's ctypes), then Hixl::RegisterMem(MEM_HOST) through the linker (its module).
    void *acl = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
    if (acl == nullptr) die("dlopen libascendcl.so");
    using MallocHostFn = aclError (*)(void **, size_t);
    auto malloc_host = reinterpret_cast<MallocHostFn>(dlsym(acl, "aclrtMallocHost"));
    if (malloc_host == nullptr) die("dlsym aclrtMallocHost");
    void *p = nullptr;
    if (malloc_host(&p, kPage) != 0) die("aclrtMallocHost through dlsym");
    Init(a, kA);
    rc("dlsym_malloc_host", Reg(a, reinterpret_cast<uintptr_t>(p), kPage, hixl::MEM_HOST));
    rc("heap", Reg(a, Heap(kPage), kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "roce_950") {
    Options o = Transports("[\"roce:host\"]");
    o[hixl::OPTION_BUFFER_POOL] = "0:0";
    o[hixl::OPTION_AUTO_CONNECT] = "0";
    Init(a, kA, o);
    rc("malloc_host", Reg(a, MallocHost(kPage), kPage, hixl::MEM_HOST));
    rc("heap", Reg(a, Heap(kPage), kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "roce_950_local_comm_res") {
    Options o;
    o[hixl::OPTION_LOCAL_COMM_RES] =
        R"({"version": "1.3", "net_instance_id": "sp1", "endpoint_list": [{"protocol": "roce", "comm_id": "192.168.1.2", "placement": "host"}]})";
    Init(a, kA, o);
    rc("malloc_host", Reg(a, MallocHost(kPage), kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "host_unmapped") {
    Init(a, kA);
    uintptr_t p = Reserve(2 * kPage);
    munmap(reinterpret_cast<void *>(p + kPage), kPage);
    rc("half_unmapped", Reg(a, p, 2 * kPage, hixl::MEM_HOST));
    rc("mapped_half", Reg(a, p, kPage, hixl::MEM_HOST));
    a.Finalize();
  } else if (s == "device_origin") {
    Init(a, kA);
    rc("heap_as_device", Reg(a, Heap(kPage), kPage, hixl::MEM_DEVICE));
    a.Finalize();
  } else if (s == "device_huge") {
    Init(a, kA, Transports("\"hccs:device\""));
    rc("huge_first", Reg(a, MallocDev(kPage, ACL_MEM_MALLOC_HUGE_FIRST), kPage, hixl::MEM_DEVICE));
    rc("huge_only", Reg(a, MallocDev(kPage, ACL_MEM_MALLOC_HUGE_ONLY), kPage, hixl::MEM_DEVICE));
    rc("huge_only_offset", Reg(a, MallocDev(4 * kPage, ACL_MEM_MALLOC_HUGE_ONLY) + kPage, kPage, hixl::MEM_DEVICE));
    Init(b, kB, Transports("\"roce:device\""));
    rc("huge_first_roce", Reg(b, MallocDev(kPage, ACL_MEM_MALLOC_HUGE_FIRST), kPage, hixl::MEM_DEVICE));
    a.Finalize();
    b.Finalize();
  } else if (s == "fabric_mem") {
    Options o;
    o[hixl::OPTION_ENABLE_USE_FABRIC_MEM] = "1";
    Init(a, kA, o);
    rc("huge_first", Reg(a, MallocDev(kPage, ACL_MEM_MALLOC_HUGE_FIRST), kPage, hixl::MEM_DEVICE));
    a.Finalize();
  } else if (s == "dereg" || s == "dereg_hixl_cs") {
    Options o = s == "dereg" ? Options() : Transports("\"roce:device\"");
    Init(a, kA, o);
    Init(b, kB, o);
    uintptr_t p = MallocHost(2 * kPage);
    MemHandle h, hb;
    rc("register", Reg(a, p, kPage, hixl::MEM_HOST, &h));
    rc("register_b", Reg(b, p + kPage, kPage, hixl::MEM_HOST, &hb));
    rc("null", a.DeregisterMem(nullptr));
    rc("connect", a.Connect(kB, 1000));
    rc("connected", a.DeregisterMem(h));
    rc("peer_connected", b.DeregisterMem(hb));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("first", a.DeregisterMem(h));  // SITE:dereg_first
    rc("twice", a.DeregisterMem(h));
    rc("other_instance", a.DeregisterMem(hb));
    a.Finalize();
    b.Finalize();
  } else if (s == "transfer") {
    Init(a, kA);
    Init(b, kB);
    uintptr_t p = MallocHost(8 * kPage), q = MallocHost(8 * kPage);
    rc("register", Reg(a, p, 4 * kPage, hixl::MEM_HOST));
    rc("register_b", Reg(b, q, 8 * kPage, hixl::MEM_HOST));
    rc("not_connected", a.TransferSync(kB, hixl::WRITE, Ops(p, q, kPage), 1000));
    rc("connect", a.Connect(kB, 1000));
    std::vector<TransferOpDesc> none;
    rc("empty", a.TransferSync(kB, hixl::WRITE, none, 1000));
    rc("len_zero", a.TransferSync(kB, hixl::WRITE, Ops(p, q, 0), 1000));
    rc("unregistered", a.TransferSync(kB, hixl::WRITE, Ops(p + 4 * kPage, q, kPage), 1000));
    rc("straddling", a.TransferSync(kB, hixl::WRITE, Ops(p + 3 * kPage, q, 2 * kPage), 1000));
    std::vector<TransferOpDesc> many;
    for (int i = 0; i < 64; i++) many.push_back({p + i * 64, q + i * 64, 64});
    rc("many_ok", a.TransferSync(kB, hixl::WRITE, many, 1000));
    hixl::TransferArgs args;
    hixl::TransferReq req = nullptr;
    rc("async_unregistered", a.TransferAsync(kB, hixl::READ, Ops(p + 5 * kPage, q, kPage), args, req));
    rc("unknown_engine", a.TransferSync("127.0.0.1:1", hixl::WRITE, Ops(p, q, kPage), 1000));
    rc("disconnect", a.Disconnect(kB, 1000));
    a.Finalize();
    b.Finalize();
  } else if (s == "leak") {
    Init(a, kA);
    rc("register", Reg(a, MallocHost(kPage), kPage, hixl::MEM_HOST));
    a.Finalize();
    Hixl *c = new Hixl;
    Init(*c, kB);
    rc("register_c", Reg(*c, MallocHost(kPage), kPage, hixl::MEM_HOST));
    delete c;  // ~Hixl calls Finalize
  } else if (s == "engine_forms") {
    // The option forms of the vendor's samples; regcheck names the engine each selects.
    Hixl c, d, e, f, g;
    Options legacy;
    legacy[hixl::OPTION_LOCAL_COMM_RES] = "{\"version\": \"1.2\"}";
    legacy[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] =
        ("{\"comm_resource_config.listen_port\": " + std::to_string(aclsimClaimPort()) + "}").c_str();
    legacy[hixl::OPTION_BUFFER_POOL] = "0:0";
    Options v13;
    v13[hixl::OPTION_LOCAL_COMM_RES] = "{\"version\": \"1.3\"}";
    InitRc(a, "default", Options());
    InitRc(b, "legacy", legacy);
    InitRc(c, "local_comm_res_1_3", v13);
    InitRc(d, "roce_device", Transports("[\"roce:device\"]"));
    InitRc(e, "hccs_device", Transports("[\"hccs:device\"]"));
    InitRc(f, "ub_ctp", Transports("[\"ub_ctp:host\", \"ub_ctp:device\"]"));
    Options fm;
    fm[hixl::OPTION_ENABLE_USE_FABRIC_MEM] = "1";
    InitRc(g, "fabric_mem", fm);
    for (Hixl *h : {&a, &b, &c, &d, &e, &f, &g}) h->Finalize();
  } else if (s == "xfer_unregistered_comm") {
    UnregisteredTransfer(Options());
  } else if (s == "xfer_unregistered_comm_no_pool") {
    Options o;
    o[hixl::OPTION_BUFFER_POOL] = "0:0";
    UnregisteredTransfer(o);
  } else if (s == "xfer_unregistered_hixl_cs") {
    UnregisteredTransfer(Transports("\"roce:device\""));
  } else if (s == "xfer_after_dereg_comm_no_pool" || s == "xfer_after_dereg_hixl_cs") {
    // A page transferred from, then deregistered: the next transfer from it is a transfer of
    // unregistered memory (what regcheck knew of the page must go with it). comm with the pool
    // off deregisters while linked; hixl_cs only once unlinked, so it links again.
    bool cs = s == "xfer_after_dereg_hixl_cs";
    Options o = cs ? Transports("\"roce:device\"") : Options();
    if (!cs) o[hixl::OPTION_BUFFER_POOL] = "0:0";
    LinkedPages l(a, b, o);
    rc("before", a.TransferSync(kB, hixl::WRITE, Ops(l.p, l.q, kPage), 1000));
    if (cs) rc("unlink", a.Disconnect(kB, 1000));
    rc("dereg", a.DeregisterMem(l.ha));
    if (cs) rc("relink", a.Connect(kB, 1000));
    rc("after", a.TransferSync(kB, hixl::WRITE, Ops(l.p, l.q, kPage), 1000));
    rc("next", a.TransferSync(kB, hixl::WRITE, Ops(l.p + kPage, l.q, kPage), 1000));
    l.TearDown();
  } else if (s == "xfer_warm_comm" || s == "xfer_warm_comm_no_pool") {
    // Hundreds of clean transfers first, so that regcheck's thread's copy of its records is
    // current and a clean transfer takes its quickest way: a transfer from a page never
    // registered, and then from a page just deregistered, still meets the rule (the pool
    // stages it: a warning; without the pool, HCCL would fail it: refused).
    Options o;
    if (s == "xfer_warm_comm_no_pool") o[hixl::OPTION_BUFFER_POOL] = "0:0";
    LinkedPages l(a, b, o);
    auto warm = [&](const char *label, uintptr_t from) {
      uint32_t worst = 0;
      for (int i = 0; i < 300; i++) {
        uint32_t r = a.TransferSync(kB, hixl::WRITE, Ops(from, l.q, kPage), 1000);
        if (r != 0) worst = r;
      }
      rc(label, worst);
    };
    warm("warm", l.p);
    rc("unregistered", a.TransferSync(kB, hixl::WRITE, Ops(l.p + 2 * kPage, l.q, kPage), 1000));  // SITE:xfer_warm
    rc("dereg", a.DeregisterMem(l.ha));
    warm("warm_next", l.p + kPage);
    rc("deregistered", a.TransferSync(kB, hixl::WRITE, Ops(l.p, l.q, kPage), 1000));
    l.TearDown();
  } else if (s == "comm_failure_sets_context") {
    // The comm engine registers through HCCL inside its own ACL context, left current on a
    // thread that had none (the vendor's TemporaryRtContext): after a forced reset took the
    // thread's context, a registration HCCL refuses leaves the engine's context current, and
    // the thread's next ACL registration succeeds.
    Init(a, kA);
    uintptr_t p = MallocHost(8 * kPage), q = MallocHost(4 * kPage);
    MemHandle h = nullptr;
    rc("register", Reg(a, p, 8 * kPage, hixl::MEM_HOST, &h));
    rc("reset_force", aclrtResetDeviceForce(0));
    aclrtContext ctx = nullptr;
    printf("value context_before %d\n", aclrtGetCurrentContext(&ctx) == ACL_SUCCESS && ctx != nullptr);
    rc("overlap", Reg(a, p + 2 * kPage, kPage, hixl::MEM_HOST));
    ctx = nullptr;
    printf("value context_after %d\n", aclrtGetCurrentContext(&ctx) == ACL_SUCCESS && ctx != nullptr);
    rc("acl_register", aclrtHostRegisterV2(reinterpret_cast<void *>(q), 4 * kPage, ACL_HOST_REG_MAPPED));
    rc("acl_unregister", aclrtHostUnregister(reinterpret_cast<void *>(q)));
    // An empty range goes to HCCL too (only a wrapping one is refused before it): on a new
    // thread, which has no context, the failed registration leaves the engine's.
    EmptyRegistration e{&a, q};
    pthread_t t;
    if (pthread_create(&t, nullptr, EmptyOnThread, &e) != 0 || pthread_join(t, nullptr) != 0) die("pthread");
    a.DeregisterMem(h);
    a.Finalize();
  } else if (s == "autoconnect_refused_transfer") {
    // hixl_cs with AutoConnect: A's first transfer links to B; a transfer from an unregistered
    // page fails, and the vendor drops the link (HixlEngine::AutoDisconnect); B registers
    // another page; A's next transfer to it links afresh and sees it.
    Options o = Transports("\"roce:device\"");
    o[hixl::OPTION_AUTO_CONNECT] = "1";
    Init(a, kA, o);
    Init(b, kB, o);
    uintptr_t p = MallocHost(4 * kPage), q = MallocHost(4 * kPage);
    MemHandle ha = nullptr, hb = nullptr, hb2 = nullptr;
    rc("register_a", Reg(a, p, kPage, hixl::MEM_HOST, &ha));
    rc("register_b", Reg(b, q, kPage, hixl::MEM_HOST, &hb));
    rc("first", a.TransferSync(kB, hixl::WRITE, Ops(p, q, kPage), 1000));
    rc("unregistered", a.TransferSync(kB, hixl::WRITE, Ops(p + 2 * kPage, q, kPage), 1000));
    rc("register_b_late", Reg(b, q + 2 * kPage, kPage, hixl::MEM_HOST, &hb2));
    rc("to_late", a.TransferSync(kB, hixl::WRITE, Ops(p, q + 2 * kPage, kPage), 1000));
    rc("disconnect", a.Disconnect(kB, 1000));
    a.DeregisterMem(ha);
    b.DeregisterMem(hb);
    b.DeregisterMem(hb2);
    a.Finalize();
    b.Finalize();
  } else if (s == "connect_self") {
    Init(a, kA, Transports("\"roce:device\""));  // hixl_cs
    Init(b, kB);                                  // comm
    rc("hixl_cs", a.Connect(kA, 1000));
    rc("comm", b.Connect(kB, 1000));
    rc("peer", a.Connect(kB, 1000));
    a.Finalize();
    b.Finalize();
  } else if (s == "adjacent_hixl_cs") {
    // hixl_cs: ops across adjacent registrations, local and remote (the memory store merges
    // them), and one across a gap.
    Init(a, kA, Transports("\"roce:device\""));
    Init(b, kB, Transports("\"roce:device\""));
    uintptr_t p = MallocHost(4 * kPage), q = MallocHost(4 * kPage);
    MemHandle h[6] = {};
    rc("register_a0", Reg(a, p, kPage, hixl::MEM_HOST, &h[0]));
    rc("register_a1", Reg(a, p + kPage, kPage, hixl::MEM_HOST, &h[1]));
    rc("register_a2", Reg(a, p + 2 * kPage, kPage, hixl::MEM_HOST, &h[2]));
    rc("register_b0", Reg(b, q, kPage, hixl::MEM_HOST, &h[3]));
    rc("register_b1", Reg(b, q + kPage, kPage, hixl::MEM_HOST, &h[4]));
    rc("register_b3", Reg(b, q + 3 * kPage, kPage, hixl::MEM_HOST, &h[5]));  // a gap at q + 2 pages
    rc("connect", a.Connect(kB, 1000));
    rc("local_across_three", a.TransferSync(kB, hixl::WRITE, Ops(p + kPage / 2, q, 2 * kPage), 1000));
    rc("remote_across_two", a.TransferSync(kB, hixl::WRITE, Ops(p, q + kPage / 2, kPage), 1000));
    rc("remote_across_gap", a.TransferSync(kB, hixl::WRITE, Ops(p, q + kPage + kPage / 2, kPage), 1000));
    rc("disconnect", a.Disconnect(kB, 1000));
    for (int i = 0; i < 3; i++) a.DeregisterMem(h[i]);
    for (int i = 3; i < 6; i++) b.DeregisterMem(h[i]);
    a.Finalize();
    b.Finalize();
  } else if (s == "merge_many_hixl_cs") {
    // hixl_cs: the memory store merges any number of adjacent registrations; a range one page
    // past the last of them is still outside.
    Init(a, kA, Transports("\"roce:device\""));
    Init(b, kB, Transports("\"roce:device\""));
    const size_t n = 65;
    uintptr_t p = MallocHost((n + 1) * kPage), q = MallocHost((n + 1) * kPage);
    std::vector<MemHandle> h(n);
    MemHandle hb = nullptr;
    int failed_regs = 0;
    for (size_t i = 0; i < n; i++) failed_regs += Reg(a, p + i * kPage, kPage, hixl::MEM_HOST, &h[i]) != 0;
    rc("register_failures", failed_regs);
    rc("register_b", Reg(b, q, (n + 1) * kPage, hixl::MEM_HOST, &hb));
    rc("connect", a.Connect(kB, 1000));
    rc("local_across_all", a.TransferSync(kB, hixl::WRITE, Ops(p, q, n * kPage), 1000));
    rc("local_one_page_past", a.TransferSync(kB, hixl::WRITE, Ops(p + kPage, q, n * kPage), 1000));
    rc("disconnect", a.Disconnect(kB, 1000));
    for (size_t i = 0; i < n; i++) a.DeregisterMem(h[i]);
    b.DeregisterMem(hb);
    a.Finalize();
    b.Finalize();
  } else if (s == "remote_late_comm" || s == "remote_late_hixl_cs") {
    // b registers a region after a's link to it: the link cannot see it.
    Options o = s == "remote_late_comm" ? Options() : Transports("\"roce:device\"");
    Init(a, kA, o);
    Init(b, kB, o);
    uintptr_t p = MallocHost(4 * kPage), q = MallocHost(4 * kPage);
    MemHandle ha = nullptr, hb = nullptr, hlate = nullptr;
    rc("register", Reg(a, p, 4 * kPage, hixl::MEM_HOST, &ha));
    rc("register_b", Reg(b, q, 2 * kPage, hixl::MEM_HOST, &hb));
    rc("connect", a.Connect(kB, 1000));
    rc("read_seen", a.TransferSync(kB, hixl::READ, Ops(p, q, kPage), 1000));
    rc("register_b_late", Reg(b, q + 2 * kPage, 2 * kPage, hixl::MEM_HOST, &hlate));
    rc("read_late", a.TransferSync(kB, hixl::READ, Ops(p, q + 2 * kPage, kPage), 1000));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("connect_again", a.Connect(kB, 1000));
    rc("read_late_relinked", a.TransferSync(kB, hixl::READ, Ops(p, q + 2 * kPage, kPage), 1000));
    rc("disconnect_again", a.Disconnect(kB, 1000));
    a.DeregisterMem(ha);
    b.DeregisterMem(hb);
    b.DeregisterMem(hlate);
    a.Finalize();
    b.Finalize();
  } else if (s == "vmm") {
    Init(a, kA, Transports("\"hccs:device\""));
    aclrtDrvMemHandle huge_phys = nullptr, normal_phys = nullptr;
    uintptr_t huge = MapVmm(2 << 20, ACL_HBM_MEM_HUGE, &huge_phys);
    uintptr_t normal = MapVmm(2 << 20, ACL_HBM_MEM_NORMAL, &normal_phys);
    MemHandle h = nullptr;
    rc("huge", Reg(a, huge, 2 << 20, hixl::MEM_DEVICE, &h));
    rc("normal", Reg(a, normal, 2 << 20, hixl::MEM_DEVICE));
    rc("dereg", a.DeregisterMem(h));
    rc("unmap", aclrtUnmapMem(reinterpret_cast<void *>(huge)));
    rc("after_unmap", Reg(a, huge, 2 << 20, hixl::MEM_DEVICE));
    a.Finalize();
  } else if (s == "fabric_mem_init") {
    Options o;
    o[hixl::OPTION_ENABLE_USE_FABRIC_MEM] = "1";
    rc("init", a.Initialize(kA, o));
    aclrtDrvMemHandle phys = nullptr;
    uintptr_t va = MapVmm(2 << 20, ACL_HBM_MEM_HUGE, &phys);
    MemHandle h = nullptr;
    rc("register_vmm", Reg(a, va, 2 << 20, hixl::MEM_DEVICE, &h));
    if (h != nullptr) a.DeregisterMem(h);
    a.Finalize();
  } else if (s == "cs") {
    const uint32_t port = static_cast<uint32_t>(aclsimClaimPort());
    EndpointDesc ep{};
    HixlServerDesc sd{};
    sd.server_ip = "127.0.0.1";
    sd.server_port = port;
    sd.endpoint_list = &ep;
    sd.endpoint_list_num = 1;
    HixlServerConfig scfg;
    HixlServerHandle server = nullptr;
    rc("server_create", HixlCSServerCreate(&sd, &scfg, &server));
    uintptr_t sp = MallocHost(4 * kPage), cp = MallocHost(4 * kPage);
    CommMem smem{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(sp), 2 * kPage};
    MemHandle sh = nullptr;
    rc("server_reg", HixlCSServerRegMem(server, "kv", &smem, &sh));
    CommMem soverlap{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(sp + kPage), 2 * kPage};
    MemHandle tmp = nullptr;
    rc("server_overlap", HixlCSServerRegMem(server, "kv2", &soverlap, &tmp));
    rc("server_listen", HixlCSServerListen(server, 16));
    HixlClientDesc cd{};
    cd.server_ip = "127.0.0.1";
    cd.server_port = port;
    cd.local_endpoint = &ep;
    cd.remote_endpoint = &ep;
    HixlClientConfig ccfg;
    HixlClientHandle client = nullptr;
    rc("client_create", HixlCSClientCreate(&cd, &ccfg, &client));
    CommMem cnull{COMM_MEM_TYPE_HOST, nullptr, kPage};
    rc("client_null_addr", HixlCSClientRegMem(client, "c", &cnull, &tmp));
    CommMem czero{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(cp), 0};
    rc("client_len_zero", HixlCSClientRegMem(client, "c", &czero, &tmp));
    CommMem cinvalid{COMM_MEM_TYPE_INVALID, reinterpret_cast<void *>(cp + 2 * kPage), kPage};
    rc("client_memtype", HixlCSClientRegMem(client, "c", &cinvalid, &tmp));
    CommMem cmem{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(cp), kPage};
    MemHandle ch = nullptr;
    rc("client_reg", HixlCSClientRegMem(client, "c", &cmem, &ch));
    rc("client_connect", HixlCSClientConnect(client, 1000));
    CommMem clate{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(cp + kPage), kPage};
    rc("client_after_connect", HixlCSClientRegMem(client, "late", &clate, &tmp));
    CommMem slate{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(sp + 3 * kPage), kPage};
    rc("server_after_client_connected", HixlCSServerRegMem(server, "late", &slate, &tmp));
    HixlOneSideOpDesc op{reinterpret_cast<void *>(sp), reinterpret_cast<void *>(cp), kPage};
    rc("put", HixlCSClientBatchPutSync(client, 1, &op, 1000));
    rc("client_unreg_null", HixlCSClientUnregMem(client, nullptr));
    rc("client_unreg", HixlCSClientUnregMem(client, ch));
    rc("client_unreg_twice", HixlCSClientUnregMem(client, ch));
    rc("client_destroy", HixlCSClientDestroy(client));
    rc("server_unreg", HixlCSServerUnregMem(server, sh));
    rc("server_destroy", HixlCSServerDestroy(server));
  } else if (s == "cs_server_edges") {
    // The public HixlCSServer::RegisterMem checks neither the address nor the range's end.
    const uint32_t port = static_cast<uint32_t>(aclsimClaimPort());
    EndpointDesc ep{};
    HixlServerDesc sd{};
    sd.server_ip = "127.0.0.1";
    sd.server_port = port;
    sd.endpoint_list = &ep;
    sd.endpoint_list_num = 1;
    HixlServerConfig scfg;
    HixlServerHandle server = nullptr;
    rc("server_create", HixlCSServerCreate(&sd, &scfg, &server));
    CommMem null_addr{COMM_MEM_TYPE_HOST, nullptr, kPage};
    MemHandle h1 = nullptr, h2 = nullptr;
    rc("server_null_addr", HixlCSServerRegMem(server, "zero", &null_addr, &h1));
    CommMem at_top{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(UINTPTR_MAX - kPage + 1), kPage};
    rc("server_end_at_top", HixlCSServerRegMem(server, "top", &at_top, &h2));
    rc("server_unreg_null_addr", HixlCSServerUnregMem(server, h1));
    rc("server_unreg_end_at_top", HixlCSServerUnregMem(server, h2));
    rc("server_destroy", HixlCSServerDestroy(server));
  } else if (s == "cs_server_ub_endpoints") {
    // HixlCSServer::RegisterMem with UB endpoints (hicann/hixl hixl_cs_server.cc): a UBC_TP
    // endpoint on the device takes device memory only; a host one host memory; a type neither
    // host nor device is refused when the server has a UB endpoint.
    EndpointDesc dev_only{};
    dev_only.protocol = COMM_PROTOCOL_UBC_TP;
    dev_only.loc.locType = ENDPOINT_LOC_TYPE_DEVICE;
    HixlServerDesc sd{};
    sd.server_ip = "127.0.0.1";
    sd.server_port = static_cast<uint32_t>(aclsimClaimPort());
    sd.endpoint_list = &dev_only;
    sd.endpoint_list_num = 1;
    HixlServerConfig scfg;
    HixlServerHandle server = nullptr;
    rc("server_create", HixlCSServerCreate(&sd, &scfg, &server));
    CommMem host{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(Heap(kPage)), kPage};
    CommMem dev{COMM_MEM_TYPE_DEVICE, reinterpret_cast<void *>(MallocDev(kPage, ACL_MEM_MALLOC_HUGE_ONLY)), kPage};
    CommMem odd{static_cast<CommMemType>(5), reinterpret_cast<void *>(Heap(kPage)), kPage};
    MemHandle h1 = nullptr, h2 = nullptr, h3 = nullptr;
    rc("server_reg_host_on_device_ub", HixlCSServerRegMem(server, "host", &host, &h1));
    rc("server_reg_device_on_device_ub", HixlCSServerRegMem(server, "dev", &dev, &h2));
    rc("server_reg_type_5", HixlCSServerRegMem(server, "odd", &odd, &h3));
    rc("server_unreg_device", HixlCSServerUnregMem(server, h2));
    rc("server_destroy", HixlCSServerDestroy(server));
    // a host UBC_TP endpoint next to the device one: host memory has an endpoint
    EndpointDesc both[2] = {dev_only, dev_only};
    both[1].loc.locType = ENDPOINT_LOC_TYPE_HOST;
    sd.server_port = static_cast<uint32_t>(aclsimClaimPort());
    sd.endpoint_list = both;
    sd.endpoint_list_num = 2;
    HixlServerHandle server2 = nullptr;
    rc("server2_create", HixlCSServerCreate(&sd, &scfg, &server2));
    MemHandle h4 = nullptr;
    rc("server2_reg_host", HixlCSServerRegMem(server2, "host", &host, &h4));
    rc("server2_unreg_host", HixlCSServerUnregMem(server2, h4));
    rc("server2_destroy", HixlCSServerDestroy(server2));
  } else if (s == "cs_roce_950") {
    HixlClientDesc cd{};
    EndpointDesc ep{};
    cd.server_ip = "127.0.0.1";
    cd.server_port = 27001;
    cd.local_endpoint = &ep;
    cd.remote_endpoint = &ep;
    HixlClientConfig ccfg;
    ccfg.global_resource_config = "{\"comm_resource_config.protocol_desc\": \"roce:host\"}";
    HixlClientHandle client = nullptr;
    rc("client_create", HixlCSClientCreate(&cd, &ccfg, &client));
    CommMem m{COMM_MEM_TYPE_HOST, reinterpret_cast<void *>(MallocHost(kPage)), kPage};
    MemHandle h = nullptr;
    rc("client_reg_malloc_host", HixlCSClientRegMem(client, "c", &m, &h));
    rc("client_destroy", HixlCSClientDestroy(client));
  } else {
    fprintf(stderr, "hixl_scenarios: unknown scenario %s\n", s.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: hixl_scenarios <scenario>\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  g_a = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  g_b = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  kA = g_a.c_str();
  kB = g_b.c_str();
  // Without a SoC name (ACLSIM_SOC_NAME="") aclInit fails (500000); nothing else needs it.
  const char *soc_env = getenv("ACLSIM_SOC_NAME");
  int want_init = (soc_env != nullptr && *soc_env == '\0') ? 500000 : 0;
  if (aclInit(nullptr) != want_init) die("aclInit");
  if (aclrtSetDevice(0) != 0) die("aclrtSetDevice");
  int code = Run(argv[1]);
  fflush(stdout);
  return code;
}
