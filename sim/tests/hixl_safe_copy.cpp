// The simulator's engine copies a transfer's bytes without crashing on memory that is not
// mapped: a transfer whose local range is unmapped fails (FAILED), one whose ranges are mapped
// moves the bytes, overlapping copies included. Run with ACLSIM_NO_PROCESS_VM_READV=1 too: where
// process_vm_readv is refused (a container's seccomp profile, qemu-user) the copies go through a
// pipe instead. Prints "checks=N failures=M".
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"

static int checks, failures;
#define CHECK(cond)                                              \
  do {                                                           \
    checks++;                                                    \
    if (!(cond)) {                                               \
      failures++;                                                \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                            \
  } while (0)

int main() {
  if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0) return 2;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = 3 * page;  // more than one chunk of the pipe path
  hixl::Hixl a, b;
  std::map<hixl::AscendString, hixl::AscendString> options;
  const std::string name_a = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  const std::string name_b = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  if (a.Initialize(name_a.c_str(), options) != hixl::SUCCESS) return 2;
  if (b.Initialize(name_b.c_str(), options) != hixl::SUCCESS) return 2;
  char *mine = static_cast<char *>(mmap(nullptr, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  char *theirs = static_cast<char *>(mmap(nullptr, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  char *gone = static_cast<char *>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (mine == MAP_FAILED || theirs == MAP_FAILED || gone == MAP_FAILED) return 2;
  munmap(gone, len);
  for (size_t i = 0; i < 2 * len; i++) mine[i] = static_cast<char>(i * 7);
  hixl::MemHandle ha = nullptr, hb = nullptr, hg = nullptr;
  CHECK(a.RegisterMem(hixl::MemDesc{reinterpret_cast<uintptr_t>(mine), 2 * len}, hixl::MEM_HOST, ha) == hixl::SUCCESS);
  CHECK(b.RegisterMem(hixl::MemDesc{reinterpret_cast<uintptr_t>(theirs), 2 * len}, hixl::MEM_HOST, hb) == hixl::SUCCESS);
  CHECK(a.Connect(name_b.c_str(), 2000) == hixl::SUCCESS);

  // mapped on both sides: the bytes arrive
  std::vector<hixl::TransferOpDesc> ops{{reinterpret_cast<uintptr_t>(mine), reinterpret_cast<uintptr_t>(theirs), len}};
  CHECK(a.TransferSync(name_b.c_str(), hixl::WRITE, ops, 2000) == hixl::SUCCESS);
  CHECK(memcmp(mine, theirs, len) == 0);
  // a READ back into an overlapping range of our own memory: as memmove
  std::vector<char> want(theirs, theirs + len);
  std::vector<hixl::TransferOpDesc> back{{reinterpret_cast<uintptr_t>(mine + page), reinterpret_cast<uintptr_t>(theirs), len}};
  CHECK(a.TransferSync(name_b.c_str(), hixl::READ, back, 2000) == hixl::SUCCESS);
  CHECK(memcmp(mine + page, want.data(), len) == 0);

  // the local range is not mapped: the transfer fails, the process lives on
  CHECK(a.RegisterMem(hixl::MemDesc{reinterpret_cast<uintptr_t>(gone), len}, hixl::MEM_HOST, hg) == hixl::SUCCESS);
  std::vector<hixl::TransferOpDesc> from_gone{{reinterpret_cast<uintptr_t>(gone), reinterpret_cast<uintptr_t>(theirs), len}};
  CHECK(a.TransferSync(name_b.c_str(), hixl::WRITE, from_gone, 2000) != hixl::SUCCESS);
  std::vector<hixl::TransferOpDesc> into_gone{{reinterpret_cast<uintptr_t>(gone), reinterpret_cast<uintptr_t>(theirs), len}};
  CHECK(a.TransferSync(name_b.c_str(), hixl::READ, into_gone, 2000) != hixl::SUCCESS);

  CHECK(a.Disconnect(name_b.c_str(), 2000) == hixl::SUCCESS);
  a.DeregisterMem(hg);
  a.DeregisterMem(ha);
  b.DeregisterMem(hb);
  a.Finalize();
  b.Finalize();
  printf("checks=%d failures=%d\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
