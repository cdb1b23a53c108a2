// Internals shared by the simulator's HIXL sources (libcann_hixl.so): hixl::Hixl and its engines
// (hixl.cpp, hixl_engine.cpp, hixl_options.cpp), the transport (hixl_net.cpp) and the HixlCS C
// API (hixl_cs.cpp).
#ifndef ACLSIM_SRC_HIXL_COMMON_H_
#define ACLSIM_SRC_HIXL_COMMON_H_

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hixl/hixl_types.h"

namespace aclsim __attribute__((visibility("hidden"))) {

// Status codes: hixl::SUCCESS, ... (the HixlCS C API uses the same numbers).
// Formats like printf.
std::string Fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

// Counts and (ACLSIM_TRACE=1) traces one call through libacl_rt's counters. `args`, the text
// of the trace line, is only evaluated (formatted) when tracing is on.
#define ACLSIM_NOTE(name, args, code)                                          \
  do {                                                                         \
    if (::aclsim::Tracing())                                                   \
      ::aclsim::Note(name, (args).c_str(), code);                              \
    else                                                                       \
      ::aclsim::Note(name, nullptr, code);                                     \
  } while (0)
// ACLSIM_TRACE=1, as libacl_rt.so read it (once).
bool Tracing();

// The release profile (ACLSIM_CANN_VERSION, default the install root's release, 9.1.0 or 9.2.0, as libacl_rt.so reads it): whether
// the HIXL simulated is the vendor's master after 9.1 (hicann/hixl 9ed283b) rather than tag v9.1.0.
bool ReleaseAfter91();
void Note(const char *name, const char *args, long long code);

// One line on stderr, "[aclsim] hixl: <text>": what the vendor writes to its log on the
// failures a user has to understand (e.g. "Can't find remoteBuffer by key").
// Also passed to ACL's log (acllogRecord at error level) when ACL has it (hixl_log.cpp).
void Log(const char *f, ...) __attribute__((format(printf, 1, 2)));
// A run-log line (the vendor's HIXL_EVENT): through acllogRecord when ACL has it and its runtime
// is newer than 9.2.0, else dropped (the vendor's fallback is its own log file).
void Event(const char *f, ...) __attribute__((format(printf, 1, 2)));
// Writes one line (hixl_log.cpp).
void Record(bool error, const std::string &text);

// A unique, never reused, non-null handle value.
void *NewHandle();

// Address translation for the copies: a simulated device address (MAPPED host registration)
// becomes its host address; anything else is returned unchanged.
void *ToHost(uintptr_t addr);

// Copies `len` bytes inside this process without crashing on an unmapped address
// (process_vm_readv on the process itself). False when some byte could not be copied.
bool SafeCopy(void *dst, const void *src, size_t len);

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
    uintptr_t dev = 0;  // host memory mapped for the device (aclrtHostRegister): its device address
  };
  // Returns 0 (SUCCESS) or 103900 (PARAM_INVALID).
  uint32_t Add(uintptr_t addr, size_t len, int type, const std::string &tag, void *&handle);
  // Adds a registration made elsewhere (a peer's, learned over the wire) under `handle`.
  void Insert(void *handle, const Reg &r);
  // True when the handle was live (and is now removed).
  bool Remove(void *handle);
  // The live registration containing [addr, addr+len) (any type), or nullptr. O(log n).
  const Reg *Find(uintptr_t addr, size_t len) const;
  bool Contains(uintptr_t addr, size_t len) const { return Find(addr, len) != nullptr; }
  // hixl_cs's memory store (HixlMemStore::CheckMemoryForAccess, CheckMergedRegionsAccess): inside
  // one registration, or inside a run of registrations (any type) each starting where the
  // previous one ends, and whose device addresses (when both have one) are contiguous too.
  // `which`: -1 registrations of any type, 0 device only, 1 host only.
  bool ContainsMerged(uintptr_t addr, size_t len, int which = -1) const;
  bool HasHost() const { return !by_addr_[1].empty(); }
  // An identical (addr, len) registration exists.
  bool HasIdentical(uintptr_t addr, size_t len) const;
  size_t Size() const { return by_handle_.size(); }
  void Clear();
  const std::map<void *, Reg> &All() const { return by_handle_; }

 private:
  std::map<void *, Reg> by_handle_;
  // [host] addr -> handle; no overlaps between non-empty ranges of one type
  std::multimap<uintptr_t, void *> by_addr_[2];
  // The live registration (of `which` type, as in ContainsMerged) with len > 0 containing
  // `addr`, or starting exactly at it (`starting`), or nullptr.
  const Reg *At(uintptr_t addr, int which, bool starting) const;
};

// The registrations as bytes and back (for the wire).
std::string EncodeRegs(const RegTable &regs);
bool DecodeRegs(const std::string &bytes, size_t offset, RegTable &out);

// "ip", "ip:port", "[v6]", "[v6]:port" (the vendor's ParseListenInfo): false when the ip is not
// a valid address or the port not a number. `port` is -1 without one.
bool ParseEndpoint(const std::string &name, std::string &ip, int &port);

// A number of milliseconds from now on the monotonic clock.
int64_t NowMs();

}  // namespace aclsim

#endif  // ACLSIM_SRC_HIXL_COMMON_H_
