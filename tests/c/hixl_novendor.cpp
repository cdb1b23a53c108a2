// Linked with -lregcheck only, no vendor library: regcheck finds libcann_hixl.so through
// REGCHECK_HIXL_LIB or the vendor's install roots, or answers "not supported". Prints
// "rc <label> <code>".
#include <stdio.h>

#include "cs/hixl_cs.h"

int main() {
  HixlServerDesc sd{};
  sd.server_ip = "127.0.0.1";
  sd.server_port = 16200;
  HixlServerHandle server = nullptr;
  printf("rc server_create %u\n", HixlCSServerCreate(&sd, nullptr, &server));
  if (server != nullptr) printf("rc server_destroy %u\n", HixlCSServerDestroy(server));
  return 0;
}
