/*
 * log_types.h - stand-in of the vendor's log level and module definitions (the ones
 * dlog_pub.h's users need), for programs built against the regcheck simulator. Values from
 * the vendor's public headers (hicann/runtime include/dfx/base/log_types.h); not the vendor's
 * file. Compiles as C99 and C++.
 */
#ifndef ACLSIM_LOG_TYPES_H_
#define ACLSIM_LOG_TYPES_H_

#define DLOG_DEBUG 0x0 /* debug level */
#define DLOG_INFO 0x1  /* info level */
#define DLOG_WARN 0x2  /* warning level */
#define DLOG_ERROR 0x3 /* error level */
#define DLOG_NULL 0x4  /* no output */

#define RUN_LOG_MASK (0x01000000U) /* OR-ed into a module id: the record goes to the run log */

/* Module ids (only those the programs built against the simulator use). */
enum {
    GE = 45 /* the graph engine's framework, which HIXL logs as */
};

#endif /* ACLSIM_LOG_TYPES_H_ */
