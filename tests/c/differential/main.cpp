// The differential test's driver: sets up the memory pools, then runs a script of steps (see
// diff.h), printing one line per step as soon as it returns:
//
//   <i> <rc> <fwd>      the call's code, and how many calls of it the simulator received
//   <i> crash <signal>  a probed step crashed its forked child: not made for real
//
// usage: differential SCRATCH_FILE SCRIPT
//
// A line that starts with `!` is probed: the step first runs in a forked child (bounded by an
// alarm), so a crash ends only that child, and the run goes on as if the step had been refused
// without reaching the vendor (which is what regcheck must do with it); if the child lives,
// the step is made for real. Bare runs probe every step that may crash. Ends with `end`.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim.h"
#include "diff.h"

namespace diff {

char *World::Addr(long long kind, long long page_index, long long off) const {
  const char *b = (kind >= 0 && kind < kKinds) ? base[kind] : nullptr;
  return const_cast<char *>(b) + page_index * static_cast<long long>(page) + off;
}

void *Sym(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (f == nullptr) {
    fprintf(stderr, "differential: dlsym %s: %s\n", name, dlerror());
    exit(2);
  }
  return f;
}

unsigned long long Count(const char *name) { return aclsimGetCallCount(name); }

}  // namespace diff

using namespace diff;

namespace {

const Family *const kFamilies[] = {&kAclFamily, &kHixlFamily, &kHixlCsFamily};

char *Map(size_t len, int prot, int flags, int fd, void *hint = nullptr) {
  void *m = mmap(hint, len, prot, flags, fd, 0);
  if (m == MAP_FAILED) {
    perror("differential: mmap");
    exit(2);
  }
  return static_cast<char *>(m);
}

void SetUp(World &w, const char *scratch, char *stack) {
  w.page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t span = kPoolPages * w.page;
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) exit(2);
  w.acl = dlopen("libacl_rt.so", RTLD_NOW);
  w.hixl = dlopen("libcann_hixl.so", RTLD_NOW);
  if (w.acl == nullptr || w.hixl == nullptr) {
    fprintf(stderr, "differential: dlopen: %s\n", dlerror());
    exit(2);
  }
  void *p = nullptr;
  if (posix_memalign(&p, w.page, span) != 0) exit(2);
  w.base[kHeap] = static_cast<char *>(p);
  if (aclrtMallocHost(&p, span) != ACL_SUCCESS) exit(2);
  w.base[kMallocHost] = static_cast<char *>(p);
  auto malloc_host = reinterpret_cast<aclError (*)(void **, size_t)>(Sym(w.acl, "aclrtMallocHost"));
  if (malloc_host(&p, span) != ACL_SUCCESS) exit(2);
  w.base[kMallocHostDlsym] = static_cast<char *>(p);
  w.base[kAnon] = Map(span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  w.base[kStack] = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(stack) + w.page - 1) / w.page * w.page);
  int fd = open(scratch, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(span)) != 0) {
    perror(scratch);
    exit(2);
  }
  w.base[kFile] = Map(span, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
  close(fd);
  w.base[kReadOnly] = Map(span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  // Far below where mappings go (top-down from the mmap base), so nothing maps it again, and
  // nothing lies within 1 TiB above it: the generator's 1 TiB HIXL registrations are made here,
  // so that they cover the same memory in every run's address layout.
  w.base[kHole] = Map(span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
                      reinterpret_cast<void *>(0x100000000000ULL));
  munmap(w.base[kHole], span);
  w.base[kLocked] = Map(span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  (void)mlock(w.base[kLocked], span);  // may fail without privilege: then plain anonymous memory
  w.base[kKernel] = reinterpret_cast<char *>(0xffff800000000000ULL);
  if (aclrtMalloc(&p, span, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) exit(2);
  w.base[kDevice] = static_cast<char *>(p);
  for (int s = 0; s < kSlots; s++) {
    auto alloc = s % 2 == 0 ? aclrtMallocHost : malloc_host;
    if (alloc(&p, kSlotPages * w.page) != ACL_SUCCESS) exit(2);
    w.base[kSlot0 + s] = static_cast<char *>(p);
  }
  for (const Family *f : kFamilies) f->Setup(w);
}

const Family *Find(const char *op) {
  for (const Family *f : kFamilies)
    if (f->Knows(op)) return f;
  return nullptr;
}

// Runs the step in a forked child (bounded by an alarm); the signal that ended it, or 0.
int Probe(World &w, const Family &f, const Step &s) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("differential: fork");
    exit(2);
  }
  if (pid == 0) {
    alarm(10);
    // A child inherits no memory lock (fork(2)): lock again what the parent locked itself.
    (void)mlock(w.base[kLocked], kPoolPages * w.page);
    Result r;
    f.Run(w, s, r);
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SCRATCH_FILE SCRIPT\n", argv[0]);
    return 2;
  }
  FILE *script = fopen(argv[2], "r");
  if (script == nullptr) {
    perror(argv[2]);
    return 2;
  }
  World w;
  char *stack = static_cast<char *>(alloca((kPoolPages + 1) * static_cast<size_t>(sysconf(_SC_PAGESIZE))));
  memset(stack, 0, (kPoolPages + 1) * static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  SetUp(w, argv[1], stack);
  char line[512];
  for (int i = 0; fgets(line, sizeof line, script) != nullptr;) {
    char op[16] = {0};
    Step s{};
    s.op = op;
    int used = 0;
    const bool probe = line[0] == '!';
    const char *text = probe ? line + 1 : line;
    if (line[0] == '#' || sscanf(text, "%15s%n", op, &used) != 1) continue;
    const char *rest = text + used;
    while (s.n < 12) {
      int more = 0;
      if (sscanf(rest, "%lld%n", &s.a[s.n], &more) != 1) break;
      rest += more;
      s.n++;
    }
    const Family *f = Find(op);
    if (f == nullptr) {
      fprintf(stderr, "differential: unknown op %s\n", op);
      return 2;
    }
    if (probe) {
      int sig = Probe(w, *f, s);
      if (sig != 0) {
        printf("%d crash %d\n", i++, sig);
        fflush(stdout);
        continue;
      }
    }
    Result r;
    f->Run(w, s, r);
    printf("%d %lld %llu\n", i++, r.rc, r.fwd);
    fflush(stdout);
  }
  printf("end\n");
  fflush(stdout);
  fflush(stderr);
  _exit(0);
}
