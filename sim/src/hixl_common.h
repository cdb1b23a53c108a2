// Internals shared by the simulator's hixl::Hixl (hixl.cpp) and HixlCS C API (hixl_cs.cpp).
#ifndef ACLSIM_SRC_HIXL_COMMON_H_
#define ACLSIM_SRC_HIXL_COMMON_H_

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace aclsim __attribute__((visibility("hidden"))) {

// The one mutex of the simulated HIXL library. Never held while calling ACL or printing.
std::mutex &HixlMutex();

// Formats like printf.
std::string Fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

// Counts and (ACLSIM_TRACE=1) traces one call through libacl_rt's counters.
void Note(const char *name, const std::string &args, long long code);

// A unique, never reused, non-null handle value.
void *NewHandle();

// Address translation for the copies: a simulated device address (MAPPED host registration)
// becomes its host address; anything else is returned unchanged.
void *ToHost(uintptr_t addr);

// One copy decided under the lock and performed after it.
struct Copy {
  uintptr_t dst;
  uintptr_t src;
  size_t len;
};
void RunCopies(const std::vector<Copy> &copies);

// The memory registrations of one engine / server / client, with the vendor's checks:
// addr 0 or addr+len overflow -> PARAM_INVALID; identical (addr, len, type) -> the same handle;
// overlap with a registration of the same type that is not identical -> PARAM_INVALID.
// `len` 0 and the type value are not checked (any non-zero type is host).
class RegTable {
 public:
  struct Reg {
    uintptr_t addr;
    size_t len;
    bool host;
    std::string tag;
  };
  // Returns 0 (SUCCESS) or 103900 (PARAM_INVALID).
  uint32_t Add(uintptr_t addr, size_t len, int type, const std::string &tag, void *&handle);
  // True when the handle was live (and is now removed).
  bool Remove(void *handle);
  // [addr, addr+len) inside one live registration (any type). O(log n).
  bool Contains(uintptr_t addr, size_t len) const;
  size_t Size() const { return by_handle_.size(); }
  void Clear();
  const std::map<void *, Reg> &All() const { return by_handle_; }

 private:
  std::map<void *, Reg> by_handle_;
  // [host] addr -> handle; no overlaps between non-empty ranges of one type
  std::multimap<uintptr_t, void *> by_addr_[2];
};

}  // namespace aclsim

#endif  // ACLSIM_SRC_HIXL_COMMON_H_
