"""Tests for the regcheck pytest plugin: one makes a registration mistake, one does not.

    regcheck run pytest wheel_plugin_cases.py

Under the layer, exactly test_misaligned_registration fails (ACL-HOSTREG-ALIGN).
"""

import ctypes
import mmap
import os

import regcheck

ACL_HOST_REG_MAPPED = 0x2


def _acl():
    acl = ctypes.CDLL(os.path.join(regcheck.sim_dir(), "libascendcl.so"))
    acl.aclInit.argtypes = [ctypes.c_char_p]
    acl.aclrtSetDevice.argtypes = [ctypes.c_int32]
    acl.aclrtHostRegisterV2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]
    acl.aclrtHostUnregister.argtypes = [ctypes.c_void_p]
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    return acl


def _page_aligned_buffer():
    buf = mmap.mmap(-1, 4 * 4096)
    return buf, ctypes.addressof(ctypes.c_char.from_buffer(buf))


def test_misaligned_registration():
    acl = _acl()
    buf, base = _page_aligned_buffer()
    acl.aclrtHostRegisterV2(base + 64, 4096, ACL_HOST_REG_MAPPED)  # the mistake; the code is not checked
    del buf


def test_aligned_registration():
    acl = _acl()
    buf, base = _page_aligned_buffer()
    assert acl.aclrtHostRegisterV2(base, 4096, ACL_HOST_REG_MAPPED) == 0
    assert acl.aclrtHostUnregister(base) == 0
    del buf
