// Engine selection by Initialize's options, one process: `hixl_select`. For each option form it
// initialises a client-only engine and prints `select <label> <code> <aclrtMalloc calls>`; the
// driver (crates/testkit/tests/sim_multiproc.rs) pairs each line with the engine the simulator's
// trace of Hixl::Initialize names.
#include <stdio.h>

#include <map>

#include "acl/acl.h"
#include "aclsim.h"
#include "hixl/hixl.h"

using namespace hixl;

namespace {

using Options = std::map<AscendString, AscendString>;

void Try(const char *label, const Options &o) {
  Hixl h;
  uint64_t mallocs = aclsimGetCallCount("aclrtMalloc");
  Status rc = h.Initialize(AscendString("127.0.0.1"), o);
  printf("select %s %u %llu\n", label, rc,
         static_cast<unsigned long long>(aclsimGetCallCount("aclrtMalloc") - mallocs));
  h.Finalize();
}

Options Grc(const char *json) {
  Options o;
  o[OPTION_GLOBAL_RESOURCE_CONFIG] = json;
  return o;
}

}  // namespace

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 3;
  Try("default", Options());
  Try("hccs_device", Grc("{\"comm_resource_config.protocol_desc\": [\"hccs:device\"]}"));
  Try("roce_device", Grc("{\"comm_resource_config.protocol_desc\": \"roce:device\"}"));
  Try("ub_ctp", Grc("{\"comm_resource_config.protocol_desc\": [\"ub_ctp:host\", \"ub_ctp:device\"]}"));
  Options legacy = Grc("{\"comm_resource_config.listen_port\": 16000}");
  legacy[OPTION_LOCAL_COMM_RES] = "{\"version\": \"1.2\"}";
  legacy[OPTION_BUFFER_POOL] = "0:0";
  Try("legacy", legacy);
  Options v13;
  v13[OPTION_LOCAL_COMM_RES] = "{\"version\": \"1.3\"}";
  Try("local_comm_res_1_3", v13);
  Options fabric;
  fabric[OPTION_ENABLE_USE_FABRIC_MEM] = "1";
  Try("fabric", fabric);
  Options pool;
  pool[OPTION_BUFFER_POOL] = "2:1";
  Try("comm_pool_2_1", pool);
  Options cs_pool = Grc("{\"comm_resource_config.protocol_desc\": [\"roce:device\"]}");
  cs_pool[OPTION_BUFFER_POOL] = "4:8";
  Try("hixl_cs_with_pool", cs_pool);
  Try("bad_json", Grc("{\"comm_resource_config.protocol_desc\": "));
  Options unknown;
  unknown["NoSuchOption"] = "1";
  Try("unknown_option", unknown);
  Options bad_pool;
  bad_pool[OPTION_BUFFER_POOL] = "4";
  Try("bad_pool", bad_pool);
  return 0;
}
