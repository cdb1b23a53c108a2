// What the simulator's conformance programs (conformance_hixl.cpp, conformance_adxl.cpp) share:
// the STEP check of a row's intermediate calls and the program's main.
//
//   <program> list        the row IDs, one a line
//   <program> <ROW-ID>    runs the row: "result=<code>" on stdout
#ifndef ACLSIM_TESTS_CONFORMANCE_UTIL_H_
#define ACLSIM_TESTS_CONFORMANCE_UTIL_H_

#include <stdint.h>
#include <stdio.h>

#include <functional>
#include <map>
#include <string>

#include "acl/acl.h"

// What a row returns when one of its steps answered otherwise (said on stderr).
constexpr uint32_t kStepFailed = 999999;

#define STEP(expr, want)                                                                            \
  do {                                                                                              \
    const long long got_ = static_cast<long long>(expr);                                            \
    if (got_ != static_cast<long long>(want)) {                                                     \
      fprintf(stderr, "step failed at line %d: %s -> %lld, expected %lld\n", __LINE__, #expr, got_, \
              static_cast<long long>(want));                                                        \
      return kStepFailed;                                                                           \
    }                                                                                               \
  } while (0)

using ConformanceRows = std::map<std::string, std::function<uint32_t()>>;

// `list`, or runs one row on device 0 (the vendor's engines run on a device's context, as their
// tests' mocks set one).
static inline int ConformanceMain(int argc, char **argv, const ConformanceRows &rows) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s list | <ROW-ID>\n", argv[0]);
    return 2;
  }
  const std::string what = argv[1];
  if (what == "list") {
    for (const auto &kv : rows) printf("%s\n", kv.first.c_str());
    return 0;
  }
  auto it = rows.find(what);
  if (it == rows.end()) {
    fprintf(stderr, "no case for row %s\n", what.c_str());
    return 2;
  }
  if (aclrtSetDevice(0) != ACL_SUCCESS) return 3;
  printf("result=%u\n", it->second());
  return 0;
}

#endif  // ACLSIM_TESTS_CONFORMANCE_UTIL_H_
