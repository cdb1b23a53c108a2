// dlopen of a vendor library by bare name, as the vendor's code does (found through
// LD_LIBRARY_PATH or the calling library's RUNPATH, `$ORIGIN` here), and, when the loader
// cannot find it that way, the same file beside the library that asks. The loader takes the
// RUNPATH of the object that called `dlopen`; an interposed `dlopen` (AddressSanitizer's
// interceptor, for one) becomes that caller, and the simulator's `$ORIGIN` is lost. The vendor's
// installation puts its libraries on LD_LIBRARY_PATH (set_env.sh), which needs no such help.
#pragma once

#include <dlfcn.h>

#include <string>

namespace aclsim_dl {

inline void *OpenBeside(const char *name, const void *anchor) {
  void *so = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (so != nullptr) return so;
  Dl_info info{};
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  std::string path(info.dli_fname);
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return nullptr;
  path.resize(slash + 1);
  path += name;
  return dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

}  // namespace aclsim_dl
