// The HixlCS client/server C API of the simulator (libcann_hixl.so): the vendor's documented interface.
//
// A server is known in the process by "server_ip:server_port" once it listens; a client created
// with the same ip and port connects to it. Batch transfers copy bytes between the client's and
// the server's registered memory (Put: client -> server, Get: server -> client).
#include <string.h>

#include <set>
#include <string>
#include <vector>

#include "cs/hixl_cs.h"
#include "hixl_common.h"

static_assert(sizeof(CommMem) == 24, "CommMem is 24 bytes");
static_assert(sizeof(HixlOneSideOpDesc) == 24, "HixlOneSideOpDesc is 24 bytes");
static_assert(sizeof(HixlClientDesc) == 128, "HixlClientDesc is 128 bytes");
static_assert(sizeof(HixlServerDesc) == 128, "HixlServerDesc is 128 bytes");

namespace {

using aclsim::Fmt;
using aclsim::Note;

struct Client;

struct Server {
  std::string key;  // ip:port
  bool listening = false;
  aclsim::RegTable regs;
  std::set<Client *> clients;
};

struct Client {
  std::string key;
  Server *server = nullptr;  // connected server
  aclsim::RegTable regs;
  std::set<void *> completes;
  std::vector<CommMem> remote_mems;
  std::vector<std::string> remote_tag_strings;
  std::vector<char *> remote_tags;
};

std::set<Server *> &Servers() {
  static auto *s = new std::set<Server *>;
  return *s;
}
std::set<Client *> &Clients() {
  static auto *s = new std::set<Client *>;
  return *s;
}

Server *AsServer(void *h) {
  auto *s = static_cast<Server *>(h);
  return Servers().count(s) != 0 ? s : nullptr;
}
Client *AsClient(void *h) {
  auto *c = static_cast<Client *>(h);
  return Clients().count(c) != 0 ? c : nullptr;
}

std::string Key(const char *ip, uint32_t port) { return std::string(ip) + ":" + std::to_string(port); }

HixlStatus RegMem(aclsim::RegTable &regs, const char *tag, const CommMem *mem, MemHandle *mem_handle) {
  if (mem == nullptr || mem_handle == nullptr) return HIXL_PARAM_INVALID;
  void *h = nullptr;
  HixlStatus rc = regs.Add(reinterpret_cast<uintptr_t>(mem->addr), static_cast<size_t>(mem->size),
                           static_cast<int>(mem->type), tag ? tag : "", h);
  if (rc == HIXL_SUCCESS) *mem_handle = h;
  return rc;
}

std::string MemArgs(const char *tag, const CommMem *mem) {
  if (mem == nullptr) return Fmt("\"%s\", NULL", tag ? tag : "");
  return Fmt("\"%s\", {type=%d, addr=%p, size=%llu}", tag ? tag : "", static_cast<int>(mem->type), mem->addr,
             static_cast<unsigned long long>(mem->size));
}

// put: client local -> server remote; get: server remote -> client local.
HixlStatus Batch(void *client_handle, uint32_t list_num, const HixlOneSideOpDesc *desc_list, bool put,
                 std::vector<aclsim::Copy> &copies) {
  Client *c = AsClient(client_handle);
  if (c == nullptr) return HIXL_PARAM_INVALID;
  if (list_num == 0 || desc_list == nullptr) return HIXL_PARAM_INVALID;
  if (c->server == nullptr) return HIXL_FAILED;
  copies.reserve(list_num);
  for (uint32_t i = 0; i < list_num; i++) {
    const HixlOneSideOpDesc &d = desc_list[i];
    uintptr_t local = reinterpret_cast<uintptr_t>(d.local_buf);
    uintptr_t remote = reinterpret_cast<uintptr_t>(d.remote_buf);
    size_t len = static_cast<size_t>(d.len);
    if (local == 0 || remote == 0 || len == 0) return HIXL_PARAM_INVALID;
    if (!c->regs.Contains(local, len) || !c->server->regs.Contains(remote, len)) return HIXL_PARAM_INVALID;
    copies.push_back(put ? aclsim::Copy{remote, local, len} : aclsim::Copy{local, remote, len});
  }
  return HIXL_SUCCESS;
}

}  // namespace

extern "C" {

HixlStatus HixlCSServerCreate(const HixlServerDesc *server_desc, const HixlServerConfig *config,
                              HixlServerHandle *server_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  std::string key;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (server_desc == nullptr || server_handle == nullptr || server_desc->server_ip == nullptr) {
      rc = HIXL_PARAM_INVALID;
    } else {
      key = Key(server_desc->server_ip, server_desc->server_port);
      for (Server *s : Servers())
        if (s->key == key) rc = HIXL_FAILED;  // address already in use
      if (rc == HIXL_SUCCESS) {
        auto *s = new Server;
        s->key = key;
        Servers().insert(s);
        *server_handle = s;
      }
    }
  }
  Note("HixlCSServerCreate", Fmt("\"%s\", %p, %p", key.c_str(), static_cast<const void *>(config),
                                 static_cast<void *>(server_handle)),
       rc);
  return rc;
}

HixlStatus HixlCSServerRegMem(HixlServerHandle server_handle, const char *mem_tag, const CommMem *mem,
                              MemHandle *mem_handle) {
  HixlStatus rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Server *s = AsServer(server_handle);
    rc = s == nullptr ? HIXL_PARAM_INVALID : RegMem(s->regs, mem_tag, mem, mem_handle);
  }
  Note("HixlCSServerRegMem", Fmt("%p, ", server_handle) + MemArgs(mem_tag, mem), rc);
  return rc;
}

HixlStatus HixlCSServerListen(HixlServerHandle server_handle, uint32_t backlog) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Server *s = AsServer(server_handle);
    if (s == nullptr)
      rc = HIXL_PARAM_INVALID;
    else
      s->listening = true;
  }
  Note("HixlCSServerListen", Fmt("%p, %u", server_handle, backlog), rc);
  return rc;
}

HixlStatus HixlCSServerUnregMem(HixlServerHandle server_handle, MemHandle mem_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Server *s = AsServer(server_handle);
    if (s == nullptr || mem_handle == nullptr)
      rc = HIXL_PARAM_INVALID;
    else
      s->regs.Remove(mem_handle);  // unknown handle: SUCCESS, nothing done
  }
  Note("HixlCSServerUnregMem", Fmt("%p, %p", server_handle, mem_handle), rc);
  return rc;
}

HixlStatus HixlCSServerDestroy(HixlServerHandle server_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Server *s = AsServer(server_handle);
    if (s == nullptr) {
      rc = HIXL_PARAM_INVALID;
    } else {
      for (Client *c : s->clients) c->server = nullptr;
      Servers().erase(s);
      delete s;
    }
  }
  Note("HixlCSServerDestroy", Fmt("%p", server_handle), rc);
  return rc;
}

HixlStatus HixlCSClientCreate(const HixlClientDesc *client_desc, const HixlClientConfig *config,
                              HixlClientHandle *client_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  std::string key;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    if (client_desc == nullptr || client_handle == nullptr || client_desc->server_ip == nullptr) {
      rc = HIXL_PARAM_INVALID;
    } else {
      key = Key(client_desc->server_ip, client_desc->server_port);
      auto *c = new Client;
      c->key = key;
      Clients().insert(c);
      *client_handle = c;
    }
  }
  Note("HixlCSClientCreate", Fmt("\"%s\", %p, %p", key.c_str(), static_cast<const void *>(config),
                                 static_cast<void *>(client_handle)),
       rc);
  return rc;
}

HixlStatus HixlCSClientConnect(HixlClientHandle client_handle, uint32_t timeout_ms) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Client *c = AsClient(client_handle);
    if (c == nullptr) {
      rc = HIXL_PARAM_INVALID;
    } else if (c->server == nullptr) {
      rc = HIXL_TIMEOUT;  // no listening server at that address (no real waiting)
      for (Server *s : Servers()) {
        if (s->key == c->key && s->listening) {
          c->server = s;
          s->clients.insert(c);
          rc = HIXL_SUCCESS;
        }
      }
    }
  }
  Note("HixlCSClientConnect", Fmt("%p, %u", client_handle, timeout_ms), rc);
  return rc;
}

HixlStatus HixlCSClientGetRemoteMem(HixlClientHandle client_handle, CommMem **remote_mem_list, char ***mem_tag_list,
                                    uint32_t *list_num, uint32_t timeout_ms) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Client *c = AsClient(client_handle);
    if (c == nullptr || remote_mem_list == nullptr || mem_tag_list == nullptr || list_num == nullptr) {
      rc = HIXL_PARAM_INVALID;
    } else if (c->server == nullptr) {
      rc = HIXL_FAILED;
    } else {
      c->remote_mems.clear();
      c->remote_tag_strings.clear();
      c->remote_tags.clear();
      for (const auto &kv : c->server->regs.All()) {
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
  Note("HixlCSClientGetRemoteMem", Fmt("%p, %u", client_handle, timeout_ms), rc);
  return rc;
}

HixlStatus HixlCSClientRegMem(HixlClientHandle client_handle, const char *mem_tag, const CommMem *mem,
                              MemHandle *mem_handle) {
  HixlStatus rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Client *c = AsClient(client_handle);
    rc = c == nullptr ? HIXL_PARAM_INVALID : RegMem(c->regs, mem_tag, mem, mem_handle);
  }
  Note("HixlCSClientRegMem", Fmt("%p, ", client_handle) + MemArgs(mem_tag, mem), rc);
  return rc;
}

HixlStatus HixlCSClientUnregMem(HixlClientHandle client_handle, MemHandle mem_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Client *c = AsClient(client_handle);
    if (c == nullptr || mem_handle == nullptr)
      rc = HIXL_PARAM_INVALID;
    else
      c->regs.Remove(mem_handle);
  }
  Note("HixlCSClientUnregMem", Fmt("%p, %p", client_handle, mem_handle), rc);
  return rc;
}

static HixlStatus BatchSync(const char *api, HixlClientHandle client_handle, uint32_t list_num,
                            const HixlOneSideOpDesc *desc_list, uint32_t timeout_ms, bool put) {
  std::vector<aclsim::Copy> copies;
  HixlStatus rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    rc = Batch(client_handle, list_num, desc_list, put, copies);
  }
  if (rc == HIXL_SUCCESS) aclsim::RunCopies(copies);
  Note(api, Fmt("%p, %u, %p, %u", client_handle, list_num, static_cast<const void *>(desc_list), timeout_ms), rc);
  return rc;
}

static HixlStatus BatchAsync(const char *api, HixlClientHandle client_handle, uint32_t list_num,
                             const HixlOneSideOpDesc *desc_list, CompleteHandle *complete_handle, bool put) {
  std::vector<aclsim::Copy> copies;
  HixlStatus rc;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    rc = complete_handle == nullptr ? HIXL_PARAM_INVALID : Batch(client_handle, list_num, desc_list, put, copies);
    if (rc == HIXL_SUCCESS) {
      void *h = aclsim::NewHandle();
      static_cast<Client *>(client_handle)->completes.insert(h);
      *complete_handle = h;
    }
  }
  if (rc == HIXL_SUCCESS) aclsim::RunCopies(copies);
  Note(api, Fmt("%p, %u, %p", client_handle, list_num, static_cast<const void *>(desc_list)), rc);
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
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Client *c = AsClient(client_handle);
    if (c == nullptr || complete_status == nullptr || c->completes.erase(complete_handle) == 0)
      rc = HIXL_PARAM_INVALID;
    else
      *complete_status = HIXL_COMPLETE_STATUS_COMPLETED;
  }
  Note("HixlCSClientQueryCompleteStatus", Fmt("%p, %p", client_handle, complete_handle), rc);
  return rc;
}

HixlStatus HixlCSClientDestroy(HixlClientHandle client_handle) {
  HixlStatus rc = HIXL_SUCCESS;
  {
    std::lock_guard<std::mutex> g(aclsim::HixlMutex());
    Client *c = AsClient(client_handle);
    if (c == nullptr) {
      rc = HIXL_PARAM_INVALID;
    } else {
      if (c->server != nullptr) c->server->clients.erase(c);
      Clients().erase(c);
      delete c;
    }
  }
  Note("HixlCSClientDestroy", Fmt("%p", client_handle), rc);
  return rc;
}

}  // extern "C"
