// The hixl::Hixl family of the differential driver: two engines in one process, 0 and 1, each
// with a name of its own ("127.0.0.1:<port>", aclsimClaimPort), "the other" being 1 - E.
// Called through the PLT only (mangled C++ members).
//
//   hi E O                         Initialize(name[E], options O): 0 none (comm engine, default
//                                  buffer pool), 1 BufferPool "0:0" (comm, no pool), 2 hixl_cs over
//                                  roce:device, 3 hixl_cs over uboe:device
//   hf E                           Finalize
//   hr E K P OFF LEN T             RegisterMem({addr(K, P, OFF), LEN}, T), the handle kept in order
//   hd E I                         DeregisterMem(handle I (mod the handles kept); a bogus one if none)
//   hc E / hu E                    Connect / Disconnect(the other, 1000 ms)
//   hx E OP LK LP LOFF RK RP ROFF LEN
//                                  TransferSync(the other, OP 0 READ / 1 WRITE,
//                                  {addr(LK, LP, LOFF), addr(RK, RP, ROFF), LEN}, 1000 ms)
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "aclsim_port.h"
#include "diff.h"
#include "hixl/hixl.h"

namespace diff {
namespace {

hixl::Hixl *engines;  // never destroyed: the run ends with _exit
std::string names[2];
std::vector<hixl::MemHandle> handles;
// Which engine each kept handle came from, and the kept handles whose object the vendor has
// freed (deregistered, or its engine finalized). A freed object's address may come back for a
// registration the vendor makes itself at Initialize (the buffer pool's), in one run's heap
// layout and not in another's: so at each Initialize the freed handles become bogus ones, and
// a later DeregisterMem of them never frees the pool's registration in one run only.
std::map<hixl::MemHandle, int> owner;
std::vector<hixl::MemHandle> freed;

void Forget(hixl::MemHandle h) {
  for (size_t i = 0; i < handles.size(); i++)
    if (handles[i] == h) handles[i] = reinterpret_cast<hixl::MemHandle>(uintptr_t{0xbad00} + 16 * (i + 1));
  owner.erase(h);
}

void Setup(World &) {
  engines = new hixl::Hixl[2];
  for (auto &n : names) n = "127.0.0.1:" + std::to_string(aclsimClaimPort());
}

const char *const kOps[] = {"hi", "hf", "hr", "hd", "hc", "hu", "hx"};

bool Knows(const char *op) {
  for (const char *k : kOps)
    if (strcmp(op, k) == 0) return true;
  return false;
}

long long Arg(const Step &s, int i) { return i < s.n ? s.a[i] : 0; }

std::map<hixl::AscendString, hixl::AscendString> Options(long long which) {
  std::map<hixl::AscendString, hixl::AscendString> o;
  switch (which) {
    case 1:
      o[hixl::OPTION_BUFFER_POOL] = "0:0";
      break;
    case 2:
      o[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] = "{\"comm_resource_config.protocol_desc\": [\"roce:device\"]}";
      break;
    case 3:
      o[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] = "{\"comm_resource_config.protocol_desc\": [\"uboe:device\"]}";
      break;
    default:
      break;
  }
  return o;
}

void Run(World &w, const Step &s, Result &r) {
  const int e = Arg(s, 0) == 1 ? 1 : 0;
  hixl::Hixl &h = engines[e];
  const hixl::AscendString other(names[1 - e].c_str());
  const char *op = s.op;
  if (strcmp(op, "hi") == 0) {
    const auto options = Options(Arg(s, 1));
    for (hixl::MemHandle f : freed) Forget(f);
    freed.clear();
    Counted(r, "Hixl::Initialize", [&] { return h.Initialize(names[e].c_str(), options); });
  } else if (strcmp(op, "hf") == 0) {
    Counted(r, "Hixl::Finalize", [&] {
      h.Finalize();
      return 0;
    });
    for (const auto &kv : owner)
      if (kv.second == e) freed.push_back(kv.first);
  } else if (strcmp(op, "hr") == 0) {
    hixl::MemDesc mem{};
    mem.addr = reinterpret_cast<uintptr_t>(w.Addr(Arg(s, 1), Arg(s, 2), Arg(s, 3)));
    mem.len = static_cast<size_t>(Arg(s, 4));
    hixl::MemHandle handle = nullptr;
    Counted(r, "Hixl::RegisterMem",
            [&] { return h.RegisterMem(mem, static_cast<hixl::MemType>(Arg(s, 5)), handle); });
    if (r.rc == hixl::SUCCESS) {
      Keep(handles, handle);
      owner[handle] = e;
      freed.erase(std::remove(freed.begin(), freed.end(), handle), freed.end());  // live again
    }
  } else if (strcmp(op, "hd") == 0) {
    hixl::MemHandle handle = handles.empty() ? reinterpret_cast<hixl::MemHandle>(0xdead0)
                                             : handles[static_cast<size_t>(Arg(s, 1)) % handles.size()];
    Counted(r, "Hixl::DeregisterMem", [&] { return h.DeregisterMem(handle); });
    auto o = owner.find(handle);
    if (r.rc == hixl::SUCCESS && o != owner.end() && o->second == e) freed.push_back(handle);
  } else if (strcmp(op, "hc") == 0) {
    Counted(r, "Hixl::Connect", [&] { return h.Connect(other, 1000); });
  } else if (strcmp(op, "hu") == 0) {
    Counted(r, "Hixl::Disconnect", [&] { return h.Disconnect(other, 1000); });
  } else if (strcmp(op, "hx") == 0) {
    hixl::TransferOpDesc desc{};
    desc.local_addr = reinterpret_cast<uintptr_t>(w.Addr(Arg(s, 2), Arg(s, 3), Arg(s, 4)));
    desc.remote_addr = reinterpret_cast<uintptr_t>(w.Addr(Arg(s, 5), Arg(s, 6), Arg(s, 7)));
    desc.len = static_cast<size_t>(Arg(s, 8));
    std::vector<hixl::TransferOpDesc> ops{desc};
    const hixl::TransferOp dir = Arg(s, 1) == 1 ? hixl::WRITE : hixl::READ;
    Counted(r, "Hixl::TransferSync", [&] { return h.TransferSync(other, dir, ops, 1000); });
  }
}

}  // namespace

const Family kHixlFamily = {"hixl", Setup, Knows, Run};

}  // namespace diff
