// Scenarios for tests/decisions.rs: how sure regcheck is of a finding, and who made the call,
// decide what it does. `decisions <scenario>` prints `rc <label> <code>` per call.
//
//   cs_ub_pageable heap|mmap   a HixlCS client whose local endpoint is a device UB endpoint
//                              (UBOE) registers pageable host memory: libcann_hixl.so maps it for
//                              the device with aclrtHostRegister itself; on an old kernel the
//                              simulated driver raises an exception (the process aborts), unless
//                              the registration is refused. Then an aclrtMallocHost buffer.
//   dlsym_malloc_host          aclrtMallocHost through dlopen + dlsym (unseen under LD_PRELOAD),
//                              then aclrtHostRegisterV2(MAPPED) through the PLT.
//   double_unregister          register a page, unregister it twice.
//   kv_cache_mapped            a 64 MiB KV cache from posix_memalign (glibc serves it with mmap)
//                              registered with aclrtHostRegisterV2(MAPPED) through the PLT: on an
//                              old kernel the simulated driver raises an exception (issue 32).
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <string>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "cs/hixl_cs.h"

namespace {

const size_t kPage = 4096;

void rc(const char *label, long code) {
  printf("rc %s %ld\n", label, code);
  fflush(stdout);
}

[[noreturn]] void die(const char *what) {
  fprintf(stderr, "decisions: %s\n", what);
  exit(2);
}

int CsUbPageable(const std::string &memory) {
  EndpointDesc ep{};
  ep.protocol = COMM_PROTOCOL_UBOE;
  ep.loc.locType = ENDPOINT_LOC_TYPE_DEVICE;
  ep.loc.device.devPhyId = 0;
  HixlClientDesc cd{};
  cd.server_ip = "127.0.0.1";
  cd.server_port = static_cast<uint32_t>(aclsimClaimPort());
  cd.local_endpoint = &ep;
  cd.remote_endpoint = &ep;
  HixlClientConfig cfg;
  HixlClientHandle client = nullptr;
  rc("client_create", HixlCSClientCreate(&cd, &cfg, &client));
  void *pageable = nullptr;
  if (memory == "heap") {
    // A few pages: glibc serves them from the heap.
    if (posix_memalign(&pageable, kPage, 4 * kPage) != 0) die("posix_memalign");
  } else {
    pageable = mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pageable == MAP_FAILED) die("mmap");
  }
  memset(pageable, 1, 4 * kPage);
  CommMem mem{COMM_MEM_TYPE_HOST, pageable, 4 * kPage};
  MemHandle h = nullptr;
  rc("client_reg_pageable", HixlCSClientRegMem(client, "pageable", &mem, &h));
  void *locked = nullptr;
  if (aclrtMallocHost(&locked, 4 * kPage) != ACL_SUCCESS) die("aclrtMallocHost");
  CommMem good{COMM_MEM_TYPE_HOST, locked, 4 * kPage};
  MemHandle gh = nullptr;
  rc("client_reg_malloc_host", HixlCSClientRegMem(client, "locked", &good, &gh));
  rc("client_unreg_malloc_host", HixlCSClientUnregMem(client, gh));
  rc("client_destroy", HixlCSClientDestroy(client));
  return 0;
}

int DlsymMallocHost() {
  void *lib = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) die("dlopen libascendcl.so");
  using MallocHostFn = aclError (*)(void **, size_t);
  auto malloc_host = reinterpret_cast<MallocHostFn>(dlsym(lib, "aclrtMallocHost"));
  if (malloc_host == nullptr) die("dlsym aclrtMallocHost");
  void *p = nullptr;
  rc("malloc_host_dlsym", malloc_host(&p, 4 * kPage));
  rc("register_mapped", aclrtHostRegisterV2(p, 4 * kPage, ACL_HOST_REG_MAPPED));
  rc("unregister", aclrtHostUnregister(p));
  return 0;
}

int DoubleUnregister() {
  void *p = nullptr;
  if (aclrtMallocHost(&p, kPage) != ACL_SUCCESS) die("aclrtMallocHost");
  rc("register", aclrtHostRegisterV2(p, kPage, ACL_HOST_REG_MAPPED));
  rc("unregister", aclrtHostUnregister(p));
  rc("unregister_again", aclrtHostUnregister(p));
  return 0;
}

int KvCacheMapped() {
  const size_t n = 64u << 20;
  void *p = nullptr;
  if (posix_memalign(&p, kPage, n) != 0) die("posix_memalign");
  memset(p, 1, n);
  aclError r = aclrtHostRegisterV2(p, n, ACL_HOST_REG_MAPPED);
  rc("register_kv_cache", r);
  if (r == ACL_SUCCESS) rc("unregister", aclrtHostUnregister(p));
  free(p);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) die("usage: decisions <scenario> [arg]");
  if (aclrtSetDevice(0) != ACL_SUCCESS) die("aclrtSetDevice");
  std::string s = argv[1];
  if (s == "cs_ub_pageable" && argc > 2) return CsUbPageable(argv[2]);
  if (s == "dlsym_malloc_host") return DlsymMallocHost();
  if (s == "double_unregister") return DoubleUnregister();
  if (s == "kv_cache_mapped") return KvCacheMapped();
  die("unknown scenario");
}
