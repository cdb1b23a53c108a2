// The bounds-checked memory and string functions of securec.h, exported by the simulator's
// libascend_hal.so. Our own implementation of the documented contract (return codes and
// which errors reset the destination); see securec.h.
#include "securec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

namespace {

bool ranges_overlap(const void *a, size_t alen, const void *b, size_t blen) {
    uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
    return x < y + blen && y < x + alen;
}

bool mem_size_bad(size_t destMax) { return destMax == 0 || destMax > SECUREC_MEM_MAX_LEN; }
bool str_size_bad(size_t destMax) { return destMax == 0 || destMax > SECUREC_STRING_MAX_LEN; }

// Length of `s` if shorter than `max`, else `max`.
size_t bounded_len(const char *s, size_t max) {
    const void *nul = memchr(s, '\0', max);
    return nul ? static_cast<size_t>(static_cast<const char *>(nul) - s) : max;
}

// The first checks of the string functions, in the library's order: destMax, strDest, strSrc,
// then `count` (0 for the functions without one). EOK when they pass; a NULL strSrc or a count
// past the limit empties strDest.
errno_t string_checks(char *strDest, size_t destMax, const char *strSrc, size_t count) {
    if (str_size_bad(destMax)) return ERANGE;
    if (strDest == nullptr) return EINVAL;
    if (strSrc == nullptr || count > SECUREC_STRING_MAX_LEN) {
        strDest[0] = '\0';
        return strSrc == nullptr ? EINVAL_AND_RESET : ERANGE_AND_RESET;
    }
    return EOK;
}

// Shared by the string copies: copies `len` characters of `src` and a NUL to dest.
errno_t copy_string(char *dest, size_t destMax, const char *src, size_t len) {
    if (len >= destMax) {
        dest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (ranges_overlap(dest, len + 1, src, len + 1)) {
        dest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest, src, len);
    dest[len] = '\0';
    return EOK;
}

// Shared by the string appends: `dest` must hold a NUL within destMax.
errno_t append_string(char *dest, size_t destMax, const char *src, size_t len) {
    size_t dlen = bounded_len(dest, destMax);
    if (dlen == destMax) {  // no terminator inside the buffer
        dest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    if (dlen + len >= destMax) {
        dest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (ranges_overlap(dest, dlen + len + 1, src, len + 1)) {
        dest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest + dlen, src, len);
    dest[dlen + len] = '\0';
    return EOK;
}

// The checks memcpy_s and memmove_s share: EOK when the copy may go ahead, else the code
// (the destination reset where the contract says so).
errno_t copy_checks(void *dest, size_t destMax, const void *src, size_t count) {
    if (mem_size_bad(destMax)) return ERANGE;
    if (dest == nullptr) return EINVAL;
    if (src == nullptr) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    return EOK;
}

}  // namespace

extern "C" {

errno_t memset_s(void *dest, size_t destMax, int c, size_t count) {
    if (mem_size_bad(destMax)) return ERANGE;
    if (dest == nullptr) return EINVAL;
    if (count > destMax) {
        memset(dest, c, destMax);
        return ERANGE_AND_RESET;
    }
    memset(dest, c, count);
    return EOK;
}

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count) {
    errno_t rc = copy_checks(dest, destMax, src, count);
    if (rc != EOK) return rc;
    if (count == 0 || dest == src) return EOK;
    if (ranges_overlap(dest, count, src, count)) {
        memset(dest, 0, destMax);
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest, src, count);
    return EOK;
}

errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count) {
    errno_t rc = copy_checks(dest, destMax, src, count);
    if (rc != EOK) return rc;
    if (count != 0 && dest != src) memmove(dest, src, count);
    return EOK;
}

errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc) {
    if (errno_t rc = string_checks(strDest, destMax, strSrc, 0); rc != EOK) return rc;
    if (strDest == strSrc) return EOK;
    return copy_string(strDest, destMax, strSrc, bounded_len(strSrc, destMax));
}

errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count) {
    if (errno_t rc = string_checks(strDest, destMax, strSrc, count); rc != EOK) return rc;
    if (count == 0) {
        strDest[0] = '\0';
        return EOK;
    }
    size_t len = bounded_len(strSrc, count < destMax ? count : destMax);
    if (strDest == strSrc) {
        if (len >= destMax) {
            strDest[0] = '\0';
            return ERANGE_AND_RESET;
        }
        strDest[len] = '\0';
        return EOK;
    }
    return copy_string(strDest, destMax, strSrc, len);
}

errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc) {
    if (errno_t rc = string_checks(strDest, destMax, strSrc, 0); rc != EOK) return rc;
    return append_string(strDest, destMax, strSrc, bounded_len(strSrc, destMax));
}

errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count) {
    if (errno_t rc = string_checks(strDest, destMax, strSrc, count); rc != EOK) return rc;
    return append_string(strDest, destMax, strSrc, bounded_len(strSrc, count < destMax ? count : destMax));
}

int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList) {
    if (format == nullptr || strDest == nullptr || str_size_bad(destMax)) {
        if (strDest != nullptr && !str_size_bad(destMax)) strDest[0] = '\0';
        return -1;
    }
    int n = vsnprintf(strDest, destMax, format, argList);
    if (n < 0 || static_cast<size_t>(n) >= destMax) {
        strDest[0] = '\0';
        return -1;
    }
    return n;
}

int sprintf_s(char *strDest, size_t destMax, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vsprintf_s(strDest, destMax, format, ap);
    va_end(ap);
    return n;
}

int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList) {
    bool count_bad = count > SECUREC_STRING_MAX_LEN - 1 && count != static_cast<size_t>(-1);
    if (format == nullptr || strDest == nullptr || str_size_bad(destMax) || count_bad) {
        if (strDest != nullptr && !str_size_bad(destMax)) strDest[0] = '\0';
        return -1;
    }
    if (destMax > count) {
        // at most `count` characters; a truncation keeps them and answers -1
        int n = vsnprintf(strDest, count + 1, format, argList);
        if (n < 0) {
            strDest[0] = '\0';
            return -1;
        }
        return static_cast<size_t>(n) > count ? -1 : n;
    }
    int n = vsnprintf(strDest, destMax, format, argList);
    if (n < 0 || static_cast<size_t>(n) >= destMax) {
        strDest[0] = '\0';
        return -1;
    }
    return n;
}

int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf_s(strDest, destMax, count, format, ap);
    va_end(ap);
    return n;
}

}  // extern "C"
