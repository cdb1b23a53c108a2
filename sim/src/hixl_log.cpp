// The HIXL library's log sink, as the vendor's (src/hixl/common/hixl_log.h): weak references to
// ACL's acllogCheckDebugLevel and acllogRecord (the library still loads without them, and then
// keeps its own sink), and the run log through acllogRecord only when
// aclsysGetVersionNum("runtime") reports a runtime newer than 9.2.0 (90200000). The prototypes
// are the vendor's; this file includes no ACL header so that they are its only declarations.
#include <cstdint>
#include <cstdio>
#include <string>

#include "hixl_common.h"

extern "C" {
__attribute__((weak)) int32_t acllogCheckDebugLevel(int32_t module_id, int32_t log_level);
__attribute__((weak)) void acllogRecord(int32_t module_id, int32_t level, const char *fmt, ...);
__attribute__((weak)) int32_t aclsysGetVersionNum(char *pkg_name, int32_t *version_num);
}

namespace aclsim {

namespace {

constexpr int32_t kModuleGe = 45;  // slog's GE module, HIXL_MODULE_NAME
constexpr int32_t kLevelInfo = 1;
constexpr int32_t kLevelError = 3;
constexpr int32_t kRunLogVersion = 90200000;  // 9.2.0 as aclsysGetVersionNum encodes it

// HixlIsAclRunLogSupported: asked once, at the first run-log line.
bool RunLogThroughAcl() {
  static const bool on = [] {
    if (acllogRecord == nullptr || aclsysGetVersionNum == nullptr) return false;
    char pkg[] = "runtime";
    int32_t version = 0;
    return aclsysGetVersionNum(pkg, &version) == 0 && version > kRunLogVersion;
  }();
  return on;
}

}  // namespace

void Record(bool error, const std::string &text) {
  const int32_t level = error ? kLevelError : kLevelInfo;
  // errors also on stderr (the simulator's own channel); the vendor's fallback is its log file
  if (error) fprintf(stderr, "[aclsim] hixl: %s\n", text.c_str());
  if (acllogRecord == nullptr) return;
  if (!error && !RunLogThroughAcl()) return;
  // HixlCheckLogLevel: ACL's level check when it has one
  if (acllogCheckDebugLevel != nullptr && acllogCheckDebugLevel(kModuleGe, level) != 1) return;
  acllogRecord(kModuleGe, level, "[HIXL] %s", text.c_str());
}

}  // namespace aclsim
