// The ACL family of the differential driver. Every op's first argument V says how the call is
// made: 0 through the PLT (what LD_PRELOAD interposes), 1 through dlopen + dlsym of
// libacl_rt.so (what only the LD_AUDIT module sees).
//
//   set V D / reset V D          aclrtSetDevice / aclrtResetDevice(D)
//   resetf V D                   aclrtResetDeviceForce(D)
//   r2 V K P OFF SIZE FLAG       aclrtHostRegisterV2(addr(K, P, OFF), SIZE, FLAG)
//   r1 V K P OFF SIZE TYPE       aclrtHostRegister(addr, SIZE, TYPE, &dev)
//   u V K P OFF                  aclrtHostUnregister(addr)
//   dp V K P OFF                 aclrtHostGetDevicePointer(addr, &dev, 0)
//   mh V S / fh V S              aclrtMallocHost of slot S (kSlotPages pages; never over a block a
//                                slot had before) / aclrtFreeHost of it
#include <string.h>

#include <vector>

#include "acl/acl.h"
#include "diff.h"

namespace diff {
namespace {

struct Api {
  aclError (*set)(int32_t);
  aclError (*reset)(int32_t);
  aclError (*reset_force)(int32_t);
  aclError (*reg2)(void *, uint64_t, uint32_t);
  aclError (*reg1)(void *, uint64_t, aclrtHostRegisterType, void **);
  aclError (*unreg)(void *);
  aclError (*devptr)(void *, void **, uint32_t);
  aclError (*malloc_host)(void **, size_t);
  aclError (*free_host)(void *);
};

Api plt, dl;

void Setup(World &w) {
  plt = Api{aclrtSetDevice, aclrtResetDevice, aclrtResetDeviceForce, aclrtHostRegisterV2, aclrtHostRegister,
            aclrtHostUnregister, aclrtHostGetDevicePointer, aclrtMallocHost, aclrtFreeHost};
  Load(dl.set, w.acl, "aclrtSetDevice");
  Load(dl.reset, w.acl, "aclrtResetDevice");
  Load(dl.reset_force, w.acl, "aclrtResetDeviceForce");
  Load(dl.reg2, w.acl, "aclrtHostRegisterV2");
  Load(dl.reg1, w.acl, "aclrtHostRegister");
  Load(dl.unreg, w.acl, "aclrtHostUnregister");
  Load(dl.devptr, w.acl, "aclrtHostGetDevicePointer");
  Load(dl.malloc_host, w.acl, "aclrtMallocHost");
  Load(dl.free_host, w.acl, "aclrtFreeHost");
}

const char *const kOps[] = {"set", "reset", "resetf", "r2", "r1", "u", "dp", "mh", "fh"};

// Every block a slot has had.
std::vector<char *> slots_ever;

bool Reused(char *p, size_t len) {
  for (char *q : slots_ever)
    if (p < q + len && q < p + len) return true;
  return false;
}

bool Knows(const char *op) {
  for (const char *k : kOps)
    if (strcmp(op, k) == 0) return true;
  return false;
}

long long Arg(const Step &s, int i) { return i < s.n ? s.a[i] : 0; }

void Run(World &w, const Step &s, Result &r) {
  const Api &api = Arg(s, 0) == 1 ? dl : plt;
  const char *op = s.op;
  void *dev = nullptr;
  if (strcmp(op, "set") == 0) {
    Counted(r, "aclrtSetDevice", [&] { return api.set(static_cast<int32_t>(Arg(s, 1))); });
  } else if (strcmp(op, "reset") == 0) {
    Counted(r, "aclrtResetDevice", [&] { return api.reset(static_cast<int32_t>(Arg(s, 1))); });
  } else if (strcmp(op, "resetf") == 0) {
    Counted(r, "aclrtResetDeviceForce", [&] { return api.reset_force(static_cast<int32_t>(Arg(s, 1))); });
  } else if (strcmp(op, "r2") == 0) {
    char *p = w.Addr(Arg(s, 1), Arg(s, 2), Arg(s, 3));
    Counted(r, "aclrtHostRegisterV2", [&] {
      return api.reg2(p, static_cast<uint64_t>(Arg(s, 4)), static_cast<uint32_t>(Arg(s, 5)));
    });
  } else if (strcmp(op, "r1") == 0) {
    char *p = w.Addr(Arg(s, 1), Arg(s, 2), Arg(s, 3));
    Counted(r, "aclrtHostRegister", [&] {
      return api.reg1(p, static_cast<uint64_t>(Arg(s, 4)), static_cast<aclrtHostRegisterType>(Arg(s, 5)), &dev);
    });
  } else if (strcmp(op, "u") == 0) {
    char *p = w.Addr(Arg(s, 1), Arg(s, 2), Arg(s, 3));
    Counted(r, "aclrtHostUnregister", [&] { return api.unreg(p); });
  } else if (strcmp(op, "dp") == 0) {
    char *p = w.Addr(Arg(s, 1), Arg(s, 2), Arg(s, 3));
    Counted(r, "aclrtHostGetDevicePointer", [&] { return api.devptr(p, &dev, 0); });
  } else if (strcmp(op, "mh") == 0) {
    const long long slot = Arg(s, 1) % kSlots;
    void *p = nullptr;
    const size_t len = kSlotPages * w.page;
    Counted(r, "aclrtMallocHost", [&] { return api.malloc_host(&p, len); });
    if (r.rc == ACL_SUCCESS) {
      // Memory an earlier slot had is allocated again in one run's layout and not in another's
      // (regcheck's own allocations move it), and what was registered there stays in the
      // runtime's tables after the free: a block over an earlier slot is kept, unused, and
      // another one asked for.
      for (int i = 0; i < 8 && Reused(static_cast<char *>(p), len); i++) {
        void *q = nullptr;
        if (api.malloc_host(&q, len) != ACL_SUCCESS) break;
        p = q;
      }
      slots_ever.push_back(static_cast<char *>(p));
      w.base[kSlot0 + slot] = static_cast<char *>(p);
    }
  } else if (strcmp(op, "fh") == 0) {
    const long long slot = Arg(s, 1) % kSlots;
    Counted(r, "aclrtFreeHost", [&] { return api.free_host(w.base[kSlot0 + slot]); });
    if (r.rc == ACL_SUCCESS) w.base[kSlot0 + slot] = nullptr;
  }
}

}  // namespace

const Family kAclFamily = {"acl", Setup, Knows, Run};

}  // namespace diff
