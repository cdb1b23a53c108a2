"""Two processes move a KV block with HIXL the way LMCache-Ascend's connector does.

    python3 kv_two_process.py ACL_LIB MODULE_LIB          # the driver: starts both peers
    python3 kv_two_process.py ACL_LIB MODULE_LIB peer NAME ME OTHER

ACL calls go through ctypes on ACL_LIB (aclrtMallocHost, the V1 aclrtHostRegister(MAPPED) and
aclrtHostUnregister of LMCache's pinned pool, aclrtMalloc); the HIXL calls through a C++
module (MODULE_LIB, tests/c/py_kv_module.cpp, as a pybind11 module would be): register host
and device memory, both sides connect, then TransferSync READ and TransferAsync WRITE polled
with GetTransferStatus. Each peer prints `rc <label> <code>` lines (prefixed with its name);
the driver exits 0 when both peers did. Standard library only.
"""

import ctypes
import subprocess
import sys

MEM_DEVICE, MEM_HOST = 0, 1
ACL_HOST_REGISTER_MAPPED = 0
ACL_MEM_MALLOC_HUGE_ONLY = 1
SIZE = 1 << 20


def c_api(acl_path, module_path):
    acl = ctypes.CDLL(acl_path)
    for name, args in [
        ("aclInit", [ctypes.c_char_p]),
        ("aclrtSetDevice", [ctypes.c_int32]),
        ("aclrtMallocHost", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]),
        ("aclrtFreeHost", [ctypes.c_void_p]),
        ("aclrtHostRegister", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]),
        ("aclrtHostUnregister", [ctypes.c_void_p]),
        ("aclrtMalloc", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int]),
        ("aclrtFree", [ctypes.c_void_p]),
    ]:
        fn = getattr(acl, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    kv = ctypes.CDLL(module_path)
    for name, args, res in [
        ("kv_claim_port", [], ctypes.c_int),
        ("kv_new", [], ctypes.c_void_p),
        ("kv_init", [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_uint32),
        ("kv_register", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int,
                         ctypes.POINTER(ctypes.c_void_p)], ctypes.c_uint32),
        ("kv_deregister", [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_uint32),
        ("kv_connect", [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_uint32),
        ("kv_disconnect", [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_uint32),
        ("kv_read", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64],
         ctypes.c_uint32),
        ("kv_write_async", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                            ctypes.POINTER(ctypes.c_int)], ctypes.c_uint32),
        ("kv_delete", [ctypes.c_void_p], None),
    ]:
        fn = getattr(kv, name)
        fn.argtypes, fn.restype = args, res
    return acl, kv


def peer(acl, kv, name, me, other):
    def rc(label, code):
        print(f"{name} rc {label} {code}", flush=True)

    def command():
        return sys.stdin.readline().split()

    rc("init_acl", acl.aclInit(None))
    rc("set_device", acl.aclrtSetDevice(0))
    # LMCache's pinned pool: aclrtMallocHost, mapped for the device once, then unmapped.
    host = ctypes.c_void_p()
    rc("malloc_host", acl.aclrtMallocHost(ctypes.byref(host), SIZE))
    ctypes.memset(host, ord(name[0]), SIZE)
    dev_ptr = ctypes.c_void_p()
    rc("host_register", acl.aclrtHostRegister(host, SIZE, ACL_HOST_REGISTER_MAPPED, ctypes.byref(dev_ptr)))
    rc("host_unregister", acl.aclrtHostUnregister(host))
    dev = ctypes.c_void_p()
    rc("malloc", acl.aclrtMalloc(ctypes.byref(dev), SIZE, ACL_MEM_MALLOC_HUGE_ONLY))
    ctypes.memset(dev, ord("0"), SIZE)

    h = kv.kv_new()
    rc("initialize", kv.kv_init(h, me.encode()))
    hh, hd = ctypes.c_void_p(), ctypes.c_void_p()
    rc("register_host", kv.kv_register(h, host, SIZE, MEM_HOST, ctypes.byref(hh)))
    rc("register_device", kv.kv_register(h, dev, SIZE, MEM_DEVICE, ctypes.byref(hd)))
    print(f"{name} registered {host.value:#x} {dev.value:#x}", flush=True)
    while True:
        cmd = command()
        if not cmd or cmd[0] == "end":
            break
        if cmd[0] == "connect":
            rc("connect", kv.kv_connect(h, other.encode()))
        elif cmd[0] == "transfer":
            # READ the peer's host block into our second half; WRITE our first half to its device block.
            far_host, far_dev, half = int(cmd[1], 16), int(cmd[2], 16), SIZE // 2
            rc("transfer_sync_read", kv.kv_read(h, other.encode(), host.value + half, far_host, half))
            st = ctypes.c_int(-1)
            rc("transfer_async_write", kv.kv_write_async(h, other.encode(), host.value, far_dev, half, ctypes.byref(st)))
            print(f"{name} status {st.value}", flush=True)
            print(f"{name} read_byte {ctypes.string_at(host.value + half, 1).decode()}", flush=True)
        elif cmd[0] == "look":
            print(f"{name} device_byte {ctypes.string_at(dev.value, 1).decode()}", flush=True)
        print(f"{name} done {cmd[0]}", flush=True)
    rc("disconnect", kv.kv_disconnect(h, other.encode()))
    rc("deregister_host", kv.kv_deregister(h, hh))
    rc("deregister_device", kv.kv_deregister(h, hd))
    kv.kv_delete(h)
    rc("free", acl.aclrtFree(dev))
    rc("free_host", acl.aclrtFreeHost(host))


def driver(acl_path, module_path):
    _, kv = c_api(acl_path, module_path)
    server_at = f"127.0.0.1:{kv.kv_claim_port()}"
    client_at = f"127.0.0.1:{kv.kv_claim_port()}"
    lines = []

    def start(name, me, other):
        return subprocess.Popen([sys.executable, __file__, acl_path, module_path, "peer", name, me, other],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def until(p, word):
        for line in p.stdout:
            lines.append(line)
            if line.split()[1:2] == [word]:
                return line.split()
        sys.stdout.write("".join(lines))
        raise SystemExit(f"a peer ended before {word!r}")

    def send(p, text, word="done"):
        p.stdin.write(text + "\n")
        p.stdin.flush()
        return until(p, word)

    # Both register before either connects; then both sides connect, as LMCache does.
    server = start("server", server_at, client_at)
    _, _, server_host, server_dev = until(server, "registered")
    client = start("client", client_at, server_at)
    until(client, "registered")
    send(server, "connect")
    send(client, "connect")
    send(client, f"transfer {server_host} {server_dev}")
    send(server, "look")
    codes = []
    for p in (client, server):
        p.stdin.write("end\n")
        p.stdin.close()
        lines.extend(p.stdout.readlines())
        codes.append(p.wait())
    sys.stdout.write("".join(lines))
    print(f"exit {codes[0]} {codes[1]}")
    return 0 if codes == [0, 0] else 1


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] == "peer":
        acl, kv = c_api(sys.argv[1], sys.argv[2])
        peer(acl, kv, sys.argv[4], sys.argv[5], sys.argv[6])
    else:
        sys.exit(driver(sys.argv[1], sys.argv[2]))
