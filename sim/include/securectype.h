/*
 * securectype.h - types and limits of the bounds-checked string and memory functions declared
 * in securec.h, as the regcheck SIMULATOR provides them (our own text; the functions live in the
 * simulator's libascend_hal.so, as the driver's HAL library exports them). C99 and C++.
 */
#ifndef ACLSIM_SECURECTYPE_H_
#define ACLSIM_SECURECTYPE_H_

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest destMax the functions accept (2 GiB - 1), for memory and for strings. */
#ifndef SECUREC_MEM_MAX_LEN
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#endif
#ifndef SECUREC_STRING_MAX_LEN
#define SECUREC_STRING_MAX_LEN 0x7fffffffUL
#endif

#endif /* ACLSIM_SECURECTYPE_H_ */
