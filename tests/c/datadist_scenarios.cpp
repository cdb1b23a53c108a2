// LLM-DataDist scenarios for tests/datadist.rs: `datadist_scenarios <scenario> [hixl]` drives
// llm_datadist::LlmDataDist against the simulator's libllm_datadist.so (optionally under
// regcheck), with the comm backend, or the hixl one when the second argument is "hixl", and
// prints one line per call: `rc <label> <code>` (codes in decimal), plus `value <key> <n>`.
// Exit 0 unless the scenario itself could not be set up.
//
// "xllm" is jd-opensource/xllm's shape (xllm/core/framework/kv_cache/llm_data_dist_transfer.cpp):
// per-layer K and V buffers from aclrtMalloc(ACL_MEM_MALLOC_HUGE_ONLY), one RegisterKvCache for
// the K caches and one for the V caches, then every buffer freed with aclrtFree without
// UnregisterKvCache.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "hccl/hccl_mem.h"
#include "hixl/hixl.h"
#include "llm_datadist/llm_datadist.h"

using llm_datadist::CacheDesc;
using llm_datadist::CachePlacement;
using llm_datadist::LlmDataDist;
using llm_datadist::LlmRole;
using llm_datadist::RegisterCfg;

namespace {

bool g_hixl = false;
const int kLayers = 4;
const std::vector<int64_t> kShape = {8, 16, 4, 32};  // blocks, block size, heads, head dim
const size_t kBytes = 8 * 16 * 4 * 32 * 2;          // bf16

void rc(const char *label, uint32_t code) { printf("rc %s %u\n", label, code); }
void value(const char *key, long long v) { printf("value %s %lld\n", key, v); }

[[noreturn]] void die(const char *what) {
  fprintf(stderr, "datadist_scenarios: %s\n", what);
  exit(3);
}

using Options = std::map<llm_datadist::AscendString, llm_datadist::AscendString>;

Options Opts() {
  Options o;
  o[llm_datadist::OPTION_DEVICE_ID] = "0";
  if (g_hixl) {
    o[llm_datadist::OPTION_TRANSFER_BACKEND] = "hixl";
    std::string listen = "127.0.0.1:" + std::to_string(aclsimClaimPort());
    o[llm_datadist::OPTION_LISTEN_IP_INFO] = listen.c_str();
  }
  return o;
}

void *MallocDev(size_t n) {
  void *p = nullptr;
  if (aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_ONLY) != 0) die("aclrtMalloc");
  return p;
}

CacheDesc Desc(uint32_t num_tensors) {
  CacheDesc d{};
  d.placement = CachePlacement::kDevice;
  d.num_tensors = num_tensors;
  d.data_type = llm_datadist::DT_BF16;
  d.shape = kShape;
  return d;
}

uint32_t Register(LlmDataDist &dd, const CacheDesc &desc, const std::vector<uint64_t> &addrs, int64_t *id) {
  int64_t cache_id = -1;
  uint32_t code = dd.RegisterKvCache(desc, addrs, RegisterCfg{}, cache_id);
  *id = cache_id;
  return code;
}

int Run(const std::string &s) {
  if (s == "xllm") {
    LlmDataDist dd(1, LlmRole::kPrompt);
    rc("initialize", dd.Initialize(Opts()));
    std::vector<void *> k(kLayers), v(kLayers);
    std::vector<uint64_t> k_addrs, v_addrs;
    for (int l = 0; l < kLayers; l++) {
      k[l] = MallocDev(kBytes);
      v[l] = MallocDev(kBytes);
      k_addrs.push_back(reinterpret_cast<uint64_t>(k[l]));
      v_addrs.push_back(reinterpret_cast<uint64_t>(v[l]));
    }
    int64_t k_id = -1, v_id = -1;
    rc("register_k", Register(dd, Desc(kLayers), k_addrs, &k_id));
    rc("register_v", Register(dd, Desc(kLayers), v_addrs, &v_id));
    value("k_id", k_id);
    value("v_id", v_id);
    // xLLM's teardown: the buffers go back, the caches stay registered
    for (int l = 0; l < kLayers; l++) {
      rc("free_k", aclrtFree(k[l]));
      rc("free_v", aclrtFree(v[l]));
    }
  } else if (s == "count") {
    // two caches of one region per layer: what makes per-layer caches approach the 4000
    LlmDataDist dd(1, LlmRole::kPrompt);
    rc("initialize", dd.Initialize(Opts()));
    std::vector<uint64_t> k_addrs, v_addrs;
    for (int l = 0; l < kLayers; l++) {
      k_addrs.push_back(reinterpret_cast<uint64_t>(MallocDev(kBytes)));
      v_addrs.push_back(reinterpret_cast<uint64_t>(MallocDev(kBytes)));
    }
    int64_t k_id = -1, v_id = -1;
    rc("register_k", Register(dd, Desc(kLayers), k_addrs, &k_id));
    rc("register_v", Register(dd, Desc(kLayers), v_addrs, &v_id));
    dd.Finalize();
  } else if (s == "others") {
    // the same mistake through HCCL's own call and hixl::Hixl: each free is named too
    void *h = MallocDev(kBytes), *x = MallocDev(kBytes);
    CommMem mem{COMM_MEM_TYPE_DEVICE, h, kBytes};
    void *handle = nullptr;
    rc("hccl_register", HcclRegisterGlobalMem(&mem, &handle));
    rc("free_hccl", aclrtFree(h));
    hixl::Hixl engine;
    std::string local = "127.0.0.1:" + std::to_string(aclsimClaimPort());
    rc("hixl_initialize", engine.Initialize(local.c_str(), {}));
    hixl::MemDesc desc{};
    desc.addr = reinterpret_cast<uintptr_t>(x);
    desc.len = kBytes;
    hixl::MemHandle mh = nullptr;
    rc("hixl_register", engine.RegisterMem(desc, hixl::MEM_DEVICE, mh));
    rc("free_hixl", aclrtFree(x));
    engine.Finalize();
  } else if (s == "clean") {
    // the same, unregistering first: nothing to say
    LlmDataDist dd(1, LlmRole::kPrompt);
    rc("initialize", dd.Initialize(Opts()));
    void *k = MallocDev(kBytes);
    int64_t id = -1;
    rc("register", Register(dd, Desc(1), {reinterpret_cast<uint64_t>(k)}, &id));
    rc("unregister", dd.UnregisterKvCache(id));
    rc("free", aclrtFree(k));
    dd.Finalize();
  } else if (s == "checks") {
    // RegisterKvCache's checks, in the vendor's order
    LlmDataDist dd(1, LlmRole::kPrompt);
    void *buf = MallocDev(kBytes);
    const uint64_t a = reinterpret_cast<uint64_t>(buf);
    int64_t id = -1;
    rc("before_initialize", Register(dd, Desc(1), {a}, &id));
    rc("unregister_before_initialize", dd.UnregisterKvCache(1));
    rc("initialize", dd.Initialize(Opts()));
    rc("addrs_empty", Register(dd, Desc(0), {}, &id));
    rc("addrs_count", Register(dd, Desc(2), {a}, &id));
    rc("addr_null", Register(dd, Desc(2), {a, 0}, &id));
    CacheDesc d = Desc(1);
    d.shape = {};
    rc("shape_empty", Register(dd, d, {a}, &id));
    d.shape = std::vector<int64_t>(32, 1);
    rc("shape_32_dims", Register(dd, d, {a}, &id));
    d.shape = {8, 0, 4};
    rc("shape_zero_dim", Register(dd, d, {a}, &id));
    d = Desc(1);
    d.data_type = llm_datadist::DT_UNDEFINED;
    rc("data_type_undefined", Register(dd, d, {a}, &id));
    rc("register", Register(dd, Desc(1), {a}, &id));
    value("id", id);  // ids taken by the size failures are lost
    int64_t again = -1;
    rc("register_same", Register(dd, Desc(1), {a}, &again));
    rc("unregister_unknown", dd.UnregisterKvCache(1000));
    rc("unregister_same", dd.UnregisterKvCache(again));
    rc("unregister", dd.UnregisterKvCache(id));
    dd.Finalize();
    rc("after_finalize", Register(dd, Desc(1), {a}, &id));
    rc("free", aclrtFree(buf));
  } else {
    fprintf(stderr, "datadist_scenarios: unknown scenario %s\n", s.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: datadist_scenarios <scenario> [hixl]\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  g_hixl = argc > 2 && std::string(argv[2]) == "hixl";
  if (aclInit(nullptr) != 0) die("aclInit");
  if (aclrtSetDevice(0) != 0) die("aclrtSetDevice");
  int code = Run(argv[1]);
  fflush(stdout);
  return code;
}
