// The HixlCS family of the differential driver: one server and one client in this process,
// the server on a port of its own (aclsimClaimPort). Every op's first argument V: 0 through
// the PLT, 1 through dlopen + dlsym of libcann_hixl.so. Endpoint protocols PR: 0 ROCE, 1 UBOE,
// 2 UBC_CTP, 3 UB_RTP (UBG), 4 HCCS; locations L: 0 device, 1 host.
//
//   sc V PR L                     HixlCSServerCreate with one endpoint (PR, L) (a server made
//                                 before is left as it is)
//   sl V                          HixlCSServerListen(server, 16)
//   sr V K P OFF LEN T            HixlCSServerRegMem(server, {T, addr(K, P, OFF), LEN}), handle kept
//   su V I                        HixlCSServerUnregMem(handle I (mod the handles kept; bogus if none))
//   sd V                          HixlCSServerDestroy
//   cc V PR L RL                  HixlCSClientCreate, local endpoint (PR, L), remote (PR, RL)
//   cn V                          HixlCSClientConnect(1000 ms)
//   cr V K P OFF LEN T / cu V I   HixlCSClientRegMem / HixlCSClientUnregMem, as the server's
//   cx V OP LK LP LOFF RK RP ROFF LEN
//                                 HixlCSClientBatch{Get (OP 0), Put (OP 1)}Sync of one op:
//                                 local addr(LK, LP, LOFF), remote addr(RK, RP, ROFF), 1000 ms
//   cd V                          HixlCSClientDestroy
#include <string.h>

#include <vector>

#include "aclsim_port.h"
#include "cs/hixl_cs.h"
#include "diff.h"

namespace diff {
namespace {

struct Api {
  decltype(&HixlCSServerCreate) server_create;
  decltype(&HixlCSServerListen) listen;
  decltype(&HixlCSServerRegMem) server_reg;
  decltype(&HixlCSServerUnregMem) server_unreg;
  decltype(&HixlCSServerDestroy) server_destroy;
  decltype(&HixlCSClientCreate) client_create;
  decltype(&HixlCSClientConnect) connect;
  decltype(&HixlCSClientRegMem) client_reg;
  decltype(&HixlCSClientUnregMem) client_unreg;
  decltype(&HixlCSClientBatchGetSync) get;
  decltype(&HixlCSClientBatchPutSync) put;
  decltype(&HixlCSClientDestroy) client_destroy;
};

Api plt, dl;
int port = 0;
HixlServerHandle server = nullptr;
HixlClientHandle client = nullptr;
std::vector<MemHandle> server_handles, client_handles;
EndpointDesc server_ep, local_ep, remote_ep;

void Setup(World &w) {
  plt = Api{HixlCSServerCreate, HixlCSServerListen,   HixlCSServerRegMem,       HixlCSServerUnregMem,
            HixlCSServerDestroy, HixlCSClientCreate,  HixlCSClientConnect,      HixlCSClientRegMem,
            HixlCSClientUnregMem, HixlCSClientBatchGetSync, HixlCSClientBatchPutSync, HixlCSClientDestroy};
  Load(dl.server_create, w.hixl, "HixlCSServerCreate");
  Load(dl.listen, w.hixl, "HixlCSServerListen");
  Load(dl.server_reg, w.hixl, "HixlCSServerRegMem");
  Load(dl.server_unreg, w.hixl, "HixlCSServerUnregMem");
  Load(dl.server_destroy, w.hixl, "HixlCSServerDestroy");
  Load(dl.client_create, w.hixl, "HixlCSClientCreate");
  Load(dl.connect, w.hixl, "HixlCSClientConnect");
  Load(dl.client_reg, w.hixl, "HixlCSClientRegMem");
  Load(dl.client_unreg, w.hixl, "HixlCSClientUnregMem");
  Load(dl.get, w.hixl, "HixlCSClientBatchGetSync");
  Load(dl.put, w.hixl, "HixlCSClientBatchPutSync");
  Load(dl.client_destroy, w.hixl, "HixlCSClientDestroy");
  port = aclsimClaimPort();
}

const char *const kOps[] = {"sc", "sl", "sr", "su", "sd", "cc", "cn", "cr", "cu", "cx", "cd"};

bool Knows(const char *op) {
  for (const char *k : kOps)
    if (strcmp(op, k) == 0) return true;
  return false;
}

long long Arg(const Step &s, int i) { return i < s.n ? s.a[i] : 0; }

CommProtocol Protocol(long long p) {
  static const CommProtocol kProtocols[] = {COMM_PROTOCOL_ROCE, COMM_PROTOCOL_UBOE, COMM_PROTOCOL_UBC_CTP,
                                            COMM_PROTOCOL_UBG, COMM_PROTOCOL_HCCS};
  return kProtocols[static_cast<unsigned long long>(p) % 5];
}

EndpointDesc Endpoint(long long protocol, long long loc) {
  EndpointDesc ep;
  EndpointDescInit(&ep, 1);
  ep.protocol = Protocol(protocol);
  ep.commAddr.type = COMM_ADDR_TYPE_ID;
  ep.commAddr.id = 0;
  ep.loc.locType = loc == 1 ? ENDPOINT_LOC_TYPE_HOST : ENDPOINT_LOC_TYPE_DEVICE;
  ep.loc.device.devPhyId = 0;
  ep.loc.device.superDevId = 0;
  ep.loc.device.serverIdx = 0;
  ep.loc.device.superPodIdx = 0;
  return ep;
}

MemHandle Pick(const std::vector<MemHandle> &handles, long long i) {
  return handles.empty() ? reinterpret_cast<MemHandle>(0xdead0) : handles[static_cast<size_t>(i) % handles.size()];
}

void Run(World &w, const Step &s, Result &r) {
  const Api &api = Arg(s, 0) == 1 ? dl : plt;
  const char *op = s.op;
  if (strcmp(op, "sc") == 0) {
    server_ep = Endpoint(Arg(s, 1), Arg(s, 2));
    HixlServerDesc d{};
    d.server_ip = "127.0.0.1";
    d.server_port = static_cast<uint32_t>(port);
    d.endpoint_list = &server_ep;
    d.endpoint_list_num = 1;
    HixlServerConfig cfg;
    HixlServerHandle h = nullptr;
    Counted(r, "HixlCSServerCreate", [&] { return api.server_create(&d, &cfg, &h); });
    if (r.rc == HIXL_SUCCESS) server = h;
  } else if (strcmp(op, "sl") == 0) {
    Counted(r, "HixlCSServerListen", [&] { return api.listen(server, 16); });
  } else if (strcmp(op, "sr") == 0 || strcmp(op, "cr") == 0) {
    CommMem m{static_cast<CommMemType>(Arg(s, 5)), w.Addr(Arg(s, 1), Arg(s, 2), Arg(s, 3)),
              static_cast<uint64_t>(Arg(s, 4))};
    MemHandle h = nullptr;
    if (op[0] == 's') {
      Counted(r, "HixlCSServerRegMem", [&] { return api.server_reg(server, "s", &m, &h); });
      if (r.rc == HIXL_SUCCESS) Keep(server_handles, h);
    } else {
      Counted(r, "HixlCSClientRegMem", [&] { return api.client_reg(client, "c", &m, &h); });
      if (r.rc == HIXL_SUCCESS) Keep(client_handles, h);
    }
  } else if (strcmp(op, "su") == 0) {
    Counted(r, "HixlCSServerUnregMem", [&] { return api.server_unreg(server, Pick(server_handles, Arg(s, 1))); });
  } else if (strcmp(op, "cu") == 0) {
    Counted(r, "HixlCSClientUnregMem", [&] { return api.client_unreg(client, Pick(client_handles, Arg(s, 1))); });
  } else if (strcmp(op, "sd") == 0) {
    Counted(r, "HixlCSServerDestroy", [&] { return api.server_destroy(server); });
    if (r.rc == HIXL_SUCCESS) {
      server = nullptr;
      server_handles.clear();
    }
  } else if (strcmp(op, "cc") == 0) {
    local_ep = Endpoint(Arg(s, 1), Arg(s, 2));
    remote_ep = Endpoint(Arg(s, 1), Arg(s, 3));
    HixlClientDesc d{};
    d.server_ip = "127.0.0.1";
    d.server_port = static_cast<uint32_t>(port);
    d.local_endpoint = &local_ep;
    d.remote_endpoint = &remote_ep;
    HixlClientConfig cfg;
    HixlClientHandle h = nullptr;
    Counted(r, "HixlCSClientCreate", [&] { return api.client_create(&d, &cfg, &h); });
    if (r.rc == HIXL_SUCCESS) client = h;
  } else if (strcmp(op, "cn") == 0) {
    Counted(r, "HixlCSClientConnect", [&] { return api.connect(client, 1000); });
  } else if (strcmp(op, "cx") == 0) {
    HixlOneSideOpDesc desc{w.Addr(Arg(s, 5), Arg(s, 6), Arg(s, 7)), w.Addr(Arg(s, 2), Arg(s, 3), Arg(s, 4)),
                           static_cast<uint64_t>(Arg(s, 8))};
    if (Arg(s, 1) == 1) {
      Counted(r, "HixlCSClientBatchPutSync", [&] { return api.put(client, 1, &desc, 1000); });
    } else {
      Counted(r, "HixlCSClientBatchGetSync", [&] { return api.get(client, 1, &desc, 1000); });
    }
  } else if (strcmp(op, "cd") == 0) {
    Counted(r, "HixlCSClientDestroy", [&] { return api.client_destroy(client); });
    if (r.rc == HIXL_SUCCESS) {
      client = nullptr;
      client_handles.clear();
    }
  }
}

}  // namespace

const Family kHixlCsFamily = {"hixl_cs", Setup, Knows, Run};

}  // namespace diff
