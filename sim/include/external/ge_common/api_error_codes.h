/*
 * external/ge_common/api_error_codes.h - written for the regcheck simulator.
 *
 * The vendor's hixl/hixl_types.h includes this header of CANN's metadef, and programs written
 * against HIXL rely on what it brings in: std::map and std::string, ge::AscendString, and
 * <iostream> (metadef reaches it through ge_common/ge_api_types.h ->
 * exe_graph/runtime/runtime_tensor.h -> the runtime shape and stride headers). The vendor's
 * samples use std::cerr without including <iostream>. This header gives the same, and nothing
 * of GE's error-code registry (HIXL's status codes are in hixl/hixl_types.h).
 */
#ifndef ACLSIM_EXTERNAL_GE_COMMON_API_ERROR_CODES_H_
#define ACLSIM_EXTERNAL_GE_COMMON_API_ERROR_CODES_H_

#include <cstdint>
#include <functional>
#ifndef ACLSIM_BUILDING_LIBRARY  // the simulator's own build (sim/src/portable.h) uses none of it
#include <iostream>
#endif
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/ascend_string.h"

#endif  // ACLSIM_EXTERNAL_GE_COMMON_API_ERROR_CODES_H_
