/*
 * securec.h - bounds-checked memory and string functions (memset_s, memcpy_s, memmove_s,
 * strcpy_s, strncpy_s, strcat_s, strncat_s, sprintf_s, snprintf_s and their va_list forms)
 * with the return codes of the bounds-checking library CANN ships ("securec"): our own
 * implementation for the regcheck SIMULATOR, exported by its libascend_hal.so (link
 * -lascend_hal, as the vendor's samples do). Compiles as C99 and C++.
 *
 * Return codes (errno_t): EOK success; ERANGE destMax is 0 or above SECUREC_*_MAX_LEN (dest
 * untouched); EINVAL dest is NULL; EINVAL_AND_RESET src is NULL (dest reset); ERANGE_AND_RESET
 * the result does not fit in destMax (dest reset); EOVERLAP_AND_RESET source and destination
 * overlap (dest reset). "Reset" means: memory functions fill the first destMax bytes with 0
 * (memset_s with the value c), string functions write a terminating NUL at dest[0].
 * The printf family returns the number of characters written, or -1 on any error (then
 * dest[0] is NUL, except snprintf_s's truncation to `count`, which keeps the truncated text).
 */
#ifndef ACLSIM_SECUREC_H_
#define ACLSIM_SECUREC_H_

#include <errno.h>
#include <stdarg.h>

#include "securectype.h"

#ifndef SECUREC_DEFINED_ERRNO_TYPE
#define SECUREC_DEFINED_ERRNO_TYPE
#ifndef errno_t
typedef int errno_t;
#endif
#endif

#ifndef EOK
#define EOK 0
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef EINVAL_AND_RESET
#define EINVAL_AND_RESET (22 | 128)
#endif
#ifndef ERANGE
#define ERANGE 34
#endif
#ifndef ERANGE_AND_RESET
#define ERANGE_AND_RESET (34 | 128)
#endif
#ifndef EOVERLAP_AND_RESET
#define EOVERLAP_AND_RESET (54 | 128)
#endif

#if defined(__GNUC__)
#define ACLSIM_SECUREC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ACLSIM_SECUREC_PRINTF(f, a)
#endif

#ifdef __cplusplus
extern "C" {
#endif

errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count);
errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc);
errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
int sprintf_s(char *strDest, size_t destMax, const char *format, ...) ACLSIM_SECUREC_PRINTF(3, 4);
int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList) ACLSIM_SECUREC_PRINTF(3, 0);
int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...) ACLSIM_SECUREC_PRINTF(4, 5);
int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
    ACLSIM_SECUREC_PRINTF(4, 0);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_SECUREC_H_ */
