// Every interposed HIXL function once, validly: hixl::Hixl's constructors and destructors
// (complete-object C1/D1 through a Hixl, base-object C2/D2 through a derived class), its ten
// checked members, and the nine HixlCS functions regcheck checks. Each call prints
// "rc <label> <code>"; exit 0 unless the set-up failed (exit 2).
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "cs/hixl_cs.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"

using namespace hixl;

namespace {

// Its constructor and destructor call Hixl's base-object constructor and destructor.
struct Derived : Hixl {};

unsigned rc(const char *label, unsigned code) {
  printf("rc %s %u\n", label, code);
  fflush(stdout);
  return code;
}

MemDesc Desc(const void *p, size_t len) {
  MemDesc d{};
  d.addr = reinterpret_cast<uintptr_t>(p);
  d.len = len;
  return d;
}

}  // namespace

int main() {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *ha = nullptr, *hb = nullptr;
  if (aclrtMallocHost(&ha, 4 * page) != ACL_SUCCESS || aclrtMallocHost(&hb, 4 * page) != ACL_SUCCESS) return 2;
  std::map<AscendString, AscendString> options;
  const std::string na = "127.0.0.1:" + std::to_string(aclsimClaimPort()), nb = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  {
    Hixl a;
    Derived b;
    const AscendString ea(na.c_str()), eb(nb.c_str());
    rc("initialize_a", a.Initialize(ea, options));
    rc("initialize_b", b.Initialize(eb, options));
    MemHandle ma = nullptr, mb = nullptr;
    rc("register_a", a.RegisterMem(Desc(ha, 4 * page), MEM_HOST, ma));
    rc("register_b", b.RegisterMem(Desc(hb, 4 * page), MEM_HOST, mb));
    rc("connect", a.Connect(eb, 1000));
    std::vector<TransferOpDesc> ops{{reinterpret_cast<uintptr_t>(ha), reinterpret_cast<uintptr_t>(hb), 64}};
    rc("transfer_sync", a.TransferSync(eb, WRITE, ops, 1000));
    TransferArgs args;
    TransferReq req = nullptr;
    rc("transfer_async", a.TransferAsync(eb, WRITE, ops, args, req));
    TransferStatus ts = TransferStatus::WAITING;
    if (a.GetTransferStatus(req, ts) != SUCCESS) return 2;
    rc("disconnect", a.Disconnect(eb, 1000));
    rc("connect_async", b.ConnectAsync(ea, 1000));
    rc("disconnect_async", b.DisconnectAsync(ea, 1000));
    rc("deregister_a", a.DeregisterMem(ma));
    rc("deregister_b", b.DeregisterMem(mb));
    a.Finalize();
    b.Finalize();
  }

  std::vector<uint8_t> sbuf(8192, 0), cbuf(8192, 0);
  const int port = aclsimClaimPort();
  EndpointDesc ep{};
  HixlServerDesc sd{};
  sd.server_ip = "127.0.0.1";
  sd.server_port = static_cast<uint32_t>(port);
  sd.endpoint_list = &ep;
  sd.endpoint_list_num = 1;
  HixlServerConfig scfg;
  HixlServerHandle server = nullptr;
  rc("server_create", HixlCSServerCreate(&sd, &scfg, &server));
  CommMem smem{COMM_MEM_TYPE_HOST, sbuf.data(), sbuf.size()};
  MemHandle smh = nullptr;
  rc("server_regmem", HixlCSServerRegMem(server, "kv", &smem, &smh));
  if (HixlCSServerListen(server, 16) != HIXL_SUCCESS) return 2;
  HixlClientDesc cd{};
  cd.server_ip = "127.0.0.1";
  cd.server_port = static_cast<uint32_t>(port);
  cd.local_endpoint = &ep;
  cd.remote_endpoint = &ep;
  HixlClientConfig ccfg;
  HixlClientHandle client = nullptr;
  rc("client_create", HixlCSClientCreate(&cd, &ccfg, &client));
  CommMem cmem{COMM_MEM_TYPE_HOST, cbuf.data(), cbuf.size()};
  MemHandle cmh = nullptr;
  rc("client_regmem", HixlCSClientRegMem(client, "local", &cmem, &cmh));
  rc("client_connect", HixlCSClientConnect(client, 1000));
  rc("client_unregmem", HixlCSClientUnregMem(client, cmh));
  rc("client_destroy", HixlCSClientDestroy(client));
  rc("server_unregmem", HixlCSServerUnregMem(server, smh));
  rc("server_destroy", HixlCSServerDestroy(server));
  if (aclrtFreeHost(ha) != ACL_SUCCESS || aclrtFreeHost(hb) != ACL_SUCCESS) return 2;
  return 0;
}
