/*
 * aclsim.h - hooks that exist only in the regcheck simulator of the vendor libraries.
 * Exported by libacl_rt.so and (forwarding) by libascendcl.so. Compiles as C99 and C++.
 */
#ifndef ACLSIM_ACLSIM_H_
#define ACLSIM_ACLSIM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of calls the simulator received for the API `name` in this process
 * (ACL names such as "aclrtHostRegisterV2", HIXL names such as "Hixl::RegisterMem"
 * or "HixlCSClientConnect"). NULL or unknown name: 0. */
uint64_t aclsimGetCallCount(const char *name);

/* Sets every call counter back to 0. */
void aclsimResetCallCounts(void);

/* Host address behind a simulated device address (a MAPPED registration's device
 * address, or any address inside one); NULL when `devPtr` is not such an address. */
void *aclsimDeviceToHost(const void *devPtr);

/* Internal: used by libcann_hixl.so to count and trace its entry points through the
 * same counters (`args` is the text between the parentheses of the trace line). */
void aclsimNoteCall(const char *name, const char *args, long long code);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLSIM_H_ */
