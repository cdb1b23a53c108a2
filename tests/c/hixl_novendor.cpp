// Linked with -lregcheck only, no vendor library: regcheck finds libcann_hixl.so through
// REGCHECK_HIXL_LIB or the vendor's install roots, or answers "not supported". Prints
// "rc <label> <code>".
#include <stdio.h>

#include "cs/hixl_cs.h"
#include "aclsim_port.h"

int main() {
  EndpointDesc ep{};
  HixlServerDesc sd{};
  sd.server_ip = "127.0.0.1";
  sd.server_port = static_cast<uint32_t>(aclsimClaimPort());
  sd.endpoint_list = &ep;
  sd.endpoint_list_num = 1;
  HixlServerConfig scfg;
  HixlServerHandle server = nullptr;
  printf("rc server_create %u\n", HixlCSServerCreate(&sd, &scfg, &server));
  if (server != nullptr) printf("rc server_destroy %u\n", HixlCSServerDestroy(server));
  return 0;
}
