/*
 * A HIXL call regcheck rejects, made from a named member function: the finding names it, and
 * aclGetRecentErrMsg() returns regcheck's message. Prints "rc register <status>" and
 * "errmsg <text>".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "hixl/hixl.h"

namespace kv {

struct Pool {
  hixl::Hixl engine;  // never initialised: RegisterMem is refused
  int __attribute__((noinline)) Add(void *buf, size_t len) {
    hixl::MemDesc desc{};
    desc.addr = reinterpret_cast<uintptr_t>(buf);
    desc.len = len;
    hixl::MemHandle handle = nullptr;
    return static_cast<int>(engine.RegisterMem(desc, hixl::MEM_HOST, handle));  // CALLSITE:hixl_add 
  }
};

}  // namespace kv

int main() {
  if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0) return 2;
  void *buf = nullptr;
  if (aclrtMallocHost(&buf, 4096) != 0) return 2;
  kv::Pool pool;
  printf("rc register %d\n", pool.Add(buf, 4096));
  const char *m = aclGetRecentErrMsg();
  printf("errmsg %s\n", m ? m : "(null)");
  fflush(stdout);
  return 0;
}
