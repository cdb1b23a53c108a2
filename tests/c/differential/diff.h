// The differential test's driver (tests/differential.rs, testkit::differential): shared parts.
//
// A script is one step a line, `<op> <integer args...>`; each API family (acl.cpp, hixl.cpp,
// hixl_cs.cpp, ...) runs the ops it knows. Memory is named by (kind, page, byte offset) into
// the pools `main.cpp` sets up, so a script means the same in every run however the process's
// layout differs.
#ifndef REGCHECK_TESTS_DIFFERENTIAL_H_
#define REGCHECK_TESTS_DIFFERENTIAL_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace diff {

constexpr int kPoolPages = 80;
constexpr int kSlots = 4;
constexpr int kSlotPages = 4;

// Memory kinds (keep in step with testkit/src/differential/mem.rs).
enum Kind {
  kHeap,             // posix_memalign: pageable
  kMallocHost,       // aclrtMallocHost through the PLT
  kMallocHostDlsym,  // aclrtMallocHost through dlopen + dlsym (invisible to LD_PRELOAD alone)
  kAnon,             // mmap MAP_ANONYMOUS: pageable
  kStack,            // main's stack
  kFile,             // a MAP_SHARED mapping of a regular file
  kReadOnly,         // mmap PROT_READ
  kHole,             // mapped, then unmapped, far from everything else
  kLocked,           // mmap + mlock
  kKernel,           // the kernel half
  kDevice,           // aclrtMalloc
  kSlot0,            // kSlots aclrtMallocHost allocations (mh/fh steps reallocate and free them)
  kKinds = kSlot0 + kSlots
};

struct World {
  size_t page = 4096;
  char *base[kKinds] = {};
  void *acl = nullptr;   // dlopen("libacl_rt.so")
  void *hixl = nullptr;  // dlopen("libcann_hixl.so")
  char *Addr(long long kind, long long page_index, long long off) const;
};

struct Step {
  const char *op;
  long long a[12];
  int n;
};

struct Result {
  long long rc = 0;
  unsigned long long fwd = 0;  // calls of the step's function the simulator received
};

// An API family: `Setup` once, before the script; `Knows(op)`; `Run` makes the call.
struct Family {
  const char *name;
  void (*Setup)(World &);
  bool (*Knows)(const char *op);
  void (*Run)(World &, const Step &, Result &);
};

extern const Family kAclFamily;
extern const Family kHixlFamily;
extern const Family kHixlCsFamily;

// dlsym or die.
void *Sym(void *lib, const char *name);
// `f` = dlsym(lib, name), or die.
template <class T>
void Load(T &f, void *lib, const char *name) {
  f = reinterpret_cast<T>(Sym(lib, name));
}

// The simulator's count of calls to `name` (aclsimGetCallCount).
unsigned long long Count(const char *name);

// Runs `call`, recording its code and whether it reached the simulator.
template <class F>
void Counted(Result &r, const char *name, F call) {
  const unsigned long long before = Count(name);
  r.rc = static_cast<long long>(call());
  r.fwd = Count(name) - before;
}

// Keeps the handle a registration returned. A handle is the address of the vendor's object, and
// an object freed by a deregistration may be reused for a later one: how often depends on the
// heap's layout, which regcheck's own allocations change. So an earlier (stale) entry equal to
// the new handle is replaced by a bogus handle that can alias nothing; else a later
// deregistration of the stale entry would free the live registration in one run only.
template <class H>
void Keep(std::vector<H> &handles, H h) {
  for (size_t i = 0; i < handles.size(); i++)
    if (handles[i] == h) handles[i] = reinterpret_cast<H>(uintptr_t{0xdead0} + 16 * (i + 1));
  handles.push_back(h);
}

}  // namespace diff

#endif  // REGCHECK_TESTS_DIFFERENTIAL_H_
