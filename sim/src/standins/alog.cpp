// libascendalog.so of the simulator: the vendor's log library (dlog_pub.h) and the
// error-message reporting functions of base/err_msg.h, which HIXL's internal headers call.
// Records at or above the global level (ASCEND_GLOBAL_LOG_LEVEL: 0 debug, 1 info, 2 warning,
// 3 error, 4 none; default 3) go to stdout when ASCEND_SLOG_PRINT_TO_STDOUT=1 (the vendor's
// switch for printing instead of writing its log files); otherwise they are dropped.
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/err_msg.h"
#include "dlog_pub.h"

namespace {
int32_t LevelFromEnv() {
  const char *v = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
  if (v != nullptr && v[0] >= '0' && v[0] <= '4' && v[1] == '\0') return v[0] - '0';
  return DLOG_ERROR;
}

std::atomic<int32_t> &GlobalLevel() {
  static std::atomic<int32_t> level{LevelFromEnv()};
  return level;
}

bool PrintToStdout() {
  static const bool on = [] {
    const char *v = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

const char *LevelName(int32_t level) {
  switch (level) {
    case DLOG_DEBUG: return "DEBUG";
    case DLOG_INFO: return "INFO";
    case DLOG_WARN: return "WARNING";
    default: return "ERROR";
  }
}

std::mutex g_out;

void Emit(int32_t module, int32_t level, const char *fmt, va_list list) {
  if (!PrintToStdout() || fmt == nullptr) return;
  std::lock_guard<std::mutex> lock(g_out);
  std::fprintf(stdout, "[%s] module %d: ", LevelName(level), static_cast<int>(module & 0xFFFF));
  std::vfprintf(stdout, fmt, list);
  std::fputc('\n', stdout);
}
}  // namespace

extern "C" {
int32_t dlog_getlevel(int32_t /*moduleId*/, int32_t *enableEvent) {
  if (enableEvent != nullptr) *enableEvent = 1;
  return GlobalLevel().load();
}

int32_t dlog_setlevel(int32_t /*moduleId*/, int32_t level, int32_t /*enableEvent*/) {
  if (level < DLOG_DEBUG || level > DLOG_NULL) return -1;
  GlobalLevel().store(level);
  return 0;
}

int32_t CheckLogLevel(int32_t /*moduleId*/, int32_t logLevel) {
  return (logLevel >= GlobalLevel().load() && logLevel < DLOG_NULL) ? 1 : 0;
}

void DlogVaList(int32_t moduleId, int32_t level, const char *fmt, va_list list) { Emit(moduleId, level, fmt, list); }

void DlogFlush(void) {
  std::lock_guard<std::mutex> lock(g_out);
  std::fflush(stdout);
}

void DlogRecord(int32_t moduleId, int32_t level, const char *fmt, ...) {
  va_list list;
  va_start(list, fmt);
  Emit(moduleId, level, fmt, list);
  va_end(list);
}
}  // extern "C"

namespace error_message {
int32_t RegisterFormatErrorMessage(const char * /*error_msg*/, size_t /*error_msg_len*/) { return 0; }

namespace {
// One error report on stderr (when ASCEND_SLOG_PRINT_TO_STDOUT=1): "[code] where: text".
void Report(const char *error_code, const char *where, const char *format, va_list list) {
  if (!PrintToStdout() || format == nullptr) return;
  std::lock_guard<std::mutex> lock(g_out);
  std::fprintf(stderr, "[%s] %s", error_code != nullptr ? error_code : "", where);
  std::vfprintf(stderr, format, list);
  std::fputc('\n', stderr);
}
}  // namespace

int32_t ReportInnerErrMsg(const char *file_name, const char *func, uint32_t line, const char *error_code,
                          const char *format, ...) {
  char where[512];
  std::snprintf(where, sizeof where, "%s:%u %s: ", file_name != nullptr ? file_name : "", line,
                func != nullptr ? func : "");
  va_list list;
  va_start(list, format);
  Report(error_code, where, format, list);
  va_end(list);
  return 0;
}

int32_t ReportUserDefinedErrMsg(const char *error_code, const char *format, ...) {
  va_list list;
  va_start(list, format);
  Report(error_code, "", format, list);
  va_end(list);
  return 0;
}

int32_t ReportPredefinedErrMsg(const char * /*error_code*/, const std::vector<const char *> & /*key*/,
                               const std::vector<const char *> & /*value*/) {
  return 0;
}

int32_t ReportPredefinedErrMsg(const char * /*error_code*/) { return 0; }
}  // namespace error_message
