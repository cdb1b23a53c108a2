// libcann_hixl.so's log through ACL (the vendor's src/hixl/common/hixl_log.h): weak references to
// acllogCheckDebugLevel / acllogRecord, bound here to this program's own definitions (linked
// -rdynamic), and the run log only with a runtime newer than 9.2.0. Prints what reached the log:
// "errors=<n> events=<n> checks=<n>".
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <map>
#include <string>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"

static int errors = 0, events = 0, checks = 0;

extern "C" int32_t acllogCheckDebugLevel(int32_t, int32_t) {
  checks++;
  return 1;
}

extern "C" void acllogRecord(int32_t, int32_t level, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (strstr(line, "[HIXL]") == nullptr) return;
  if (level == 3) errors++;
  else events++;
}

int main() {
  if (aclrtSetDevice(0) != ACL_SUCCESS) return 3;
  hixl::Hixl a, b;
  std::map<hixl::AscendString, hixl::AscendString> none;
  std::string name = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  if (a.Initialize(name.c_str(), none) != hixl::SUCCESS) return 4;
  (void)b.Initialize(name.c_str(), none);  // the address is taken: FAILED, an error logged
  hixl::MemHandle h = nullptr;
  hixl::MemDesc d{};
  (void)a.RegisterMem(d, hixl::MEM_HOST, h);  // addr 0: PARAM_INVALID
  printf("errors=%d events=%d checks=%d\n", errors, events, checks);
  return 0;
}
