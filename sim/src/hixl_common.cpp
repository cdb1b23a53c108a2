// Helpers shared by the simulator's HIXL sources: formatting and call notes, handles, safe
// copies, the registration table and its wire form, engine-name parsing.
#include "hixl_common.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>

#include "aclsim.h"
#include "sim_format.h"

namespace aclsim {

std::string Fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  std::string out = aclsim_format::VFormat(f, ap);
  va_end(ap);
  return out;
}

bool ReleaseAfter91() {
  const char *e = getenv("ACLSIM_CANN_VERSION");
  unsigned long ma = 0, mi = 0;
  if (sscanf(e != nullptr ? e : ACLSIM_DEFAULT_CANN_VERSION, "%lu.%lu", &ma, &mi) < 2) return false;
  return ma > 9 || (ma == 9 && mi > 1);
}

bool Tracing() {
  static const bool on = aclsimTraceEnabled() != 0;
  return on;
}

void Note(const char *name, const char *args, long long code) { aclsimNoteCall(name, args, code); }

void Log(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  std::string out = aclsim_format::VFormat(f, ap);
  va_end(ap);
  Record(true, out);
}

void Event(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  std::string out = aclsim_format::VFormat(f, ap);
  va_end(ap);
  Record(false, out);
}

void *NewHandle() {
  static std::atomic<uintptr_t> next{0x4e4c0000};
  return reinterpret_cast<void *>(next.fetch_add(0x10));
}

void *ToHost(uintptr_t addr) {
  void *h = aclsimDeviceToHost(reinterpret_cast<const void *>(addr));
  return h != nullptr ? h : reinterpret_cast<void *>(addr);
}

// Without process_vm_readv (a seccomp profile that refuses it with EPERM, as container runtimes'
// default ones do; qemu-user, which answers ENOSYS): the bytes go through a pipe, whose write
// and read fail with EFAULT on memory that cannot be read or written instead of crashing.
static bool PipeCopy(void *dst, const void *src, size_t len) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  const char *from = static_cast<const char *>(src);
  char *to = static_cast<char *>(dst);
  // as memmove: a destination above an overlapping source is copied from the end
  const bool backwards = to > from && to < from + len;
  bool ok = true;
  for (size_t done = 0; ok && done < len;) {
    const size_t chunk = len - done < 4096 ? len - done : 4096;  // below the pipe's capacity
    const size_t at = backwards ? len - done - chunk : done;
    ok = write(fds[1], from + at, chunk) == static_cast<ssize_t>(chunk) &&
         read(fds[0], to + at, chunk) == static_cast<ssize_t>(chunk);
    done += chunk;
  }
  close(fds[0]);
  close(fds[1]);
  return ok;
}

bool SafeCopy(void *dst, const void *src, size_t len) {
  if (len == 0) return true;
  struct iovec local {
    dst, len
  };
  struct iovec remote {
    const_cast<void *>(src), len
  };
  // ACLSIM_NO_PROCESS_VM_READV=1 (tests): as where the call is refused
  static const bool refused = getenv("ACLSIM_NO_PROCESS_VM_READV") != nullptr;
  if (refused) return PipeCopy(dst, src, len);
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(len)) return true;
  if (n < 0 && (errno == ENOSYS || errno == EPERM)) return PipeCopy(dst, src, len);
  return false;
}

uint32_t RegTable::Add(uintptr_t addr, size_t len, int type, const std::string &tag, void *&handle) {
  if (addr == 0) return hixl::PARAM_INVALID;
  if (addr + len < addr) return hixl::PARAM_INVALID;
  const bool host = type != 0;
  auto &idx = by_addr_[host ? 1 : 0];
  uintptr_t end = addr + len;
  // identical registration: the same handle
  auto range = idx.equal_range(addr);
  for (auto it = range.first; it != range.second; ++it) {
    const Reg &r = by_handle_.at(it->second);
    if (r.len == len) {
      handle = it->second;
      return hixl::SUCCESS;
    }
  }
  // overlap with a non-identical registration of the same type
  if (len > 0) {
    auto it = idx.lower_bound(end);
    while (it != idx.begin()) {
      --it;
      const Reg &r = by_handle_.at(it->second);
      if (r.len == 0) continue;
      if (r.addr + r.len > addr) return hixl::PARAM_INVALID;
      break;
    }
  }
  void *h = NewHandle();
  Insert(h, Reg{addr, len, host, tag});
  handle = h;
  return hixl::SUCCESS;
}

void RegTable::Insert(void *handle, const Reg &r) {
  by_handle_[handle] = r;
  by_addr_[r.host ? 1 : 0].emplace(r.addr, handle);
}

bool RegTable::Remove(void *handle) {
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return false;
  auto &idx = by_addr_[it->second.host ? 1 : 0];
  auto range = idx.equal_range(it->second.addr);
  for (auto j = range.first; j != range.second; ++j) {
    if (j->second == handle) {
      idx.erase(j);
      break;
    }
  }
  by_handle_.erase(it);
  return true;
}

const RegTable::Reg *RegTable::Find(uintptr_t addr, size_t len) const {
  if (addr + len < addr) return nullptr;
  for (const auto &idx : by_addr_) {
    auto it = idx.upper_bound(addr);
    while (it != idx.begin()) {
      --it;
      const Reg &r = by_handle_.at(it->second);
      if (r.len == 0) continue;
      if (addr - r.addr <= r.len && len <= r.len - (addr - r.addr)) return &r;
      break;
    }
  }
  return nullptr;
}

const RegTable::Reg *RegTable::At(uintptr_t addr, int which, bool starting) const {
  for (int t = 0; t < 2; t++) {
    if (which != -1 && which != t) continue;
    const auto &idx = by_addr_[t];
    if (starting) {
      auto range = idx.equal_range(addr);
      for (auto it = range.first; it != range.second; ++it)
        if (by_handle_.at(it->second).len > 0) return &by_handle_.at(it->second);
      continue;
    }
    auto it = idx.upper_bound(addr);
    while (it != idx.begin()) {
      --it;
      const Reg &r = by_handle_.at(it->second);
      if (r.len == 0) continue;
      if (addr - r.addr < r.len) return &r;
      break;
    }
  }
  return nullptr;
}

bool RegTable::ContainsMerged(uintptr_t addr, size_t len, int which) const {
  if (len == 0 || addr + len < addr) return false;
  const uintptr_t end = addr + len;
  const Reg *r = At(addr, which, false);
  while (r != nullptr) {
    const uintptr_t r_end = r->addr + r->len;
    if (r_end >= end) return true;
    const Reg *next = At(r_end, which, true);
    if (next != nullptr && r->dev != 0 && next->dev != 0 && r->dev + r->len != next->dev) return false;
    r = next;
  }
  return false;
}

bool RegTable::HasIdentical(uintptr_t addr, size_t len) const {
  for (const auto &idx : by_addr_) {
    auto range = idx.equal_range(addr);
    for (auto it = range.first; it != range.second; ++it)
      if (by_handle_.at(it->second).len == len) return true;
  }
  return false;
}

void RegTable::Clear() {
  by_handle_.clear();
  by_addr_[0].clear();
  by_addr_[1].clear();
}

namespace {
template <typename T>
void Put(std::string &out, T v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof v);
}
template <typename T>
bool Get(const std::string &in, size_t &pos, T &v) {
  if (in.size() - pos < sizeof v || pos > in.size()) return false;
  memcpy(&v, in.data() + pos, sizeof v);
  pos += sizeof v;
  return true;
}
}  // namespace

std::string EncodeRegs(const RegTable &regs) {
  std::string out;
  Put<uint64_t>(out, regs.Size());
  for (const auto &kv : regs.All()) {
    Put<uint64_t>(out, reinterpret_cast<uintptr_t>(kv.first));
    Put<uint64_t>(out, kv.second.addr);
    Put<uint64_t>(out, kv.second.len);
    Put<uint32_t>(out, kv.second.host ? 1 : 0);
    Put<uint64_t>(out, kv.second.dev);
    Put<uint32_t>(out, static_cast<uint32_t>(kv.second.tag.size()));
    out += kv.second.tag;
  }
  return out;
}

bool DecodeRegs(const std::string &bytes, size_t pos, RegTable &out) {
  uint64_t n = 0;
  if (!Get(bytes, pos, n)) return false;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t handle = 0, addr = 0, len = 0, dev = 0;
    uint32_t host = 0, tag_len = 0;
    if (!Get(bytes, pos, handle) || !Get(bytes, pos, addr) || !Get(bytes, pos, len) || !Get(bytes, pos, host) ||
        !Get(bytes, pos, dev) || !Get(bytes, pos, tag_len) || bytes.size() - pos < tag_len)
      return false;
    std::string tag = bytes.substr(pos, tag_len);
    pos += tag_len;
    out.Insert(reinterpret_cast<void *>(static_cast<uintptr_t>(handle)),
               RegTable::Reg{static_cast<uintptr_t>(addr), static_cast<size_t>(len), host != 0, tag,
                             static_cast<uintptr_t>(dev)});
  }
  return true;
}

bool ParseEndpoint(const std::string &name, std::string &ip, int &port) {
  std::string port_str;
  bool has_port = false;
  size_t left = name.find('[');
  size_t right = name.find(']');
  if (left != std::string::npos && right != std::string::npos && left < right) {
    ip = name.substr(left + 1, right - left - 1);
    size_t colon = name.find(':', right);
    if (colon != std::string::npos) {
      has_port = true;
      port_str = name.substr(colon + 1);
    }
  } else {
    size_t colon = name.find(':');
    ip = name.substr(0, colon);
    if (colon != std::string::npos) {
      has_port = true;
      port_str = name.substr(colon + 1);
      if (port_str.find(':') != std::string::npos) return false;
    }
  }
  unsigned char buf[sizeof(struct in6_addr)];
  if (inet_pton(AF_INET, ip.c_str(), buf) != 1 && inet_pton(AF_INET6, ip.c_str(), buf) != 1) return false;
  port = -1;
  if (has_port) {
    if (port_str.empty() || port_str.size() > 9) return false;
    for (char c : port_str)
      if (c < '0' || c > '9') return false;
    port = atoi(port_str.c_str());
  }
  return true;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace aclsim
