// The ADXL rows of docs/conformance.md: one function per row ID, each the public call sequence of
// a vendor unit test of adxl::AdxlEngine (hicann/hixl tests/cpp/adxl/..., cited per function),
// returning the code the row states. Intermediate steps are checked too: a step that answers
// otherwise makes the row return kStepFailed (and says which on stderr). The vendor's tests mock
// the devices and HCCL (their memory is int32 variables and vectors registered as device
// memory); the simulator's engines move the bytes over loopback, so the same calls run unmocked.
//
//   conformance_adxl list        the row IDs, one a line
//   conformance_adxl <ROW-ID>    runs the row: "result=<code>" on stdout
// ExportToShareableHandle exists after 9.1.0 only (hicann/hixl 6d1c2b6): declared weak, as Mooncake
// declares it, so that the program links against the simulator's 9.1.0 install root too (its rows
// that call the member run against the 9.2.0 root: docs/conformance.md says which).
#define ACLSIM_ADXL_AFTER_9_1 __attribute__((weak))

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"
#include "conformance_util.h"
#include "hixl_test_util.h"

namespace {

using namespace adxl;

using Options = std::map<AscendString, AscendString>;

MemDesc Desc(const void *p, size_t len) {
  MemDesc d{};
  d.addr = reinterpret_cast<uintptr_t>(p);
  d.len = len;
  return d;
}

TransferOpDesc Op(const void *local, const void *remote, size_t len) {
  return TransferOpDesc{reinterpret_cast<uintptr_t>(local), reinterpret_cast<uintptr_t>(remote), len};
}

std::string Listening() { return EngineName(aclsimClaimPort()); }

// The options of the vendor's SetupEngines: traffic class, service level, the pool off.
Options TcSlNoPool() {
  Options o;
  o[OPTION_RDMA_TRAFFIC_CLASS] = "4";
  o[OPTION_RDMA_SERVICE_LEVEL] = "1";
  o[OPTION_BUFFER_POOL] = "0:0";
  return o;
}

// adxl_engine_unittest.cc BuildHixlCsOptions: a LocalCommRes with version 1.3.
Options HixlCsOptions() {
  Options o;
  o[OPTION_LOCAL_COMM_RES] =
      R"({"net_instance_id": "superpod", "endpoint_list": [{"protocol": "roce", "comm_id": "127.0.0.1", )"
      R"("placement": "host"}, {"protocol": "ub_ctp", "comm_id": "000000000000000000000000c0a80463", )"
      R"("placement": "device", "dst_eid": "000000000000000000000000c0a80563"}], "version": "1.3"})";
  return o;
}

// Which engine the options chose, seen through the public API: an empty TransferSync to an engine
// not linked answers PARAM_INVALID on the comm engine (comm_engine.cc: the op list first) and
// NOT_CONNECTED on hixl_cs (its link first).
uint32_t EngineKindProbe(const Options &o) {
  AdxlEngine e;
  STEP(e.Initialize("127.0.0.1", o), SUCCESS);
  return e.TransferSync(EngineName(RefusingPort()).c_str(), READ, {});
}

// Two engines as the vendor's SetupEngines / SetupEnginesOnPorts: engine 1 on device 0, engine 2
// (listening) on device 1; `a_listens` gives engine 1 a port too.
struct Two {
  AdxlEngine a, b;
  std::string na = "127.0.0.1", nb = Listening();
  int32_t src = 1, dst = 2;
  MemHandle ha = nullptr, hb = nullptr;
  uint32_t Init(const Options &oa, const Options &ob, bool a_listens = false) {
    if (a_listens) na = Listening();
    STEP(aclrtSetDevice(0), 0);
    STEP(a.Initialize(na.c_str(), oa), SUCCESS);
    STEP(aclrtSetDevice(1), 0);
    STEP(b.Initialize(nb.c_str(), ob), SUCCESS);
    STEP(aclrtSetDevice(0), 0);
    return SUCCESS;
  }
  // SetupInt32ConnectedEngines: the int32s registered, engine 1 linked to engine 2.
  uint32_t Int32Connected(const Options &oa = TcSlNoPool(), const Options &ob = Options()) {
    STEP(Init(oa, ob), SUCCESS);
    STEP(a.RegisterMem(Desc(&src, sizeof src), MEM_DEVICE, ha), SUCCESS);
    STEP(b.RegisterMem(Desc(&dst, sizeof dst), MEM_DEVICE, hb), SUCCESS);
    STEP(a.Connect(nb.c_str()), SUCCESS);
    return SUCCESS;
  }
  TransferOpDesc IntOp() { return Op(&src, &dst, sizeof src); }
  // CleanupEngine
  uint32_t Cleanup() {
    STEP(a.Disconnect(nb.c_str()), SUCCESS);
    STEP(a.DeregisterMem(ha), SUCCESS);
    STEP(b.DeregisterMem(hb), SUCCESS);
    a.Finalize();
    b.Finalize();
    return SUCCESS;
  }
};

// Three engines on ports (the third on device 2), 1 and 3 linked to 2.
uint32_t ThreeLinked(Two &t, AdxlEngine &c) {
  STEP(t.Init(Options(), Options(), true), SUCCESS);
  STEP(aclrtSetDevice(2), 0);
  STEP(c.Initialize(Listening().c_str(), Options()), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  STEP(c.Connect(t.nb.c_str()), SUCCESS);
  return SUCCESS;
}

bool AllEq(const std::vector<int8_t> &v, int8_t x) {
  for (int8_t c : v)
    if (c != x) return false;
  return true;
}

std::vector<TransferOpDesc> Blocks(std::vector<int8_t> &src, std::vector<int8_t> &dst, size_t block, size_t n) {
  std::vector<TransferOpDesc> ops;
  for (size_t i = 0; i < n; i++) ops.push_back(Op(src.data() + i * block, dst.data() + i * block, block));
  return ops;
}

uint32_t WaitDone(AdxlEngine &e, TransferReq req, TransferStatus &status) {
  status = TransferStatus::WAITING;
  for (int i = 0; i < 100 && status == TransferStatus::WAITING; i++) {
    Status rc = e.GetTransferStatus(req, status);
    if (rc != SUCCESS) return rc;
    if (status == TransferStatus::WAITING) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return SUCCESS;
}

NotifyDesc Notify(int i) {
  NotifyDesc n;
  n.name = AscendString(("test_notify" + std::to_string(i)).c_str());
  n.notify_msg = AscendString(("message " + std::to_string(i)).c_str());
  return n;
}

// ---- adxl_engine_unittest.cc ----

// adxl_engine_unittest.cc:234 TestEngineFactoryFallbackToAdxlEngineWithoutLocalCommRes: traffic
// class and service level only -> the comm engine.
uint32_t C01() {
  Options o;
  o[OPTION_RDMA_TRAFFIC_CLASS] = "4";
  o[OPTION_RDMA_SERVICE_LEVEL] = "1";
  return EngineKindProbe(o);
}

// adxl_engine_unittest.cc:246 TestEngineFactoryUseHixlEngineWithLocalCommRes: version 1.3 -> hixl_cs.
uint32_t C02() { return EngineKindProbe(HixlCsOptions()); }

// adxl_engine_unittest.cc:255 TestEngineFactoryUseHixlEngineWhenUboeNotFirstInProtocolDesc: a
// protocol_desc -> hixl_cs.
uint32_t C03() {
  Options o;
  o["GlobalResourceConfig"] = R"({"comm_resource_config.protocol_desc": ["roce:device", "uboe:device"]})";
  return EngineKindProbe(o);
}

// adxl_engine_unittest.cc:270 TestAdxlEngine: READ then WRITE between registered int32s, Disconnect,
// DeregisterMem, Finalize.
uint32_t C04() {
  Two t;
  Options oa;
  oa[OPTION_RDMA_TRAFFIC_CLASS] = "4";
  oa[OPTION_RDMA_SERVICE_LEVEL] = "1";
  STEP(t.Int32Connected(oa), SUCCESS);
  STEP(t.a.TransferSync(t.nb.c_str(), READ, {t.IntOp()}), SUCCESS);
  STEP(t.src, 2);
  t.src = 1;
  STEP(t.a.TransferSync(t.nb.c_str(), WRITE, {t.IntOp()}), SUCCESS);
  STEP(t.dst, 1);
  return t.Cleanup();
}

// adxl_engine_unittest.cc:312 TestConnectStatisticForDirectTransfer: the calls around the
// statistics (the statistics themselves are internal: not simulated).
uint32_t C05() {
  Two t;
  STEP(t.Int32Connected(), SUCCESS);
  return t.Cleanup();
}

// adxl_engine_unittest.cc:321 TestConnectStatisticForBufferMode: engine 1 with a 4 x 8 MiB pool.
uint32_t C06() {
  Two t;
  Options oa;
  oa[OPTION_BUFFER_POOL] = "4:8";
  STEP(t.Init(oa, Options(), true), SUCCESS);
  STEP(t.a.RegisterMem(Desc(&t.src, sizeof t.src), MEM_DEVICE, t.ha), SUCCESS);
  STEP(t.b.RegisterMem(Desc(&t.dst, sizeof t.dst), MEM_DEVICE, t.hb), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  return t.Cleanup();
}

// adxl_engine_unittest.cc:344 TestServerStatisticUsesPeerChannelId: engines 1 and 3 both link to 2.
uint32_t C07() {
  Two t;
  AdxlEngine c;
  STEP(ThreeLinked(t, c), SUCCESS);
  STEP(t.a.Disconnect(t.nb.c_str()), SUCCESS);
  return c.Disconnect(t.nb.c_str());
}

// adxl_engine_unittest.cc:380 TestEngineFactoryCreateEngineFailedWhenLocalCommResJsonInvalid: no
// engine is made, so Initialize fails (adxl_engine_impl.cc:109).
uint32_t C08() {
  Options o;
  o[OPTION_LOCAL_COMM_RES] = "{invalid json}";
  AdxlEngine e;
  return e.Initialize("127.0.0.1", o);
}

// adxl_engine_unittest.cc:389 TestAdxlEngineApisReturnFailedBeforeInitialize: eight members before
// Initialize, each FAILED (the last one's code returned).
uint32_t C09() {
  AdxlEngine e;
  int32_t src = 1;
  MemHandle h = nullptr;
  TransferReq req = nullptr;
  std::vector<NotifyDesc> got;
  const char *peer = "127.0.0.1:28101";
  STEP(e.RegisterMem(Desc(&src, sizeof src), MEM_DEVICE, h), FAILED);
  STEP(e.DeregisterMem(reinterpret_cast<MemHandle>(0x1)), FAILED);
  STEP(e.Connect(peer), FAILED);
  STEP(e.Disconnect(peer), FAILED);
  STEP(e.TransferSync(peer, WRITE, {Op(&src, &src, sizeof src)}), FAILED);
  STEP(e.TransferAsync(peer, WRITE, {Op(&src, &src, sizeof src)}, {}, req), FAILED);
  STEP(e.SendNotify(peer, Notify(0)), FAILED);
  return e.GetNotifies(got);
}

// adxl_engine_unittest.cc:413 TestAdxlEngineInitFailed: "ad.0.0.1:28100" is not an IP address.
uint32_t C10() {
  AdxlEngine e;
  return e.Initialize("ad.0.0.1:28100", Options());
}

// adxl_engine_unittest.cc:420 TestConnectNotListenFailed: nothing listens on the peer's port.
uint32_t C11() {
  AdxlEngine e;
  STEP(e.Initialize(Listening().c_str(), Options()), SUCCESS);
  return e.Connect(EngineName(RefusingPort()).c_str());
}

// adxl_engine_unittest.cc:428 TestAlreadyConnectedFailed: Connect twice; the second.
uint32_t C12() {
  Two t;
  STEP(t.Init(Options(), Options()), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  return t.a.Connect(t.nb.c_str());
}

// adxl_engine_unittest.cc:444 TestDeregisterUnregisterMem: a handle never returned (0x100).
uint32_t C13() {
  AdxlEngine e;
  STEP(e.Initialize("127.0.0.1", Options()), SUCCESS);
  return e.DeregisterMem(reinterpret_cast<MemHandle>(0x100));
}

// adxl_engine_unittest.cc:454 TestHeartbeat: linked twice (ALREADY_CONNECTED), a READ through the
// pool (nothing registered, default pool), Finalize without Disconnect, then a new engine of the
// same name links again (the heartbeat timings are internal: not simulated).
uint32_t C14() {
  Two t;
  STEP(t.Init(Options(), Options()), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), ALREADY_CONNECTED);
  STEP(t.a.TransferSync(t.nb.c_str(), READ, {t.IntOp()}), SUCCESS);
  STEP(t.src, 2);
  t.a.Finalize();
  AdxlEngine c;
  STEP(c.Initialize("127.0.0.1", Options()), SUCCESS);
  STEP(c.Connect(t.nb.c_str()), SUCCESS);
  c.Finalize();
  t.b.Finalize();
  return SUCCESS;
}

// H2H through both engines' 4 x 8 MiB pools: 16 MiB unregistered on both sides, READ and WRITE as
// one op and as 64 ops of 256 KiB (adxl_engine_unittest.cc:488, test_adxl_engine_api.cc:239).
uint32_t HostToHostWithBuffer(bool write_blocks_first) {
  Two t;
  Options oa = TcSlNoPool(), ob;
  oa[OPTION_BUFFER_POOL] = "4:8";
  ob[OPTION_BUFFER_POOL] = "4:8";
  STEP(t.Init(oa, ob), SUCCESS);
  const size_t size = 16u << 20;
  std::vector<int8_t> src(size, 1), dst(size, 2);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  const char *nb = t.nb.c_str();
  STEP(t.a.TransferSync(nb, READ, {Op(src.data(), dst.data(), size)}), SUCCESS);
  STEP(AllEq(src, 2), true);
  src.assign(size, 1);
  STEP(t.a.TransferSync(nb, WRITE, {Op(src.data(), dst.data(), size)}), SUCCESS);
  STEP(AllEq(dst, 1), true);
  auto ops = Blocks(src, dst, 256u << 10, 64);
  if (write_blocks_first) {
    STEP(t.a.TransferSync(nb, WRITE, ops), SUCCESS);
    STEP(AllEq(dst, 1), true);
    dst.assign(size, 2);
    STEP(t.a.TransferSync(nb, READ, ops), SUCCESS);
    STEP(AllEq(src, 2), true);
  } else {
    dst.assign(size, 2);
    STEP(t.a.TransferSync(nb, READ, ops), SUCCESS);
    STEP(AllEq(src, 2), true);
    src.assign(size, 1);
    STEP(t.a.TransferSync(nb, WRITE, ops), SUCCESS);
    STEP(AllEq(dst, 1), true);
  }
  return t.a.Disconnect(nb);
}

// adxl_engine_unittest.cc:488 TestAdxlEngineH2HWithBuffer.
uint32_t C15() { return HostToHostWithBuffer(false); }

// The peer's 16 MiB registered as device memory, the local one not: READ (and WRITE) through the
// local pool (adxl_engine_unittest.cc:520, test_adxl_engine_api.cc:293).
uint32_t RemoteDeviceWithBuffer(bool with_writes) {
  Two t;
  Options oa = TcSlNoPool(), ob;
  oa[OPTION_BUFFER_POOL] = "4:8";
  ob[OPTION_BUFFER_POOL] = "4:8";
  STEP(t.Init(oa, ob), SUCCESS);
  const size_t size = 16u << 20;
  std::vector<int8_t> src(size, 1), dst(size, 2);
  STEP(t.b.RegisterMem(Desc(dst.data(), size), MEM_DEVICE, t.hb), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  const char *nb = t.nb.c_str();
  STEP(t.a.TransferSync(nb, READ, {Op(src.data(), dst.data(), size)}), SUCCESS);
  STEP(AllEq(src, 2), true);
  if (with_writes) {
    src.assign(size, 1);
    STEP(t.a.TransferSync(nb, WRITE, {Op(src.data(), dst.data(), size)}), SUCCESS);
    STEP(AllEq(dst, 1), true);
  }
  dst.assign(size, 2);
  STEP(t.a.TransferSync(nb, READ, Blocks(src, dst, 256u << 10, 64)), SUCCESS);
  STEP(AllEq(src, 2), true);
  if (with_writes) {
    src.assign(size, 1);
    STEP(t.a.TransferSync(nb, WRITE, {Op(src.data(), dst.data(), size)}), SUCCESS);
    STEP(AllEq(dst, 1), true);
  }
  STEP(t.a.Disconnect(nb), SUCCESS);
  return t.b.DeregisterMem(t.hb);
}

// adxl_engine_unittest.cc:520 TestAdxlEngineRD2HWithBuffer.
uint32_t C16() { return RemoteDeviceWithBuffer(false); }

// adxl_engine_unittest.cc:551 TestAdxlEngineTransferAsync: an async READ completes; its request
// asked again is unknown (PARAM_INVALID, status FAILED); an async WRITE completes.
uint32_t C17() {
  Two t;
  STEP(t.Int32Connected(), SUCCESS);
  TransferReq req = nullptr;
  TransferStatus status = TransferStatus::WAITING;
  STEP(t.a.TransferAsync(t.nb.c_str(), READ, {t.IntOp()}, {}, req), SUCCESS);
  STEP(WaitDone(t.a, req, status), SUCCESS);
  STEP(static_cast<int>(status), static_cast<int>(TransferStatus::COMPLETED));
  STEP(t.src, 2);
  STEP(t.a.GetTransferStatus(req, status), PARAM_INVALID);
  STEP(static_cast<int>(status), static_cast<int>(TransferStatus::FAILED));
  t.src = 1;
  STEP(t.a.TransferAsync(t.nb.c_str(), WRITE, {t.IntOp()}, {}, req), SUCCESS);
  STEP(WaitDone(t.a, req, status), SUCCESS);
  STEP(static_cast<int>(status), static_cast<int>(TransferStatus::COMPLETED));
  STEP(t.dst, 1);
  return t.Cleanup();
}

// adxl_engine_unittest.cc:585 TestAdxlEngineTransferAsyncWithMultiThread: 20 threads each start an
// async WRITE; every request completes.
uint32_t C18() {
  Two t;
  STEP(t.Int32Connected(), SUCCESS);
  constexpr int kThreads = 20;
  TransferReq reqs[kThreads] = {};
  Status rcs[kThreads] = {};
  std::vector<std::thread> threads;
  TransferOpDesc op = t.IntOp();
  for (int i = 0; i < kThreads; i++)
    threads.emplace_back([&, i]() { rcs[i] = t.a.TransferAsync(t.nb.c_str(), WRITE, {op}, {}, reqs[i]); });
  for (auto &th : threads) th.join();
  for (int i = 0; i < kThreads; i++) {
    STEP(rcs[i], SUCCESS);
    TransferStatus status = TransferStatus::WAITING;
    STEP(WaitDone(t.a, reqs[i], status), SUCCESS);
    STEP(static_cast<int>(status), static_cast<int>(TransferStatus::COMPLETED));
  }
  return t.Cleanup();
}

// adxl_engine_unittest.cc:606 TestAdxlEngineGetTransferStatusFalied: a NULL request (FAILED), then
// a request never returned (PARAM_INVALID).
uint32_t C19() {
  Two t;
  STEP(t.Init(Options(), Options()), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  TransferStatus status;
  TransferReq req = nullptr;
  STEP(t.a.GetTransferStatus(req, status), FAILED);
  std::vector<char> fake(64);
  req = fake.data();
  Status rc = t.a.GetTransferStatus(req, status);
  STEP(t.a.Disconnect(t.nb.c_str()), SUCCESS);
  return rc;
}

// adxl_engine_unittest.cc:632 GetTransferStatusBeforeInitializeReturnsFailed.
uint32_t C20() {
  AdxlEngine e;
  TransferStatus status = TransferStatus::WAITING;
  return e.GetTransferStatus(reinterpret_cast<TransferReq>(0x1), status);
}

// adxl_engine_unittest.cc:640 GetTransferStatusAfterFinalizeReturnsFailed.
uint32_t C21() {
  AdxlEngine e;
  STEP(e.Initialize("127.0.0.1", Options()), SUCCESS);
  e.Finalize();
  TransferStatus status = TransferStatus::WAITING;
  return e.GetTransferStatus(reinterpret_cast<TransferReq>(0x1), status);
}

// adxl_engine_unittest.cc:652 TestAdxlGetTransferStatusWithInterrupt: an async WRITE, then
// Disconnect; its status: the link is gone.
uint32_t C22() {
  Two t;
  STEP(t.Int32Connected(), SUCCESS);
  TransferReq req = nullptr;
  STEP(t.a.TransferAsync(t.nb.c_str(), WRITE, {t.IntOp()}, {}, req), SUCCESS);
  (void)t.a.Disconnect(t.nb.c_str());
  TransferStatus status = TransferStatus::WAITING;
  return t.a.GetTransferStatus(req, status);
}

// Engine 1 sends `count` notifies to engine 2 (both on ports, linked); after 100 ms engine 2 has them.
uint32_t SendAndCount(int count, size_t want) {
  Two t;
  STEP(t.Init(Options(), Options(), true), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  for (int i = 0; i < count; i++) STEP(t.a.SendNotify(t.nb.c_str(), Notify(i)), SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<NotifyDesc> got;
  STEP(t.b.GetNotifies(got), SUCCESS);
  STEP(got.size(), want);
  for (size_t i = 0; i < got.size(); i++) {
    STEP(std::string(got[i].name.GetString()) == "test_notify" + std::to_string(i), true);
    STEP(std::string(got[i].notify_msg.GetString()) == "message " + std::to_string(i), true);
  }
  return t.a.Disconnect(t.nb.c_str());
}

// adxl_engine_unittest.cc:666 TestAdxlEngineSendGetNotifies: five notifies arrive, in order.
uint32_t C23() { return SendAndCount(5, 5); }

// adxl_engine_unittest.cc:680 TestAdxlEngineMultiGetNotifies: a second GetNotifies finds none.
uint32_t C24() {
  Two t;
  STEP(t.Init(Options(), Options(), true), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  for (int i = 0; i < 5; i++) STEP(t.a.SendNotify(t.nb.c_str(), Notify(i)), SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<NotifyDesc> got;
  STEP(t.b.GetNotifies(got), SUCCESS);
  STEP(got.size(), 5u);
  std::vector<NotifyDesc> again;
  STEP(t.b.GetNotifies(again), SUCCESS);
  STEP(again.size(), 0u);
  return t.a.Disconnect(t.nb.c_str());
}

// adxl_engine_unittest.cc:697 TestAdxlEngineMultiSendNotifies: engines 1 and 3 send five each to 2.
uint32_t C25() {
  Two t;
  AdxlEngine c;
  STEP(ThreeLinked(t, c), SUCCESS);
  for (int i = 0; i < 5; i++) {
    STEP(t.a.SendNotify(t.nb.c_str(), Notify(i)), SUCCESS);
    STEP(c.SendNotify(t.nb.c_str(), Notify(i)), SUCCESS);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<NotifyDesc> got;
  STEP(t.b.GetNotifies(got), SUCCESS);
  STEP(got.size(), 10u);
  STEP(t.a.Disconnect(t.nb.c_str()), SUCCESS);
  return c.Disconnect(t.nb.c_str());
}

// adxl_engine_unittest.cc:761 TestAdxlEngineSendNotifyNameTooLong: a 2000-character name.
uint32_t C26() {
  Two t;
  STEP(t.Init(Options(), Options(), true), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  NotifyDesc n;
  n.name = AscendString(std::string(2000, 'a').c_str());
  n.notify_msg = AscendString("short message");
  Status rc = t.a.SendNotify(t.nb.c_str(), n);
  STEP(t.a.Disconnect(t.nb.c_str()), SUCCESS);
  return rc;
}

// adxl_engine_unittest.cc:778 TestAdxlEngineSendNotifyMsgTooLong: a 2000-character message.
uint32_t C27() {
  Two t;
  STEP(t.Init(Options(), Options(), true), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  NotifyDesc n;
  n.name = AscendString("short name");
  n.notify_msg = AscendString(std::string(2000, 'b').c_str());
  Status rc = t.a.SendNotify(t.nb.c_str(), n);
  STEP(t.a.Disconnect(t.nb.c_str()), SUCCESS);
  return rc;
}

// adxl_engine_unittest.cc:795 TestAdxlEngineAutoConnectEnabled: AutoConnect=1, a READ without
// Connect links and moves the int32.
uint32_t C28() {
  Two t;
  Options oa;
  oa[OPTION_AUTO_CONNECT] = "1";
  STEP(t.Init(oa, Options(), true), SUCCESS);
  STEP(t.a.RegisterMem(Desc(&t.src, sizeof t.src), MEM_DEVICE, t.ha), SUCCESS);
  STEP(t.b.RegisterMem(Desc(&t.dst, sizeof t.dst), MEM_DEVICE, t.hb), SUCCESS);
  STEP(t.a.TransferSync(t.nb.c_str(), READ, {t.IntOp()}), SUCCESS);
  STEP(t.src, 2);
  (void)t.a.Disconnect(t.nb.c_str());
  STEP(t.a.DeregisterMem(t.ha), SUCCESS);
  return t.b.DeregisterMem(t.hb);
}

// ---- test_adxl_engine_api.cc ----

// test_adxl_engine_api.cc:159 TestGlobalResourceConfigCommResourceListenPortValidation: listen_port
// "0", "65536", "invalid" are refused; "65535" is taken (the last one's code returned).
uint32_t C29() {
  for (const char *port : {"0", "65536", "invalid"}) {
    AdxlEngine e;
    Options o;
    o["GlobalResourceConfig"] = AscendString((std::string(R"({"comm_resource_config.listen_port":")") + port + "\"}").c_str());
    STEP(e.Initialize("127.0.0.1", o), PARAM_INVALID);
  }
  AdxlEngine e;
  Options o;
  o[OPTION_BUFFER_POOL] = "0:0";
  o["GlobalResourceConfig"] = R"({"comm_resource_config.listen_port":"65535"})";
  return e.Initialize("127.0.0.1", o);
}

// test_adxl_engine_api.cc:177 TestGlobalResourceConfigCommResourceListenPortInRankTable: two engines
// with listen ports in GlobalResourceConfig link (the rank table HCCL gets is internal: not
// simulated).
uint32_t C30() {
  Options oa, ob;
  oa[OPTION_BUFFER_POOL] = "0:0";
  oa["GlobalResourceConfig"] = R"({"comm_resource_config.listen_port":"23456"})";
  ob[OPTION_BUFFER_POOL] = "0:0";
  ob["GlobalResourceConfig"] = R"({"comm_resource_config.listen_port":"23457"})";
  Two t;
  STEP(t.Init(oa, ob, true), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  return t.a.Disconnect(t.nb.c_str());
}

// test_adxl_engine_api.cc:205 TestAdxlEngine: 10 bytes at address 1234 registered on both engines
// (default pool), then READ and WRITE of int32s that are not in it: through the pools.
uint32_t C31() {
  Two t;
  STEP(t.Init(Options(), Options(), true), SUCCESS);
  MemDesc fake{};
  fake.addr = 1234;
  fake.len = 10;
  STEP(t.a.RegisterMem(fake, MEM_DEVICE, t.ha), SUCCESS);
  STEP(t.b.RegisterMem(fake, MEM_DEVICE, t.hb), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  STEP(t.a.TransferSync(t.nb.c_str(), READ, {t.IntOp()}), SUCCESS);
  STEP(t.src, 2);
  t.src = 1;
  STEP(t.a.TransferSync(t.nb.c_str(), WRITE, {t.IntOp()}), SUCCESS);
  STEP(t.dst, 1);
  return t.Cleanup();
}

// test_adxl_engine_api.cc:239 TestAdxlEngineH2HWithBuffer (blocks: WRITE first).
uint32_t C32() { return HostToHostWithBuffer(true); }

// test_adxl_engine_api.cc:293 TestAdxlEngineD2HWithBuffer (RunD2HWithBufferTransfer: with WRITEs).
uint32_t C33() { return RemoteDeviceWithBuffer(true); }

// 16 MiB registered on both sides, 128 ops of 128 KiB WRITE then READ, with the pool as `pool`
// ("" = the option absent: 4 x 8 MiB; "0:0" off) (test_adxl_engine_api.cc:297, :352).
uint32_t DeviceToDevice(const char *pool) {
  Two t;
  Options oa = TcSlNoPool(), ob;
  if (pool[0] == '\0')
    oa.erase(AscendString(OPTION_BUFFER_POOL));
  else
    oa[OPTION_BUFFER_POOL] = pool, ob[OPTION_BUFFER_POOL] = pool;
  STEP(t.Init(oa, ob), SUCCESS);
  const size_t size = 16u << 20;
  std::vector<int8_t> src(size, 1), dst(size, 2);
  STEP(t.a.RegisterMem(Desc(src.data(), size), MEM_DEVICE, t.ha), SUCCESS);
  STEP(t.b.RegisterMem(Desc(dst.data(), size), MEM_DEVICE, t.hb), SUCCESS);
  STEP(t.a.Connect(t.nb.c_str()), SUCCESS);
  auto ops = Blocks(src, dst, 128u << 10, 128);
  STEP(t.a.TransferSync(t.nb.c_str(), WRITE, ops), SUCCESS);
  STEP(AllEq(dst, 1), true);
  dst.assign(size, 2);
  STEP(t.a.TransferSync(t.nb.c_str(), READ, ops), SUCCESS);
  STEP(AllEq(src, 2), true);
  return t.Cleanup();
}

// test_adxl_engine_api.cc:297 TestAdxlDefaultBufferPoolD2D.
uint32_t C34() { return DeviceToDevice(""); }

// test_adxl_engine_api.cc:352 TestAdxlDisableBufferPoolD2D.
uint32_t C35() { return DeviceToDevice("0:0"); }

// test_adxl_engine_api.cc:409 TestHeartbeat (as adxl_engine_unittest.cc:454).
uint32_t C36() { return C14(); }

// ---- adxl_capability_unittest.cc ----

// adxl_capability_unittest.cc:15 WithoutInitialize: AUTO_CONNECT and CLIENT_SERVER_COMM supported.
uint32_t C37() {
  int32_t v = 0;
  STEP(AdxlEngine::GetCapability(AUTO_CONNECT, v), SUCCESS);
  STEP(v, FEATURE_SUPPORTED);
  STEP(AdxlEngine::GetCapability(CLIENT_SERVER_COMM, v), SUCCESS);
  STEP(v, FEATURE_SUPPORTED);
  return SUCCESS;
}

// adxl_capability_unittest.cc:23 UnknownFeature: 999 is not supported (the vendor's master).
uint32_t C38() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);
  int32_t v = FEATURE_SUPPORTED;
  STEP(AdxlEngine::GetCapability(static_cast<FeatureType>(999), v), SUCCESS);
  return static_cast<uint32_t>(v);
}

// The release profiles: 999 on 9.1.0 (hicann/hixl tag v9.1.0 hixl_impl.cc:421: UNSUPPORTED).
uint32_t CP01() {
  setenv("ACLSIM_CANN_VERSION", "9.1.0", 1);
  int32_t v = FEATURE_SUPPORTED;
  return AdxlEngine::GetCapability(static_cast<FeatureType>(999), v);
}

// adxl_capability_unittest.cc:29 InvalidFeature: -1.
uint32_t C39() {
  int32_t v = 0;
  return AdxlEngine::GetCapability(static_cast<FeatureType>(-1), v);
}

// ---- adxl_malloc_mem_unittest.cc (the vendor's ACL is mocked: any size; the simulated driver
// wants the page granularity, so 2 MiB instead of 4096 bytes) ----

constexpr size_t kFabricSize = 2u << 20;

// ExportToShareableHandle is there: the weak reference was bound (the 9.2.0 install root).
bool HasExport() { return &AdxlEngine::ExportToShareableHandle != nullptr; }

// adxl_malloc_mem_unittest.cc:44 ExportToShareableHandleAfterMallocMem: host memory, exported (the
// handle is not all zero), freed.
uint32_t C40() {
  STEP(HasExport(), true);
  void *p = nullptr;
  STEP(AdxlEngine::MallocMem(MEM_HOST, kFabricSize, &p), SUCCESS);
  STEP(p != nullptr, true);
  ShareableHandle h{};
  STEP(AdxlEngine::ExportToShareableHandle(p, h), SUCCESS);
  bool zero = true;
  for (uint8_t b : h.data) zero = zero && b == 0;
  STEP(zero, false);
  return AdxlEngine::FreeMem(p);
}

// adxl_malloc_mem_unittest.cc:56 ExportToShareableHandleRejectsForeignAddress: NULL, then a stack buffer.
uint32_t C41() {
  STEP(HasExport(), true);
  ShareableHandle h{};
  STEP(AdxlEngine::ExportToShareableHandle(nullptr, h), PARAM_INVALID);
  uint8_t stack_buffer[4096] = {};
  return AdxlEngine::ExportToShareableHandle(stack_buffer, h);
}

// adxl_malloc_mem_unittest.cc:64 ExportToShareableHandleFailsAfterFree.
uint32_t C42() {
  STEP(HasExport(), true);
  void *p = nullptr;
  STEP(AdxlEngine::MallocMem(MEM_HOST, kFabricSize, &p), SUCCESS);
  STEP(AdxlEngine::FreeMem(p), SUCCESS);
  ShareableHandle h{};
  return AdxlEngine::ExportToShareableHandle(p, h);
}

// The release profiles of ExportToShareableHandle. Tag v9.1.0 include/adxl/adxl_engine.h:140 (MallocMem,
// FreeMem, GetCapability; no ExportToShareableHandle): against the 9.1.0 install root the weak
// reference is NULL (1 when it is bound, 0 when not).
uint32_t CP02() { return HasExport() ? 1 : 0; }

// Master (hixl 6d1c2b6, 9.2.0-beta.2 on) include/adxl/adxl_engine.h:154 ExportToShareableHandle: against the
// 9.2.0 install root the weak reference is bound, and the member answers (a NULL address:
// PARAM_INVALID, fabric_mem_transfer_service.cc).
uint32_t CP03() {
  STEP(HasExport(), true);
  ShareableHandle h{};
  return AdxlEngine::ExportToShareableHandle(nullptr, h);
}

const ConformanceRows &Rows() {
  static const ConformanceRows rows = {
      {"ADXL-C01", C01}, {"ADXL-C02", C02}, {"ADXL-C03", C03}, {"ADXL-C04", C04}, {"ADXL-C05", C05},
      {"ADXL-C06", C06}, {"ADXL-C07", C07}, {"ADXL-C08", C08}, {"ADXL-C09", C09}, {"ADXL-C10", C10},
      {"ADXL-C11", C11}, {"ADXL-C12", C12}, {"ADXL-C13", C13}, {"ADXL-C14", C14}, {"ADXL-C15", C15},
      {"ADXL-C16", C16}, {"ADXL-C17", C17}, {"ADXL-C18", C18}, {"ADXL-C19", C19}, {"ADXL-C20", C20},
      {"ADXL-C21", C21}, {"ADXL-C22", C22}, {"ADXL-C23", C23}, {"ADXL-C24", C24}, {"ADXL-C25", C25},
      {"ADXL-C26", C26}, {"ADXL-C27", C27}, {"ADXL-C28", C28}, {"ADXL-C29", C29}, {"ADXL-C30", C30},
      {"ADXL-C31", C31}, {"ADXL-C32", C32}, {"ADXL-C33", C33}, {"ADXL-C34", C34}, {"ADXL-C35", C35},
      {"ADXL-C36", C36}, {"ADXL-C37", C37}, {"ADXL-C38", C38}, {"ADXL-C39", C39}, {"ADXL-C40", C40},
      {"ADXL-C41", C41}, {"ADXL-C42", C42},
      {"ADXL-CP01", CP01}, {"ADXL-CP02", CP02}, {"ADXL-CP03", CP03},
  };
  return rows;
}

}  // namespace

int main(int argc, char **argv) { return ConformanceMain(argc, argv, Rows()); }
