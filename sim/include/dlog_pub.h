/*
 * dlog_pub.h - stand-in of the vendor's log interface (the `alog` library, libascendalog.so),
 * for programs built against the regcheck simulator. Prototypes from the vendor's public
 * header (hicann/runtime pkg_inc/base/dlog_pub.h); not the vendor's file. The simulator's
 * libascendalog.so implements them: records at or above the level of ASCEND_GLOBAL_LOG_LEVEL
 * (0 debug .. 4 none; default 3, error) are printed to stdout when
 * ASCEND_SLOG_PRINT_TO_STDOUT=1 and dropped otherwise (the vendor writes them to log files).
 * Compiles as C99 and C++.
 */
#ifndef ACLSIM_DLOG_PUB_H_
#define ACLSIM_DLOG_PUB_H_

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "log_types.h"

#define DLOG_FILE_NAME __FILE__

#ifdef __cplusplus
extern "C" {
#endif

/* The level of `moduleId` (0 debug .. 4 none); *enableEvent (may be NULL) is set to 1. */
int32_t dlog_getlevel(int32_t moduleId, int32_t *enableEvent);
/* Sets the level of every module (`moduleId` is ignored); 0, or -1 for a level out of range. */
int32_t dlog_setlevel(int32_t moduleId, int32_t level, int32_t enableEvent);
/* 1 when a record of `logLevel` for `moduleId` is output, else 0. */
int32_t CheckLogLevel(int32_t moduleId, int32_t logLevel);
/* Outputs one record (call CheckLogLevel first). */
void DlogVaList(int32_t moduleId, int32_t level, const char *fmt, va_list list);
/* Flushes the records written so far. */
void DlogFlush(void);
/* Outputs one record (call CheckLogLevel first). Weak, as in the vendor's header. */
void DlogRecord(int32_t moduleId, int32_t level, const char *fmt, ...) __attribute__((weak));

#define dlog_error(moduleId, fmt, ...)                                                            \
    do {                                                                                          \
        DlogRecord(moduleId, DLOG_ERROR, "[%s:%d]" fmt, DLOG_FILE_NAME, __LINE__, ##__VA_ARGS__); \
    } while (0)
#define dlog_warn(moduleId, fmt, ...)                                                                 \
    do {                                                                                              \
        if (CheckLogLevel(moduleId, DLOG_WARN) == 1)                                                  \
            DlogRecord(moduleId, DLOG_WARN, "[%s:%d]" fmt, DLOG_FILE_NAME, __LINE__, ##__VA_ARGS__); \
    } while (0)
#define dlog_info(moduleId, fmt, ...)                                                                 \
    do {                                                                                              \
        if (CheckLogLevel(moduleId, DLOG_INFO) == 1)                                                  \
            DlogRecord(moduleId, DLOG_INFO, "[%s:%d]" fmt, DLOG_FILE_NAME, __LINE__, ##__VA_ARGS__); \
    } while (0)
#define dlog_debug(moduleId, fmt, ...)                                                                 \
    do {                                                                                               \
        if (CheckLogLevel(moduleId, DLOG_DEBUG) == 1)                                                  \
            DlogRecord(moduleId, DLOG_DEBUG, "[%s:%d]" fmt, DLOG_FILE_NAME, __LINE__, ##__VA_ARGS__); \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_DLOG_PUB_H_ */
