// The HixlCS client/server C API of the simulator (libcann_hixl.so), after the vendor's
// src/hixl/cs (hixl_cs.cc, hixl_cs_server.cc, hixl_cs_client.cc, hixl_mem_store.cc).
//
// A server listens on "server_ip:server_port" (TCP) once HixlCSServerListen is called and serves
// its clients on its own threads; a client connects to it (in this process or another). The
// client learns the server's registrations at Connect and at each HixlCSClientGetRemoteMem, and
// transfers only within those (Put: client -> server, Get: server -> client).
#include <string.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cs/hixl_cs.h"
#include "hixl_common.h"
#include "hixl_host_reg.h"
#include "hixl_net.h"

static_assert(sizeof(CommMem) == 24, "CommMem is 24 bytes");
static_assert(sizeof(HixlOneSideOpDesc) == 24, "HixlOneSideOpDesc is 24 bytes");
static_assert(sizeof(HixlClientDesc) == 128, "HixlClientDesc is 128 bytes");
static_assert(sizeof(HixlServerDesc) == 128, "HixlServerDesc is 128 bytes");

namespace {

using aclsim::Fmt;

constexpr uint32_t kMaxPort = 65535U;

// One host-memory mapping made for a registration (HostRegisterProxy, by physical device).
struct Mapping {
  uint32_t dev_phy_id;
  void *host;
};

struct Server {
  std::string ip;
  uint32_t port = 0;
  std::vector<EndpointDesc> endpoints;
  std::vector<bool> map_host;  // the endpoint maps host memory for the device (NeedServerHostVaMapping)
  std::mutex mu;
  aclsim::RegTable regs;
  std::map<void *, std::vector<Mapping>> mappings;  // registration -> its host mappings
  aclsim::Service service;
};

struct Client {
  std::string ip;
  uint32_t port = 0;
  EndpointDesc local{};
  EndpointDesc remote{};
  bool map_host = false;  // the local endpoint maps host memory (IsHostVaMappingEnabledForPair)
  std::map<void *, Mapping> mappings;
  std::vector<Mapping> orphans;  // mappings of endpoint registrations RecordMemory then refused
  std::mutex mu;
  std::unique_ptr<aclsim::Link> link;
  aclsim::RegTable regs;         // the client's own registrations
  aclsim::RegTable server_regs;  // the server's, as last learned
  bool latched = false;          // a transfer failed: no further transfers
  std::map<void *, HixlCompleteStatus> completes;
  std::vector<CommMem> remote_mems;
  std::vector<std::string> remote_tag_strings;
  std::vector<char *> remote_tags;
};

std::mutex &RegistryMutex() {
  static std::mutex *m = new std::mutex;  // never destroyed
  return *m;
}
std::set<Server *> &Servers() {
  static auto *s = new std::set<Server *>;
  return *s;
}
std::set<Client *> &Clients() {
  static auto *s = new std::set<Client *>;
  return *s;
}

Server *AsServer(void *h) {
  std::lock_guard<std::mutex> g(RegistryMutex());
  auto *s = static_cast<Server *>(h);
  return Servers().count(s) != 0 ? s : nullptr;
}
Client *AsClient(void *h) {
  std::lock_guard<std::mutex> g(RegistryMutex());
  auto *c = static_cast<Client *>(h);
  return Clients().count(c) != 0 ? c : nullptr;
}

std::string MemArgs(const char *tag, const CommMem *mem) {
  if (mem == nullptr) return Fmt("\"%s\", NULL", tag ? tag : "");
  return Fmt("\"%s\", {type=%d, addr=%p, size=%llu}", tag ? tag : "", static_cast<int>(mem->type), mem->addr,
             static_cast<unsigned long long>(mem->size));
}

uint32_t ServeServer(Server *s, aclsim::Service::Conn &, const aclsim::WireReq &req, const std::string &payload,
                     std::string &rsp) {
  switch (req.op) {
    case aclsim::kOpHello:
    case aclsim::kOpRegs: {
      std::lock_guard<std::mutex> g(s->mu);
      rsp = aclsim::EncodeRegs(s->regs);
      return HIXL_SUCCESS;
    }
    case aclsim::kOpRead:
    case aclsim::kOpWrite: {
      {
        std::lock_guard<std::mutex> g(s->mu);
        if (!s->regs.ContainsMerged(req.a, req.b)) return HIXL_FAILED;
      }
      if (req.op == aclsim::kOpRead) {
        rsp.resize(req.b);
        return aclsim::SafeCopy(&rsp[0], aclsim::ToHost(req.a), req.b) ? HIXL_SUCCESS : HIXL_FAILED;
      }
      if (payload.size() != req.b) return HIXL_FAILED;
      return aclsim::SafeCopy(aclsim::ToHost(req.a), payload.data(), req.b) ? HIXL_SUCCESS : HIXL_FAILED;
    }
    default:
      return HIXL_FAILED;
  }
}

// Asks the server for its registrations (Connect's prefetch, GetRemoteMem).
HixlStatus FetchRemote(Client *c, uint32_t timeout_ms) {
  uint32_t status = HIXL_FAILED;
  std::string rsp;
  aclsim::WireReq req{aclsim::kOpRegs, 0, 0, 0, 0};
  uint32_t rc = c->link->Call(req, nullptr, timeout_ms > 0 ? static_cast<int>(timeout_ms) : 1000, status, rsp);
  if (rc != HIXL_SUCCESS) return rc;
  if (status != HIXL_SUCCESS) return status;
  aclsim::RegTable got;
  if (!aclsim::DecodeRegs(rsp, 0, got)) return HIXL_FAILED;
  std::lock_guard<std::mutex> g(c->mu);
  c->server_regs = got;
  return HIXL_SUCCESS;
}

// Checks and runs one batch. put: client local -> server remote; get: server remote -> client local.
// `issued`: the checks passed and the transfer was started (its result is the return value).
HixlStatus Batch(void *client_handle, uint32_t list_num, const HixlOneSideOpDesc *desc_list, bool put,
                 uint32_t timeout_ms, bool &issued) {
  issued = false;
  Client *c = AsClient(client_handle);
  if (c == nullptr || list_num == 0 || desc_list == nullptr) return HIXL_PARAM_INVALID;
  aclsim::Link *link = nullptr;
  {
    std::lock_guard<std::mutex> g(c->mu);
    if (c->latched) {
      aclsim::Log("[HixlClient] BatchTransfer rejected after prior transfer failure");
      return HIXL_FAILED;
    }
    for (uint32_t i = 0; i < list_num; i++) {
      const HixlOneSideOpDesc &d = desc_list[i];
      uintptr_t local = reinterpret_cast<uintptr_t>(d.local_buf);
      uintptr_t remote = reinterpret_cast<uintptr_t>(d.remote_buf);
      size_t len = static_cast<size_t>(d.len);
      if (local == 0 || remote == 0 || len == 0) return HIXL_PARAM_INVALID;
      // the memory store merges adjacent registrations (HixlMemStore::CheckMemoryForAccess)
      if (!c->server_regs.ContainsMerged(remote, len) || !c->regs.ContainsMerged(local, len)) {
        aclsim::Log("[HixlClient] Validate address failed: server %p or client %p (len %llu) outside known memory",
                    d.remote_buf, d.local_buf, static_cast<unsigned long long>(d.len));
        return HIXL_PARAM_INVALID;
      }
    }
    if (c->link == nullptr) return HIXL_FAILED;
    link = c->link.get();
  }
  issued = true;
  const int64_t deadline = aclsim::NowMs() + (timeout_ms > 0 ? timeout_ms : 1);
  std::string buf, rsp;
  HixlStatus rc = HIXL_SUCCESS;
  for (uint32_t i = 0; i < list_num && rc == HIXL_SUCCESS; i++) {
    const HixlOneSideOpDesc &d = desc_list[i];
    int left = static_cast<int>(deadline - aclsim::NowMs());
    if (left <= 0) {
      rc = HIXL_TIMEOUT;
      break;
    }
    uint32_t status = HIXL_FAILED;
    uintptr_t remote = reinterpret_cast<uintptr_t>(d.remote_buf);
    if (put) {
      buf.resize(d.len);
      if (!aclsim::SafeCopy(&buf[0], aclsim::ToHost(reinterpret_cast<uintptr_t>(d.local_buf)), d.len)) {
        rc = HIXL_FAILED;
        break;
      }
      aclsim::WireReq req{aclsim::kOpWrite, 0, remote, d.len, d.len};
      rc = link->Call(req, buf.data(), left, status, rsp);
    } else {
      aclsim::WireReq req{aclsim::kOpRead, 0, remote, d.len, 0};
      rc = link->Call(req, nullptr, left, status, rsp);
      if (rc == HIXL_SUCCESS && status == HIXL_SUCCESS &&
          (rsp.size() != d.len ||
           !aclsim::SafeCopy(aclsim::ToHost(reinterpret_cast<uintptr_t>(d.local_buf)), rsp.data(), d.len)))
        status = HIXL_FAILED;
    }
    if (rc == HIXL_SUCCESS) rc = status;
  }
  if (rc != HIXL_SUCCESS) {
    std::lock_guard<std::mutex> g(c->mu);
    c->latched = true;
  }
  return rc;
}

// HixlCSServer::RegisterMem, with s->mu held: with a UB endpoint the type must be host or device
// (else PARAM_INVALID); each endpoint the memory is for registers it (UB endpoints: host memory
// on host endpoints and on device endpoints that map host memory, device memory on device
// endpoints; other protocols: any memory), mapping host memory for the device where the
// endpoint does; no endpoint for it: PARAM_INVALID. Nothing else is checked (overlaps are
// hcomm's business): each registration gets a handle of its own.
HixlStatus ServerRegister(Server *s, const char *tag, const CommMem &mem, MemHandle &handle) {
  bool has_ub = false;
  for (const EndpointDesc &ep : s->endpoints) has_ub = has_ub || aclsim::IsUbEndpoint(ep);
  const bool valid_type = mem.type == COMM_MEM_TYPE_HOST || mem.type == COMM_MEM_TYPE_DEVICE;
  if (has_ub && !valid_type) return HIXL_PARAM_INVALID;
  std::vector<Mapping> maps;
  uintptr_t dev = 0;
  bool matched = false;
  for (size_t i = 0; i < s->endpoints.size(); i++) {
    const EndpointDesc &ep = s->endpoints[i];
    bool for_it = !aclsim::IsUbEndpoint(ep) ||
                  (mem.type == COMM_MEM_TYPE_HOST && (ep.loc.locType == ENDPOINT_LOC_TYPE_HOST || s->map_host[i])) ||
                  (mem.type == COMM_MEM_TYPE_DEVICE && ep.loc.locType == ENDPOINT_LOC_TYPE_DEVICE);
    if (!for_it) continue;
    if (mem.type == COMM_MEM_TYPE_HOST && s->map_host[i]) {
      uintptr_t d = 0;
      HixlStatus rc = aclsim::HostProxyRegister(ep.loc.device.devPhyId, mem.addr, mem.size, d);
      if (rc != HIXL_SUCCESS) return rc;  // the endpoints before keep theirs, as the vendor's do
      maps.push_back(Mapping{ep.loc.device.devPhyId, mem.addr});
      if (dev == 0) dev = d;
    }
    matched = true;
  }
  if (!matched) return HIXL_PARAM_INVALID;  // no endpoint matches the memory type
  handle = aclsim::NewHandle();
  s->regs.Insert(handle, aclsim::RegTable::Reg{reinterpret_cast<uintptr_t>(mem.addr), static_cast<size_t>(mem.size),
                                               mem.type != COMM_MEM_TYPE_DEVICE, tag ? tag : "", dev});
  if (!maps.empty()) s->mappings[handle] = maps;
  return HIXL_SUCCESS;
}

// HixlCSClient::RegMemLocked, with c->mu held: size 0, an address overflow or an overlap with a
// registration that is not identical -> PARAM_INVALID (HixlMemStore::CheckMemoryForRegister, all
// types in one table); then the local endpoint registers it (mapping host memory for the device
// where it does); then an address already recorded -> PARAM_INVALID (RecordMemory), the
// endpoint's registration and its mapping staying until the client is destroyed, as the
// vendor's do (Endpoint::Finalize).
HixlStatus ClientRegister(Client *c, const char *tag, const CommMem &mem, MemHandle &handle) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(mem.addr);
  const uint64_t size = mem.size;
  if (mem.addr == nullptr || size == 0 || addr + size < addr) return HIXL_PARAM_INVALID;
  bool same_addr = false;
  for (const auto &kv : c->regs.All()) {
    const aclsim::RegTable::Reg &r = kv.second;
    const bool overlap = addr < r.addr + r.len && r.addr < addr + size;
    const bool same = r.addr == addr && r.len == size;
    if (overlap && !same) return HIXL_PARAM_INVALID;
    same_addr = same_addr || r.addr == addr;
  }
  uintptr_t dev = 0;
  const bool map = mem.type == COMM_MEM_TYPE_HOST && c->map_host;
  if (map) {
    HixlStatus rc = aclsim::HostProxyRegister(c->local.loc.device.devPhyId, mem.addr, size, dev);
    if (rc != HIXL_SUCCESS) return rc;
  }
  if (same_addr) {  // this client memory is already recorded
    if (map) c->orphans.push_back(Mapping{c->local.loc.device.devPhyId, mem.addr});
    return HIXL_PARAM_INVALID;
  }
  handle = aclsim::NewHandle();
  c->regs.Insert(handle, aclsim::RegTable::Reg{addr, static_cast<size_t>(size), mem.type != COMM_MEM_TYPE_DEVICE,
                                               tag ? tag : "", dev});
  if (map) c->mappings[handle] = Mapping{c->local.loc.device.devPhyId, mem.addr};
  return HIXL_SUCCESS;
}

}  // namespace

extern "C" {

HixlStatus HixlCSServerCreate(const HixlServerDesc *server_desc, const HixlServerConfig *config,
                              HixlServerHandle *server_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  std::string key;
  if (server_handle != nullptr) *server_handle = nullptr;
  if (server_handle == nullptr || server_desc == nullptr || server_desc->server_ip == nullptr || config == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    key = Fmt("%s:%u", server_desc->server_ip, server_desc->server_port);
    std::string ip;
    int port = -1;
    if (server_desc->server_port > kMaxPort || server_desc->endpoint_list == nullptr ||
        server_desc->endpoint_list_num == 0 || !aclsim::ParseEndpoint(server_desc->server_ip, ip, port)) {
      rc = HIXL_PARAM_INVALID;
    } else {
      auto *s = new Server;
      s->ip = ip;
      s->port = server_desc->server_port;
      s->endpoints.assign(server_desc->endpoint_list, server_desc->endpoint_list + server_desc->endpoint_list_num);
      const bool ctp_all_device =
          aclsim::UbCtpEndpointsAllDevice(server_desc->endpoint_list, server_desc->endpoint_list_num);
      for (const EndpointDesc &ep : s->endpoints) s->map_host.push_back(aclsim::ServerHostVaMapping(ep, ctp_all_device));
      std::lock_guard<std::mutex> g(RegistryMutex());
      Servers().insert(s);
      *server_handle = s;
    }
  }
  ACLSIM_NOTE("HixlCSServerCreate", Fmt("\"%s\", %p, %p", key.c_str(), static_cast<const void *>(config),
                                 static_cast<void *>(server_handle)),
       rc);
  return rc;
}

HixlStatus HixlCSServerRegMem(HixlServerHandle server_handle, const char *mem_tag, const CommMem *mem,
                              MemHandle *mem_handle) {
  HixlStatus rc;
  Server *s = AsServer(server_handle);
  if (s == nullptr || mem == nullptr || mem_handle == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    std::lock_guard<std::mutex> g(s->mu);
    rc = ServerRegister(s, mem_tag, *mem, *mem_handle);
  }
  ACLSIM_NOTE("HixlCSServerRegMem", Fmt("%p, ", server_handle) + MemArgs(mem_tag, mem), rc);
  return rc;
}

HixlStatus HixlCSServerListen(HixlServerHandle server_handle, uint32_t backlog) {
  HixlStatus rc = HIXL_SUCCESS;
  Server *s = AsServer(server_handle);
  if (s == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else if (!s->service.Listening()) {
    rc = s->service.Listen(s->ip, static_cast<int>(s->port), static_cast<int>(backlog));
    if (rc == HIXL_SUCCESS)
      s->service.Start([s](aclsim::Service::Conn &c, const aclsim::WireReq &r, const std::string &p,
                           std::string &out) { return ServeServer(s, c, r, p, out); });
    else
      aclsim::Log("[HixlServer] cannot listen on %s:%u", s->ip.c_str(), s->port);
  }
  ACLSIM_NOTE("HixlCSServerListen", Fmt("%p, %u", server_handle, backlog), rc);
  return rc;
}

HixlStatus HixlCSServerUnregMem(HixlServerHandle server_handle, MemHandle mem_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  Server *s = AsServer(server_handle);
  if (s == nullptr || mem_handle == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    std::lock_guard<std::mutex> g(s->mu);
    if (s->regs.All().count(mem_handle) == 0) {
      rc = HIXL_PARAM_INVALID;  // not registered (HixlCSServer::DeregisterMem)
    } else {
      // each endpoint's registration: its host mapping goes (Endpoint::DeregisterMem)
      auto &maps = s->mappings[mem_handle];
      while (rc == HIXL_SUCCESS && !maps.empty()) {
        rc = aclsim::HostProxyUnregister(maps.back().dev_phy_id, maps.back().host);
        if (rc == HIXL_SUCCESS) maps.pop_back();
      }
      if (rc == HIXL_SUCCESS) {
        s->mappings.erase(mem_handle);
        s->regs.Remove(mem_handle);
      }
    }
  }
  ACLSIM_NOTE("HixlCSServerUnregMem", Fmt("%p, %p", server_handle, mem_handle), rc);
  return rc;
}

HixlStatus HixlCSServerDestroy(HixlServerHandle server_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  Server *s = nullptr;
  {
    std::lock_guard<std::mutex> g(RegistryMutex());
    s = static_cast<Server *>(server_handle);
    if (Servers().erase(s) == 0) s = nullptr;
  }
  if (s == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    s->service.Stop();
    // Endpoint::Finalize: the host mappings of the registrations left go
    for (const auto &kv : s->mappings)
      for (const Mapping &m : kv.second) (void)aclsim::HostProxyUnregister(m.dev_phy_id, m.host);
    delete s;
  }
  ACLSIM_NOTE("HixlCSServerDestroy", Fmt("%p", server_handle), rc);
  return rc;
}

HixlStatus HixlCSClientCreate(const HixlClientDesc *client_desc, const HixlClientConfig *config,
                              HixlClientHandle *client_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  std::string key;
  if (client_handle != nullptr) *client_handle = nullptr;
  if (client_handle == nullptr || client_desc == nullptr || client_desc->server_ip == nullptr ||
      client_desc->local_endpoint == nullptr || client_desc->remote_endpoint == nullptr || config == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    key = Fmt("%s:%u", client_desc->server_ip, client_desc->server_port);
    std::string ip;
    int port = -1;
    if (client_desc->server_port < 1 || client_desc->server_port > kMaxPort ||
        !aclsim::ParseEndpoint(client_desc->server_ip, ip, port)) {
      rc = HIXL_PARAM_INVALID;
    } else {
      auto *c = new Client;
      c->ip = ip;
      c->port = client_desc->server_port;
      c->local = *client_desc->local_endpoint;
      c->remote = *client_desc->remote_endpoint;
      c->map_host = aclsim::PairHostVaMapping(c->local, c->remote);
      std::lock_guard<std::mutex> g(RegistryMutex());
      Clients().insert(c);
      *client_handle = c;
    }
  }
  ACLSIM_NOTE("HixlCSClientCreate", Fmt("\"%s\", %p, %p", key.c_str(), static_cast<const void *>(config),
                                 static_cast<void *>(client_handle)),
       rc);
  return rc;
}

HixlStatus HixlCSClientConnect(HixlClientHandle client_handle, uint32_t timeout_ms) {
  HixlStatus rc = HIXL_SUCCESS;
  Client *c = AsClient(client_handle);
  if (c == nullptr || c->remote.protocol == COMM_PROTOCOL_RESERVED) {
    rc = HIXL_PARAM_INVALID;  // HixlCSClient::Connect: the remote endpoint must be set
  } else {
    bool connected;
    {
      std::lock_guard<std::mutex> g(c->mu);
      connected = c->link != nullptr && !c->link->Broken();
    }
    if (!connected) {
      int fd = -1;
      int timeout = timeout_ms > 0 ? static_cast<int>(timeout_ms) : 1;
      rc = aclsim::ConnectTo(c->ip, static_cast<int>(c->port), timeout, fd);
      if (rc == HIXL_SUCCESS) {
        {
          std::lock_guard<std::mutex> g(c->mu);
          c->link.reset(new aclsim::Link(fd));
        }
        rc = FetchRemote(c, timeout_ms);  // the vendor prefetches the server's memory here
      }
    }
  }
  ACLSIM_NOTE("HixlCSClientConnect", Fmt("%p, %u", client_handle, timeout_ms), rc);
  return rc;
}

HixlStatus HixlCSClientGetRemoteMem(HixlClientHandle client_handle, CommMem **remote_mem_list, char ***mem_tag_list,
                                    uint32_t *list_num, uint32_t timeout_ms) {
  HixlStatus rc = HIXL_SUCCESS;
  Client *c = AsClient(client_handle);
  bool connected = false;
  if (c != nullptr) {
    std::lock_guard<std::mutex> g(c->mu);
    connected = c->link != nullptr;
  }
  if (c == nullptr || remote_mem_list == nullptr || mem_tag_list == nullptr || list_num == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else if (!connected) {
    rc = HIXL_FAILED;
  } else {
    rc = FetchRemote(c, timeout_ms);
    if (rc == HIXL_SUCCESS) {
      std::lock_guard<std::mutex> g(c->mu);
      c->remote_mems.clear();
      c->remote_tag_strings.clear();
      c->remote_tags.clear();
      for (const auto &kv : c->server_regs.All()) {
        const aclsim::RegTable::Reg &r = kv.second;
        c->remote_mems.push_back(CommMem{r.host ? COMM_MEM_TYPE_HOST : COMM_MEM_TYPE_DEVICE,
                                         reinterpret_cast<void *>(r.addr), static_cast<uint64_t>(r.len)});
        c->remote_tag_strings.push_back(r.tag);
      }
      for (auto &s : c->remote_tag_strings) c->remote_tags.push_back(&s[0]);
      *remote_mem_list = c->remote_mems.empty() ? nullptr : c->remote_mems.data();
      *mem_tag_list = c->remote_tags.empty() ? nullptr : c->remote_tags.data();
      *list_num = static_cast<uint32_t>(c->remote_mems.size());
    }
  }
  ACLSIM_NOTE("HixlCSClientGetRemoteMem", Fmt("%p, %u", client_handle, timeout_ms), rc);
  return rc;
}

HixlStatus HixlCSClientRegMem(HixlClientHandle client_handle, const char *mem_tag, const CommMem *mem,
                              MemHandle *mem_handle) {
  HixlStatus rc;
  Client *c = AsClient(client_handle);
  if (c == nullptr || mem == nullptr || mem_handle == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    std::lock_guard<std::mutex> g(c->mu);
    rc = ClientRegister(c, mem_tag, *mem, *mem_handle);
  }
  ACLSIM_NOTE("HixlCSClientRegMem", Fmt("%p, ", client_handle) + MemArgs(mem_tag, mem), rc);
  return rc;
}

HixlStatus HixlCSClientUnregMem(HixlClientHandle client_handle, MemHandle mem_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  Client *c = AsClient(client_handle);
  if (c == nullptr || mem_handle == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    std::lock_guard<std::mutex> g(c->mu);
    if (c->regs.All().count(mem_handle) == 0) {
      rc = HIXL_PARAM_INVALID;  // unknown handle (HixlCSClient::UnRegMem, Endpoint::GetMemDesc)
    } else {
      auto m = c->mappings.find(mem_handle);
      // a failed host unmapping fails the call with PARAM_INVALID and keeps the registration
      if (m != c->mappings.end() && aclsim::HostProxyUnregister(m->second.dev_phy_id, m->second.host) != HIXL_SUCCESS) {
        rc = HIXL_PARAM_INVALID;
      } else {
        if (m != c->mappings.end()) c->mappings.erase(m);
        c->regs.Remove(mem_handle);
      }
    }
  }
  ACLSIM_NOTE("HixlCSClientUnregMem", Fmt("%p, %p", client_handle, mem_handle), rc);
  return rc;
}

static HixlStatus BatchSync(const char *api, HixlClientHandle client_handle, uint32_t list_num,
                            const HixlOneSideOpDesc *desc_list, uint32_t timeout_ms, bool put) {
  bool issued = false;
  HixlStatus rc = Batch(client_handle, list_num, desc_list, put, timeout_ms, issued);
  ACLSIM_NOTE(api, Fmt("%p, %u, %p, %u", client_handle, list_num, static_cast<const void *>(desc_list), timeout_ms), rc);
  return rc;
}

static HixlStatus BatchAsync(const char *api, HixlClientHandle client_handle, uint32_t list_num,
                             const HixlOneSideOpDesc *desc_list, CompleteHandle *complete_handle, bool put) {
  HixlStatus rc;
  if (complete_handle == nullptr || list_num == 0 || desc_list == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    // issued and completed at once; a transport failure shows in the status
    bool issued = false;
    rc = Batch(client_handle, list_num, desc_list, put, 3000, issued);
    Client *c = AsClient(client_handle);
    if (c != nullptr && issued) {
      std::lock_guard<std::mutex> g(c->mu);
      void *h = aclsim::NewHandle();
      c->completes[h] = rc == HIXL_SUCCESS ? HIXL_COMPLETE_STATUS_COMPLETED : HIXL_COMPLETE_STATUS_FAILED;
      *complete_handle = h;
      rc = HIXL_SUCCESS;
    }
  }
  ACLSIM_NOTE(api, Fmt("%p, %u, %p", client_handle, list_num, static_cast<const void *>(desc_list)), rc);
  return rc;
}

HixlStatus HixlCSClientBatchPutAsync(HixlClientHandle client_handle, uint32_t list_num,
                                     const HixlOneSideOpDesc *desc_list, CompleteHandle *complete_handle) {
  return BatchAsync("HixlCSClientBatchPutAsync", client_handle, list_num, desc_list, complete_handle, true);
}

HixlStatus HixlCSClientBatchGetAsync(HixlClientHandle client_handle, uint32_t list_num,
                                     const HixlOneSideOpDesc *desc_list, CompleteHandle *complete_handle) {
  return BatchAsync("HixlCSClientBatchGetAsync", client_handle, list_num, desc_list, complete_handle, false);
}

HixlStatus HixlCSClientBatchPutSync(HixlClientHandle client_handle, uint32_t list_num,
                                    const HixlOneSideOpDesc *desc_list, uint32_t timeout_ms) {
  return BatchSync("HixlCSClientBatchPutSync", client_handle, list_num, desc_list, timeout_ms, true);
}

HixlStatus HixlCSClientBatchGetSync(HixlClientHandle client_handle, uint32_t list_num,
                                    const HixlOneSideOpDesc *desc_list, uint32_t timeout_ms) {
  return BatchSync("HixlCSClientBatchGetSync", client_handle, list_num, desc_list, timeout_ms, false);
}

HixlStatus HixlCSClientQueryCompleteStatus(HixlClientHandle client_handle, CompleteHandle complete_handle,
                                           HixlCompleteStatus *complete_status) {
  HixlStatus rc = HIXL_SUCCESS;
  Client *c = AsClient(client_handle);
  if (c == nullptr || complete_status == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    std::lock_guard<std::mutex> g(c->mu);
    auto it = c->completes.find(complete_handle);
    if (it == c->completes.end()) {
      rc = HIXL_PARAM_INVALID;
    } else {
      *complete_status = it->second;
      c->completes.erase(it);
    }
  }
  ACLSIM_NOTE("HixlCSClientQueryCompleteStatus", Fmt("%p, %p", client_handle, complete_handle), rc);
  return rc;
}

HixlStatus HixlCSClientDestroy(HixlClientHandle client_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  Client *c = nullptr;
  {
    std::lock_guard<std::mutex> g(RegistryMutex());
    c = static_cast<Client *>(client_handle);
    if (Clients().erase(c) == 0) c = nullptr;
  }
  if (c == nullptr) {
    rc = HIXL_PARAM_INVALID;
  } else {
    if (c->link != nullptr) c->link->Close();
    // Endpoint::Finalize: every endpoint registration's mapping goes, the refused ones' too
    for (const auto &kv : c->mappings) (void)aclsim::HostProxyUnregister(kv.second.dev_phy_id, kv.second.host);
    for (const Mapping &m : c->orphans) (void)aclsim::HostProxyUnregister(m.dev_phy_id, m.host);
    delete c;
  }
  ACLSIM_NOTE("HixlCSClientDestroy", Fmt("%p", client_handle), rc);
  return rc;
}

}  // extern "C"
