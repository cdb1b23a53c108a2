"""Two processes move bytes with Mooncake's transfer engine over the Ascend transport (ADXL).

    python mooncake_two_process.py ACL_LIB [MODE]          # the driver: starts both peers
    python mooncake_two_process.py ACL_LIB MODE target|initiator ...

Our own driver of the unmodified `mooncake-transfer-engine-npu` wheel (tests/mooncake.rs): each
peer sets its device through ctypes on ACL_LIB (aclInit, aclrtSetDevice), starts a
`mooncake.engine.TransferEngine` on 127.0.0.1 with the "P2PHANDSHAKE" metadata and the "ascend"
protocol, allocates device memory (aclrtMalloc, huge pages) and host memory (aclrtMallocHost),
and registers both with register_memory. The initiator writes a known pattern into the target's
device and host buffers with transfer_sync_write and reads it back with transfer_sync_read; the
target checks what arrived by copying it back (aclrtMemcpy). Both unregister and exit.

MODE "ok" (the default) or "mistake": the initiator also writes from a device buffer it never
registered (Mooncake answers -1; the simulator's ADXL answers its code, traced).
Each peer prints `<name> rc <label> <value>` lines; the driver prints `exit <target> <initiator>`
and exits 0 when both peers did. Standard library only (besides the wheel).
"""

import ctypes
import os
import subprocess
import sys

ACL_MEM_MALLOC_HUGE_ONLY = 1
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
SIZE = 1 << 20  # per buffer
PATTERN = bytes((i * 7 + 3) & 0xFF for i in range(SIZE))


def acl_api(path):
    acl = ctypes.CDLL(path)
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    for name, args in [
        ("aclInit", [ctypes.c_char_p]),
        ("aclrtSetDevice", [ctypes.c_int32]),
        ("aclrtResetDevice", [ctypes.c_int32]),
        ("aclrtMalloc", [ctypes.POINTER(vp), sz, ctypes.c_int]),
        ("aclrtFree", [vp]),
        ("aclrtMallocHost", [ctypes.POINTER(vp), sz]),
        ("aclrtFreeHost", [vp]),
        ("aclrtMemcpy", [vp, sz, vp, sz, ctypes.c_int]),
    ]:
        fn = getattr(acl, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    return acl


class Peer:
    def __init__(self, name, acl_path, device):
        self.name = name
        self.acl = acl_api(acl_path)
        self.device = device

    def say(self, label, value):
        print(f"{self.name} rc {label} {value}", flush=True)

    def start(self):
        self.say("aclInit", self.acl.aclInit(None))
        self.say("aclrtSetDevice", self.acl.aclrtSetDevice(self.device))
        from mooncake.engine import TransferEngine

        self.engine = TransferEngine()
        self.say("initialize", self.engine.initialize("127.0.0.1", "P2PHANDSHAKE", "ascend", ""))
        self.segment = f"127.0.0.1:{self.engine.get_rpc_port()}"

    def device_buffer(self):
        p = ctypes.c_void_p()
        self.say("aclrtMalloc", self.acl.aclrtMalloc(ctypes.byref(p), SIZE, ACL_MEM_MALLOC_HUGE_ONLY))
        return p.value

    def host_buffer(self):
        p = ctypes.c_void_p()
        self.say("aclrtMallocHost", self.acl.aclrtMallocHost(ctypes.byref(p), SIZE))
        return p.value

    def register(self, label, addr):
        self.say(f"register_{label}", self.engine.register_memory(addr, SIZE))

    def unregister(self, label, addr):
        self.say(f"unregister_{label}", self.engine.unregister_memory(addr))

    def put(self, addr, data):
        src = ctypes.create_string_buffer(data, len(data))
        self.say("put", self.acl.aclrtMemcpy(addr, SIZE, src, len(data), ACL_MEMCPY_HOST_TO_DEVICE))

    def get(self, addr):
        dst = ctypes.create_string_buffer(SIZE)
        self.say("get", self.acl.aclrtMemcpy(dst, SIZE, addr, SIZE, ACL_MEMCPY_DEVICE_TO_HOST))
        return dst.raw

    def same(self, label, addr, want):
        self.say(f"same_{label}", 1 if self.get(addr) == want else 0)


def target(acl_path):
    me = Peer("target", acl_path, 0)
    me.start()
    dev, host = me.device_buffer(), me.host_buffer()
    me.register("device", dev)
    me.register("host", host)
    me.put(dev, bytes(SIZE))
    me.put(host, bytes(SIZE))
    print(f"ready {me.segment} {dev} {host}", flush=True)
    sys.stdin.readline()  # the initiator has written
    me.same("device", dev, PATTERN)
    me.same("host", host, PATTERN[::-1])
    print("checked", flush=True)
    sys.stdin.readline()  # the initiator has read back and unregistered
    me.unregister("device", dev)
    me.unregister("host", host)
    me.say("aclrtFree", me.acl.aclrtFree(dev))
    me.say("aclrtFreeHost", me.acl.aclrtFreeHost(host))
    me.say("done", 0)


def initiator(acl_path, mode, segment, remote_dev, remote_host):
    me = Peer("initiator", acl_path, 0)
    me.start()
    remote_dev, remote_host = int(remote_dev), int(remote_host)
    dev, host = me.device_buffer(), me.host_buffer()
    me.register("device", dev)
    me.register("host", host)
    me.put(dev, PATTERN)
    me.put(host, PATTERN[::-1])
    # local device -> remote device, local host -> remote host
    me.say("write_device", me.engine.transfer_sync_write(segment, dev, remote_dev, SIZE))
    me.say("write_host", me.engine.transfer_sync_write(segment, host, remote_host, SIZE))
    if mode == "mistake":
        stray = me.device_buffer()  # allocated, never registered
        me.put(stray, PATTERN)
        me.say("write_unregistered", me.engine.transfer_sync_write(segment, stray, remote_dev, SIZE))
        me.say("aclrtFree_stray", me.acl.aclrtFree(stray))
    print("written", flush=True)
    sys.stdin.readline()  # the target has checked
    # read back, crosswise: remote device -> local host, remote host -> local device
    me.put(dev, bytes(SIZE))
    me.put(host, bytes(SIZE))
    me.say("read_device", me.engine.transfer_sync_read(segment, host, remote_dev, SIZE))
    me.say("read_host", me.engine.transfer_sync_read(segment, dev, remote_host, SIZE))
    me.same("read_device", host, PATTERN)
    me.same("read_host", dev, PATTERN[::-1])
    me.unregister("device", dev)
    me.unregister("host", host)
    me.say("aclrtFree", me.acl.aclrtFree(dev))
    me.say("aclrtFreeHost", me.acl.aclrtFreeHost(host))
    me.say("done", 0)


def line_of(proc, prefix, who):
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith(prefix):
            return line.split()
    raise SystemExit(f"{who} ended before printing {prefix!r}")


def drive(acl_path, mode):
    me = [sys.executable, os.path.abspath(__file__), acl_path, mode]
    opts = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    tgt = subprocess.Popen(me + ["target"], **opts)
    ready = line_of(tgt, "ready", "the target")
    ini = subprocess.Popen(me + ["initiator"] + ready[1:], **opts)
    line_of(ini, "written", "the initiator")
    tgt.stdin.write("go\n")
    tgt.stdin.flush()
    line_of(tgt, "checked", "the target")
    ini.stdin.write("go\n")
    ini.stdin.close()
    for line in ini.stdout:
        sys.stdout.write(line)
    ini_rc = ini.wait()
    tgt.stdin.write("go\n")
    tgt.stdin.close()
    for line in tgt.stdout:
        sys.stdout.write(line)
    tgt_rc = tgt.wait()
    print(f"exit {tgt_rc} {ini_rc}", flush=True)
    return 0 if tgt_rc == 0 and ini_rc == 0 else 1


if __name__ == "__main__":
    acl_path = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "ok"
    role = sys.argv[3] if len(sys.argv) > 3 else None
    if role == "target":
        target(acl_path)
    elif role == "initiator":
        initiator(acl_path, mode, *sys.argv[4:7])
    else:
        sys.exit(drive(acl_path, mode))
