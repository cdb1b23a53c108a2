// hixl_demo: a two-engine HIXL transfer in one process.
//
//   hixl_demo              the right way: allocate, register, connect, write, read back,
//                          verify the bytes, disconnect, deregister, finalize. Exits 0 when
//                          the bytes came back intact.
//   hixl_demo --mistakes   the everyday mistakes the RegisterMem reference warns about and users report, one
//                          after the other, each printed with the code HIXL returned. Bare,
//                          most of them "succeed" and fail much later on real hardware; under
//                          regcheck each is rejected (or reported) with a message naming the
//                          rule and the fix. Always exits 0.
//
// Build against the simulator (or CANN) and run it bare, then under regcheck:
//   c++ -std=c++17 hixl_demo.cpp -I<sim>/include -L<sim lib> -lcann_hixl -lascendcl -o hixl_demo
//   ./hixl_demo --mistakes
//   LD_PRELOAD=target/release/libregcheck.so ./hixl_demo --mistakes
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"

using hixl::Hixl;
using hixl::MemDesc;
using hixl::MemHandle;
using hixl::TransferOpDesc;

namespace {

const size_t kSize = 1 << 20;
// Each engine listens on its "ip:port"; the demo claims two ports (LocalEngine), so that
// several runs at once do not collide (set in main).
std::string g_engine_a, g_engine_b;
const char *kEngineA = nullptr;
const char *kEngineB = nullptr;

// An engine name on a port of 127.0.0.1 that no other run gets meanwhile (the simulator's
// aclsim_port.h; on a real machine, the port your deployment assigns the engine).
std::string LocalEngine() {
  int port = aclsimClaimPort();
  if (port < 0) exit(1);
  return "127.0.0.1:" + std::to_string(port);
}

// Options of both engines: RoCE through the device NIC and HCCS (Atlas A2/A3).
std::map<hixl::AscendString, hixl::AscendString> Options() {
  std::map<hixl::AscendString, hixl::AscendString> options;
  options[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] =
      R"({"comm_resource_config.protocol_desc": ["roce:device", "hccs:device"]})";
  return options;
}

void Check(const char *what, uint32_t rc) {
  if (rc != hixl::SUCCESS) {
    fprintf(stderr, "hixl_demo: %s failed with %u\n", what, rc);
    exit(1);
  }
}

void Show(const char *what, uint32_t rc) { printf("  %-58s -> %u%s\n", what, rc, rc == 0 ? " (SUCCESS)" : ""); }

MemHandle Register(Hixl &h, void *p, size_t len, hixl::MemType type) {
  MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(p);
  mem.len = len;
  MemHandle handle = nullptr;
  Check("RegisterMem", h.RegisterMem(mem, type, handle));
  return handle;
}

uint32_t TryRegister(Hixl &h, uintptr_t addr, size_t len, hixl::MemType type, MemHandle *out = nullptr) {
  MemDesc mem{};
  mem.addr = addr;
  mem.len = len;
  MemHandle handle = nullptr;
  uint32_t rc = h.RegisterMem(mem, type, handle);
  if (out != nullptr) *out = handle;
  return rc;
}

int RightWay() {
  printf("hixl_demo: two engines, one process\n");
  Hixl a, b;
  Check("A.Initialize", a.Initialize(kEngineA, Options()));
  Check("B.Initialize", b.Initialize(kEngineB, Options()));

  // A: page-locked host buffers (Atlas A2/A3 want aclrtMallocHost for host memory).
  void *src = nullptr, *dst = nullptr, *dev = nullptr;
  Check("aclrtMallocHost", aclrtMallocHost(&src, kSize));
  Check("aclrtMallocHost", aclrtMallocHost(&dst, kSize));
  // B: device memory, huge pages (HCCS wants ACL_MEM_MALLOC_HUGE_ONLY).
  Check("aclrtMalloc", aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
  for (size_t i = 0; i < kSize; i++) static_cast<uint8_t *>(src)[i] = static_cast<uint8_t>(i * 7 + 3);
  memset(dst, 0, kSize);

  // Register everything before connecting: links made before cannot see later regions.
  MemHandle h_src = Register(a, src, kSize, hixl::MEM_HOST);
  MemHandle h_dst = Register(a, dst, kSize, hixl::MEM_HOST);
  MemHandle h_dev = Register(b, dev, kSize, hixl::MEM_DEVICE);
  Check("A.Connect(B)", a.Connect(kEngineB, 1000));

  std::vector<TransferOpDesc> write{{reinterpret_cast<uintptr_t>(src), reinterpret_cast<uintptr_t>(dev), kSize}};
  Check("A.TransferSync(B, WRITE)", a.TransferSync(kEngineB, hixl::WRITE, write, 1000));
  std::vector<TransferOpDesc> read{{reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(dev), kSize}};
  Check("A.TransferSync(B, READ)", a.TransferSync(kEngineB, hixl::READ, read, 1000));
  bool same = memcmp(src, dst, kSize) == 0;
  printf("  wrote %zu bytes to B and read them back: %s\n", kSize, same ? "identical" : "DIFFERENT");

  Check("A.Disconnect(B)", a.Disconnect(kEngineB, 1000));
  Check("A.DeregisterMem", a.DeregisterMem(h_src));
  Check("A.DeregisterMem", a.DeregisterMem(h_dst));
  Check("B.DeregisterMem", b.DeregisterMem(h_dev));
  a.Finalize();
  b.Finalize();
  aclrtFreeHost(src);
  aclrtFreeHost(dst);
  aclrtFree(dev);
  printf("hixl_demo: %s\n", same ? "OK" : "FAILED");
  return same ? 0 : 1;
}

int Mistakes() {
  printf("hixl_demo --mistakes: what each call returned\n");
  Hixl a, b;
  // One page-locked pool cut into 1 MiB slots, so that each mistake uses memory of its own.
  void *pool = nullptr, *dev_normal = nullptr, *dev_huge = nullptr;
  Check("aclrtMallocHost", aclrtMallocHost(&pool, 8 * kSize));
  Check("aclrtMalloc", aclrtMalloc(&dev_normal, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
  Check("aclrtMalloc", aclrtMalloc(&dev_huge, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
  void *heap = nullptr;
  if (posix_memalign(&heap, 4096, kSize) != 0) return 1;
  auto slot = [&](int i) { return reinterpret_cast<uintptr_t>(pool) + static_cast<uintptr_t>(i) * kSize; };
  uintptr_t remote = reinterpret_cast<uintptr_t>(dev_huge);

  Show("RegisterMem before Initialize", TryRegister(a, slot(0), kSize, hixl::MEM_HOST));
  Check("A.Initialize", a.Initialize(kEngineA, Options()));
  Check("B.Initialize", b.Initialize(kEngineB, Options()));
  Show("RegisterMem with mem.addr = 0", TryRegister(a, 0, kSize, hixl::MEM_HOST));
  Show("RegisterMem with mem.len = 0", TryRegister(a, slot(0), 0, hixl::MEM_HOST));
  Show("RegisterMem with type = 7", TryRegister(a, slot(1), kSize, static_cast<hixl::MemType>(7)));
  Show("RegisterMem of posix_memalign memory as MEM_HOST (A2/A3)",
       TryRegister(a, reinterpret_cast<uintptr_t>(heap), kSize, hixl::MEM_HOST));
  MemHandle first = nullptr;
  Show("RegisterMem of aclrtMallocHost memory (correct)", TryRegister(a, slot(2), kSize, hixl::MEM_HOST, &first));
  Show("RegisterMem overlapping it", TryRegister(a, slot(2) + kSize / 2, kSize, hixl::MEM_HOST));
  Show("RegisterMem of HUGE_FIRST device memory over HCCS",
       TryRegister(b, reinterpret_cast<uintptr_t>(dev_normal), kSize, hixl::MEM_DEVICE));
  MemHandle remote_handle = nullptr;
  Show("RegisterMem of HUGE_ONLY device memory (correct)",
       TryRegister(b, remote, kSize, hixl::MEM_DEVICE, &remote_handle));

  std::vector<TransferOpDesc> ops{{slot(2), remote, 4096}};
  Show("TransferSync before Connect", a.TransferSync(kEngineB, hixl::WRITE, ops, 1000));
  Show("Connect (correct)", a.Connect(kEngineB, 1000));
  Show("TransferSync (correct)", a.TransferSync(kEngineB, hixl::WRITE, ops, 1000));
  Show("RegisterMem after Connect", TryRegister(a, slot(4), kSize, hixl::MEM_HOST));
  std::vector<TransferOpDesc> unregistered{{slot(6), remote, 4096}};
  Show("TransferSync from an unregistered local range", a.TransferSync(kEngineB, hixl::WRITE, unregistered, 1000));
  std::vector<TransferOpDesc> empty;
  Show("TransferSync with no ops", a.TransferSync(kEngineB, hixl::WRITE, empty, 1000));
  Show("DeregisterMem while connected", a.DeregisterMem(first));
  Show("Disconnect (correct)", a.Disconnect(kEngineB, 1000));
  Show("DeregisterMem (correct)", a.DeregisterMem(first));
  Show("DeregisterMem of the same handle again", a.DeregisterMem(first));
  Show("DeregisterMem(nullptr)", a.DeregisterMem(nullptr));
  a.Finalize();
  printf("  %s\n", "B.Finalize with a registration never deregistered");
  b.Finalize();
  Show("RegisterMem after Finalize", TryRegister(a, slot(7), kSize, hixl::MEM_HOST));
  free(heap);
  aclrtFreeHost(pool);
  aclrtFree(dev_normal);
  aclrtFree(dev_huge);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  // each result line in its place among regcheck's messages (stderr), on a pipe too
  setvbuf(stdout, nullptr, _IOLBF, 0);
  bool mistakes = argc > 1 && strcmp(argv[1], "--mistakes") == 0;
  if (argc > 1 && !mistakes) {
    fprintf(stderr, "usage: hixl_demo [--mistakes]\n");
    return 2;
  }
  g_engine_a = LocalEngine();
  g_engine_b = LocalEngine();
  kEngineA = g_engine_a.c_str();
  kEngineB = g_engine_b.c_str();
  Check("aclInit", aclInit(nullptr));
  Check("aclrtSetDevice", aclrtSetDevice(0));
  int rc = mistakes ? Mistakes() : RightWay();
  aclrtResetDevice(0);
  aclFinalize();
  return rc;
}
