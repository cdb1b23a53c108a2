// The simulated HIXL library: hixl::Hixl's checks and codes, a two-engine transfer with byte
// verification (host, device and MAPPED device memory), async calls, notifies, and the HixlCS
// C API. Run bare against the simulator.
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <vector>

#include "acl/acl.h"
#include "aclsim.h"
#include "check.h"
#include "cs/hixl_cs.h"
#include "hixl/hixl.h"

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

static void TestEngines() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::map<AscendString, AscendString> options;
  options[AscendString(OPTION_BUFFER_POOL)] = AscendString("0:0");

  Hixl a, b, dup, lonely;
  MemHandle h = nullptr;
  void *ha = nullptr, *hb = nullptr;
  EXPECT_EQ(aclrtMallocHost(&ha, 4 * page), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocHost(&hb, 4 * page), ACL_SUCCESS);

  // ---- before Initialize ----
  EXPECT_EQ(a.RegisterMem(Desc(ha, page), MEM_HOST, h), FAILED);
  EXPECT_EQ(a.Connect(AscendString("b")), FAILED);
  EXPECT_EQ(a.DeregisterMem(nullptr), PARAM_INVALID);

  uint64_t ctx_calls = aclsimGetCallCount("aclrtGetCurrentContext");
  EXPECT_EQ(a.Initialize(AscendString("10.0.0.1:26000"), options), SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("aclrtGetCurrentContext"), ctx_calls + 1);  // through the PLT
  EXPECT_EQ(b.Initialize(AscendString("10.0.0.2:26000"), options), SUCCESS);
  EXPECT_EQ(dup.Initialize(AscendString("10.0.0.1:26000"), options), PARAM_INVALID);
  EXPECT_EQ(lonely.Initialize(AscendString("lonely"), options), SUCCESS);

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
  EXPECT_EQ(b.RegisterMem(Desc(hb, 4 * page), MEM_HOST, hb_h), SUCCESS);

  // device memory on b, and a's MAPPED device address of a host buffer on b
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
  EXPECT_EQ(a.Connect(AscendString("nobody"), 100), TIMEOUT);
  EXPECT_EQ(a.Connect(AscendString("10.0.0.2:26000"), 1000), SUCCESS);
  EXPECT_EQ(a.Connect(AscendString("10.0.0.2:26000"), 1000), ALREADY_CONNECTED);

  // ---- TransferSync checks ----
  const AscendString rb("10.0.0.2:26000");
  uintptr_t la = reinterpret_cast<uintptr_t>(ha), rbuf = reinterpret_cast<uintptr_t>(hb);
  std::vector<TransferOpDesc> ops{{la, rbuf, page}};
  EXPECT_EQ(a.TransferSync(rb, WRITE, ops, 0), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(AscendString("lonely"), WRITE, ops, 1000), NOT_CONNECTED);
  EXPECT_EQ(b.TransferSync(AscendString("10.0.0.1:26000"), WRITE, ops, 1000), NOT_CONNECTED);  // per side
  std::vector<TransferOpDesc> bad0{{0, rbuf, 16}};
  std::vector<TransferOpDesc> bad1{{la, 0, 16}};
  std::vector<TransferOpDesc> bad2{{la, rbuf, 0}};
  std::vector<TransferOpDesc> bad3{{la + 3 * page, rbuf, 2 * page}};  // local range leaves the registration
  std::vector<TransferOpDesc> bad4{{la, rbuf + 4 * page, 16}};        // remote range not registered
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad0, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad1, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad2, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, WRITE, bad3, 1000), PARAM_INVALID);
  EXPECT_EQ(a.TransferSync(rb, READ, bad4, 1000), PARAM_INVALID);

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

  // ---- TransferAsync / GetTransferStatus ----
  memset(hb, 0x11, 64);
  TransferArgs args;
  args.user_data = &args;
  TransferReq req = nullptr;
  std::vector<TransferOpDesc> ar{{la + 2 * page, rbuf, 64}};
  EXPECT_EQ(a.TransferAsync(rb, READ, ar, args, req), SUCCESS);
  EXPECT_TRUE(req != nullptr);
  EXPECT_EQ(static_cast<uint8_t *>(ha)[2 * page + 63], 0x11);
  TransferStatus ts = TransferStatus::WAITING;
  EXPECT_EQ(a.GetTransferStatus(req, ts), SUCCESS);
  EXPECT_TRUE(ts == TransferStatus::COMPLETED);
  EXPECT_EQ(a.GetTransferStatus(req, ts), PARAM_INVALID);
  EXPECT_EQ(a.TransferAsync(rb, WRITE, ar, args, req), SUCCESS);
  std::vector<TransferResult> results;
  EXPECT_EQ(a.GetTransferStatus(GetTransferStatusArgs(), results), SUCCESS);
  EXPECT_EQ(results.size(), 1);
  EXPECT_TRUE(results.size() == 1 && results[0].req == req && results[0].user_data == &args &&
              results[0].status == TransferStatus::COMPLETED);
  EXPECT_EQ(a.TransferAsync(AscendString("lonely"), WRITE, ar, args, req), NOT_CONNECTED);

  // ---- ConnectAsync / GetAsyncConnectStatus ----
  AsyncConnectStatus cs = AsyncConnectStatus::CONNECTING;
  EXPECT_EQ(b.GetAsyncConnectStatus(AscendString("10.0.0.1:26000"), cs), SUCCESS);
  EXPECT_TRUE(cs == AsyncConnectStatus::NOT_CONNECT);
  EXPECT_EQ(b.ConnectAsync(AscendString("10.0.0.1:26000")), SUCCESS);
  EXPECT_EQ(b.GetAsyncConnectStatus(AscendString("10.0.0.1:26000"), cs), SUCCESS);
  EXPECT_TRUE(cs == AsyncConnectStatus::CONNECTED);
  EXPECT_EQ(b.ConnectAsync(AscendString("ghost")), SUCCESS);
  EXPECT_EQ(b.GetAsyncConnectStatus(AscendString("ghost"), cs), SUCCESS);
  EXPECT_TRUE(cs == AsyncConnectStatus::CONNECT_FAILED);
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
  EXPECT_EQ(lonely.SendNotify(rb, nd), NOT_CONNECTED);

  int32_t cap = -1;
  EXPECT_EQ(Hixl::GetCapability(CLIENT_SERVER_COMM, cap), SUCCESS);
  EXPECT_EQ(cap, 1);
  EXPECT_EQ(Hixl::GetCapability(static_cast<FeatureType>(99), cap), SUCCESS);
  EXPECT_EQ(cap, 0);

  // ---- DeregisterMem while links are up ----
  EXPECT_EQ(a.DeregisterMem(ha_h), FAILED);
  EXPECT_EQ(b.DeregisterMem(hb_h), FAILED);  // b has a link to a, and a one to b
  EXPECT_EQ(a.Disconnect(rb), SUCCESS);
  EXPECT_EQ(a.Disconnect(rb), NOT_CONNECTED);
  EXPECT_EQ(a.DeregisterMem(ha_h), FAILED);  // b's link to a is still up
  EXPECT_EQ(b.DisconnectAsync(AscendString("10.0.0.1:26000")), SUCCESS);
  EXPECT_EQ(a.DeregisterMem(ha_h), SUCCESS);
  EXPECT_EQ(a.DeregisterMem(ha_h), SUCCESS);
  EXPECT_EQ(b.DeregisterMem(hb_h), SUCCESS);

  // ---- Finalize ----
  EXPECT_EQ(a.Connect(rb), SUCCESS);
  uint64_t fin = aclsimGetCallCount("Hixl::Finalize");
  a.Finalize();
  EXPECT_EQ(aclsimGetCallCount("Hixl::Finalize"), fin + 1);
  EXPECT_EQ(a.RegisterMem(Desc(ha, page), MEM_HOST, h), FAILED);
  EXPECT_EQ(a.TransferSync(rb, WRITE, ops, 1000), FAILED);
  EXPECT_EQ(dup.Initialize(AscendString("10.0.0.1:26000"), options), SUCCESS);  // the name is free again
  EXPECT_EQ(b.DeregisterMem(dev_h), SUCCESS);

  EXPECT_EQ(aclrtHostUnregister(mapped_host), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(mapped_host), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(ha), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(hb), ACL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("Hixl::Hixl"), 4);
}

static void TestClientServer() {
  std::vector<uint8_t> sbuf(8192, 0), cbuf(8192, 0);
  HixlServerDesc sd{};
  sd.server_ip = "127.0.0.1";
  sd.server_port = 16000;
  HixlServerHandle server = nullptr;
  EXPECT_EQ(HixlCSServerCreate(nullptr, nullptr, &server), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSServerCreate(&sd, nullptr, &server), HIXL_SUCCESS);
  CommMem smem{COMM_MEM_TYPE_HOST, sbuf.data(), sbuf.size()};
  MemHandle smh = nullptr, smh2 = nullptr, tmp = nullptr;
  EXPECT_EQ(HixlCSServerRegMem(server, "kv", &smem, &smh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerRegMem(server, "kv", &smem, &smh2), HIXL_SUCCESS);
  EXPECT_TRUE(smh == smh2);
  CommMem null_mem{COMM_MEM_TYPE_HOST, nullptr, 16};
  EXPECT_EQ(HixlCSServerRegMem(server, "x", &null_mem, &tmp), HIXL_PARAM_INVALID);
  CommMem part{COMM_MEM_TYPE_HOST, sbuf.data() + 16, 16};
  EXPECT_EQ(HixlCSServerRegMem(server, "x", &part, &tmp), HIXL_PARAM_INVALID);

  HixlClientDesc cd{};
  cd.server_ip = "127.0.0.1";
  cd.server_port = 16000;
  HixlClientHandle client = nullptr;
  EXPECT_EQ(HixlCSClientCreate(&cd, nullptr, &client), HIXL_SUCCESS);
  CommMem cmem{COMM_MEM_TYPE_HOST, cbuf.data(), cbuf.size()};
  MemHandle cmh = nullptr;
  EXPECT_EQ(HixlCSClientRegMem(client, "local", &cmem, &cmh), HIXL_SUCCESS);
  HixlOneSideOpDesc op{sbuf.data() + 100, cbuf.data() + 50, 1000};
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &op, 1000), HIXL_FAILED);  // not connected
  EXPECT_EQ(HixlCSClientConnect(client, 100), HIXL_TIMEOUT);               // not listening yet
  EXPECT_EQ(HixlCSServerListen(server, 16), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientConnect(client, 100), HIXL_SUCCESS);

  CommMem *remote = nullptr;
  char **tags = nullptr;
  uint32_t n = 0;
  EXPECT_EQ(HixlCSClientGetRemoteMem(client, &remote, &tags, &n, 100), HIXL_SUCCESS);
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(n == 1 && remote[0].addr == sbuf.data() && strcmp(tags[0], "kv") == 0);

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

  EXPECT_EQ(HixlCSClientUnregMem(client, nullptr), HIXL_PARAM_INVALID);
  EXPECT_EQ(HixlCSClientUnregMem(client, cmh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientUnregMem(client, cmh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSClientBatchPutSync(client, 1, &op, 1000), HIXL_PARAM_INVALID);  // local gone
  EXPECT_EQ(HixlCSClientDestroy(client), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerUnregMem(server, smh), HIXL_SUCCESS);
  EXPECT_EQ(HixlCSServerDestroy(server), HIXL_SUCCESS);
  EXPECT_EQ(aclsimGetCallCount("HixlCSClientBatchPutSync"), 5);
}

int main() {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 3;
  TestLayout();
  TestEngines();
  TestClientServer();
  return CHECK_DONE();
}
