// Forced into every translation unit of the simulator's libraries (`-include`, see
// crates/testkit/src/make.rs), before any other header. It keeps what the libraries ask of the
// C and C++ runtimes within what a wheel tagged manylinux_2_34 may need (glibc 2.34,
// GLIBCXX_3.4.29), whatever the compiler's and glibc's versions on the build machine, so that
// the regcheck wheel installs on glibc 2.34 hosts (openEuler 22.03 LTS). `cargo xtask wheel`
// fails, naming the symbols, when a packed file needs more.
//
// Programs built against the simulator's headers do not see this file.
#ifndef ACLSIM_PORTABLE_H_
#define ACLSIM_PORTABLE_H_

#include <features.h>

// From glibc 2.38 on, with _GNU_SOURCE (which g++ always defines), <stdlib.h> and <stdio.h>
// redirect strtol, strtoul, sscanf and their kin to __isoc23_* versions (GLIBC_2.38) that also
// read C23's 0b binary prefix. The simulator reads no binary numbers: keep the classic
// functions, as glibc does when it builds itself (the macro is C2X_ before glibc 2.40).
#undef __GLIBC_USE_C2X_STRTOL
#define __GLIBC_USE_C2X_STRTOL 0
#undef __GLIBC_USE_C23_STRTOL
#define __GLIBC_USE_C23_STRTOL 0

// The simulator's own code writes nothing to std::cout or std::cerr: its build leaves <iostream>
// out of the public headers that bring it to programs (external/ge_common/api_error_codes.h),
// whose static initialisation needs GLIBCXX_3.4.32 from GCC 13 on.
#define ACLSIM_BUILDING_LIBRARY 1

// The CANN release an install root simulates (sim/README.md, "Release profiles"): the default of
// ACLSIM_CANN_VERSION, and the exports of its libraries. The default root is 9.1.0, the release users
// run; the 9.2.0 root (crates/testkit/src/make.rs builds it with -DACLSIM_ROOT_RELEASE_9_2=1) is the
// vendor's master: its libllm_datadist.so exports adxl::AdxlEngine::ExportToShareableHandle (hicann/hixl
// 6d1c2b6, absent at tag v9.1.0), the 9.1.0 root's does not.
#if defined(ACLSIM_ROOT_RELEASE_9_2) && ACLSIM_ROOT_RELEASE_9_2
#define ACLSIM_DEFAULT_CANN_VERSION "9.2.0"
#else
#define ACLSIM_ROOT_RELEASE_9_2 0
#define ACLSIM_DEFAULT_CANN_VERSION "9.1.0"
#endif

#endif  // ACLSIM_PORTABLE_H_
