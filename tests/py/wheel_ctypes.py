"""A ctypes program registering misaligned host memory, against the wheel's simulator.

    regcheck run --audit python wheel_ctypes.py

Loads the simulator's ACL from regcheck.sim_dir() (as a CI job without CANN would), makes a
misaligned aclrtHostRegisterV2, then prints `key=value` lines: the return code, whether the
layer is active, and what regcheck.findings() and regcheck.last_rejection() say.
"""

import ctypes
import mmap
import os

import regcheck

ACL_HOST_REG_MAPPED = 0x2


def register_misaligned(acl, base):
    return acl.aclrtHostRegisterV2(base + 64, 4096, ACL_HOST_REG_MAPPED)  # the mistake


def main():
    acl = ctypes.CDLL(os.path.join(regcheck.sim_dir(), "libascendcl.so"))
    acl.aclInit.argtypes = [ctypes.c_char_p]
    acl.aclrtSetDevice.argtypes = [ctypes.c_int32]
    acl.aclrtHostRegisterV2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]
    for fn in (acl.aclInit, acl.aclrtSetDevice, acl.aclrtHostRegisterV2):
        fn.restype = ctypes.c_int

    buf = mmap.mmap(-1, 4 * 4096)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    print(f"active={regcheck.active()}")
    print(f"init={acl.aclInit(None)}")
    print(f"set_device={acl.aclrtSetDevice(0)}")
    print(f"register={register_misaligned(acl, base)}")
    for f in regcheck.findings():
        print(f"finding={f.rule}|{f.severity}|{f.call}|{f.python_site}|{f.call_site}|{f.rejected}|{f.code}")
    print(f"last_rejection={regcheck.last_rejection()}")


if __name__ == "__main__":
    main()
