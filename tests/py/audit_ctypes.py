"""Registers host memory through ctypes, the way vLLM-Ascend and LMCache do.

    python3 audit_ctypes.py [LIB]

LIB defaults to "libascendcl.so" (found through LD_LIBRARY_PATH). Prints the same
`key=value` lines as tests/c/audit_dlsym.c: where each looked-up function lives (dladdr),
then the return code of each call. Standard library only.
"""

import ctypes
import mmap
import os
import sys

ACL_HOST_REG_MAPPED = 0x2


class DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def where(fn):
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    info = DlInfo()
    addr = ctypes.cast(fn, ctypes.c_void_p).value
    if not libc.dladdr(addr, ctypes.byref(info)) or not info.dli_fname:
        return "(unknown)"
    return os.path.basename(info.dli_fname.decode())


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "libascendcl.so"
    acl = ctypes.CDLL(name)

    acl.aclInit.argtypes = [ctypes.c_char_p]
    acl.aclrtSetDevice.argtypes = [ctypes.c_int32]
    acl.aclrtGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int32)]
    acl.aclrtHostRegisterV2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]
    acl.aclrtHostUnregister.argtypes = [ctypes.c_void_p]
    for fn in (acl.aclInit, acl.aclrtSetDevice, acl.aclrtGetDevice,
               acl.aclrtHostRegisterV2, acl.aclrtHostUnregister):
        fn.restype = ctypes.c_int

    print(f"where.aclrtHostRegisterV2={where(acl.aclrtHostRegisterV2)}")
    print(f"where.aclrtHostUnregister={where(acl.aclrtHostUnregister)}")
    print(f"where.aclrtGetDevice={where(acl.aclrtGetDevice)}")

    print(f"init={acl.aclInit(None)}")
    print(f"set_device={acl.aclrtSetDevice(0)}")
    dev = ctypes.c_int32(-1)
    print(f"get_device={acl.aclrtGetDevice(ctypes.byref(dev))}")

    # Anonymous, page-aligned memory, as a pinned-buffer pool would use.
    buf = mmap.mmap(-1, 8192)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    reg = acl.aclrtHostRegisterV2
    print(f"bad.null={reg(None, 4096, ACL_HOST_REG_MAPPED)}")
    print(f"bad.align={reg(base + 1, 4096, ACL_HOST_REG_MAPPED)}")
    print(f"bad.size0={reg(base, 0, ACL_HOST_REG_MAPPED)}")
    print(f"good.register={reg(base, 8192, ACL_HOST_REG_MAPPED)}")
    print(f"good.unregister={acl.aclrtHostUnregister(base)}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
