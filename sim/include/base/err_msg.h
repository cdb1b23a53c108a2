/*
 * base/err_msg.h - stand-in of the vendor's error-message reporting interface, for programs
 * built against the regcheck simulator (HIXL's internal headers include it). Prototypes and
 * macro names from the vendor's public header (hicann/runtime include/dfx/base/err_msg.h);
 * not the vendor's file. The functions are declared weak, as the vendor declares them; the
 * simulator's libascendalog.so defines them: each report is printed to stderr when
 * ASCEND_SLOG_PRINT_TO_STDOUT=1 and returns 0.
 */
#ifndef ACLSIM_BASE_ERR_MSG_H_
#define ACLSIM_BASE_ERR_MSG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#define REPORT_INNER_ERR_MSG(error_code, format, ...) \
    (void)error_message::ReportInnerErrMsg(__FILE__, __FUNCTION__, __LINE__, (error_code), (format), ##__VA_ARGS__)

#define REPORT_USER_DEFINED_ERR_MSG(error_code, format, ...) \
    (void)error_message::ReportUserDefinedErrMsg((error_code), (format), ##__VA_ARGS__)

namespace error_message {
constexpr size_t LIMIT_PER_MSG = 1024U;
using char_t = char;

int32_t RegisterFormatErrorMessage(const char *error_msg, size_t error_msg_len) __attribute__((weak));
int32_t ReportInnerErrMsg(const char *file_name, const char *func, uint32_t line, const char *error_code,
                          const char *format, ...) __attribute__((format(printf, 5, 6))) __attribute__((weak));
int32_t ReportUserDefinedErrMsg(const char *error_code, const char *format, ...)
    __attribute__((format(printf, 2, 3))) __attribute__((weak));
int32_t ReportPredefinedErrMsg(const char *error_code, const std::vector<const char *> &key,
                               const std::vector<const char *> &value) __attribute__((weak));
int32_t ReportPredefinedErrMsg(const char *error_code) __attribute__((weak));
}  // namespace error_message

namespace ge {
using error_message::ReportInnerErrMsg;
using error_message::ReportPredefinedErrMsg;
using error_message::ReportUserDefinedErrMsg;
}  // namespace ge

#endif  // ACLSIM_BASE_ERR_MSG_H_
