"""A host pool carved from one aclrtMallocHost block the layer did not see allocated, in Python
with ctypes, its pieces registered with aclrtHostRegisterV2 (tests/c/annotate_pool.c's case).

    python3 annotate_pool.py plain|annotated

`annotated`: the pool tells the layer with regcheck.annotate_malloc_host / annotate_free.
Prints `rc <label> <code>` for each vendor call and `annotate <label> <result>`.
"""

import ctypes
import sys

import regcheck

ACL_HOST_REG_MAPPED = 0x2
BLOCK = 4 << 20
PIECE = 1 << 20


def main():
    annotated = sys.argv[1] == "annotated"
    acl = ctypes.CDLL("libascendcl.so")
    rt = ctypes.CDLL("libacl_rt.so")
    acl.aclInit.argtypes = [ctypes.c_char_p]
    acl.aclrtHostRegisterV2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32]
    acl.aclrtHostUnregister.argtypes = [ctypes.c_void_p]
    rt.aclsim_impl_aclrtMallocHost.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    rt.aclsim_impl_aclrtFreeHost.argtypes = [ctypes.c_void_p]
    if acl.aclInit(None) != 0 or acl.aclrtSetDevice(0) != 0:
        sys.exit(2)
    block = ctypes.c_void_p()
    if rt.aclsim_impl_aclrtMallocHost(ctypes.byref(block), BLOCK) != 0:
        sys.exit(3)
    piece = block.value + PIECE
    if annotated:
        print("annotate get", regcheck.annotate_malloc_host(piece, PIECE), flush=True)
    print("rc register", acl.aclrtHostRegisterV2(piece, PIECE, ACL_HOST_REG_MAPPED), flush=True)
    print("rc unregister", acl.aclrtHostUnregister(piece), flush=True)
    if annotated:
        print("annotate put", regcheck.annotate_free(piece), flush=True)
        print("annotate put_again", regcheck.annotate_free(piece), flush=True)
    rt.aclsim_impl_aclrtFreeHost(block)
    acl.aclrtResetDevice(0)
    acl.aclFinalize()


if __name__ == "__main__":
    main()
