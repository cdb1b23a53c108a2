// Concurrency under regcheck (tests/concurrency.rs), linked with -lregcheck ahead of the
// simulator.
//
//   concurrency churn   16 threads, all on the main thread's ACL context, churn ACL host
//                       registrations (good and bad calls) and HIXL registrations on two shared
//                       engines, then transfer through a link the main thread made, then
//                       deregister part of it. Each thread checks every code; at the end
//                       regcheck's own counts (include/regcheck.h) must equal what the threads
//                       left registered.
//   concurrency fork    16 threads churn ACL registrations while the main thread forks again
//                       and again; each child registers at once (good and bad calls) and exits.
//                       A child that does not finish within 5 s (its alarm; 8 s at most) counts
//                       as hung, and no more are forked.
//
// Prints `failures <n>`, `live_host <regcheck> <expected>`, `live_hixl <regcheck> <expected>`,
// or `children <n> failed <n> hung <n>` (children: how many were forked).
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"
#include "regcheck.h"

namespace {

const int kThreads = 16;
const size_t kPage = 4096;
const int kBuffers = 4;

aclrtContext g_ctx = nullptr;
hixl::Hixl *g_a = nullptr;
hixl::Hixl *g_b = nullptr;
std::string g_b_name;  // "127.0.0.1:<port>" of engine b
pthread_barrier_t g_barrier;
std::atomic<int> g_failures{0};
std::atomic<bool> g_stop{false};

void expect(const char *what, long long got, long long want, int thread) {
  if (got != want) {
    g_failures++;
    fprintf(stderr, "thread %d: %s returned %lld, expected %lld\n", thread, what, got, want);
  }
}

char *aligned(size_t n) {
  void *p = nullptr;
  if (posix_memalign(&p, kPage, n) != 0) abort();
  memset(p, 0, n);
  return static_cast<char *>(p);
}

char *malloc_host(size_t n) {
  void *p = nullptr;
  if (aclrtMallocHost(&p, n) != 0) abort();
  return static_cast<char *>(p);
}

uint32_t reg(hixl::Hixl *h, const char *p, size_t len, hixl::MemHandle *out) {
  hixl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(p);
  mem.len = len;
  return h->RegisterMem(mem, hixl::MEM_HOST, *out);
}

// What thread `id` leaves registered.
int acl_kept(int id) { return id % 4; }
bool hixl_keeps_a(int id) { return id % 3 != 0; }
bool hixl_keeps_b(int id) { return id % 3 == 2; }

void *churn_thread(void *arg) {
  int id = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  expect("aclrtSetCurrentContext", aclrtSetCurrentContext(g_ctx), 0, id);

  // ACL: register, device pointer, unregister; and the mistakes regcheck must reject.
  char *bufs[kBuffers];
  for (int j = 0; j < kBuffers; j++) bufs[j] = aligned(2 * kPage);
  for (int it = 0; it < 150; it++) {
    char *p = bufs[it % kBuffers];
    expect("register", aclrtHostRegisterV2(p, kPage, ACL_HOST_REG_MAPPED), 0, id);
    void *dev = nullptr;
    expect("device pointer", aclrtHostGetDevicePointer(p, &dev, 0), 0, id);
    expect("register twice", aclrtHostRegisterV2(p, kPage, ACL_HOST_REG_MAPPED), 507910, id);
    expect("misaligned", aclrtHostRegisterV2(p + 8, kPage, ACL_HOST_REG_MAPPED), 100000, id);
    expect("unregister interior", aclrtHostUnregister(p + 64), 507911, id);
    expect("unregister", aclrtHostUnregister(p), 0, id);
  }
  for (int j = 0; j < acl_kept(id); j++) expect("keep", aclrtHostRegisterV2(bufs[j], kPage, ACL_HOST_REG_MAPPED), 0, id);

  // HIXL: registration churn on both engines, then one region on each kept for transfers.
  char *tmp = malloc_host(kPage);
  char *a_buf = malloc_host(2 * kPage);
  char *b_buf = malloc_host(2 * kPage);
  for (int it = 0; it < 40; it++) {
    hixl::Hixl *h = it % 2 ? g_b : g_a;
    hixl::MemHandle handle = nullptr;
    expect("RegisterMem", reg(h, tmp, kPage, &handle), hixl::SUCCESS, id);
    expect("DeregisterMem", h->DeregisterMem(handle), hixl::SUCCESS, id);
  }
  hixl::MemHandle ha = nullptr, hb = nullptr;
  expect("RegisterMem a", reg(g_a, a_buf, 2 * kPage, &ha), hixl::SUCCESS, id);
  expect("RegisterMem b", reg(g_b, b_buf, 2 * kPage, &hb), hixl::SUCCESS, id);

  pthread_barrier_wait(&g_barrier);  // the main thread connects a -> b
  pthread_barrier_wait(&g_barrier);
  char *unregistered = aligned(kPage);
  for (int it = 0; it < 60; it++) {
    size_t off = static_cast<size_t>(it % 8) * 512;
    memset(a_buf + off, id + it, 512);
    std::vector<hixl::TransferOpDesc> ops{{reinterpret_cast<uintptr_t>(a_buf + off),
                                           reinterpret_cast<uintptr_t>(b_buf + off), 512}};
    expect("TransferSync", g_a->TransferSync(g_b_name.c_str(), hixl::WRITE, ops), hixl::SUCCESS, id);
    if (memcmp(a_buf + off, b_buf + off, 512) != 0) {
      g_failures++;
      fprintf(stderr, "thread %d: the transfer did not copy\n", id);
    }
    std::vector<hixl::TransferOpDesc> bad{{reinterpret_cast<uintptr_t>(unregistered),
                                           reinterpret_cast<uintptr_t>(b_buf), 0}};
    expect("TransferSync empty op", g_a->TransferSync(g_b_name.c_str(), hixl::WRITE, bad), hixl::PARAM_INVALID, id);
  }
  pthread_barrier_wait(&g_barrier);  // the main thread disconnects
  pthread_barrier_wait(&g_barrier);
  if (!hixl_keeps_a(id)) expect("DeregisterMem a", g_a->DeregisterMem(ha), hixl::SUCCESS, id);
  if (!hixl_keeps_b(id)) expect("DeregisterMem b", g_b->DeregisterMem(hb), hixl::SUCCESS, id);
  return nullptr;
}


int churn() {
  hixl::Hixl a, b;
  std::map<hixl::AscendString, hixl::AscendString> options;
  std::string a_name = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  g_b_name = "127.0.0.1:" + std::to_string(aclsimClaimPort());
  if (a.Initialize(a_name.c_str(), options) != hixl::SUCCESS ||
      b.Initialize(g_b_name.c_str(), options) != hixl::SUCCESS)
    return 2;
  g_a = &a;
  g_b = &b;
  pthread_barrier_init(&g_barrier, nullptr, kThreads + 1);
  pthread_t t[kThreads];
  for (int i = 0; i < kThreads; i++)
    pthread_create(&t[i], nullptr, churn_thread, reinterpret_cast<void *>(static_cast<intptr_t>(i)));
  pthread_barrier_wait(&g_barrier);
  expect("Connect", a.Connect(g_b_name.c_str()), hixl::SUCCESS, -1);
  pthread_barrier_wait(&g_barrier);
  pthread_barrier_wait(&g_barrier);
  expect("Disconnect", a.Disconnect(g_b_name.c_str()), hixl::SUCCESS, -1);
  pthread_barrier_wait(&g_barrier);
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], nullptr);

  long host = 0, hixl_live = 0;
  for (int i = 0; i < kThreads; i++) {
    host += acl_kept(i);
    hixl_live += hixl_keeps_a(i) + hixl_keeps_b(i);
  }
  printf("failures %d\n", g_failures.load());
  printf("live_host %zu %ld\n", regcheck_live_host_registrations(), host);
  printf("live_hixl %zu %ld\n", regcheck_live_hixl_registrations(), hixl_live);
  fflush(stdout);
  a.Finalize();
  b.Finalize();
  return 0;
}

void *noise_thread(void *arg) {
  int id = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  aclrtSetCurrentContext(g_ctx);
  char *p = aligned(2 * kPage);
  while (!g_stop.load()) {
    aclrtHostRegisterV2(p, kPage, ACL_HOST_REG_MAPPED);
    aclrtHostRegisterV2(p + 8, kPage, ACL_HOST_REG_MAPPED);  // logged: takes the log's locks
    aclrtHostUnregister(p);
  }
  (void)id;
  return nullptr;
}

// Waits at most `seconds` for `pid`; kills it when it does not finish. 0: exited 0.
int wait_bounded(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 1000; i++) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

int fork_while_busy() {
  pthread_t t[kThreads];
  for (int i = 0; i < kThreads; i++)
    pthread_create(&t[i], nullptr, noise_thread, reinterpret_cast<void *>(static_cast<intptr_t>(i)));
  struct timespec warm = {0, 20000000};
  nanosleep(&warm, nullptr);
  // The first hung child ends the run: each further one would cost its five seconds.
  int children = 0, failed = 0, hung = 0;
  for (int i = 0; i < 200 && hung == 0; i++, children++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      alarm(5);  // a child deadlocked on a lock another thread held at fork() is killed
      char *p = aligned(2 * kPage);
      int good = aclrtHostRegisterV2(p, kPage, ACL_HOST_REG_MAPPED);
      int bad = aclrtHostRegisterV2(p + 8, kPage, ACL_HOST_REG_MAPPED);
      int unreg = aclrtHostUnregister(p);
      _exit(good == 0 && bad == 100000 && unreg == 0 ? 0 : 1);
    }
    int rc = wait_bounded(pid, 8);
    if (rc == -1 || rc == 128 + SIGALRM) hung++;
    else if (rc != 0) failed++;
  }
  g_stop = true;
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], nullptr);
  printf("children %d failed %d hung %d\n", children, failed, hung);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0 || aclrtGetCurrentContext(&g_ctx) != 0) return 2;
  if (strcmp(argv[1], "churn") == 0) return churn();
  if (strcmp(argv[1], "fork") == 0) return fork_while_busy();
  return 2;
}
