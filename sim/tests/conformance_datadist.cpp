// The LLM-DataDist rows of docs/conformance.md: one function per row ID, each the public call
// sequence of a vendor test of llm_datadist::LlmDataDist (hicann/hixl tests/cpp/llm_datadist/...,
// cited per function), returning the code the row states. Intermediate steps are checked too (a
// step that answers otherwise makes the row return kStepFailed). The vendor's tests mock HCCL and
// register heap vectors as device memory; the simulator's comm backend registers them with its
// libhcomm.so stand-in.
//
//   conformance_datadist list        the row IDs, one a line
//   conformance_datadist <ROW-ID>    runs the row: "result=<code>" on stdout
#include <stdint.h>

#include <map>
#include <numeric>
#include <vector>

#include "conformance_util.h"
#include "llm_datadist/llm_datadist.h"

namespace {

using namespace llm_datadist;

using Options = std::map<AscendString, AscendString>;

// The options of the vendor's tests: device 1, a LocalCommRes its mocks accept.
Options DeviceOne(bool local_comm_res = true) {
  Options o;
  o[OPTION_DEVICE_ID] = "1";
  if (local_comm_res) o["llm.LocalCommRes"] = "mock";
  return o;
}

// Ten int32 tensors of {4, 16}, in heap vectors, as the vendor's tests make them.
struct TenTensors {
  CacheDesc desc{};
  std::vector<std::vector<int32_t>> buffers = std::vector<std::vector<int32_t>>(10, std::vector<int32_t>(4 * 16));
  std::vector<uint64_t> addrs;
  TenTensors() {
    desc.num_tensors = 10;
    desc.data_type = DT_INT32;
    desc.shape = {4, 16};
    for (auto &b : buffers) addrs.push_back(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.data())));
    std::iota(buffers[0].begin(), buffers[0].end(), 0);
  }
};

// llm_datadist_v2_api_unittest.cc:369 RegisterKvCache
uint32_t C01() {
  LlmDataDist dd(0, LlmRole::kDecoder);
  STEP(dd.Initialize(DeviceOne()), LLM_SUCCESS);
  TenTensors t;
  int64_t cache_id = 0;
  uint32_t rc = dd.RegisterKvCache(t.desc, t.addrs, RegisterCfg{}, cache_id);
  dd.Finalize();
  return rc;
}

// llm_datadist_v2_api_unittest.cc:396 UnregisterKvCache (an id never registered)
uint32_t C02() {
  LlmDataDist dd(0, LlmRole::kDecoder);
  STEP(dd.Initialize(DeviceOne()), LLM_SUCCESS);
  uint32_t rc = dd.UnregisterKvCache(0);
  dd.Finalize();
  return rc;
}

// llm_datadist_v2_api_unittest.cc:443 AllocateCacheNotSupported
uint32_t C03() {
  LlmDataDist dd(0, LlmRole::kPrompt);
  STEP(dd.Initialize(DeviceOne(false)), LLM_SUCCESS);
  CacheDesc desc{};
  desc.num_tensors = 80;
  desc.data_type = DT_FLOAT16;
  desc.shape = {1, 256};
  Cache cache;
  STEP(dd.AllocateCache(desc, cache), LLM_FEATURE_NOT_ENABLED);
  uint32_t rc = dd.DeallocateCache(0);
  dd.Finalize();
  return rc;
}

// llm_datadist_v2_api_unittest.cc:460 CopyCacheNotSupported (the same tensors registered twice)
uint32_t C04() {
  LlmDataDist dd(0, LlmRole::kDecoder);
  STEP(dd.Initialize(DeviceOne()), LLM_SUCCESS);
  TenTensors t;
  int64_t id1 = 0, id2 = 0;
  STEP(dd.RegisterKvCache(t.desc, t.addrs, RegisterCfg{}, id1), LLM_SUCCESS);
  STEP(dd.RegisterKvCache(t.desc, t.addrs, RegisterCfg{}, id2), LLM_SUCCESS);
  Cache src{}, dst{};
  src.cache_id = id1;
  src.cache_desc = t.desc;
  dst.cache_id = id2;
  dst.cache_desc = t.desc;
  STEP(dd.CopyKvCache(src, dst, 0, 1), LLM_FEATURE_NOT_ENABLED);
  uint32_t rc = dd.CopyKvBlocks(src, dst, {0}, {{0}});
  dd.Finalize();
  return rc;
}

// test_llm_datadist_v2_api.cc:98 RegisterKvCache (system test)
uint32_t C05() { return C01(); }

const ConformanceRows &Rows() {
  static const ConformanceRows rows = {
      {"LLM-DataDist-C01", C01}, {"LLM-DataDist-C02", C02}, {"LLM-DataDist-C03", C03},
      {"LLM-DataDist-C04", C04}, {"LLM-DataDist-C05", C05},
  };
  return rows;
}

}  // namespace

int main(int argc, char **argv) { return ConformanceMain(argc, argv, Rows()); }
