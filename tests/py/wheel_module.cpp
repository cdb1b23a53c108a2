// A pybind11 module registering host memory through the ACL runtime, built against the
// simulator the regcheck wheel carries (its headers and libraries), as a Python project's CI
// would build its own extension.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstdlib>

#include "acl/acl.h"

namespace {

// Initialises ACL and device 0; returns the first failing code, or 0.
int init() {
    aclError rc = aclInit(nullptr);
    if (rc != ACL_SUCCESS) {
        return rc;
    }
    return aclrtSetDevice(0);
}

// Registers a 4 KiB buffer `offset` bytes past a page boundary, unregisters it when that
// worked, and returns the registration's code.
int register_at(std::size_t offset) {
    void *page = nullptr;
    if (posix_memalign(&page, 4096, 2 * 4096) != 0) {
        return -1;
    }
    char *ptr = static_cast<char *>(page) + offset;
    aclError rc = aclrtHostRegisterV2(ptr, 4096, ACL_HOST_REG_MAPPED);
    if (rc == ACL_SUCCESS) {
        aclrtHostUnregister(ptr);
    }
    std::free(page);
    return rc;
}

}  // namespace

PYBIND11_MODULE(wheel_kv, m) {
    m.doc() = "registers host memory through ACL (a regcheck test module)";
    m.def("init", &init, "aclInit and aclrtSetDevice(0)");
    m.def("register_at", &register_at, "register 4 KiB at `offset` bytes past a page boundary");
}
