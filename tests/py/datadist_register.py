"""A Python program registering KV caches with the simulator's llm_datadist (tests/datadist_python.rs).

    python datadist_register.py ACL_LIBRARY

Allocates two device buffers with the simulator's ACL (ctypes), initialises an LLMDataDist in
CacheManager mode, registers a cache whose shape has a zero dimension (the mistake: a block
count computed as 0), one with an address 0 (which the package refuses before the library, as
CANN's does), then a good one, unregisters it and finalises. Prints `key=value` lines:
each call's status code (0, or the LLMException's), and, when the `regcheck` module is
importable and the layer is loaded, each finding as `finding=rule|severity|call|python_site`.
"""

import ctypes
import sys

try:
    import regcheck  # before llm_datadist loads its library, so that its ctypes calls are noted
except ImportError:
    regcheck = None

from llm_datadist import CacheDesc, DataType, LLMConfig, LLMDataDist, LLMException, LLMRole, Placement

ACL_MEM_MALLOC_HUGE_ONLY = 2
SHAPE = [8, 16, 4, 32]  # blocks, block size, heads, head dim
BYTES = 8 * 16 * 4 * 32 * 2  # bf16


def status(call):
    try:
        call()
        return 0
    except LLMException as e:
        return int(e.status_code)


def register_empty_pool(manager, k, v):
    blocks = 0  # e.g. the memory left for the KV pool, divided by a block's size, rounded down
    desc = CacheDesc(2, [blocks] + SHAPE[1:], DataType.DT_BF16, Placement.DEVICE)
    return manager.register_cache(desc, [k, v])  # the mistake


def main():
    acl = ctypes.CDLL(sys.argv[1])
    acl.aclInit.argtypes = [ctypes.c_char_p]
    acl.aclrtSetDevice.argtypes = [ctypes.c_int32]
    acl.aclrtMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int]
    acl.aclrtFree.argtypes = [ctypes.c_void_p]
    print(f"acl_init={acl.aclInit(None)}")
    print(f"set_device={acl.aclrtSetDevice(0)}")
    bufs = []
    for _ in range(2):
        p = ctypes.c_void_p()
        print(f"malloc={acl.aclrtMalloc(ctypes.byref(p), BYTES, ACL_MEM_MALLOC_HUGE_ONLY)}")
        bufs.append(p.value)
    k, v = bufs

    config = LLMConfig()
    config.device_id = 0
    config.enable_cache_manager = True
    datadist = LLMDataDist(LLMRole.PROMPT, 1)
    print(f"init={status(lambda: datadist.init(config.generate_options()))}")
    manager = datadist.cache_manager
    print(f"register_empty_pool={status(lambda: register_empty_pool(manager, k, v))}")
    caches = []
    desc = CacheDesc(2, SHAPE, DataType.DT_BF16, Placement.DEVICE)
    # refused by the package's own checks (CANN's Python makes them too): the library is not called
    print(f"register_zero_addr={status(lambda: manager.register_cache(desc, [k, 0]))}")
    print(f"register={status(lambda: caches.append(manager.register_cache(desc, [k, v])))}")
    print(f"unregister={status(lambda: manager.unregister_cache(caches[0].cache_id))}")
    datadist.finalize()
    for p in bufs:
        print(f"free={acl.aclrtFree(p)}")
    if regcheck is not None:
        print(f"active={regcheck.active()}")
        for f in regcheck.findings():
            print(f"finding={f.rule}|{f.severity}|{f.call}|{f.python_site}")


if __name__ == "__main__":
    main()
