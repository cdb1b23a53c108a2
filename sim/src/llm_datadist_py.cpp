// llm_datadist_py.cpp - libllm_datadist_py.so: the C functions the simulator's Python package
// `llm_datadist` (sim/python/llm_datadist) calls with ctypes. Simulator-only: CANN's package
// is a pybind11 module (llm_datadist_wrapper) over the library's internal class
// llm::LLMDataDistV2, not over llm_datadist::LlmDataDist (see docs/llm-datadist.md, "Python").
//
// Each function calls a PUBLIC member of llm_datadist::LlmDataDist, which this library takes
// from libllm_datadist.so through the PLT (DT_NEEDED libllm_datadist.so): an interposer that
// defines the members (regcheck, by LD_PRELOAD or linked ahead) sees these calls as it sees a
// C++ program's.
//
// Status codes are returned as the library returns them (uint32_t); a C++ exception (bad_alloc)
// is LLM_FAILED, never let through to ctypes.
#include <stddef.h>
#include <stdint.h>

#include <map>
#include <new>
#include <vector>

#include "llm_datadist/llm_datadist.h"

using llm_datadist::AscendString;
using llm_datadist::LlmDataDist;

extern "C" {

// A new LlmDataDist(cluster_id, role), or NULL when it cannot be made.
void *lddpy_create(uint64_t cluster_id, int32_t role) {
  try {
    return new LlmDataDist(cluster_id, static_cast<llm_datadist::LlmRole>(role));
  } catch (...) {
    return nullptr;
  }
}

void lddpy_destroy(void *dd) { delete static_cast<LlmDataDist *>(dd); }

// Initialize with `n` options, keys[i] = values[i].
uint32_t lddpy_initialize(void *dd, const char *const *keys, const char *const *values, size_t n) {
  try {
    std::map<AscendString, AscendString> options;
    for (size_t i = 0; i < n; ++i) options[AscendString(keys[i])] = AscendString(values[i]);
    return static_cast<LlmDataDist *>(dd)->Initialize(options);
  } catch (...) {
    return llm_datadist::LLM_FAILED;
  }
}

void lddpy_finalize(void *dd) { static_cast<LlmDataDist *>(dd)->Finalize(); }

// RegisterKvCache of a CacheDesc{placement, num_tensors, data_type, shape[ndims]} at
// addrs[naddrs]; the cache id in *cache_id.
uint32_t lddpy_register_kv_cache(void *dd, uint32_t placement, uint32_t num_tensors, int32_t data_type,
                                 const int64_t *shape, size_t ndims, const uint64_t *addrs, size_t naddrs,
                                 int64_t *cache_id) {
  try {
    llm_datadist::CacheDesc desc{};
    desc.placement = static_cast<llm_datadist::CachePlacement>(placement);
    desc.num_tensors = num_tensors;
    desc.data_type = static_cast<llm_datadist::DataType>(data_type);
    desc.shape.assign(shape, shape + ndims);
    std::vector<uint64_t> a(addrs, addrs + naddrs);
    int64_t id = -1;
    uint32_t rc = static_cast<LlmDataDist *>(dd)->RegisterKvCache(desc, a, llm_datadist::RegisterCfg{}, id);
    *cache_id = id;
    return rc;
  } catch (...) {
    return llm_datadist::LLM_FAILED;
  }
}

uint32_t lddpy_unregister_kv_cache(void *dd, int64_t cache_id) {
  return static_cast<LlmDataDist *>(dd)->UnregisterKvCache(cache_id);
}

}  // extern "C"
