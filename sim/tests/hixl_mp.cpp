// Two-process HIXL programs against the simulator: `hixl_mp <scenario> [form]`.
//
// The process forks before any ACL or HIXL call: the child is the server (its engine listens on
// a claimed port of 127.0.0.1, it sends its buffer addresses over a socket of its own and then only
// answers commands), the parent is the client that links to it and transfers. The child dies
// with the parent (PR_SET_PDEATHSIG) and the parent waits for it for a bounded time.
//
// Output: `value <key> <n>` lines for the drivers (crates/testkit/tests/sim_multiproc.rs, and
// tests/flows.rs, which runs the correct flows under regcheck), and the
// check summary `checks=N failures=M` of the parent (the child's own failures make the parent
// fail too, through its exit status).
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim.h"
#include "check.h"
#include "cs/hixl_cs.h"
#include "hixl/hixl.h"
#include "hixl_test_util.h"

using namespace hixl;

namespace {

constexpr size_t kSize = 64 * 1024;
using Options = std::map<AscendString, AscendString>;

void Value(const char *key, long long v) { printf("value %s %lld\n", key, v); }

// ---- the exchange socket: fixed-size messages, every wait bounded ----

bool SendU64(int fd, uint64_t v) { return send(fd, &v, sizeof v, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof v); }

bool RecvU64(int fd, uint64_t &v) {
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = recv(fd, reinterpret_cast<char *>(&v) + got, sizeof v - got, 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

void Bound(int fd, int seconds) {
  struct timeval tv {
    seconds, 0
  };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A listening socket on 127.0.0.1:0 (made before the fork, inherited by the child).
int ExchangeListener(int &port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || bind(s, reinterpret_cast<struct sockaddr *>(&a), sizeof a) != 0 || listen(s, 4) != 0 ||
      getsockname(s, reinterpret_cast<struct sockaddr *>(&a), &len) != 0)
    return -1;
  port = ntohs(a.sin_port);
  return s;
}

int ExchangeConnect(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(s, reinterpret_cast<struct sockaddr *>(&a), sizeof a) != 0) return -1;
  Bound(s, 20);
  return s;
}

// ---- engine options for each form ----

Options FormOptions(const std::string &form) {
  Options o;
  if (form == "hixl_cs") {
    o[OPTION_GLOBAL_RESOURCE_CONFIG] = "{\"comm_resource_config.protocol_desc\": [\"hccs:device\"]}";
  } else if (form == "comm_nopool") {
    o[OPTION_BUFFER_POOL] = "0:0";
  } else if (form == "legacy") {
    o[OPTION_LOCAL_COMM_RES] = "{\"version\": \"1.2\"}";
    o[OPTION_GLOBAL_RESOURCE_CONFIG] = "{\"comm_resource_config.listen_port\": 16000}";
    o[OPTION_BUFFER_POOL] = "0:0";
  } else if (form == "fabric") {
    o[OPTION_ENABLE_USE_FABRIC_MEM] = "1";
  }  // "comm": the defaults (Atlas A2/A3: the comm engine, its buffer pool on)
  return o;
}

MemDesc Desc(const void *p, size_t len) {
  MemDesc d{};
  d.addr = reinterpret_cast<uintptr_t>(p);
  d.len = len;
  return d;
}

void Fill(void *p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++) static_cast<uint8_t *>(p)[i] = static_cast<uint8_t>(i * 31 + seed);
}

bool Filled(const void *p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++)
    if (static_cast<const uint8_t *>(p)[i] != static_cast<uint8_t>(i * 31 + seed)) return false;
  return true;
}

// ---- the server (child) ----

// Commands the client sends over the exchange socket.
enum Cmd : uint64_t { kVerify = 1, kLate = 2, kNotifies = 3, kQuit = 4, kDeregister = 5 };

int Server(const std::string &scenario, const std::string &form, int listener, const std::string &name) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 10;
  Hixl engine;
  HixlServerHandle cs_server = nullptr;
  void *dev = nullptr, *host = nullptr, *late = nullptr;
  if (aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_ONLY) != ACL_SUCCESS) return 11;
  if (aclrtMallocHost(&host, kSize) != ACL_SUCCESS || aclrtMallocHost(&late, kSize) != ACL_SUCCESS) return 11;
  memset(dev, 0, kSize);
  Fill(host, kSize, 7);
  MemHandle dev_h = nullptr, host_h = nullptr, late_h = nullptr;
  if (scenario == "cs") {
    static EndpointDesc ep{};
    HixlServerDesc sd{};
    sd.server_ip = "127.0.0.1";
    sd.server_port = static_cast<uint32_t>(atoi(name.c_str() + strlen("127.0.0.1:")));
    sd.endpoint_list = &ep;
    sd.endpoint_list_num = 1;
    HixlServerConfig cfg;
    if (HixlCSServerCreate(&sd, &cfg, &cs_server) != HIXL_SUCCESS) return 12;
    CommMem d{COMM_MEM_TYPE_DEVICE, dev, kSize}, h{COMM_MEM_TYPE_HOST, host, kSize};
    if (HixlCSServerRegMem(cs_server, "dev", &d, &dev_h) != HIXL_SUCCESS) return 13;
    if (HixlCSServerRegMem(cs_server, "host", &h, &host_h) != HIXL_SUCCESS) return 13;
    if (HixlCSServerListen(cs_server, 8) != HIXL_SUCCESS) return 14;
  } else {
    if (engine.Initialize(AscendString(name.c_str()), FormOptions(form)) != SUCCESS) return 12;
    if (engine.RegisterMem(Desc(dev, kSize), MEM_DEVICE, dev_h) != SUCCESS) return 13;
    if (engine.RegisterMem(Desc(host, kSize), MEM_HOST, host_h) != SUCCESS) return 13;
  }
  int fd = accept(listener, nullptr, nullptr);
  close(listener);
  if (fd < 0) return 15;
  Bound(fd, 30);
  // the addresses, over our own socket
  if (!SendU64(fd, reinterpret_cast<uintptr_t>(dev)) || !SendU64(fd, reinterpret_cast<uintptr_t>(host))) return 16;
  int failures = 0;
  for (;;) {
    uint64_t cmd = 0;
    if (!RecvU64(fd, cmd)) break;  // the client is gone, or done: the engine serves until then
    uint64_t answer = 0;
    if (cmd == kVerify) {
      answer = Filled(dev, kSize / 2, 3) ? 1 : 0;
    } else if (cmd == kLate) {
      if (cs_server != nullptr) {
        CommMem l{COMM_MEM_TYPE_HOST, late, kSize};
        if (HixlCSServerRegMem(cs_server, "late", &l, &late_h) != HIXL_SUCCESS) failures++;
      } else if (engine.RegisterMem(Desc(late, kSize), MEM_HOST, late_h) != SUCCESS) {
        failures++;
      }
      answer = reinterpret_cast<uintptr_t>(late);
    } else if (cmd == kNotifies) {
      std::vector<NotifyDesc> got;
      long long until = MonoMs() + 20000;
      while (got.empty() && MonoMs() < until) {
        if (engine.GetNotifies(got) != SUCCESS) break;
        if (got.empty()) usleep(2000);
      }
      answer = got.size() == 1 && strcmp(got[0].name.GetString(), "done") == 0 ? 1 : 0;
    } else if (cmd == kDeregister) {
      answer = engine.DeregisterMem(host_h);
    } else if (cmd == kQuit) {
      SendU64(fd, 0);
      break;
    }
    if (!SendU64(fd, answer)) break;
  }
  close(fd);
  if (cs_server != nullptr) HixlCSServerDestroy(cs_server);
  if (scenario == "flow") {  // a correct program leaves nothing behind
    if (engine.DeregisterMem(dev_h) != SUCCESS || engine.DeregisterMem(host_h) != SUCCESS) failures++;
  }
  engine.Finalize();
  if (scenario == "flow") {
    if (aclrtFree(dev) != ACL_SUCCESS || aclrtFreeHost(host) != ACL_SUCCESS || aclrtFreeHost(late) != ACL_SUCCESS)
      failures++;
    if (aclrtResetDevice(0) != ACL_SUCCESS || aclFinalize() != ACL_SUCCESS) failures++;
  }
  return failures == 0 ? 0 : 17;
}

// ---- the client (parent) ----

struct Child {
  pid_t pid = -1;
  int fd = -1;
  uintptr_t dev = 0, host = 0;
};

uint64_t Ask(Child &c, uint64_t cmd) {
  uint64_t answer = UINT64_MAX;
  if (!SendU64(c.fd, cmd) || !RecvU64(c.fd, answer)) return UINT64_MAX;
  return answer;
}

// Waits up to `ms` for the child; kills it when it does not end. Its exit status, or -signal.
int Reap(Child &c, int ms) {
  if (c.pid <= 0) return 0;
  long long until = MonoMs() + ms;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(c.pid, &status, WNOHANG);
    if (r == c.pid) break;
    if (r < 0 && errno != EINTR) return -100;
    if (MonoMs() >= until) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      fprintf(stderr, "hixl_mp: the server did not end in time\n");
      return -SIGKILL;
    }
    usleep(5000);
  }
  c.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Waits up to `ms` until the child is stopped (SIGSTOP delivered).
bool WaitStopped(Child &c, int ms) {
  long long until = MonoMs() + ms;
  while (MonoMs() < until) {
    int status = 0;
    pid_t r = waitpid(c.pid, &status, WNOHANG | WUNTRACED);
    if (r == c.pid && WIFSTOPPED(status)) return true;
    if (r < 0 && errno != EINTR) return false;
    usleep(1000);
  }
  return false;
}

std::vector<TransferOpDesc> Op(const void *local, uintptr_t remote, size_t len) {
  return {{reinterpret_cast<uintptr_t>(local), remote, len}};
}

// Local device and host memory, both registered before the link; then WRITE device -> remote
// device, checked by the server.
struct Local {
  void *dev = nullptr, *host = nullptr;
  MemHandle dev_h = nullptr, host_h = nullptr;
};

Local LinkAndWrite(Hixl &c, const AscendString &server, Child &ch) {
  Local l;
  EXPECT_EQ(aclrtMalloc(&l.dev, kSize, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocHost(&l.host, kSize), ACL_SUCCESS);
  EXPECT_EQ(c.RegisterMem(Desc(l.dev, kSize), MEM_DEVICE, l.dev_h), SUCCESS);
  EXPECT_EQ(c.RegisterMem(Desc(l.host, kSize), MEM_HOST, l.host_h), SUCCESS);
  EXPECT_EQ(c.Connect(server, 3000), SUCCESS);
  Fill(l.dev, kSize, 3);
  EXPECT_EQ(c.TransferSync(server, WRITE, Op(l.dev, ch.dev, kSize / 2), 3000), SUCCESS);
  EXPECT_EQ(Ask(ch, kVerify), 1);
  return l;
}

// Polls an asynchronous transfer until it is no longer WAITING, for at most `ms`.
TransferStatus WaitTransfer(Hixl &c, TransferReq req, int ms) {
  TransferStatus ts = TransferStatus::WAITING;
  long long until = MonoMs() + ms;
  while (MonoMs() < until) {
    EXPECT_EQ(c.GetTransferStatus(req, ts), SUCCESS);
    if (ts != TransferStatus::WAITING) break;
    usleep(1000);
  }
  return ts;
}

// READ and WRITE both ways between device and host memory; the engine rules of the form.
void ClientRw(Hixl &c, const AscendString &server, Child &ch, const std::string &form) {
  Local l = LinkAndWrite(c, server, ch);
  void *lhost = l.host;
  MemHandle hh = l.host_h;
  // READ remote host -> local host
  memset(lhost, 0, kSize);
  std::vector<TransferOpDesc> reads;
  for (size_t off = 0; off < kSize; off += 4096)
    reads.push_back({reinterpret_cast<uintptr_t>(lhost) + off, ch.host + off, 4096});
  EXPECT_EQ(c.TransferSync(server, READ, reads, 3000), SUCCESS);
  EXPECT_TRUE(Filled(lhost, kSize, 7));
  // engine-specific answers
  std::vector<TransferOpDesc> none;
  Value("empty_ops", c.TransferSync(server, READ, none, 1000));
  std::vector<TransferResult> results;
  Value("list_status", c.GetTransferStatus(GetTransferStatusArgs(), results));
  Value("dereg_linked", c.DeregisterMem(hh));  // this engine has a link (a client) now
  Value("server_dereg_linked", Ask(ch, kDeregister));  // the server only has an incoming link
  (void)form;
  EXPECT_EQ(c.Disconnect(server), SUCCESS);
}

// Memory the server registers after the link: invisible to it (the vendor's code per engine).
void ClientLate(Hixl &c, const AscendString &server, Child &ch) {
  void *lhost = nullptr;
  EXPECT_EQ(aclrtMallocHost(&lhost, kSize), ACL_SUCCESS);
  MemHandle hh = nullptr;
  EXPECT_EQ(c.RegisterMem(Desc(lhost, kSize), MEM_HOST, hh), SUCCESS);
  EXPECT_EQ(c.Connect(server, 3000), SUCCESS);
  uintptr_t late = Ask(ch, kLate);
  Fill(lhost, 4096, 9);
  Value("late_write", c.TransferSync(server, WRITE, Op(lhost, late, 4096), 2000));
  // a new link sees it
  EXPECT_EQ(c.Disconnect(server), SUCCESS);
  EXPECT_EQ(c.Connect(server, 3000), SUCCESS);
  Value("relinked_write", c.TransferSync(server, WRITE, Op(lhost, late, 4096), 2000));
}

// Local memory nobody registered: staged through the comm engine's pool, refused elsewhere.
void ClientUnregistered(Hixl &c, const AscendString &server, Child &ch) {
  std::vector<uint8_t> plain(kSize);  // never registered
  void *lhost = nullptr;
  EXPECT_EQ(aclrtMallocHost(&lhost, kSize), ACL_SUCCESS);
  MemHandle hh = nullptr;
  EXPECT_EQ(c.RegisterMem(Desc(lhost, kSize), MEM_DEVICE, hh), SUCCESS);  // declared device memory
  EXPECT_EQ(c.Connect(server, 3000), SUCCESS);
  Value("unreg_read", c.TransferSync(server, READ, Op(plain.data(), ch.host, 8192), 2000));
  Value("unreg_read_bytes", Filled(plain.data(), 8192, 7) ? 1 : 0);
  // one staged op (host -> remote host) and one direct op (device -> remote host): two types
  std::vector<TransferOpDesc> mixed{{reinterpret_cast<uintptr_t>(plain.data()), ch.host, 64},
                                    {reinterpret_cast<uintptr_t>(lhost), ch.host + 64, 64}};
  Value("mixed_types", c.TransferSync(server, READ, mixed, 2000));
  TransferArgs args;
  TransferReq req = nullptr;
  Value("unreg_async", c.TransferAsync(server, READ, Op(plain.data(), ch.host, 64), args, req));
}

// Async connect, async transfers, notifies.
void ClientAsync(Hixl &c, const AscendString &server, Child &ch, const std::string &form) {
  void *lhost = nullptr;
  EXPECT_EQ(aclrtMallocHost(&lhost, kSize), ACL_SUCCESS);
  MemHandle hh = nullptr;
  EXPECT_EQ(c.RegisterMem(Desc(lhost, kSize), MEM_HOST, hh), SUCCESS);
  AsyncConnectStatus st = AsyncConnectStatus::CONNECTING;
  EXPECT_EQ(c.ConnectAsync(server, 3000), SUCCESS);
  long long until = MonoMs() + 20000;
  while (MonoMs() < until) {
    EXPECT_EQ(c.GetAsyncConnectStatus(server, st), SUCCESS);
    if (st != AsyncConnectStatus::CONNECT_PENDING && st != AsyncConnectStatus::CONNECTING) break;
    usleep(2000);
  }
  EXPECT_TRUE(st == AsyncConnectStatus::CONNECTED);
  TransferArgs args;
  TransferReq req = nullptr;
  memset(lhost, 0, kSize);
  EXPECT_EQ(c.TransferAsync(server, READ, Op(lhost, ch.host, kSize), args, req), SUCCESS);
  TransferStatus ts = WaitTransfer(c, req, 10000);
  EXPECT_TRUE(ts == TransferStatus::COMPLETED);
  EXPECT_TRUE(Filled(lhost, kSize, 7));
  Fill(lhost, kSize, 3);
  EXPECT_EQ(c.TransferAsync(server, WRITE, Op(lhost, ch.dev, kSize / 2), args, req), SUCCESS);
  if (form == "hixl_cs") {  // the list form: hixl_cs only (the comm engine answers UNSUPPORTED)
    std::vector<TransferResult> results;
    EXPECT_EQ(c.GetTransferStatus(GetTransferStatusArgs(), results), SUCCESS);
    EXPECT_TRUE(results.size() == 1 && results[0].status == TransferStatus::COMPLETED);
  } else {
    EXPECT_EQ(c.GetTransferStatus(req, ts), SUCCESS);
    EXPECT_TRUE(ts == TransferStatus::COMPLETED);
  }
  EXPECT_EQ(Ask(ch, kVerify), 1);
  NotifyDesc n;
  n.name = "done";
  n.notify_msg = "64 KiB";
  EXPECT_EQ(c.SendNotify(server, n, 2000), SUCCESS);
  EXPECT_EQ(Ask(ch, kNotifies), 1);
  EXPECT_EQ(c.DisconnectAsync(server, 1000), SUCCESS);
  until = MonoMs() + 20000;
  while (MonoMs() < until) {
    EXPECT_EQ(c.GetAsyncConnectStatus(server, st), SUCCESS);
    if (st == AsyncConnectStatus::NOT_CONNECT) break;
    usleep(2000);
  }
  EXPECT_TRUE(st == AsyncConnectStatus::NOT_CONNECT);
  EXPECT_EQ(c.TransferSync(server, READ, Op(lhost, ch.host, 64), 1000), NOT_CONNECTED);
}

// A correct program, start to end: every registration before the link (device memory from
// aclrtMalloc and from the VMM calls, host memory from aclrtMallocHost), READ and WRITE both
// ways, sync and async, then everything released in order.
// Nothing in it is a mistake, so a validation layer must stay silent.
void ClientFlow(Hixl &c, const AscendString &server, Child &ch) {
  // device memory from the VMM calls too: reserved, backed, mapped, registered as MEM_DEVICE
  const size_t vmm_size = size_t{2} << 20;
  void *vmm = nullptr;
  aclrtDrvMemHandle phys = nullptr;
  aclrtPhysicalMemProp prop{};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  EXPECT_EQ(aclrtReserveMemAddress(&vmm, vmm_size, 0, nullptr, 1), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocPhysical(&phys, vmm_size, &prop, 0), ACL_SUCCESS);
  EXPECT_EQ(aclrtMapMem(vmm, vmm_size, 0, phys, 0), ACL_SUCCESS);
  MemHandle hv = nullptr;
  EXPECT_EQ(c.RegisterMem(Desc(vmm, vmm_size), MEM_DEVICE, hv), SUCCESS);
  Local l = LinkAndWrite(c, server, ch);
  memset(l.host, 0, kSize);
  EXPECT_EQ(c.TransferSync(server, READ, Op(l.host, ch.host, kSize), 3000), SUCCESS);
  EXPECT_TRUE(Filled(l.host, kSize, 7));
  memset(vmm, 0, kSize);
  EXPECT_EQ(c.TransferSync(server, READ, Op(vmm, ch.host, kSize), 3000), SUCCESS);
  EXPECT_TRUE(Filled(vmm, kSize, 7));
  // the same READ again, asynchronously, into device memory
  memset(l.dev, 0, kSize);
  TransferArgs args;
  TransferReq req = nullptr;
  EXPECT_EQ(c.TransferAsync(server, READ, Op(l.dev, ch.host, kSize), args, req), SUCCESS);
  EXPECT_TRUE(WaitTransfer(c, req, 10000) == TransferStatus::COMPLETED);
  EXPECT_TRUE(Filled(l.dev, kSize, 7));
  EXPECT_EQ(c.Disconnect(server), SUCCESS);
  EXPECT_EQ(c.DeregisterMem(l.dev_h), SUCCESS);
  EXPECT_EQ(c.DeregisterMem(l.host_h), SUCCESS);
  EXPECT_EQ(c.DeregisterMem(hv), SUCCESS);
  EXPECT_EQ(aclrtFree(l.dev), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(l.host), ACL_SUCCESS);
  EXPECT_EQ(aclrtUnmapMem(vmm), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreePhysical(phys), ACL_SUCCESS);
  EXPECT_EQ(aclrtReleaseMemAddress(vmm), ACL_SUCCESS);
}

// The server stops answering, then dies: bounded failures, no hang, no crash.
void ClientKill(Hixl &c, const AscendString &server, Child &ch, const std::string &form) {
  void *lhost = nullptr;
  EXPECT_EQ(aclrtMallocHost(&lhost, kSize), ACL_SUCCESS);
  MemHandle hh = nullptr, dh = nullptr;
  EXPECT_EQ(c.RegisterMem(Desc(lhost, kSize), MEM_HOST, hh), SUCCESS);
  Hixl d, other;  // a second linked engine, and one that links later (client-only names)
  EXPECT_EQ(d.Initialize(AscendString("127.0.0.1"), FormOptions(form)), SUCCESS);
  EXPECT_EQ(other.Initialize(AscendString("127.0.0.1"), FormOptions(form)), SUCCESS);
  EXPECT_EQ(d.RegisterMem(Desc(lhost, kSize), MEM_HOST, dh), SUCCESS);
  EXPECT_EQ(c.Connect(server, 3000), SUCCESS);
  EXPECT_EQ(d.Connect(server, 3000), SUCCESS);
  EXPECT_EQ(c.TransferSync(server, READ, Op(lhost, ch.host, 4096), 2000), SUCCESS);
  EXPECT_EQ(d.TransferSync(server, READ, Op(lhost, ch.host, 4096), 2000), SUCCESS);
  kill(ch.pid, SIGSTOP);
  EXPECT_TRUE(WaitStopped(ch, 5000));  // the signal is delivered asynchronously
  long long t0 = MonoMs();
  Value("stopped_read", c.TransferSync(server, READ, Op(lhost, ch.host, 4096), 300));
  Value("stopped_read_ms", MonoMs() - t0);
  t0 = MonoMs();
  Value("stopped_connect", other.Connect(server, 300));  // the kernel accepts; the engine never answers
  Value("stopped_connect_ms", MonoMs() - t0);
  kill(ch.pid, SIGKILL);
  Reap(ch, 5000);
  t0 = MonoMs();
  Value("dead_read", d.TransferSync(server, READ, Op(lhost, ch.host, 4096), 20000));
  Value("dead_read_ms", MonoMs() - t0);
  Value("dead_write", d.TransferSync(server, WRITE, Op(lhost, ch.host, 4096), 2000));
  Value("broken_read", c.TransferSync(server, READ, Op(lhost, ch.host, 4096), 2000));
  t0 = MonoMs();
  Value("dead_connect", other.Connect(server, 20000));  // refused now
  Value("dead_connect_ms", MonoMs() - t0);
}

// HixlCS across processes.
void ClientCs(int port, Child &ch) {
  EndpointDesc ep{};
  HixlClientDesc cd{};
  cd.server_ip = "127.0.0.1";
  cd.server_port = static_cast<uint32_t>(port);
  cd.local_endpoint = &ep;
  cd.remote_endpoint = &ep;
  HixlClientConfig cfg;
  HixlClientHandle client = nullptr;
  EXPECT_EQ(HixlCSClientCreate(&cd, &cfg, &client), HIXL_SUCCESS);
  void *lhost = nullptr;
  EXPECT_EQ(aclrtMallocHost(&lhost, kSize), ACL_SUCCESS);
  CommMem m{COMM_MEM_TYPE_HOST, lhost, kSize};
  MemHandle mh = nullptr;
  EXPECT_EQ(HixlCSClientRegMem(client, "local", &m, &mh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientConnect(client, 3000), HIXL_SUCCESS);
  HixlOneSideOpDesc get{reinterpret_cast<void *>(ch.host), lhost, kSize};
  EXPECT_EQ(HixlCSClientBatchGetSync(client, 1, &get, 3000), HIXL_SUCCESS);
  EXPECT_TRUE(Filled(lhost, kSize, 7));
  Fill(lhost, kSize, 3);
  HixlOneSideOpDesc put{reinterpret_cast<void *>(ch.dev), lhost, kSize / 2};
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &put, 3000), HIXL_SUCCESS);
  EXPECT_EQ(Ask(ch, kVerify), 1);
  uintptr_t late = Ask(ch, kLate);
  HixlOneSideOpDesc to_late{reinterpret_cast<void *>(late), lhost, 64};
  Value("cs_late_put", HixlCSClientBatchPutSync(client, 1, &to_late, 1000));
  CommMem *mems = nullptr;
  char **tags = nullptr;
  uint32_t n = 0;
  EXPECT_EQ(HixlCSClientGetRemoteMem(client, &mems, &tags, &n, 1000), HIXL_SUCCESS);
  Value("cs_remote_mems", n);
  Value("cs_late_put_after_get", HixlCSClientBatchPutSync(client, 1, &to_late, 1000));
  CompleteHandle done = nullptr;
  EXPECT_EQ(HixlCSClientBatchGetAsync(client, 1, &get, &done), HIXL_SUCCESS);
  HixlCompleteStatus st = HIXL_COMPLETE_STATUS_WAITING;
  EXPECT_EQ(HixlCSClientQueryCompleteStatus(client, done, &st), HIXL_SUCCESS);
  EXPECT_TRUE(st == HIXL_COMPLETE_STATUS_COMPLETED);
  EXPECT_EQ(HixlCSClientDestroy(client), HIXL_SUCCESS);
}

int Client(const std::string &scenario, const std::string &form, Child &ch, const std::string &server_name) {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 3;
  uint64_t dev = 0, host = 0;
  if (!RecvU64(ch.fd, dev) || !RecvU64(ch.fd, host)) {
    fprintf(stderr, "hixl_mp: no addresses from the server\n");
    return 3;
  }
  ch.dev = static_cast<uintptr_t>(dev);
  ch.host = static_cast<uintptr_t>(host);
  const AscendString server(server_name.c_str());
  if (scenario == "cs") {
    ClientCs(atoi(server_name.c_str() + strlen("127.0.0.1:")), ch);
  } else {
    Hixl c;
    // the client listens too (like the samples' engines), on a port of its own
    std::string name = EngineName(aclsimClaimPort());
    EXPECT_EQ(c.Initialize(AscendString(name.c_str()), FormOptions(form)), SUCCESS);
    if (scenario == "rw") ClientRw(c, server, ch, form);
    if (scenario == "late") ClientLate(c, server, ch);
    if (scenario == "unregistered") ClientUnregistered(c, server, ch);
    if (scenario == "async") ClientAsync(c, server, ch, form);
    if (scenario == "kill") ClientKill(c, server, ch, form);
    if (scenario == "flow") ClientFlow(c, server, ch);
    c.Finalize();
  }
  if (ch.pid > 0) {
    Ask(ch, kQuit);
    int rc = Reap(ch, 10000);
    Value("server_exit", rc);
    EXPECT_EQ(rc, 0);
  }
  if (scenario == "flow") {
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  }
  return CHECK_DONE();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: hixl_mp rw|late|unregistered|async|kill|cs|flow [hixl_cs|comm|comm_nopool|legacy|fabric]\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string scenario = argv[1], form = argc > 2 ? argv[2] : "hixl_cs";
  int xport = 0;
  int listener = ExchangeListener(xport);
  const std::string server_name = EngineName(aclsimClaimPort());
  if (listener < 0) return 3;
  fflush(stdout);
  Child ch;
  ch.pid = fork();
  if (ch.pid < 0) return 3;
  if (ch.pid == 0) _exit(Server(scenario, form, listener, server_name));
  close(listener);
  ch.fd = ExchangeConnect(xport);
  if (ch.fd < 0) {
    Reap(ch, 100);
    return 3;
  }
  return Client(scenario, form, ch, server_name);
}
