// Mooncake's feature gate on adxl::AdxlEngine::ExportToShareableHandle, in its shape: the member
// declared weak (as Mooncake's adxl_compat.h declares the members newer than its oldest CANN),
// its address tested for NULL (src/shared_segment/ascend_shared_segment.cpp:53), and called only
// when present. The member exists after CANN 9.1.0 only (hicann/hixl 6d1c2b6): against the
// simulator's 9.1.0 install root the weak reference must be NULL, against the 9.2.0 root set,
// with or without regcheck (tests/adxl_release.rs).
//
//   adxl_weak_export <mangled name>
//
// prints "weak=<0|1> dlsym=<0|1> code=<the member's answer for a NULL address, or ->": whether
// the weak reference was bound, whether dlsym(RTLD_DEFAULT) finds the name (the one nm reads
// off this program's undefined reference), and, when bound, what the member answers; then
// "version=<aclsysGetVersionStr("runtime")>", the release the root answers as.
#define ACLSIM_ADXL_AFTER_9_1 __attribute__((weak))

#include <dlfcn.h>
#include <stdio.h>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <mangled name of ExportToShareableHandle>\n", argv[0]);
    return 2;
  }
  // a strong use of the library too, as Mooncake's transport makes an engine
  adxl::AdxlEngine engine;
  const bool weak = &adxl::AdxlEngine::ExportToShareableHandle != nullptr;
  const bool found = dlsym(RTLD_DEFAULT, argv[1]) != nullptr;
  if (weak) {
    adxl::ShareableHandle handle{};
    printf("weak=1 dlsym=%d code=%u\n", found ? 1 : 0, adxl::AdxlEngine::ExportToShareableHandle(nullptr, handle));
  } else {
    printf("weak=0 dlsym=%d code=-\n", found ? 1 : 0);
  }
  char pkg[] = "runtime";
  char version[128] = "";
  aclError v = aclsysGetVersionStr(pkg, version);
  printf("version=%s (%d)\n", version, v);
  return 0;
}
