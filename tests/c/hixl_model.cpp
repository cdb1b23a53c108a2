// Runs a HIXL call script against the simulator under regcheck, for the model-based property
// test (tests/model.rs). Two engines, 0 and 1, each listening on a port of its own (aclsimClaimPort), each with a
// 16-page aclrtMallocHost pool. One operation per line on stdin:
//
//   r E P N          engine E: RegisterMem(pool[E] + P pages, N pages, MEM_HOST)
//   d E I            engine E: DeregisterMem(handle I of the table of handles returned so far;
//                    a handle never returned when the table is empty)
//   c E / u E        engine E: Connect / Disconnect the other engine
//   x E I OFF LEN    engine E: TransferSync(WRITE) to the other engine of LEN bytes from the
//                    registration behind handle I + OFF (pool[E] + OFF when I is past the
//                    table) to the other engine's pool + OFF
//
// Prints per operation: `op <i> rc <code> fwd <calls the simulator received> h <handle> live
// <regcheck_live_hixl_registrations()>`.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "aclsim.h"
#include "hixl/hixl.h"
#include "regcheck.h"

namespace {

struct Entry {
  int engine;
  uintptr_t addr;
  hixl::MemHandle handle;
};

}  // namespace

int main() {
  if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0) return 2;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  hixl::Hixl engines[2];
  std::string names[2];
  char *pool[2];
  std::map<hixl::AscendString, hixl::AscendString> options;
  for (int e = 0; e < 2; e++) {
    names[e] = "127.0.0.1:" + std::to_string(aclsimClaimPort());
    if (engines[e].Initialize(names[e].c_str(), options) != hixl::SUCCESS) return 2;
    void *p = nullptr;
    if (aclrtMallocHost(&p, 16 * page) != 0) return 2;
    pool[e] = static_cast<char *>(p);
  }
  std::vector<Entry> table;
  char line[128];
  for (int i = 0; fgets(line, sizeof line, stdin) != nullptr; i++) {
    char op[4] = {0};
    unsigned long long a = 0, b = 0, c = 0, d = 0;
    if (sscanf(line, "%3s %llu %llu %llu %llu", op, &a, &b, &c, &d) < 2 || a > 1) return 2;
    hixl::Hixl &h = engines[a];
    const char *other = names[1 - a].c_str();
    const char *name = nullptr;
    long long rc = 0;
    hixl::MemHandle handle = nullptr;
    if (!strcmp(op, "r")) {
      name = "Hixl::RegisterMem";
    } else if (!strcmp(op, "d")) {
      name = "Hixl::DeregisterMem";
    } else if (!strcmp(op, "c")) {
      name = "Hixl::Connect";
    } else if (!strcmp(op, "u")) {
      name = "Hixl::Disconnect";
    } else if (!strcmp(op, "x")) {
      name = "Hixl::TransferSync";
    } else {
      return 2;
    }
    uint64_t before = aclsimGetCallCount(name);
    if (!strcmp(op, "r")) {
      hixl::MemDesc mem{};
      mem.addr = reinterpret_cast<uintptr_t>(pool[a] + b * page);
      mem.len = c * page;
      rc = h.RegisterMem(mem, hixl::MEM_HOST, handle);
      if (rc == hixl::SUCCESS) table.push_back({static_cast<int>(a), mem.addr, handle});
      else handle = nullptr;
    } else if (!strcmp(op, "d")) {
      handle = table.empty() ? reinterpret_cast<hixl::MemHandle>(0xdead0) : table[b % table.size()].handle;
      rc = h.DeregisterMem(handle);
    } else if (!strcmp(op, "c")) {
      rc = h.Connect(other, 2000);
    } else if (!strcmp(op, "u")) {
      rc = h.Disconnect(other, 2000);
    } else {
      uintptr_t local = b < table.size() ? table[b].addr + c : reinterpret_cast<uintptr_t>(pool[a] + c);
      std::vector<hixl::TransferOpDesc> ops{{local, reinterpret_cast<uintptr_t>(pool[1 - a] + c), d}};
      rc = h.TransferSync(other, hixl::WRITE, ops, 2000);
    }
    printf("op %d rc %lld fwd %llu h %llu live %zu\n", i, rc,
           static_cast<unsigned long long>(aclsimGetCallCount(name) - before),
           static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(handle)), regcheck_live_hixl_registrations());
    fflush(stdout);
  }
  for (auto &e : engines) e.Finalize();
  return 0;
}
