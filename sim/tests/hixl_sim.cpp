// The simulated HIXL library: hixl::Hixl's checks and codes, a two-engine transfer with byte
// verification (host, device and MAPPED device memory), async calls, notifies, and the HixlCS
// C API, and AutoConnect. Run bare against the simulator.
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <fstream>
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

static std::vector<uint8_t> Bytes(const void *p, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  return std::vector<uint8_t>(b, b + n);
}

static MemDesc Desc(const void *p, size_t len) {
  MemDesc d{};
  d.addr = reinterpret_cast<uintptr_t>(p);
  d.len = len;
  return d;
}

static void TestLayout() {
  EXPECT_EQ(sizeof(Hixl), 8);
  EXPECT_EQ(sizeof(MemDesc), 144);
  EXPECT_EQ(sizeof(TransferOpDesc), 24);
  EXPECT_EQ(sizeof(ge::AscendString), 16);
  EXPECT_EQ(sizeof(CommMem), 24);
  EXPECT_EQ(sizeof(HixlOneSideOpDesc), 24);
  ge::AscendString a("abc"), b("abd"), c("abcdef", 3), e;
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a == c);
  EXPECT_TRUE(a != b);
  EXPECT_EQ(a.GetLength(), 3);
  EXPECT_TRUE(strcmp(c.GetString(), "abc") == 0);
  EXPECT_TRUE(strcmp(e.GetString(), "") == 0);
  EXPECT_EQ(e.GetLength(), 0);
}

// Waits (bounded) until GetAsyncConnectStatus reports something other than PENDING/CONNECTING.
static AsyncConnectStatus WaitAsync(Hixl &h, const AscendString &remote) {
  AsyncConnectStatus cs = AsyncConnectStatus::CONNECT_PENDING;
  long long until = MonoMs() + 20000;
  while (MonoMs() < until) {
    if (h.GetAsyncConnectStatus(remote, cs) != SUCCESS) break;
    if (cs != AsyncConnectStatus::CONNECT_PENDING && cs != AsyncConnectStatus::CONNECTING &&
        cs != AsyncConnectStatus::DISCONNECT_PENDING && cs != AsyncConnectStatus::DISCONNECTING)
      break;
    usleep(2000);
  }
  return cs;
}

// Several hixl_cs engines in one process, linked over loopback TCP.
static void TestEngines() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::map<AscendString, AscendString> options;
  options[AscendString(OPTION_GLOBAL_RESOURCE_CONFIG)] =
      AscendString("{\"comm_resource_config.protocol_desc\": [\"roce:device\"]}");
  const std::string na = EngineName(aclsimClaimPort()), nb = EngineName(aclsimClaimPort()), nobody = EngineName(RefusingPort());
  const AscendString ra(na.c_str()), rb(nb.c_str());

  Hixl a, b, dup, lonely, bad;
  MemHandle h = nullptr;
  void *ha = nullptr, *hb = nullptr;
  EXPECT_EQ(aclrtMallocHost(&ha, 4 * page), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocHost(&hb, 4 * page), ACL_SUCCESS);

  // ---- before Initialize: nothing behind the object ----
  EXPECT_EQ(a.RegisterMem(Desc(ha, page), MEM_HOST, h), FAILED);
  EXPECT_EQ(a.Connect(rb), FAILED);
  EXPECT_EQ(a.DeregisterMem(nullptr), FAILED);

  uint64_t ctx_calls = aclsimGetCallCount("aclrtCreateContext");
  EXPECT_EQ(a.Initialize(ra, options), SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("aclrtCreateContext"), ctx_calls + 1);  // its own context, through the PLT
  EXPECT_EQ(b.Initialize(rb, options), SUCCESS);
  EXPECT_EQ(dup.Initialize(ra, options), FAILED);  // the address is in use
  EXPECT_EQ(bad.Initialize(AscendString("lonely"), options), PARAM_INVALID);
  EXPECT_EQ(bad.Initialize(AscendString("127.0.0.1:x"), options), PARAM_INVALID);
  EXPECT_EQ(lonely.Initialize(AscendString("127.0.0.1"), options), SUCCESS);  // client only

  // ---- RegisterMem ----
  MemHandle ha_h = nullptr, hb_h = nullptr, again = nullptr, other = nullptr;
  EXPECT_EQ(a.RegisterMem(Desc(nullptr, page), MEM_HOST, h), PARAM_INVALID);
  EXPECT_EQ(a.RegisterMem(Desc(reinterpret_cast<void *>(UINTPTR_MAX - 10), 100), MEM_HOST, h), PARAM_INVALID);
  EXPECT_EQ(a.RegisterMem(Desc(ha, 4 * page), MEM_HOST, ha_h), SUCCESS);
  EXPECT_TRUE(ha_h != nullptr);
  EXPECT_EQ(a.RegisterMem(Desc(ha, 4 * page), MEM_HOST, again), SUCCESS);
  EXPECT_TRUE(again == ha_h);
  EXPECT_EQ(a.RegisterMem(Desc(static_cast<char *>(ha) + page, page), MEM_HOST, h), PARAM_INVALID);
  EXPECT_EQ(a.RegisterMem(Desc(static_cast<char *>(ha) + page, page), MEM_DEVICE, other), SUCCESS);
  EXPECT_EQ(a.DeregisterMem(other), SUCCESS);
  EXPECT_EQ(a.RegisterMem(Desc(static_cast<char *>(ha) + 4 * page, 0), MEM_HOST, other), SUCCESS);  // len 0
  EXPECT_EQ(a.DeregisterMem(other), SUCCESS);
  EXPECT_EQ(a.RegisterMem(Desc(static_cast<char *>(ha) + 5 * page, 64), static_cast<MemType>(7), other), SUCCESS);
  EXPECT_EQ(a.DeregisterMem(other), SUCCESS);
  EXPECT_EQ(a.DeregisterMem(other), SUCCESS);                             // double: SUCCESS
  EXPECT_EQ(a.DeregisterMem(reinterpret_cast<MemHandle>(0x1)), SUCCESS);  // unknown: SUCCESS
  EXPECT_EQ(a.DeregisterMem(nullptr), PARAM_INVALID);
  EXPECT_EQ(b.RegisterMem(Desc(hb, 4 * page), MEM_HOST, hb_h), SUCCESS);

  // device memory on b, and a MAPPED device address of a host buffer on b
  void *dev = nullptr;
  EXPECT_EQ(aclrtMalloc(&dev, page, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
  MemHandle dev_h = nullptr;
  EXPECT_EQ(b.RegisterMem(Desc(dev, page), MEM_DEVICE, dev_h), SUCCESS);
  void *mapped_host = nullptr, *mapped_dev = nullptr;
  EXPECT_EQ(aclrtMallocHost(&mapped_host, page), ACL_SUCCESS);
  EXPECT_EQ(aclrtHostRegister(mapped_host, page, ACL_HOST_REGISTER_MAPPED, &mapped_dev), ACL_SUCCESS);
  MemHandle mapped_h = nullptr;
  EXPECT_EQ(b.RegisterMem(Desc(mapped_dev, page), MEM_DEVICE, mapped_h), SUCCESS);

  // ---- Connect ----
  long long t0 = MonoMs();
  EXPECT_EQ(a.Connect(AscendString(nobody.c_str()), 20000), FAILED);  // refused: at once,
  EXPECT_TRUE(MonoMs() - t0 < 10000);                                  // not after the timeout
  EXPECT_EQ(a.Connect(ra), PARAM_INVALID);                         // oneself
  EXPECT_EQ(a.Connect(AscendString("nobody")), PARAM_INVALID);     // not an address
  EXPECT_EQ(a.Connect(AscendString("127.0.0.1")), FAILED);         // client-only engines do not listen
  EXPECT_EQ(a.Connect(rb, 0), PARAM_INVALID);
  EXPECT_EQ(a.Connect(rb, 1000), SUCCESS);
  EXPECT_EQ(a.Connect(rb, 1000), ALREADY_CONNECTED);
  EXPECT_EQ(lonely.Connect(rb, 1000), SUCCESS);

  // ---- TransferSync checks ----
  uintptr_t la = reinterpret_cast<uintptr_t>(ha), rbuf = reinterpret_cast<uintptr_t>(hb);
  std::vector<TransferOpDesc> ops{{la, rbuf, page}};
  EXPECT_EQ(a.TransferSync(rb, WRITE, ops, 0), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(AscendString(nobody.c_str()), WRITE, ops, 1000), NOT_CONNECTED);
  EXPECT_EQ(b.TransferSync(ra, WRITE, ops, 1000), NOT_CONNECTED);  // links are per side
  std::vector<TransferOpDesc> bad0{{0, rbuf, 16}};
  std::vector<TransferOpDesc> bad1{{la, 0, 16}};
  std::vector<TransferOpDesc> bad2{{la, rbuf, 0}};
  std::vector<TransferOpDesc> bad3{{la + 3 * page, rbuf, 2 * page}};  // local range leaves the registration
  std::vector<TransferOpDesc> bad4{{la, rbuf + 4 * page, 16}};        // remote range not registered
  std::vector<TransferOpDesc> none;
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad0, 1000), PARAM_INVALID);
  EXPECT_EQ(b.TransferSync(ra, WRITE, bad0, 1000), PARAM_INVALID);  // the op list first, then the link
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad1, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad2, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad3, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, READ, bad4, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, READ, none, 1000), PARAM_INVALID);

  // ---- WRITE pushes local to remote, READ pulls remote into local ----
  for (size_t i = 0; i < 4 * page; i++) {
    static_cast<uint8_t *>(ha)[i] = static_cast<uint8_t>(i * 7 + 1);
    static_cast<uint8_t *>(hb)[i] = 0;
  }
  std::vector<TransferOpDesc> w{{la + 100, rbuf + 200, 1000}, {la + page, rbuf + 2 * page, page}};
  EXPECT_EQ(a.TransferSync(rb, WRITE, w, 1000), SUCCESS);
  EXPECT_TRUE(Bytes(static_cast<char *>(hb) + 200, 1000) == Bytes(static_cast<char *>(ha) + 100, 1000));
  EXPECT_TRUE(Bytes(static_cast<char *>(hb) + 2 * page, page) == Bytes(static_cast<char *>(ha) + page, page));
  EXPECT_EQ(static_cast<uint8_t *>(hb)[199], 0);
  EXPECT_EQ(static_cast<uint8_t *>(hb)[1200], 0);
  memset(static_cast<char *>(hb) + 3 * page, 0xab, 512);
  std::vector<TransferOpDesc> r{{la + 10, rbuf + 3 * page, 512}};
  EXPECT_EQ(a.TransferSync(rb, READ, r, 1000), SUCCESS);
  EXPECT_EQ(static_cast<uint8_t *>(ha)[10], 0xab);
  EXPECT_EQ(static_cast<uint8_t *>(ha)[521], 0xab);
  EXPECT_EQ(static_cast<uint8_t *>(ha)[522], static_cast<uint8_t>(522 * 7 + 1));

  // host -> device memory, and into a MAPPED device address (lands in its host buffer)
  std::vector<TransferOpDesc> wd{{la, reinterpret_cast<uintptr_t>(dev), 256}};
  EXPECT_EQ(a.TransferSync(rb, WRITE, wd, 1000), SUCCESS);
  EXPECT_TRUE(Bytes(dev, 256) == Bytes(ha, 256));
  std::vector<TransferOpDesc> wm{{la + 1, reinterpret_cast<uintptr_t>(mapped_dev) + 8, 100}};
  EXPECT_EQ(a.TransferSync(rb, WRITE, wm, 1000), SUCCESS);
  EXPECT_TRUE(Bytes(static_cast<char *>(mapped_host) + 8, 100) == Bytes(static_cast<char *>(ha) + 1, 100));

  // ---- registered after the link: invisible to the link ----
  void *late = nullptr;
  EXPECT_EQ(aclrtMallocHost(&late, page), ACL_SUCCESS);
  MemHandle late_h = nullptr;
  EXPECT_EQ(b.RegisterMem(Desc(late, page), MEM_HOST, late_h), SUCCESS);
  std::vector<TransferOpDesc> wl{{la, reinterpret_cast<uintptr_t>(late), 64}};
  EXPECT_EQ(a.TransferSync(rb, WRITE, wl, 1000), PARAM_INVALID);

  // ---- TransferAsync / GetTransferStatus ----
  memset(hb, 0x11, 64);
  TransferArgs args;
  args.user_data = &args;
  TransferReq req = nullptr;
  std::vector<TransferOpDesc> ar{{la + 2 * page, rbuf, 64}};
  EXPECT_EQ(a.TransferAsync(rb, READ, ar, args, req), SUCCESS);
  EXPECT_TRUE(req != nullptr);
  TransferStatus ts = TransferStatus::WAITING;
  EXPECT_EQ(a.GetTransferStatus(req, ts), SUCCESS);
  EXPECT_TRUE(ts == TransferStatus::COMPLETED);
  EXPECT_EQ(static_cast<uint8_t *>(ha)[2 * page + 63], 0x11);
  EXPECT_EQ(a.GetTransferStatus(req, ts), PARAM_INVALID);
  EXPECT_EQ(a.TransferAsync(rb, WRITE, ar, args, req), SUCCESS);
  std::vector<TransferResult> results;
  EXPECT_EQ(a.GetTransferStatus(GetTransferStatusArgs(), results), SUCCESS);
  EXPECT_EQ(results.size(), 1);
  EXPECT_TRUE(results.size() == 1 && results[0].req == req && results[0].user_data == &args &&
              results[0].status == TransferStatus::COMPLETED);
  EXPECT_EQ(a.TransferAsync(AscendString(nobody.c_str()), WRITE, ar, args, req), NOT_CONNECTED);

  // ---- ConnectAsync / GetAsyncConnectStatus: only what ConnectAsync started ----
  AsyncConnectStatus cs = AsyncConnectStatus::CONNECTING;
  EXPECT_EQ(a.GetAsyncConnectStatus(rb, cs), SUCCESS);
  EXPECT_TRUE(cs == AsyncConnectStatus::NOT_CONNECT);  // a plain Connect does not show here
  EXPECT_EQ(b.ConnectAsync(ra), SUCCESS);
  EXPECT_TRUE(WaitAsync(b, ra) == AsyncConnectStatus::CONNECTED);
  EXPECT_EQ(b.ConnectAsync(ra), SUCCESS);  // a duplicate is accepted
  EXPECT_TRUE(WaitAsync(b, ra) == AsyncConnectStatus::CONNECTED);
  EXPECT_EQ(b.ConnectAsync(AscendString(nobody.c_str())), SUCCESS);
  EXPECT_TRUE(WaitAsync(b, AscendString(nobody.c_str())) == AsyncConnectStatus::CONNECT_FAILED);
  std::map<AscendString, AsyncConnectStatus> all;
  EXPECT_EQ(b.GetAsyncConnectStatus(all), SUCCESS);
  EXPECT_EQ(all.size(), 2);

  // ---- notifies ----
  NotifyDesc nd;
  nd.name = AscendString("hello");
  nd.notify_msg = AscendString("world");
  EXPECT_EQ(a.SendNotify(rb, nd), SUCCESS);
  std::vector<NotifyDesc> got;
  EXPECT_EQ(b.GetNotifies(got), SUCCESS);
  EXPECT_EQ(got.size(), 1);
  EXPECT_TRUE(got.size() == 1 && strcmp(got[0].notify_msg.GetString(), "world") == 0);
  EXPECT_EQ(dup.SendNotify(rb, nd), FAILED);  // never initialised

  int32_t cap = -1;
  EXPECT_EQ(Hixl::GetCapability(CLIENT_SERVER_COMM, cap), SUCCESS);
  EXPECT_EQ(cap, 1);
  // an unknown feature: UNSUPPORTED on 9.1.0 (the default profile), SUCCESS with 0 after
  EXPECT_EQ(Hixl::GetCapability(static_cast<FeatureType>(99), cap), UNSUPPORTED);
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);
  EXPECT_EQ(Hixl::GetCapability(static_cast<FeatureType>(99), cap), SUCCESS);
  EXPECT_EQ(cap, 0);
  unsetenv("ACLSIM_CANN_VERSION");

  // ---- DeregisterMem: refused only while this engine has clients (outgoing links) ----
  EXPECT_EQ(a.DeregisterMem(ha_h), FAILED);
  EXPECT_EQ(b.DeregisterMem(hb_h), FAILED);  // b has its own link to a now
  EXPECT_EQ(a.Disconnect(rb), SUCCESS);
  EXPECT_EQ(a.Disconnect(rb), NOT_CONNECTED);
  EXPECT_EQ(a.DeregisterMem(ha_h), SUCCESS);  // b's link to a does not matter
  EXPECT_EQ(a.DeregisterMem(ha_h), SUCCESS);
  EXPECT_EQ(b.DisconnectAsync(ra), SUCCESS);
  EXPECT_TRUE(WaitAsync(b, ra) == AsyncConnectStatus::NOT_CONNECT);
  EXPECT_EQ(b.DeregisterMem(hb_h), SUCCESS);

  // ---- Finalize: the peer's link breaks, the address is free again ----
  EXPECT_EQ(a.RegisterMem(Desc(ha, 4 * page), MEM_HOST, ha_h), SUCCESS);
  EXPECT_EQ(b.Connect(ra), SUCCESS);
  uint64_t fin = aclsimGetCallCount("Hixl::Finalize");
  a.Finalize();
  EXPECT_EQ(aclsimGetCallCount("Hixl::Finalize"), fin + 1);
  EXPECT_EQ(a.RegisterMem(Desc(ha, page), MEM_HOST, h), FAILED);
  EXPECT_EQ(a.TransferSync(rb, WRITE, ops, 1000), FAILED);
  std::vector<TransferOpDesc> back{{rbuf, la, 16}};
  EXPECT_EQ(b.RegisterMem(Desc(hb, 4 * page), MEM_HOST, hb_h), SUCCESS);
  EXPECT_EQ(b.TransferSync(ra, WRITE, back, 1000), FAILED);  // the peer is gone
  EXPECT_EQ(dup.Initialize(ra, options), SUCCESS);             // the address is free again
  EXPECT_EQ(b.Disconnect(ra), SUCCESS);
  EXPECT_EQ(b.DeregisterMem(dev_h), SUCCESS);
  lonely.Finalize();
  b.Finalize();
  dup.Finalize();

  EXPECT_EQ(aclrtHostUnregister(mapped_host), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(mapped_host), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(ha), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(hb), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(late), ACL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("Hixl::Hixl"), 5);
}

static void TestClientServer() {
  std::vector<uint8_t> sbuf(8192, 0), cbuf(8192, 0), later(4096, 0);
  const int port = aclsimClaimPort();
  EndpointDesc ep{};
  HixlServerDesc sd{};
  sd.server_ip = "127.0.0.1";
  sd.server_port = static_cast<uint32_t>(port);
  sd.endpoint_list = &ep;
  sd.endpoint_list_num = 1;
  HixlServerConfig scfg;
  HixlServerHandle server = nullptr;
  EXPECT_EQ(HixlCSServerCreate(nullptr, &scfg, &server), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSServerCreate(&sd, nullptr, &server), HIXL_PARAM_INVALID);  // NULL config
  HixlServerDesc no_ep = sd;
  no_ep.endpoint_list_num = 0;
  EXPECT_EQ(HixlCSServerCreate(&no_ep, &scfg, &server), HIXL_PARAM_INVALID);  // no endpoint
  HixlServerDesc big = sd;
  big.server_port = 70000;
  EXPECT_EQ(HixlCSServerCreate(&big, &scfg, &server), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSServerCreate(&sd, &scfg, &server), HIXL_SUCCESS);
  CommMem smem{COMM_MEM_TYPE_HOST, sbuf.data(), sbuf.size()};
  MemHandle smh = nullptr, smh2 = nullptr, tmp = nullptr;
  EXPECT_EQ(HixlCSServerRegMem(server, "kv", &smem, &smh), HIXL_SUCCESS);
  // the server checks nothing on registration but the memory type against its endpoints
  // (hixl_cs_server.cc HixlCSServer::RegisterMem): each registration its own handle, a NULL
  // address and an overlap accepted (hcomm's checks are not public)
  EXPECT_EQ(HixlCSServerRegMem(server, "kv", &smem, &smh2), HIXL_SUCCESS);
  EXPECT_TRUE(smh != smh2);
  CommMem null_mem{COMM_MEM_TYPE_HOST, nullptr, 16};
  EXPECT_EQ(HixlCSServerRegMem(server, "x", &null_mem, &tmp), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerUnregMem(server, tmp), HIXL_SUCCESS);
  CommMem part{COMM_MEM_TYPE_HOST, sbuf.data() + 16, 16};
  EXPECT_EQ(HixlCSServerRegMem(server, "x", &part, &tmp), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerUnregMem(server, tmp), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerUnregMem(server, smh2), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerUnregMem(server, smh2), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSServerUnregMem(server, reinterpret_cast<MemHandle>(0x10)), HIXL_PARAM_INVALID);

  HixlClientDesc cd{};
  cd.server_ip = "127.0.0.1";
  cd.server_port = static_cast<uint32_t>(port);
  cd.local_endpoint = &ep;
  cd.remote_endpoint = &ep;
  HixlClientConfig ccfg;
  HixlClientHandle client = nullptr;
  EXPECT_EQ(HixlCSClientCreate(&cd, nullptr, &client), HIXL_PARAM_INVALID);
  HixlClientDesc zero_port = cd;
  zero_port.server_port = 0;
  EXPECT_EQ(HixlCSClientCreate(&zero_port, &ccfg, &client), HIXL_PARAM_INVALID);
  HixlClientDesc no_remote = cd;
  no_remote.remote_endpoint = nullptr;
  EXPECT_EQ(HixlCSClientCreate(&no_remote, &ccfg, &client), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSClientCreate(&cd, &ccfg, &client), HIXL_SUCCESS);
  CommMem cmem{COMM_MEM_TYPE_HOST, cbuf.data(), cbuf.size()};
  MemHandle cmh = nullptr;
  EXPECT_EQ(HixlCSClientRegMem(client, "local", &cmem, &cmh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientRegMem(client, "local", &cmem, &tmp), HIXL_PARAM_INVALID);  // identical again
  CommMem czero{COMM_MEM_TYPE_HOST, cbuf.data(), 0};
  EXPECT_EQ(HixlCSClientRegMem(client, "zero", &czero, &tmp), HIXL_PARAM_INVALID);
  HixlOneSideOpDesc op{sbuf.data() + 100, cbuf.data() + 50, 1000};
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &op, 1000), HIXL_PARAM_INVALID);  // server memory unknown yet
  EXPECT_EQ(HixlCSClientConnect(client, 1000), HIXL_FAILED);                      // refused: not listening yet
  EXPECT_EQ(HixlCSServerListen(server, 16), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientConnect(client, 1000), HIXL_SUCCESS);

  // registered by the server after the client connected: invisible until GetRemoteMem
  CommMem lmem{COMM_MEM_TYPE_HOST, later.data(), later.size()};
  MemHandle lmh = nullptr;
  EXPECT_EQ(HixlCSServerRegMem(server, "later", &lmem, &lmh), HIXL_SUCCESS);
  HixlOneSideOpDesc to_later{later.data(), cbuf.data(), 16};
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &to_later, 1000), HIXL_PARAM_INVALID);
  CommMem *remote = nullptr;
  char **tags = nullptr;
  uint32_t n = 0;
  EXPECT_EQ(HixlCSClientGetRemoteMem(client, &remote, &tags, &n, 1000), HIXL_SUCCESS);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &to_later, 1000), HIXL_SUCCESS);

  for (size_t i = 0; i < cbuf.size(); i++) cbuf[i] = static_cast<uint8_t>(i * 13 + 5);
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &op, 1000), HIXL_SUCCESS);
  EXPECT_TRUE(memcmp(sbuf.data() + 100, cbuf.data() + 50, 1000) == 0);
  EXPECT_EQ(sbuf[99], 0);
  memset(sbuf.data() + 4000, 0x77, 300);
  HixlOneSideOpDesc get{sbuf.data() + 4000, cbuf.data() + 7000, 300};
  EXPECT_EQ(HixlCSClientBatchGetSync(client, 1, &get, 1000), HIXL_SUCCESS);
  EXPECT_EQ(cbuf[7000], 0x77);
  EXPECT_EQ(cbuf[7299], 0x77);

  HixlOneSideOpDesc bad_null{nullptr, cbuf.data(), 16};
  HixlOneSideOpDesc bad_len{sbuf.data(), cbuf.data(), 0};
  HixlOneSideOpDesc bad_range{sbuf.data() + 8000, cbuf.data(), 300};
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &bad_null, 1000), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &bad_len, 1000), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSClientBatchGetSync(client, 1, &bad_range, 1000), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSClientBatchGetSync(client, 0, &get, 1000), HIXL_PARAM_INVALID);

  CompleteHandle ch = nullptr;
  memset(cbuf.data(), 0x42, 16);
  HixlOneSideOpDesc aput{sbuf.data() + 6000, cbuf.data(), 16};
  EXPECT_EQ(HixlCSClientBatchPutAsync(client, 1, &aput, &ch), HIXL_SUCCESS);
  HixlCompleteStatus st = HIXL_COMPLETE_STATUS_WAITING;
  EXPECT_EQ(HixlCSClientQueryCompleteStatus(client, ch, &st), HIXL_SUCCESS);
  EXPECT_TRUE(st == HIXL_COMPLETE_STATUS_COMPLETED);
  EXPECT_EQ(sbuf[6015], 0x42);
  EXPECT_EQ(HixlCSClientQueryCompleteStatus(client, ch, &st), HIXL_PARAM_INVALID);

  // the server drops memory the client still knows: the transfer fails, and the client refuses
  // every transfer after that
  EXPECT_EQ(HixlCSServerUnregMem(server, lmh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &to_later, 1000), HIXL_FAILED);
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &op, 1000), HIXL_FAILED);

  EXPECT_EQ(HixlCSClientUnregMem(client, nullptr), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSClientUnregMem(client, cmh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientUnregMem(client, cmh), HIXL_PARAM_INVALID);  // unknown now
  EXPECT_EQ(HixlCSClientDestroy(client), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerUnregMem(server, smh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerDestroy(server), HIXL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("HixlCSClientBatchPutSync"), 8);
}

// The process's mappings (lines of /proc/self/maps).
static int Mappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) n++;
  return n;
}

// A long-lived engine that peers link to and leave, again and again, keeps nothing of each link:
// the thread that served it is joined (an ended thread keeps its stack until then), so the
// process does not run out of mappings or address space.
static void TestManyLinks() {
  const std::string na = EngineName(aclsimClaimPort()), nb = EngineName(aclsimClaimPort());
  const AscendString rb(nb.c_str());
  std::map<AscendString, AscendString> options;
  Hixl a, b;
  EXPECT_EQ(a.Initialize(AscendString(na.c_str()), options), SUCCESS);
  EXPECT_EQ(b.Initialize(rb, options), SUCCESS);
  EXPECT_EQ(a.Connect(rb, 3000), SUCCESS);  // the first link's thread stacks are cached
  EXPECT_EQ(a.Disconnect(rb, 3000), SUCCESS);
  const int before = Mappings();
  const int kLinks = 150;
  for (int i = 0; i < kLinks; i++) {
    EXPECT_EQ(a.Connect(rb, 3000), SUCCESS);
    EXPECT_EQ(a.Disconnect(rb, 3000), SUCCESS);
  }
  // threads serving the last links may still be ending: give them a bounded while
  long long until = MonoMs() + 10000;
  while (Mappings() - before >= kLinks / 4 && MonoMs() < until) usleep(10000);
  EXPECT_TRUE(Mappings() - before < kLinks / 4);
  a.Finalize();
  b.Finalize();
}

// The client's local endpoint maps host memory for the device when it is on the device over
// UBOE, UB_RTP or UBC_CTP, UBC_CTP only toward a device remote endpoint (hixl/cs/endpoint.cc
// IsHostVaMappingEnabledForPair), through the ref-counted proxy (host_register_proxy.cc).
static HixlClientHandle UbClient(EndpointLocType remote_loc, EndpointDesc &local, EndpointDesc &remote) {
  EndpointDescInit(&local, 1);
  local.protocol = COMM_PROTOCOL_UBC_CTP;
  local.loc.locType = ENDPOINT_LOC_TYPE_DEVICE;
  local.loc.device.devPhyId = 0;
  remote = local;
  remote.loc.locType = remote_loc;
  HixlClientDesc cd{};
  cd.server_ip = "127.0.0.1";
  cd.server_port = static_cast<uint32_t>(RefusingPort());
  cd.local_endpoint = &local;
  cd.remote_endpoint = &remote;
  HixlClientConfig cfg;
  HixlClientHandle c = nullptr;
  EXPECT_EQ(HixlCSClientCreate(&cd, &cfg, &c), HIXL_SUCCESS);
  return c;
}

static void TestClientHostMapping() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *p = nullptr;
  EXPECT_EQ(aclrtMallocHost(&p, page), ACL_SUCCESS);
  CommMem host{COMM_MEM_TYPE_HOST, p, page};
  EndpointDesc local, remote;
  MemHandle h = nullptr, again = nullptr;
  const uint64_t reg0 = aclsimGetCallCount("aclrtHostRegister"), unreg0 = aclsimGetCallCount("aclrtHostUnregister");

  // toward a host endpoint: UBC_CTP maps nothing
  HixlClientHandle c = UbClient(ENDPOINT_LOC_TYPE_HOST, local, remote);
  EXPECT_EQ(HixlCSClientRegMem(c, "h", &host, &h), HIXL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("aclrtHostRegister"), reg0);
  EXPECT_EQ(HixlCSClientDestroy(c), HIXL_SUCCESS);

  // toward a device endpoint: one aclrtHostRegister; the refused repeat takes a reference that
  // only the client's destruction gives back
  c = UbClient(ENDPOINT_LOC_TYPE_DEVICE, local, remote);
  EXPECT_EQ(HixlCSClientRegMem(c, "h", &host, &h), HIXL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("aclrtHostRegister"), reg0 + 1);
  EXPECT_EQ(HixlCSClientRegMem(c, "h", &host, &again), HIXL_PARAM_INVALID);
  EXPECT_EQ(aclsimGetCallCount("aclrtHostRegister"), reg0 + 1);
  EXPECT_EQ(HixlCSClientUnregMem(c, h), HIXL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("aclrtHostUnregister"), unreg0);
  EXPECT_EQ(HixlCSClientDestroy(c), HIXL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("aclrtHostUnregister"), unreg0 + 1);
  EXPECT_EQ(aclrtFreeHost(p), ACL_SUCCESS);
}

// AutoConnect=1 (hixl_engine.cc:205-255, 385-420; adxl_inner_engine.cc:408-415, 486-491): the
// first transfer links, the link sees the peer's registrations of that moment, a failed transfer
// drops it and the next one links again; hixl_cs refuses its own name and passes a failed
// connection on; the comm engine ignores it and finds no link; AutoConnect=0 never links.
static void TestAutoConnect() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::string na = EngineName(aclsimClaimPort()), nb = EngineName(aclsimClaimPort());
  const std::string nobody = EngineName(RefusingPort());
  std::map<AscendString, AscendString> cs, cs_auto, comm_auto;
  cs[AscendString(OPTION_GLOBAL_RESOURCE_CONFIG)] = AscendString("{\"comm_resource_config.protocol_desc\": [\"roce:device\"]}");
  cs_auto = cs;
  cs_auto[AscendString(OPTION_AUTO_CONNECT)] = AscendString("1");
  comm_auto[AscendString(OPTION_AUTO_CONNECT)] = AscendString("1");
  comm_auto[AscendString(OPTION_BUFFER_POOL)] = AscendString("0:0");
  std::vector<uint8_t> la(page, 0x5a), rb(2 * page, 0);
  Hixl a, b, manual, comm;
  MemHandle h1 = nullptr, h2 = nullptr, h3 = nullptr, h4 = nullptr;
  EXPECT_EQ(a.Initialize(AscendString(na.c_str()), cs_auto), SUCCESS);
  EXPECT_EQ(b.Initialize(AscendString(nb.c_str()), cs), SUCCESS);
  EXPECT_EQ(a.RegisterMem(Desc(la.data(), page), MEM_HOST, h1), SUCCESS);
  EXPECT_EQ(b.RegisterMem(Desc(rb.data(), page), MEM_HOST, h2), SUCCESS);
  const AscendString rname(nb.c_str());
  TransferOpDesc first{reinterpret_cast<uintptr_t>(la.data()), reinterpret_cast<uintptr_t>(rb.data()), page};
  TransferOpDesc second{reinterpret_cast<uintptr_t>(la.data()), reinterpret_cast<uintptr_t>(rb.data() + page), page};
  EXPECT_EQ(a.TransferSync(AscendString(na.c_str()), WRITE, {first}), PARAM_INVALID);  // itself
  EXPECT_EQ(a.TransferSync(rname, WRITE, {first}), SUCCESS);  // linked by the transfer
  EXPECT_TRUE(Bytes(rb.data(), page) == la);
  EXPECT_EQ(a.Connect(rname), ALREADY_CONNECTED);
  // registered after the link: refused by it, and the failure drops the link
  EXPECT_EQ(b.RegisterMem(Desc(rb.data() + page, page), MEM_HOST, h3), SUCCESS);
  EXPECT_EQ(a.TransferSync(rname, WRITE, {second}), PARAM_INVALID);
  EXPECT_EQ(a.Disconnect(rname), NOT_CONNECTED);
  EXPECT_EQ(a.TransferSync(rname, WRITE, {second}), SUCCESS);  // a new link sees it
  EXPECT_TRUE(Bytes(rb.data() + page, page) == la);
  TransferReq req = nullptr;
  TransferStatus st = TransferStatus::WAITING;
  EXPECT_EQ(a.Disconnect(rname), SUCCESS);
  EXPECT_EQ(a.TransferAsync(rname, READ, {first}, TransferArgs{}, req), SUCCESS);  // async links too
  EXPECT_EQ(a.GetTransferStatus(req, st), SUCCESS);
  EXPECT_TRUE(st == TransferStatus::COMPLETED);
  EXPECT_EQ(a.TransferSync(AscendString(nobody.c_str()), WRITE, {first}), FAILED);  // the connection's code
  // AutoConnect off: no link, no connection
  EXPECT_EQ(manual.Initialize(AscendString("127.0.0.1"), cs), SUCCESS);
  EXPECT_EQ(manual.RegisterMem(Desc(la.data(), page), MEM_HOST, h4), SUCCESS);
  EXPECT_EQ(manual.TransferSync(rname, WRITE, {first}), NOT_CONNECTED);
  // the comm engine: links too, and where nothing listens finds no link
  EXPECT_EQ(comm.Initialize(AscendString("127.0.0.1"), comm_auto), SUCCESS);
  EXPECT_EQ(comm.TransferSync(AscendString(nobody.c_str()), WRITE, {first}), NOT_CONNECTED);
  EXPECT_EQ(a.Disconnect(rname), SUCCESS);
}

int main() {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 3;
  TestLayout();
  TestEngines();
  TestClientServer();
  TestManyLinks();
  TestClientHostMapping();
  TestAutoConnect();
  return CHECK_DONE();
}
