// ADXL scenarios for tests/adxl.rs: `adxl_scenarios <scenario>` drives adxl::AdxlEngine against
// the simulator's libllm_datadist.so (optionally under regcheck) the way Mooncake's Ascend
// transport does (AutoConnect, no Connect, the engine's context set on worker threads), or
// with one mistake, and prints one line per call: `rc <label> <code>`, plus `value <key> <n>`.
// Exit 0 unless the scenario itself could not be set up.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "adxl/adxl_engine.h"

using adxl::AdxlEngine;
using adxl::MemDesc;
using adxl::MemHandle;
using adxl::TransferOpDesc;

namespace {

std::string g_a, g_b;
const char *kA = nullptr;
const char *kB = nullptr;
const size_t kLen = 64 * 4096;

void rc(const char *label, uint32_t code) { printf("rc %s %u\n", label, code); }
void value(const char *key, long long v) { printf("value %s %lld\n", key, v); }

[[noreturn]] void die(const char *what) {
  fprintf(stderr, "adxl_scenarios: %s\n", what);
  exit(3);
}

using Options = std::map<adxl::AscendString, adxl::AscendString>;

// What Mooncake 0.3.13 passes when GetCapability says both features are there: AutoConnect,
// no buffer pool, LocalCommRes version 1.3 (the hixl_cs engine).
Options Mooncake() {
  Options o;
  o[adxl::OPTION_AUTO_CONNECT] = "1";
  o[adxl::OPTION_BUFFER_POOL] = "0:0";
  o[adxl::OPTION_LOCAL_COMM_RES] = "{\"version\":\"1.3\"}";
  return o;
}

void Init(AdxlEngine &e, const char *name, const Options &o = Mooncake()) {
  if (e.Initialize(name, o) != adxl::SUCCESS) die("Initialize");
}

uint32_t Reg(AdxlEngine &e, uintptr_t addr, size_t len, adxl::MemType type, MemHandle *out) {
  MemDesc mem{};
  mem.addr = addr;
  mem.len = len;
  MemHandle handle = nullptr;
  uint32_t code = e.RegisterMem(mem, type, handle);
  *out = handle;
  return code;
}

uintptr_t MallocHost(size_t n) {
  void *p = nullptr;
  if (aclrtMallocHost(&p, n) != 0) die("aclrtMallocHost");
  return reinterpret_cast<uintptr_t>(p);
}

uintptr_t MallocDev(size_t n) {
  void *p = nullptr;
  if (aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_ONLY) != 0) die("aclrtMalloc");
  return reinterpret_cast<uintptr_t>(p);
}

std::vector<TransferOpDesc> Ops(uintptr_t local, uintptr_t remote, size_t len) {
  return {TransferOpDesc{local, remote, len}};
}

void Fill(uintptr_t p, size_t n, int seed) {
  for (size_t i = 0; i < n; i++) reinterpret_cast<uint8_t *>(p)[i] = static_cast<uint8_t>(i * 7 + seed);
}

bool Same(uintptr_t a, uintptr_t b, size_t n) {
  return memcmp(reinterpret_cast<void *>(a), reinterpret_cast<void *>(b), n) == 0;
}

// A transfer from a worker thread, as Mooncake's `ascend-wk-N` threads make them; with
// `set_context` the thread takes the engine's context first (what Mooncake does).
struct Worker {
  AdxlEngine *e;
  aclrtContext ctx;
  bool set_context;
  uintptr_t local, remote;
  uint32_t code;
};

void *WorkerMain(void *arg) {
  Worker *w = static_cast<Worker *>(arg);
  if (w->set_context && aclrtSetCurrentContext(w->ctx) != 0) die("aclrtSetCurrentContext");
  w->code = w->e->TransferSync(kB, adxl::WRITE, Ops(w->local, w->remote, kLen), 10000);
  return nullptr;
}

uint32_t FromWorker(AdxlEngine &e, bool set_context, uintptr_t local, uintptr_t remote) {
  Worker w{&e, nullptr, set_context, local, remote, 0};
  if (aclrtGetCurrentContext(&w.ctx) != 0) die("aclrtGetCurrentContext");
  pthread_t t;
  if (pthread_create(&t, nullptr, WorkerMain, &w) != 0) die("pthread_create");
  pthread_join(t, nullptr);
  return w.code;
}

int Run(const std::string &s) {
  AdxlEngine a, b;
  if (s == "mooncake") {
    // Mooncake's whole life of two engines: register, write and read back through
    // AutoConnect from a worker thread with the engine's context, disconnect, deregister.
    Init(a, kA);
    Init(b, kB);
    uintptr_t src = MallocHost(kLen), back = MallocHost(kLen), dev = MallocDev(kLen);
    Fill(src, kLen, 3);
    MemHandle hs, hb, hd;
    rc("register_src", Reg(a, src, kLen, adxl::MEM_HOST, &hs));
    rc("register_back", Reg(a, back, kLen, adxl::MEM_HOST, &hb));
    rc("register_dev", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hd));
    rc("write", FromWorker(a, true, src, dev));
    rc("read", a.TransferSync(kB, adxl::READ, Ops(back, dev, kLen), 10000));
    value("same", Same(src, back, kLen));
    rc("disconnect", a.Disconnect(kB, 10000));
    rc("deregister_src", a.DeregisterMem(hs));
    rc("deregister_back", a.DeregisterMem(hb));
    rc("deregister_dev", b.DeregisterMem(hd));
    a.Finalize();
    b.Finalize();
  } else if (s == "async") {
    // Mooncake with ASCEND_USE_ASYNC_TRANSFER: TransferAsync, then GetTransferStatus polled.
    Init(a, kA);
    Init(b, kB);
    uintptr_t src = MallocHost(kLen), dev = MallocDev(kLen);
    Fill(src, kLen, 5);
    MemHandle hs, hd;
    rc("register_src", Reg(a, src, kLen, adxl::MEM_HOST, &hs));
    rc("register_dev", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hd));
    rc("connect", a.Connect(kB, 1000));
    adxl::TransferReq req = nullptr;
    rc("write_async", a.TransferAsync(kB, adxl::WRITE, Ops(src, dev, kLen), adxl::TransferArgs(), req));
    adxl::TransferStatus st = adxl::TransferStatus::WAITING;
    uint32_t code = 0;
    for (int i = 0; i < 10000 && code == 0 && st == adxl::TransferStatus::WAITING; i++) code = a.GetTransferStatus(req, st);
    rc("status", code);
    value("completed", st == adxl::TransferStatus::COMPLETED);
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("deregister_src", a.DeregisterMem(hs));
    rc("deregister_dev", b.DeregisterMem(hd));
  } else if (s == "reinit_failed") {
    // A second Initialize that fails (AutoConnect must be 0 or 1): AdxlEngine keeps the engine
    // it made, and every later call fails.
    Init(a, kA);
    Options bad = Mooncake();
    bad[adxl::OPTION_AUTO_CONNECT] = "2";
    rc("reinitialize", a.Initialize(kA, bad));
    MemHandle h;
    rc("register", Reg(a, MallocHost(kLen), kLen, adxl::MEM_HOST, &h));
  } else if (s == "not_initialized") {
    MemHandle h;
    rc("register", Reg(a, MallocHost(kLen), kLen, adxl::MEM_HOST, &h));
    rc("connect", a.Connect(kB, 1000));
    adxl::TransferReq req = reinterpret_cast<adxl::TransferReq>(0x1000);
    adxl::TransferStatus st;
    rc("status", a.GetTransferStatus(req, st));
  } else if (s == "arguments") {
    Init(a, kA);
    Init(b, kB);
    uintptr_t src = MallocHost(kLen), dev = MallocDev(kLen);
    MemHandle hs, hd;
    rc("register_null", Reg(a, 0, kLen, adxl::MEM_HOST, &hs));
    rc("deregister_null", a.DeregisterMem(nullptr));
    rc("register_src", Reg(a, src, kLen, adxl::MEM_HOST, &hs));
    rc("register_dev", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hd));
    rc("connect_timeout", a.Connect(kB, 0));
    rc("transfer_timeout", a.TransferSync(kB, adxl::WRITE, Ops(src, dev, kLen), -1));
    rc("transfer_null_op", a.TransferSync(kB, adxl::WRITE, Ops(0, dev, kLen), 1000));
    adxl::TransferReq req = nullptr;
    adxl::TransferStatus st;
    rc("status_null", a.GetTransferStatus(req, st));
    rc("write", a.TransferSync(kB, adxl::WRITE, Ops(src, dev, kLen), 1000));
    rc("disconnect_timeout", a.Disconnect(kB, -5));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("deregister_src", a.DeregisterMem(hs));
    rc("deregister_dev", b.DeregisterMem(hd));
  } else if (s == "unregistered") {
    // A transfer from a buffer never registered: the first one links (AutoConnect), and the
    // engine refuses the range; once linked, regcheck knows.
    Init(a, kA);
    Init(b, kB);
    uintptr_t src = MallocHost(kLen), stray = MallocHost(kLen), dev = MallocDev(kLen);
    MemHandle hs, hd;
    rc("register_src", Reg(a, src, kLen, adxl::MEM_HOST, &hs));
    rc("register_dev", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hd));
    rc("write", a.TransferSync(kB, adxl::WRITE, Ops(src, dev, kLen), 1000));
    rc("write_unregistered", a.TransferSync(kB, adxl::WRITE, Ops(stray, dev, kLen), 1000));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("deregister_src", a.DeregisterMem(hs));
    rc("deregister_dev", b.DeregisterMem(hd));
  } else if (s == "late") {
    // register_memory after transfers started: the link made at the first transfer does not
    // see the new region.
    Init(a, kA);
    Init(b, kB);
    uintptr_t src = MallocHost(kLen), late = MallocHost(kLen), dev = MallocDev(kLen);
    MemHandle hs, hl, hd;
    rc("register_src", Reg(a, src, kLen, adxl::MEM_HOST, &hs));
    rc("register_dev", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hd));
    rc("write", a.TransferSync(kB, adxl::WRITE, Ops(src, dev, kLen), 1000));
    rc("register_late", Reg(a, late, kLen, adxl::MEM_HOST, &hl));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("deregister_late", a.DeregisterMem(hl));
    rc("deregister_src", a.DeregisterMem(hs));
    rc("deregister_dev", b.DeregisterMem(hd));
  } else if (s == "context") {
    // A worker thread that does not take the engine's context.
    Init(a, kA);
    Init(b, kB);
    uintptr_t src = MallocHost(kLen), dev = MallocDev(kLen);
    MemHandle hs, hd;
    rc("register_src", Reg(a, src, kLen, adxl::MEM_HOST, &hs));
    rc("register_dev", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hd));
    rc("write", FromWorker(a, false, src, dev));
    rc("disconnect", a.Disconnect(kB, 1000));
    rc("deregister_src", a.DeregisterMem(hs));
    rc("deregister_dev", b.DeregisterMem(hd));
  } else if (s == "shared_region") {
    // vllm-ascend #10724: two comm engines (no LocalCommRes, as Mooncake's older transport) of
    // one process register the same KV region, and both deregister it at shutdown. HCCL gives
    // both the one handle of that region; the first deregistration drops it.
    Options comm;
    comm[adxl::OPTION_BUFFER_POOL] = "0:0";
    Init(a, kA, comm);
    Init(b, kB, comm);
    uintptr_t dev = MallocDev(kLen);
    MemHandle ha, hb;
    rc("register_a", Reg(a, dev, kLen, adxl::MEM_DEVICE, &ha));
    rc("register_b", Reg(b, dev, kLen, adxl::MEM_DEVICE, &hb));
    value("same_handle", ha == hb ? 1 : 0);
    rc("deregister_a", a.DeregisterMem(ha));
    rc("deregister_b", b.DeregisterMem(hb));
  } else if (s == "unaligned") {
    // Device memory registered 4 KiB past a 2 MiB boundary (HCCS wants 2 MiB).
    Init(a, kA);
    uintptr_t dev = MallocDev(4 << 20);
    MemHandle hd;
    rc("register_dev", Reg(a, dev + 4096, kLen, adxl::MEM_DEVICE, &hd));
    rc("deregister_dev", a.DeregisterMem(hd));
  } else {
    fprintf(stderr, "adxl_scenarios: unknown scenario %s\n", s.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: adxl_scenarios <scenario>\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  g_a = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  g_b = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  kA = g_a.c_str();
  kB = g_b.c_str();
  if (aclInit(nullptr) != 0) die("aclInit");
  if (aclrtSetDevice(0) != 0) die("aclrtSetDevice");
  int code = Run(argv[1]);
  fflush(stdout);
  return code;
}
