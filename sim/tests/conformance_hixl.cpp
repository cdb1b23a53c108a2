// The HIXL rows of docs/conformance.md: one function per row ID, each the public call sequence
// that reaches the check a vendor unit test (hicann/hixl tests/cpp/..., cited per function)
// makes, returning the code the row states. Intermediate steps are checked too: a step that
// answers otherwise makes the row return kStepFailed (and says which on stderr).
//
//   conformance_hixl list        the row IDs, one a line
//   conformance_hixl <ROW-ID>    runs the row: "result=<code>" on stdout
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim.h"
#include "cs/hixl_cs.h"
#include "hixl/hixl.h"
#include "conformance_util.h"
#include "hixl_test_util.h"

namespace {

size_t Page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

void *HostMem(size_t n) {
  void *p = nullptr;
  return aclrtMallocHost(&p, n) == ACL_SUCCESS ? p : nullptr;
}

uint64_t Calls(const char *name) { return aclsimGetCallCount(name); }

// ---- HixlCS: a server with endpoints, a client ----

EndpointDesc Endpoint(CommProtocol protocol, EndpointLocType loc, uint32_t dev = 0) {
  EndpointDesc ep;
  EndpointDescInit(&ep, 1);
  ep.protocol = protocol;
  ep.commAddr.type = COMM_ADDR_TYPE_ID;
  ep.commAddr.id = dev;
  ep.loc.locType = loc;
  ep.loc.device.devPhyId = dev;
  ep.loc.device.superDevId = 0;
  ep.loc.device.serverIdx = 0;
  ep.loc.device.superPodIdx = 0;
  return ep;
}

struct Cs {
  int port = aclsimClaimPort();
  std::vector<EndpointDesc> eps;
  HixlServerHandle server = nullptr;
  HixlClientHandle client = nullptr;
  EndpointDesc local = Endpoint(COMM_PROTOCOL_ROCE, ENDPOINT_LOC_TYPE_DEVICE);
  EndpointDesc remote = Endpoint(COMM_PROTOCOL_ROCE, ENDPOINT_LOC_TYPE_DEVICE);

  explicit Cs(std::vector<EndpointDesc> endpoints = {Endpoint(COMM_PROTOCOL_ROCE, ENDPOINT_LOC_TYPE_DEVICE)})
      : eps(std::move(endpoints)) {}
  ~Cs() {
    if (client != nullptr) (void)HixlCSClientDestroy(client);
    if (server != nullptr) (void)HixlCSServerDestroy(server);
  }
  HixlStatus CreateServer() {
    HixlServerDesc d{};
    d.server_ip = "127.0.0.1";
    d.server_port = static_cast<uint32_t>(port);
    d.endpoint_list = eps.data();
    d.endpoint_list_num = static_cast<uint32_t>(eps.size());
    HixlServerConfig cfg;
    return HixlCSServerCreate(&d, &cfg, &server);
  }
  HixlStatus Listen() { return HixlCSServerListen(server, 16); }
  HixlStatus CreateClient() {
    HixlClientDesc d{};
    d.server_ip = "127.0.0.1";
    d.server_port = static_cast<uint32_t>(port);
    d.local_endpoint = &local;
    d.remote_endpoint = &remote;
    HixlClientConfig cfg;
    return HixlCSClientCreate(&d, &cfg, &client);
  }
  HixlStatus ServerReg(void *addr, uint64_t size, CommMemType type, MemHandle *h) {
    CommMem m{type, addr, size};
    return HixlCSServerRegMem(server, "server", &m, h);
  }
  HixlStatus ClientReg(void *addr, uint64_t size, CommMemType type, MemHandle *h) {
    CommMem m{type, addr, size};
    return HixlCSClientRegMem(client, "client", &m, h);
  }
  HixlStatus Connect() { return HixlCSClientConnect(client, 5000); }
  // A listening server with host memory `buf` registered, and a client connected to it.
  HixlStatus ServeAndConnect(void *buf, uint64_t size) {
    MemHandle h = nullptr;
    HixlStatus rc = CreateServer();
    if (rc == 0) rc = Listen();
    if (rc == 0) rc = ServerReg(buf, size, COMM_MEM_TYPE_HOST, &h);
    if (rc == 0) rc = CreateClient();
    return rc == 0 ? Connect() : rc;
  }
  HixlStatus Put(void *remote_buf, void *local_buf, uint64_t len) {
    HixlOneSideOpDesc op{remote_buf, local_buf, len};
    return HixlCSClientBatchPutSync(client, 1, &op, 5000);
  }
};

char *At(void *base, size_t off) { return static_cast<char *>(base) + off; }

// hixl_mem_store_basic_ut.cc: `regions` server registrations of (offset, size) in one block,
// a client registration, a put of `len` bytes at server offset `at`.
uint32_t ServerRegionsPut(const std::vector<std::pair<size_t, size_t>> &regions, size_t at, size_t len) {
  Cs cs;
  std::vector<char> server(4096), client(4096);
  STEP(cs.CreateServer(), 0);
  STEP(cs.Listen(), 0);
  for (const auto &r : regions) {
    MemHandle h = nullptr;
    STEP(cs.ServerReg(At(server.data(), r.first), r.second, COMM_MEM_TYPE_HOST, &h), 0);
  }
  STEP(cs.CreateClient(), 0);
  MemHandle ch = nullptr;
  STEP(cs.ClientReg(client.data(), client.size(), COMM_MEM_TYPE_HOST, &ch), 0);
  STEP(cs.Connect(), 0);
  return cs.Put(At(server.data(), at), client.data(), len);
}

// hixl_mem_store_basic_ut.cc:32 RecordValidateAndUnrecord: access inside both registrations.
uint32_t C01() { return ServerRegionsPut({{0, 4096}}, 0, 64); }

// One 4096-byte registration of the client (`client`) or the server, then `second`: the same
// registration again, or (server) an unregistration and another.
enum class Second { kRegisterAgain, kUnregisterTwice };
uint32_t RegisterThen(bool client, Second second) {
  Cs cs;
  std::vector<char> buf(4096);
  STEP(cs.CreateServer(), 0);
  if (client) STEP(cs.CreateClient(), 0);
  auto reg = [&](MemHandle *h) {
    return client ? cs.ClientReg(buf.data(), buf.size(), COMM_MEM_TYPE_HOST, h)
                  : cs.ServerReg(buf.data(), buf.size(), COMM_MEM_TYPE_HOST, h);
  };
  MemHandle a = nullptr, b = nullptr;
  STEP(reg(&a), 0);
  if (second == Second::kRegisterAgain) return reg(&b);
  STEP(HixlCSServerUnregMem(cs.server, a), 0);
  return HixlCSServerUnregMem(cs.server, a);
}

// hixl_mem_store_basic_ut.cc:50: the same client address recorded again -> PARAM_INVALID.
uint32_t C02() { return RegisterThen(true, Second::kRegisterAgain); }

// hixl_mem_store_basic_ut.cc:48: the same server address again is accepted (the server
// checks nothing on registration: hixl_cs_server.cc HixlCSServer::RegisterMem).
uint32_t C03() { return RegisterThen(false, Second::kRegisterAgain); }

// hixl_mem_store_basic_ut.cc:57: unrecord, then again -> PARAM_INVALID.
uint32_t C04() { return RegisterThen(false, Second::kUnregisterTwice); }

// hixl_mem_store_basic_ut.cc:60 CheckMergedRegionsAccessTwoAdjacentRegions.
uint32_t C05() { return ServerRegionsPut({{100, 100}, {200, 100}}, 150, 100); }

// hixl_mem_store_basic_ut.cc:72 CheckMergedRegionsAccessThreeAdjacentRegions.
uint32_t C06() { return ServerRegionsPut({{100, 100}, {200, 100}, {300, 100}}, 150, 100); }

// hixl_mem_store_basic_ut.cc:84 CheckAccessAcrossGap.
uint32_t C07() { return ServerRegionsPut({{100, 100}, {300, 100}}, 150, 100); }

// hixl_mem_store_basic_ut.cc:96 CheckMergedRegionsAccessExceedMergedRange.
uint32_t C08() { return ServerRegionsPut({{100, 100}, {200, 100}}, 150, 200); }

// hixl_mem_store_basic_ut.cc:108 CheckMemoryForAccessOverflowDetected: a server region 50
// bytes below the top of the address space, an access of 100 bytes there.
uint32_t C09() {
  Cs cs;
  std::vector<char> client(4096);
  void *top = reinterpret_cast<void *>(std::numeric_limits<uintptr_t>::max() - 50);
  STEP(cs.CreateServer(), 0);
  STEP(cs.Listen(), 0);
  MemHandle h = nullptr;
  STEP(cs.ServerReg(top, 50, COMM_MEM_TYPE_HOST, &h), 0);
  STEP(cs.CreateClient(), 0);
  MemHandle ch = nullptr;
  STEP(cs.ClientReg(client.data(), 100, COMM_MEM_TYPE_HOST, &ch), 0);
  STEP(cs.Connect(), 0);
  return cs.Put(top, client.data(), 100);
}

// Two server and two client registrations, a batch of two puts.
uint32_t TwoOps(bool second_unregistered, bool null_remote) {
  Cs cs;
  std::vector<char> server(4096), client(4096);
  STEP(cs.CreateServer(), 0);
  STEP(cs.Listen(), 0);
  MemHandle h = nullptr;
  STEP(cs.ServerReg(At(server.data(), 100), 100, COMM_MEM_TYPE_HOST, &h), 0);
  STEP(cs.ServerReg(At(server.data(), 200), 100, COMM_MEM_TYPE_HOST, &h), 0);
  STEP(cs.CreateClient(), 0);
  STEP(cs.ClientReg(At(client.data(), 1000), 100, COMM_MEM_TYPE_HOST, &h), 0);
  STEP(cs.ClientReg(At(client.data(), 2000), 100, COMM_MEM_TYPE_HOST, &h), 0);
  STEP(cs.Connect(), 0);
  HixlOneSideOpDesc ops[2] = {{At(server.data(), 100), At(client.data(), 1000), 50},
                              {At(server.data(), second_unregistered ? 500 : 200), At(client.data(), 2000), 50}};
  if (null_remote) ops[0].remote_buf = nullptr;
  return HixlCSClientBatchPutSync(cs.client, 2, ops, 5000);
}

// hixl_mem_store_basic_ut.cc:122 BatchValidateMemoryAccessSuccess.
uint32_t C10() { return TwoOps(false, false); }

// hixl_mem_store_basic_ut.cc:140 BatchValidateMemoryAccessWithInvalidServer.
uint32_t C11() { return TwoOps(true, false); }

// hixl_mem_store_basic_ut.cc:155 BatchValidateMemoryAccessWithNullAddr.
uint32_t C12() { return TwoOps(false, true); }

// hixl_mem_store_basic_ut.cc:163 BatchValidateMemoryAccessMergedRegions.
uint32_t C13() { return ServerRegionsPut({{100, 100}, {200, 100}}, 150, 100); }

// hixl_mem_store_basic_ut.cc:176 CheckMemoryForRegisterOverflowDetected: reached through the
// client's RegMem (HixlCSClient::RegMemLocked), a range past the top of the address space.
uint32_t C14() {
  Cs cs;
  STEP(cs.CreateServer(), 0);
  STEP(cs.CreateClient(), 0);
  void *top = reinterpret_cast<void *>(std::numeric_limits<uintptr_t>::max() - 50);
  MemHandle h = nullptr;
  return cs.ClientReg(top, 100, COMM_MEM_TYPE_HOST, &h);
}

// ---- the host-memory proxy: a server with a UBOE device endpoint maps host memory ----

Cs UboeServer() { return Cs({Endpoint(COMM_PROTOCOL_UBOE, ENDPOINT_LOC_TYPE_DEVICE, 0)}); }

// Server registrations of host memory at `offsets` (one page each) on a UBOE device endpoint:
// the aclrtHostRegister calls they make must be `maps`.
uint32_t MapCount(const std::vector<size_t> &offsets, uint64_t maps) {
  Cs cs = UboeServer();
  void *p = HostMem(2 * Page());
  STEP(cs.CreateServer(), 0);
  const uint64_t before = Calls("aclrtHostRegister");
  for (size_t off : offsets) {
    MemHandle h = nullptr;
    STEP(cs.ServerReg(At(p, off), Page(), COMM_MEM_TYPE_HOST, &h), 0);
  }
  STEP(Calls("aclrtHostRegister") - before, maps);
  return 0;
}

// host_register_proxy_ut.cc:36 RegisterSuccess: one aclrtHostRegister.
uint32_t C15() { return MapCount({0}, 1); }

// host_register_proxy_ut.cc:50 UnregisterSuccess: the unregistration unmaps.
uint32_t C16() {
  Cs cs = UboeServer();
  void *p = HostMem(Page());
  STEP(cs.CreateServer(), 0);
  MemHandle h = nullptr;
  STEP(cs.ServerReg(p, Page(), COMM_MEM_TYPE_HOST, &h), 0);
  const uint64_t before = Calls("aclrtHostUnregister");
  STEP(HixlCSServerUnregMem(cs.server, h), 0);
  STEP(Calls("aclrtHostUnregister") - before, 1);
  return 0;
}

// host_register_proxy_ut.cc:109 RegisterFailOnNullptr.
uint32_t C17() {
  Cs cs = UboeServer();
  STEP(cs.CreateServer(), 0);
  MemHandle h = nullptr;
  return cs.ServerReg(nullptr, Page(), COMM_MEM_TYPE_HOST, &h);
}

// host_register_proxy_ut.cc:119 RegisterMultipleAddresses: two mappings.
uint32_t C18() { return MapCount({0, Page()}, 2); }

// host_register_proxy_ut.cc:140 RegisterSameAddressTwice: one mapping, referenced twice.
uint32_t C19() { return MapCount({0, 0}, 1); }

// host_register_proxy_ut.cc:181 RefCntPartialUnregister and :207 RefCntFullUnregister: three
// registrations of one address; only the last unregistration unmaps.
uint32_t C20() {
  Cs cs = UboeServer();
  void *p = HostMem(Page());
  STEP(cs.CreateServer(), 0);
  MemHandle h[3] = {nullptr, nullptr, nullptr};
  for (auto &x : h) STEP(cs.ServerReg(p, Page(), COMM_MEM_TYPE_HOST, &x), 0);
  const uint64_t before = Calls("aclrtHostUnregister");
  STEP(HixlCSServerUnregMem(cs.server, h[0]), 0);
  STEP(HixlCSServerUnregMem(cs.server, h[1]), 0);
  STEP(Calls("aclrtHostUnregister") - before, 0);
  STEP(HixlCSServerUnregMem(cs.server, h[2]), 0);
  STEP(Calls("aclrtHostUnregister") - before, 1);
  return 0;
}

// host_register_proxy_ut.cc:235 RefCntRegisterWithDifferentSize.
uint32_t C21() {
  Cs cs = UboeServer();
  void *p = HostMem(2 * Page());
  STEP(cs.CreateServer(), 0);
  MemHandle a = nullptr, b = nullptr;
  STEP(cs.ServerReg(p, Page(), COMM_MEM_TYPE_HOST, &a), 0);
  return cs.ServerReg(p, 2 * Page(), COMM_MEM_TYPE_HOST, &b);
}

// hixl_mem_store_uboe_ut.cc:102 CheckRegionsNonContiguousWithDeviceAddr: two adjacent host
// regions whose device mappings are not contiguous (each aclrtHostRegister maps on its own) do
// not merge: a put across them is refused.
uint32_t C57() {
  Cs cs = UboeServer();
  void *p = HostMem(2 * Page());
  std::vector<char> client(200);
  STEP(cs.CreateServer(), 0);
  STEP(cs.Listen(), 0);
  MemHandle a = nullptr, b = nullptr, h = nullptr;
  STEP(cs.ServerReg(p, Page(), COMM_MEM_TYPE_HOST, &a), 0);
  STEP(cs.ServerReg(At(p, Page()), Page(), COMM_MEM_TYPE_HOST, &b), 0);
  STEP(cs.CreateClient(), 0);
  STEP(cs.ClientReg(client.data(), client.size(), COMM_MEM_TYPE_HOST, &h), 0);
  STEP(cs.Connect(), 0);
  STEP(cs.Put(At(p, Page() - 100), client.data(), 50), 0);  // inside the first
  return cs.Put(At(p, Page() - 50), client.data(), 100);
}

// ---- the server's memory type against its endpoints (test_hixl_cs_server.cc) ----

// One server registration of page-locked host memory (`host`) or simulated device memory;
// `maps`: the aclrtHostRegister calls it must make.
uint32_t ServerTyped(std::vector<EndpointDesc> eps, bool host, int maps) {
  Cs cs(std::move(eps));
  void *p = nullptr;
  if (host) {
    p = HostMem(Page());
  } else if (aclrtMalloc(&p, Page(), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    return kStepFailed;
  }
  STEP(cs.CreateServer(), 0);
  const uint64_t before = Calls("aclrtHostRegister");
  MemHandle h = nullptr;
  uint32_t rc = cs.ServerReg(p, Page(), host ? COMM_MEM_TYPE_HOST : COMM_MEM_TYPE_DEVICE, &h);
  STEP(Calls("aclrtHostRegister") - before, maps);
  if (rc == 0) STEP(HixlCSServerUnregMem(cs.server, h), 0);
  return rc;
}

// test_hixl_cs_server.cc:247 RegisterDeviceMemForUbEndpointsSkipsHostEndpoint.
uint32_t C22() {
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBC_CTP, ENDPOINT_LOC_TYPE_HOST),
                      Endpoint(COMM_PROTOCOL_UBC_TP, ENDPOINT_LOC_TYPE_DEVICE)},
                     false, 0);
}
// test_hixl_cs_server.cc:284 RegisterHostMemForUbEndpointsSkipsDeviceEndpoint.
uint32_t C23() {
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBC_CTP, ENDPOINT_LOC_TYPE_HOST),
                      Endpoint(COMM_PROTOCOL_UBC_TP, ENDPOINT_LOC_TYPE_DEVICE)},
                     true, 0);
}
// test_hixl_cs_server.cc:321 RegisterHostMemForDeviceOnlyUbEndpointReturnsInvalid (the vendor's master).
uint32_t C24() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBC_TP, ENDPOINT_LOC_TYPE_DEVICE)}, true, 0);
}
// The release profile 9.1.0: the same (tag v9.1.0 test_hixl_cs_server.cc:318, hixl 6f82995).
uint32_t CP04() {
  setenv("ACLSIM_CANN_VERSION", "9.1.0", 1);
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBC_TP, ENDPOINT_LOC_TYPE_DEVICE)}, true, 0);
}

// test_hixl_cs_server.cc:349 RegisterHostMemWhenUbCtpEndpointsAllDeviceUsesMappedDeviceMem.
uint32_t C25() {
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBC_CTP, ENDPOINT_LOC_TYPE_DEVICE),
                      Endpoint(COMM_PROTOCOL_UBC_TP, ENDPOINT_LOC_TYPE_DEVICE)},
                     true, 1);
}
// test_hixl_cs_server.cc:387 RegisterHostMemForDeviceUbgUsesMappedDeviceMem (the vendor's master).
uint32_t C26() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBG, ENDPOINT_LOC_TYPE_DEVICE)}, true, 1);
}
// The release profile 9.1.0: tag v9.1.0 hixl_cs_server.cc:76 NeedServerHostVaMapping names
// UBOE and UBC_CTP only: registered on the endpoint, no mapping.
uint32_t CP14() {
  setenv("ACLSIM_CANN_VERSION", "9.1.0", 1);
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBG, ENDPOINT_LOC_TYPE_DEVICE)}, true, 0);
}

// test_hixl_cs_server.cc:418 RegisterHostMemForDeviceAndHostUbCtpUsesHostEndpoint.
uint32_t C27() {
  return ServerTyped({Endpoint(COMM_PROTOCOL_UBC_CTP, ENDPOINT_LOC_TYPE_DEVICE),
                      Endpoint(COMM_PROTOCOL_UBC_CTP, ENDPOINT_LOC_TYPE_HOST)},
                     true, 0);
}

// test_hixl_cs_server.cc:774 TestServerRegMemRejectsNullMemHandle.
uint32_t C28() {
  Cs cs;
  std::vector<char> server(64);
  STEP(cs.CreateServer(), 0);
  CommMem m{COMM_MEM_TYPE_HOST, server.data(), server.size()};
  return HixlCSServerRegMem(cs.server, "server", &m, nullptr);
}

// ---- the client (hixl_cs_client_basic_ut.cc) ----

// hixl_cs_client_basic_ut.cc:130 RegMemAndUnRegMem.
uint32_t C29() {
  Cs cs;
  std::vector<char> client(4096);
  STEP(cs.CreateServer(), 0);
  STEP(cs.CreateClient(), 0);
  MemHandle h = nullptr;
  STEP(cs.ClientReg(client.data(), client.size(), COMM_MEM_TYPE_HOST, &h), 0);
  return HixlCSClientUnregMem(cs.client, h);
}

// An empty batch (list_num 0).
uint32_t ZeroList(bool put) {
  Cs cs;
  STEP(cs.CreateServer(), 0);
  STEP(cs.CreateClient(), 0);
  HixlOneSideOpDesc op{};
  return put ? HixlCSClientBatchPutSync(cs.client, 0, &op, 1000) : HixlCSClientBatchGetSync(cs.client, 0, &op, 1000);
}

// hixl_cs_client_basic_ut.cc:303 CsApiBatchPutSyncInvalidListNum.
uint32_t C30() { return ZeroList(true); }

// hixl_cs_client_basic_ut.cc:311 CsApiBatchGetSyncInvalidListNum.
uint32_t C31() { return ZeroList(false); }

// hixl_cs_client_basic_ut.cc:319 BatchPutFailsOnUnrecordedMemory: the local buffer is not
// registered (asynchronous put).
uint32_t C32() {
  Cs cs;
  std::vector<char> server(64), client(64);
  STEP(cs.ServeAndConnect(server.data(), server.size()), 0);
  HixlOneSideOpDesc op{server.data(), client.data(), 4};
  CompleteHandle done = nullptr;
  return HixlCSClientBatchPutAsync(cs.client, 1, &op, &done);
}

// hixl_cs_client_basic_ut.cc:329 BatchPutFailsOnMultrecorded: a registration overlapping the
// first with another size, then one at the same offset with the first's size.
uint32_t C33() {
  Cs cs;
  std::vector<char> client(8192);
  STEP(cs.CreateServer(), 0);
  STEP(cs.CreateClient(), 0);
  MemHandle a = nullptr, b = nullptr, c = nullptr;
  STEP(cs.ClientReg(client.data(), 4096, COMM_MEM_TYPE_HOST, &a), 0);
  STEP(cs.ClientReg(At(client.data(), 100), 2048, COMM_MEM_TYPE_HOST, &b), HIXL_PARAM_INVALID);
  return cs.ClientReg(At(client.data(), 100), 4096, COMM_MEM_TYPE_HOST, &c);
}

// hixl_cs_client_basic_ut.cc:475 BatchTransferParamInvalidDoesNotLatchClient: a zero-length op
// is refused, the client registers its memory after Connect and the next put works.
uint32_t C34() {
  Cs cs;
  std::vector<char> server(64), client(64);
  STEP(cs.ServeAndConnect(server.data(), server.size()), 0);
  STEP(cs.Put(server.data(), client.data(), 0), HIXL_PARAM_INVALID);
  MemHandle h = nullptr;
  STEP(cs.ClientReg(client.data(), client.size(), COMM_MEM_TYPE_HOST, &h), 0);
  return cs.Put(server.data(), client.data(), 4);
}

// ---- hixl::Hixl (tests/cpp/hixl/engine/hixl_api_unittest.cc), the comm engine ----

using hixl::AscendString;
using hixl::Hixl;

std::map<AscendString, AscendString> NoOptions() { return {}; }

hixl::MemDesc Desc(const void *p, size_t len) {
  hixl::MemDesc d{};
  d.addr = reinterpret_cast<uintptr_t>(p);
  d.len = len;
  return d;
}

// Two engines, each with an int32 registered (as the test's RegisterInt32Mem), a linked.
struct Pair {
  Hixl a, b;
  std::string nb = EngineName(aclsimClaimPort());
  int32_t src = 1, dst = 2;
  hixl::MemHandle ha = nullptr, hb = nullptr;
  uint32_t Setup() {
    STEP(a.Initialize("127.0.0.1", NoOptions()), 0);
    STEP(b.Initialize(nb.c_str(), NoOptions()), 0);
    STEP(a.RegisterMem(Desc(&src, sizeof src), hixl::MEM_HOST, ha), 0);
    STEP(b.RegisterMem(Desc(&dst, sizeof dst), hixl::MEM_HOST, hb), 0);
    STEP(a.Connect(nb.c_str()), 0);
    return 0;
  }
  hixl::TransferOpDesc Op() const {
    return hixl::TransferOpDesc{reinterpret_cast<uintptr_t>(&src), reinterpret_cast<uintptr_t>(&dst), sizeof src};
  }
};

// hixl_api_unittest.cc:235 TestHixl: READ then WRITE between registered int32s, then
// Disconnect and DeregisterMem.
uint32_t C35() {
  Pair p;
  STEP(p.Setup(), 0);
  STEP(p.a.TransferSync(p.nb.c_str(), hixl::READ, {p.Op()}), 0);
  STEP(p.src, 2);
  p.src = 1;
  STEP(p.a.TransferSync(p.nb.c_str(), hixl::WRITE, {p.Op()}), 0);
  STEP(p.dst, 1);
  STEP(p.a.Disconnect(p.nb.c_str()), 0);
  STEP(p.a.DeregisterMem(p.ha), 0);
  return p.b.DeregisterMem(p.hb);
}

// hixl_api_unittest.cc:310 TestConnectNotListenFailed.
uint32_t C36() {
  Hixl a;
  STEP(a.Initialize(EngineName(aclsimClaimPort()).c_str(), NoOptions()), 0);
  return a.Connect(EngineName(RefusingPort()).c_str());
}

// hixl_api_unittest.cc:318 TestAlreadyConnectedWarningLog.
uint32_t C37() {
  Pair p;
  STEP(p.Setup(), 0);
  return p.a.Connect(p.nb.c_str());
}

// hixl_api_unittest.cc:350 TestDeregisterUnregisterMem: an unknown handle.
uint32_t C38() {
  Hixl a;
  STEP(a.Initialize("127.0.0.1", NoOptions()), 0);
  return a.DeregisterMem(reinterpret_cast<hixl::MemHandle>(0x100));
}

// hixl_api_unittest.cc:546 TestHixlGetTransferStatusFalied: a NULL request is FAILED, an
// unknown one PARAM_INVALID.
uint32_t C39() {
  Pair p;
  STEP(p.Setup(), 0);
  hixl::TransferStatus st;
  hixl::TransferReq req = nullptr;
  STEP(p.a.GetTransferStatus(req, st), hixl::FAILED);
  std::vector<char> fake(64);
  req = fake.data();
  return p.a.GetTransferStatus(req, st);
}

// hixl_api_unittest.cc:572 TestHixlGetTransferStatusWithInterrupt: the link is gone before the
// status is asked for (AdxlInnerEngine::GetTransferStatus) -> NOT_CONNECTED, status FAILED.
uint32_t C40() {
  Pair p;
  STEP(p.Setup(), 0);
  hixl::TransferReq req = nullptr;
  STEP(p.a.TransferAsync(p.nb.c_str(), hixl::WRITE, {p.Op()}, hixl::TransferArgs{}, req), 0);
  STEP(p.a.Disconnect(p.nb.c_str()), 0);
  hixl::TransferStatus st = hixl::TransferStatus::WAITING;
  uint32_t rc = p.a.GetTransferStatus(req, st);
  STEP(static_cast<int>(st), static_cast<int>(hixl::TransferStatus::FAILED));
  return rc;
}

// hixl_api_unittest.cc:855 TestCommEngineGetTransferStatusUnsupported.
uint32_t C41() {
  Hixl a;
  STEP(a.Initialize(EngineName(aclsimClaimPort()).c_str(), NoOptions()), 0);
  hixl::GetTransferStatusArgs args;
  std::vector<hixl::TransferResult> results;
  return a.GetTransferStatus(args, results);
}

// ---- Initialize's options (tests/cpp/hixl/engine/hixl_options_unittest.cc) ----

uint32_t WithGlobalConfig(const std::string &json) {
  Hixl a;
  std::map<AscendString, AscendString> o;
  o[AscendString(hixl::OPTION_GLOBAL_RESOURCE_CONFIG)] = AscendString(json.c_str());
  return a.Initialize("127.0.0.1", o);
}

// hixl_options_unittest.cc:235: aicpu unfold (the default) with task_stream_num 4.
uint32_t C42() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);  // the vendor's master
  return WithGlobalConfig(R"({"fabric_memory":{"task_stream_num":"4"}})");
}

// hixl_options_unittest.cc:252: enable_aicpu_unfold not a boolean.
uint32_t C43() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);  // the vendor's master
  return WithGlobalConfig(R"({"fabric_memory.enable_aicpu_unfold":"true"})");
}

// hixl_options_unittest.cc:523: max_active_channels 0.
uint32_t C44() { return WithGlobalConfig(R"({"comm_resource_config.max_active_channels":0})"); }

// hixl_options_unittest.cc:537: max_active_channels above uint32.
uint32_t C45() { return WithGlobalConfig(R"({"comm_resource_config.max_active_channels":4294967296})"); }

// hixl_options_unittest.cc:572 ParseFabricMemStartAddressOutOfRange (1025 TB).
uint32_t C46() { return WithGlobalConfig(R"({"fabric_memory":{"start_address":"1025"}})"); }

// hixl_options_unittest.cc:643 ParseConfigQosMax: qos 7 is accepted.
uint32_t C47() { return WithGlobalConfig(R"({"comm_resource_config.qos": 7})"); }

// hixl_options_unittest.cc:663 ParseConfigQosInValidMax: qos 8.
uint32_t C48() { return WithGlobalConfig(R"({"comm_resource_config.qos": 8})"); }

// hixl_options_unittest.cc:755 ParseLocalCommResFilePathNotExistInvalid.
uint32_t C49() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);  // the vendor's master
  return WithGlobalConfig(R"({"local_comm_res_path":"/tmp/hixl_lcr_not_exist_12345.json"})");
}

// json_utils_ut.cc:17 FloatValueThrows: JsonToNumber refuses a number with a fraction, so
// ParseIntegerFieldInRange does (PARAM_INVALID from Initialize); the vendor's master (hixl 1577fcd).
uint32_t C50() {
  setenv("ACLSIM_CANN_VERSION", "9.2.0", 1);
  return WithGlobalConfig(R"({"comm_resource_config.listen_port": 1.5})");
}

// ---- the release profiles (ACLSIM_CANN_VERSION), each difference once per profile ----

// Tag v9.1.0 json_utils.h:20 JsonToNumber: nlohmann's get<T> converts 1.5 to 1 (in range).
uint32_t CP01() {
  setenv("ACLSIM_CANN_VERSION", "9.1.0", 1);
  return WithGlobalConfig(R"({"comm_resource_config.listen_port": 1.5})");
}

uint32_t OnRelease(const char *release, const std::string &json) {
  setenv("ACLSIM_CANN_VERSION", release, 1);
  return WithGlobalConfig(json);
}

// Tag v9.1.0 hixl_options.cc:38 from_json(FabricMemoryConfig): no aicpu unfold (C42 on master).
uint32_t CP05() { return OnRelease("9.1.0", R"({"fabric_memory":{"task_stream_num":"4"}})"); }

// Tag v9.1.0 hixl_options.cc:38: enable_aicpu_unfold is not read (C43 on master).
uint32_t CP06() { return OnRelease("9.1.0", R"({"fabric_memory.enable_aicpu_unfold":"true"})"); }

// Tag v9.1.0 hixl_options.cc:87 from_json(GlobalResourceConfig): no local_comm_res_path (C49 on master).
uint32_t CP07() { return OnRelease("9.1.0", R"({"local_comm_res_path":"/tmp/hixl_lcr_not_exist_12345.json"})"); }

// Tag v9.1.0 hixl_options.cc:69: JsonToNumber<uint32_t> wraps 4294967297 to 1.
uint32_t CP08() { return OnRelease("9.1.0", R"({"comm_resource_config.listen_port": 4294967297})"); }

// Master hixl_options.cc:179: an int64 within [1, 65535].
uint32_t CP09() { return OnRelease("9.2.0", R"({"comm_resource_config.listen_port": 4294967297})"); }

// Tag v9.1.0 hixl_options.cc:52: connect_pool.thread_num without a range.
uint32_t CP10() { return OnRelease("9.1.0", R"({"connect_pool.thread_num": 65})"); }

// Master hixl_options.cc:162: connect_pool.thread_num within [1, 64].
uint32_t CP11() { return OnRelease("9.2.0", R"({"connect_pool.thread_num": 65})"); }

// Tag v9.1.0 json_utils.h:20: nlohmann's get<int64_t> reads true as 1.
uint32_t CP12() { return OnRelease("9.1.0", R"({"comm_resource_config.qos": true})"); }

// Master json_utils.h:30 (hixl 1577fcd): a boolean is not an integer JSON value.
uint32_t CP13() { return OnRelease("9.2.0", R"({"comm_resource_config.qos": true})"); }

// The engine an Ascend 950 gets with no options, told by an empty TransferSync to an engine not
// linked: PARAM_INVALID on the comm engine (its op list first), NOT_CONNECTED on hixl_cs.
uint32_t Ascend950Default(const char *release) {
  setenv("ACLSIM_CANN_VERSION", release, 1);
  setenv("ACLSIM_SOC_NAME", "Ascend950PR_9579", 1);
  Hixl a;
  STEP(a.Initialize(EngineName(aclsimClaimPort()).c_str(), NoOptions()), 0);
  return a.TransferSync(EngineName(RefusingPort()).c_str(), hixl::READ, {});
}

// Master engine_factory.cc:71 (hixl bb0d0f6): SoC V5 selects hixl_cs.
uint32_t CP02() { return Ascend950Default("9.2.0"); }

// Tag v9.1.0 engine_factory.cc:58: no SoC branch, the comm engine.
uint32_t CP03() { return Ascend950Default("9.1.0"); }

// ---- fabric memory (tests/cpp/hixl/fabric_mem/fabric_mem_unittest.cc) ----

// Two fabric-memory engines; b registers `remote` (device memory), a links to b. `local_host`:
// a registers host memory of its own first (FabricMemLocalMemory::HasHostMemory). The op's local
// buffer is not registered (`local_is_host` picks page-locked host or device memory for it),
// except with `local_in_registered`: 2 bytes into a's registered host memory.
uint32_t FabricWrite(size_t remote_offset, bool local_host, bool local_is_host, bool local_in_registered = false) {
  // fabric memory is an Atlas A3 feature (HDK 25.5 or later): play one
  setenv("ACLSIM_SOC_NAME", "Ascend910_9391", 1);
  setenv("ACLSIM_DRIVER_VERSION", "25.5.0", 1);
  Hixl a, b;
  std::map<AscendString, AscendString> o;
  o[AscendString(hixl::OPTION_ENABLE_USE_FABRIC_MEM)] = AscendString("1");
  const std::string nb = EngineName(aclsimClaimPort());
  void *remote = nullptr, *local_dev = nullptr;
  if (aclrtMalloc(&remote, 2 * Page(), ACL_MEM_MALLOC_HUGE_ONLY) != ACL_SUCCESS) return kStepFailed;
  if (aclrtMalloc(&local_dev, Page(), ACL_MEM_MALLOC_HUGE_ONLY) != ACL_SUCCESS) return kStepFailed;
  void *local_host_buf = HostMem(Page()), *registered_host = HostMem(Page());
  STEP(a.Initialize("127.0.0.1", o), 0);
  STEP(b.Initialize(nb.c_str(), o), 0);
  hixl::MemHandle hb = nullptr, ha = nullptr;
  STEP(b.RegisterMem(Desc(remote, Page()), hixl::MEM_DEVICE, hb), 0);
  if (local_host) STEP(a.RegisterMem(Desc(registered_host, Page()), hixl::MEM_HOST, ha), 0);
  STEP(a.Connect(nb.c_str()), 0);
  void *local = local_in_registered ? At(registered_host, 2) : local_is_host ? local_host_buf : local_dev;
  hixl::TransferOpDesc op{reinterpret_cast<uintptr_t>(local), reinterpret_cast<uintptr_t>(remote) + remote_offset, 64};
  return a.TransferSync(nb.c_str(), hixl::WRITE, {op});
}

// fabric_mem_unittest.cc:1197 AddressTranslationAndCopyValidation: a remote range inside the
// peer's registration is translated and copied (the local device buffer is not registered).
uint32_t C51() { return FabricWrite(0, false, false); }

// fabric_mem_unittest.cc:1208 (AddressTranslationAndCopyValidation): a remote address outside every registration.
uint32_t C52() { return FabricWrite(4 * Page(), false, false); }

// fabric_mem_unittest.cc:1236 (NeedTransLocalAddrHandlesHostDeviceEmptyAndFailure): no host
// memory registered locally, so local addresses are not translated (an unregistered host buffer).
uint32_t C53() { return FabricWrite(0, false, true); }

// fabric_mem_unittest.cc:1241 (NeedTransLocalAddrHandlesHostDeviceEmptyAndFailure): host memory registered, the op's local address on
// the device: not translated either.
uint32_t C54() { return FabricWrite(0, true, false); }

// fabric_mem_unittest.cc:644 (TranslateLocalHostOpAddrsResolvesImportedMapping): host memory
// registered and the local address host memory (NeedTransLocalAddr, :1246), so it is translated,
// and an unregistered one fails.
uint32_t C55() { return FabricWrite(0, true, true); }

// fabric_mem_unittest.cc:640 (TranslateLocalHostOpAddrsResolvesImportedMapping): a local host
// address inside the registration is translated.
uint32_t C56() { return FabricWrite(0, true, true, true); }

const ConformanceRows &Rows() {
  static const ConformanceRows rows = {
      {"HIXL-C01", C01}, {"HIXL-C02", C02}, {"HIXL-C03", C03}, {"HIXL-C04", C04}, {"HIXL-C05", C05},
      {"HIXL-C06", C06}, {"HIXL-C07", C07}, {"HIXL-C08", C08}, {"HIXL-C09", C09}, {"HIXL-C10", C10},
      {"HIXL-C11", C11}, {"HIXL-C12", C12}, {"HIXL-C13", C13}, {"HIXL-C14", C14}, {"HIXL-C15", C15},
      {"HIXL-C16", C16}, {"HIXL-C17", C17}, {"HIXL-C18", C18}, {"HIXL-C19", C19}, {"HIXL-C20", C20},
      {"HIXL-C21", C21}, {"HIXL-C22", C22}, {"HIXL-C23", C23}, {"HIXL-C24", C24}, {"HIXL-C25", C25},
      {"HIXL-C26", C26}, {"HIXL-C27", C27}, {"HIXL-C28", C28}, {"HIXL-C29", C29}, {"HIXL-C30", C30},
      {"HIXL-C31", C31}, {"HIXL-C32", C32}, {"HIXL-C33", C33}, {"HIXL-C34", C34}, {"HIXL-C35", C35},
      {"HIXL-C36", C36}, {"HIXL-C37", C37}, {"HIXL-C38", C38}, {"HIXL-C39", C39}, {"HIXL-C40", C40},
      {"HIXL-C41", C41}, {"HIXL-C42", C42}, {"HIXL-C43", C43}, {"HIXL-C44", C44}, {"HIXL-C45", C45},
      {"HIXL-C46", C46}, {"HIXL-C47", C47}, {"HIXL-C48", C48}, {"HIXL-C49", C49}, {"HIXL-C50", C50},
      {"HIXL-C51", C51}, {"HIXL-C52", C52}, {"HIXL-C53", C53}, {"HIXL-C54", C54}, {"HIXL-C55", C55},
      {"HIXL-C56", C56}, {"HIXL-C57", C57}, {"HIXL-CP01", CP01}, {"HIXL-CP02", CP02}, {"HIXL-CP03", CP03},
      {"HIXL-CP04", CP04}, {"HIXL-CP05", CP05}, {"HIXL-CP06", CP06}, {"HIXL-CP07", CP07}, {"HIXL-CP08", CP08},
      {"HIXL-CP09", CP09}, {"HIXL-CP10", CP10}, {"HIXL-CP11", CP11}, {"HIXL-CP12", CP12}, {"HIXL-CP13", CP13},
      {"HIXL-CP14", CP14},
  };
  return rows;
}

}  // namespace

int main(int argc, char **argv) { return ConformanceMain(argc, argv, Rows()); }
