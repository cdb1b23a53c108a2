// The benchmark driver of `cargo xtask bench`: calls the vendor's functions through the C ABI,
// exactly as an application does, and prints one `name value` line per figure. xtask runs it
// bare and under LD_PRELOAD=libregcheck.so, against a stand-in vendor and the simulator, and
// subtracts. Every figure is the minimum, over several batches, of a batch's mean time per
// call, in nanoseconds.
//
//   driver time N [quick] [nohixl] mlock+munlock of 2 MiB, register+unregister of 2 MiB (and
//                                  of 2 MiB less 64 bytes: a warning on every call),
//                                  aclrtHostGetDevicePointer, TransferSync (64 ops and 1 op; on
//                                  the comm engine and, csxfer*, on hixl_cs), with N live ACL
//                                  registrations and min(N, 4000) per HIXL side
//                                  (nohixl: no HIXL engines; the simulator's engines listen on
//                                  TCP ports and really transfer, which is not regcheck's cost)
//   driver maps M [quick]          mlock+munlock and register+unregister of 2 MiB in a process
//                                  with M extra mappings below the buffer
//   driver count WHAT N ITERS      the set-up of `time N`, then ITERS calls of WHAT (regunreg,
//                                  regwarn, devptr, xfer64, xfer1, csxfer64, csxfer1, unregwarn; hixlreg: RegisterMem+DeregisterMem
//                                  on a third engine, named ip:port, that no peer linked to),
//                                  untimed: for counting system calls
//   driver warn [quick]            aclrtHostUnregister of a pointer never registered: a warning
//                                  finding on every call (xtask runs it with REGCHECK_LOG=off)
//   driver mem N                   heap and resident bytes per live ACL registration, N of them
// `time` and `warn` also print `alloc_<figure>`: heap allocations per call (the driver counts
// every malloc of the process, its own malloc family forwarding to glibc's).
#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hixl/hixl.h"

// Every heap allocation of the process (the application's, regcheck's, the vendor's), counted:
// the driver's own malloc family forwards to glibc's and counts, so that a figure can say how
// many allocations a call makes (regcheck's clean calls: none).
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);
}
static std::atomic<long> g_allocations{0};
extern "C" void *malloc(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
extern "C" void *calloc(size_t n, size_t m) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, m);
}
extern "C" void *realloc(void *p, size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
extern "C" void *memalign(size_t a, size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
extern "C" void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
extern "C" int posix_memalign(void **out, size_t a, size_t n) {
  void *p = memalign(a, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
extern "C" void free(void *p) { __libc_free(p); }

namespace {

constexpr size_t kTwoMiB = 2u << 20;
constexpr size_t kPage = 4096;
constexpr size_t kHixlMax = 4000;
constexpr int kOps = 64;

bool quick = false;
bool no_hixl = false;

[[noreturn]] void die(const char *what, long code) {
  std::fprintf(stderr, "driver: %s failed (%ld)\n", what, code);
  std::exit(1);
}

void check(const char *what, long rc) {
  if (rc != 0) die(what, rc);
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// The minimum over `batches` of the mean ns per iteration of `body(i)` run `batch` times.
template <typename F>
double measure(int batch, int batches, F body) {
  if (quick) {
    batch = std::max(1, batch / 20);
    batches = 2;
  }
  for (int i = 0; i < batch; i++) body(i);  // warm-up
  double best = 1e300;
  for (int b = 0; b < batches; b++) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < batch; i++) body(i);
    double per = double(now_ns() - t0) / batch;
    best = std::min(best, per);
  }
  return best;
}

void *map_anon(size_t size) {
  void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) die("mmap", size);
  return p;
}

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint64_t next_random() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

void init_acl() {
  check("aclInit", aclInit(nullptr));
  check("aclrtSetDevice", aclrtSetDevice(0));
}

// The 2 MiB buffer of the anchor and of register+unregister, its pages present.
char *two_mib_buffer() {
  char *buf = static_cast<char *>(map_anon(kTwoMiB));
  std::memset(buf, 1, kTwoMiB);
  return buf;
}

double time_mlock(char *buf) {
  return measure(200, 15, [&](int) {
    check("mlock", mlock(buf, kTwoMiB));
    check("munlock", munlock(buf, kTwoMiB));
  });
}

void reg_unreg(char *buf, size_t size = kTwoMiB) {
  check("aclrtHostRegisterV2", aclrtHostRegisterV2(buf, size, ACL_HOST_REG_MAPPED));
  check("aclrtHostUnregister", aclrtHostUnregister(buf));
}

double time_reg_unreg(char *buf) {
  return measure(200, 15, [&](int) { reg_unreg(buf); });
}

// The same with a size that is not whole pages: a warning finding (ACL-HOSTREG-SIZE-PAGES) on
// every call, logged for the first REGCHECK_MAX_REPEATS (all in the warm-up) and then only
// counted and kept in the findings log.
double time_reg_unreg_warned(char *buf) {
  // Past REGCHECK_MAX_REPEATS (100) first, whatever the batch size: a `quick` run's warm-up
  // alone would leave every timed call logged.
  for (int i = 0; i < 128; i++) reg_unreg(buf, kTwoMiB - 64);
  return measure(200, 15, [&](int) { reg_unreg(buf, kTwoMiB - 64); });
}

// N live 4 KiB MAPPED registrations in one mapping, and pointers into them in random order.
struct AclRegs {
  char *base = nullptr;
  std::vector<void *> probes;
};

AclRegs register_acl(size_t n) {
  AclRegs r;
  if (n == 0) return r;
  r.base = static_cast<char *>(map_anon(n * kPage));
  for (size_t i = 0; i < n; i++) {
    check("aclrtHostRegisterV2 (set-up)", aclrtHostRegisterV2(r.base + i * kPage, kPage, ACL_HOST_REG_MAPPED));
  }
  for (int i = 0; i < 4096; i++) r.probes.push_back(r.base + (next_random() % n) * kPage + (next_random() % kPage));
  return r;
}

void devptr(const AclRegs &r, int i) {
  void *dev = nullptr;
  check("aclrtHostGetDevicePointer", aclrtHostGetDevicePointer(r.probes[i & 4095], &dev, 0));
}

// Two HIXL engines in this process, `n` registrations each of aclrtMallocHost memory, the
// first linked to the second, and transfer lists of 64 ops and of 1 op. Default options (the
// comm engine on the stand-in's Ascend910B1), or `cs`: LocalCommRes version 1.3 (hixl_cs,
// whose transfers the vendor answers first).
struct HixlPair {
  explicit HixlPair(bool cs = false) : cs(cs), remote(cs ? "127.0.0.1:26105" : "127.0.0.1:26102") {}
  bool cs;
  hixl::Hixl a, b;
  std::vector<std::vector<hixl::TransferOpDesc>> lists64, lists1;
  hixl::AscendString remote;
};

void setup_hixl(HixlPair &h, size_t n) {
  std::map<hixl::AscendString, hixl::AscendString> options;
  if (h.cs) options[hixl::AscendString(hixl::OPTION_LOCAL_COMM_RES)] = hixl::AscendString("{\"version\": \"1.3\"}");
  check("Hixl::Initialize", h.a.Initialize(hixl::AscendString(h.cs ? "127.0.0.1:26104" : "127.0.0.1:26101"), options));
  check("Hixl::Initialize", h.b.Initialize(h.remote, options));
  std::vector<uintptr_t> base(2);
  hixl::Hixl *side[2] = {&h.a, &h.b};
  for (int s = 0; s < 2; s++) {
    void *p = nullptr;
    check("aclrtMallocHost", aclrtMallocHost(&p, n * kPage));
    base[s] = reinterpret_cast<uintptr_t>(p);
    for (size_t i = 0; i < n; i++) {
      hixl::MemDesc mem{};
      mem.addr = base[s] + i * kPage;
      mem.len = kPage;
      hixl::MemHandle handle = nullptr;
      check("Hixl::RegisterMem", side[s]->RegisterMem(mem, hixl::MEM_HOST, handle));
    }
  }
  check("Hixl::Connect", h.a.Connect(h.remote, 1000));
  auto op = [&]() {
    return hixl::TransferOpDesc{base[0] + (next_random() % n) * kPage + 64 * (next_random() % 32),
                                base[1] + (next_random() % n) * kPage + 64 * (next_random() % 32), 64};
  };
  for (int l = 0; l < 64; l++) {
    std::vector<hixl::TransferOpDesc> ops;
    for (int k = 0; k < kOps; k++) ops.push_back(op());
    h.lists64.push_back(ops);
    h.lists1.push_back({op()});
  }
}

void transfer(HixlPair &h, const std::vector<hixl::TransferOpDesc> &ops) {
  check("Hixl::TransferSync", h.a.TransferSync(h.remote, hixl::WRITE, ops, 1000));
}

void print(const char *name, double v) { std::printf("%s %.1f\n", name, v); }

// Heap allocations per call of `body(i)`, over 1000 calls after 1000 more (the warm-up: what
// regcheck builds once, such as a thread's copy of its records, is not per call).
template <typename F>
double allocations_per_call(F body) {
  for (int i = 0; i < 1000; i++) body(i);
  long before = g_allocations.load();
  for (int i = 0; i < 1000; i++) body(i);
  return double(g_allocations.load() - before) / 1000.0;
}

void print_count(const char *name, double v) { std::printf("%s %.3f\n", name, v); }

int cmd_time(size_t n) {
  init_acl();
  char *buf = two_mib_buffer();
  AclRegs regs = register_acl(n);
  HixlPair h, cs(true);
  if (!no_hixl) {
    setup_hixl(h, std::min(n, kHixlMax));
    setup_hixl(cs, std::min(n, kHixlMax));
  }
  print("mlock", time_mlock(buf));
  print("regunreg", time_reg_unreg(buf));
  print("regwarn", time_reg_unreg_warned(buf));
  if (n > 0) print("devptr", measure(20000, 15, [&](int i) { devptr(regs, i); }));
  print_count("alloc_regunreg", allocations_per_call([&](int) { reg_unreg(buf); }));
  if (n > 0) print_count("alloc_devptr", allocations_per_call([&](int i) { devptr(regs, i); }));
  // A look-up of a name regcheck does not check (its own dlsym lets the C library answer).
  print("dlsym", measure(20000, 15, [&](int) {
    if (dlsym(RTLD_DEFAULT, "aclrtGetDevice") == nullptr) die("dlsym aclrtGetDevice", 0);
  }));
  if (no_hixl) return 0;
  print("xfer64", measure(200, 15, [&](int i) { transfer(h, h.lists64[i & 63]); }) / kOps);
  print("xfer1", measure(20000, 15, [&](int i) { transfer(h, h.lists1[i & 63]); }));
  print_count("alloc_xfer64", allocations_per_call([&](int i) { transfer(h, h.lists64[i & 63]); }));
  print_count("alloc_xfer1", allocations_per_call([&](int i) { transfer(h, h.lists1[i & 63]); }));
  print("csxfer64", measure(200, 15, [&](int i) { transfer(cs, cs.lists64[i & 63]); }) / kOps);
  print("csxfer1", measure(20000, 15, [&](int i) { transfer(cs, cs.lists1[i & 63]); }));
  print_count("alloc_csxfer1", allocations_per_call([&](int i) { transfer(cs, cs.lists1[i & 63]); }));
  return 0;
}

int cmd_maps(size_t m) {
  init_acl();
  // The buffer first: mmap places later mappings below it, so a reader of /proc/self/maps
  // passes all of them before it reaches the buffer.
  char *buf = two_mib_buffer();
  for (size_t i = 0; i < m; i++) {
    // Alternate the protection so that neighbours never merge into one mapping.
    int prot = (i % 2) ? PROT_READ : PROT_READ | PROT_WRITE;
    if (mmap(nullptr, kPage, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) die("mmap", i);
  }
  print("maps_mlock", time_mlock(buf));
  print("maps_regunreg", time_reg_unreg(buf));
  return 0;
}

int cmd_count(const std::string &what, size_t n, long iters) {
  init_acl();
  char *buf = two_mib_buffer();
  AclRegs regs = register_acl(n);
  HixlPair h, cs(true);
  setup_hixl(h, std::min(n, kHixlMax));
  setup_hixl(cs, std::min(n, kHixlMax));
  hixl::Hixl lone;
  std::map<hixl::AscendString, hixl::AscendString> options;
  check("Hixl::Initialize", lone.Initialize(hixl::AscendString("127.0.0.1:26103"), options));
  void *lone_buf = nullptr;
  check("aclrtMallocHost", aclrtMallocHost(&lone_buf, kPage));
  for (long i = 0; i < iters; i++) {
    if (what == "regunreg") {
      reg_unreg(buf);
    } else if (what == "regwarn") {
      reg_unreg(buf, kTwoMiB - 64);
    } else if (what == "devptr") {
      devptr(regs, int(i));
    } else if (what == "xfer64") {
      transfer(h, h.lists64[i & 63]);
    } else if (what == "xfer1") {
      transfer(h, h.lists1[i & 63]);
    } else if (what == "csxfer64") {
      transfer(cs, cs.lists64[i & 63]);
    } else if (what == "csxfer1") {
      transfer(cs, cs.lists1[i & 63]);
    } else if (what == "hixlreg") {
      hixl::MemDesc mem{};
      mem.addr = reinterpret_cast<uintptr_t>(lone_buf);
      mem.len = kPage;
      hixl::MemHandle handle = nullptr;
      check("Hixl::RegisterMem", lone.RegisterMem(mem, hixl::MEM_HOST, handle));
      check("Hixl::DeregisterMem", lone.DeregisterMem(handle));
    } else if (what == "unregwarn") {
      check("aclrtHostUnregister", aclrtHostUnregister(buf));
    } else {
      die("unknown count target", 0);
    }
  }
  return 0;
}

// Bytes the process's allocator hands out (small blocks and mmapped ones).
double heap_bytes() {
  struct mallinfo2 mi = mallinfo2();
  return double(mi.uordblks) + double(mi.hblkhd);
}

double rss_bytes() {
  long size = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr || std::fscanf(f, "%ld %ld", &size, &resident) != 2) die("reading /proc/self/statm", 0);
  std::fclose(f);
  return double(resident) * double(sysconf(_SC_PAGESIZE));
}

int cmd_mem(size_t n) {
  init_acl();
  char *buf = two_mib_buffer();
  reg_unreg(buf);  // whatever regcheck sets up once is not per registration
  char *base = static_cast<char *>(map_anon(n * kPage));
  double heap0 = heap_bytes(), rss0 = rss_bytes();
  for (size_t i = 0; i < n; i++) {
    check("aclrtHostRegisterV2", aclrtHostRegisterV2(base + i * kPage, kPage, ACL_HOST_REG_MAPPED));
  }
  print("mem_heap", (heap_bytes() - heap0) / double(n));
  print("mem_rss", (rss_bytes() - rss0) / double(n));
  return 0;
}

// A warned call: aclrtHostUnregister of a page never registered (ACL-HOSTUNREG-NOT-REGISTERED,
// made a warning by xtask's REGCHECK_RULES, so the call is forwarded); the stand-in answers 0.
int cmd_warn() {
  init_acl();
  char *page = static_cast<char *>(map_anon(kPage));
  print("unregwarn", measure(20000, 15, [&](int) { check("aclrtHostUnregister", aclrtHostUnregister(page)); }));
  print_count("alloc_unregwarn", allocations_per_call([&](int) { check("aclrtHostUnregister", aclrtHostUnregister(page)); }));
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  quick = std::find(args.begin(), args.end(), "quick") != args.end();
  no_hixl = std::find(args.begin(), args.end(), "nohixl") != args.end();
  auto num = [&](size_t i) -> long { return i < args.size() ? std::atol(args[i].c_str()) : 0; };
  if (args.size() >= 2 && args[0] == "time") return cmd_time(size_t(num(1)));
  if (args.size() >= 2 && args[0] == "maps") return cmd_maps(size_t(num(1)));
  if (args.size() >= 4 && args[0] == "count") return cmd_count(args[1], size_t(num(2)), num(3));
  if (args.size() >= 2 && args[0] == "mem") return cmd_mem(size_t(num(1)));
  if (args.size() >= 1 && args[0] == "warn") return cmd_warn();
  std::fprintf(stderr, "usage: driver time N [quick] | maps M [quick] | count WHAT N ITERS | mem N | warn [quick]\n");
  return 2;
}
