/*
 * What regcheck does before its first intercepted call.
 *
 *   load_time dlopen <path of libregcheck.so>
 *     This program defines getenv, open, fopen, uname, pthread_create... ahead of libc (an
 *     executable's definitions come first), counting calls while a window is open. Reads of
 *     the environment that bypass getenv (Rust's std::env::vars_os walks `environ` itself)
 *     are counted too, as "environ": the program moves its `environ` array to pages of their
 *     own, unreadable while the window is open; a read faults, the handler counts it and
 *     makes the pages readable, and the read goes on. It opens the window around dlopen of
 *     libregcheck.so: "load_calls <n> <first>" and the threads before and after. Then around
 *     the first intercepted call, through dlsym: "first_call_calls <n> <first>" (regcheck
 *     starts: the counter sees it) and "first_call_environ <0|1>" (it read `environ`).
 *   load_time read_once
 *     Run under regcheck: sets REGCHECK_RULES after start-up and before the first intercepted
 *     call (it takes effect), then changes it (it does not: read once).
 *
 * Each vendor call prints "rc <label> <code>". Exit 2 when the set-up fails.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "acl/acl.h"

extern char **environ;

static volatile sig_atomic_t window, calls, environ_read;
static char first[64];

/* Async-signal-safe: also called by the fault handler. */
static void note(const char *name) {
    if (!window) return;
    if (calls++ != 0) return;
    size_t i = 0;
    for (; name[i] != 0 && i + 1 < sizeof first; i++) first[i] = name[i];
    first[i] = 0;
}

/* The program's `environ` array, on pages of their own (see the top). */
static char **guarded;
static size_t guarded_len;

static void on_fault(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    char *at = info->si_addr;
    if (guarded != NULL && at >= (char *)guarded && at < (char *)guarded + guarded_len) {
        note("environ");
        if (window) environ_read = 1;
        mprotect(guarded, guarded_len, PROT_READ | PROT_WRITE);
        return; /* the read is made again, and succeeds */
    }
    signal(sig, SIG_DFL); /* any other fault: the default action when it recurs */
}

static void guard_environment(void) {
    size_t n = 0;
    while (environ[n] != NULL) n++;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    guarded_len = ((n + 1) * sizeof *environ + page - 1) / page * page;
    guarded = mmap(NULL, guarded_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guarded == MAP_FAILED) exit(2);
    memcpy(guarded, environ, (n + 1) * sizeof *environ);
    environ = guarded;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) exit(2);
}

static void open_window(void) {
    calls = 0;
    environ_read = 0;
    first[0] = 0;
    window = 1;
    if (mprotect(guarded, guarded_len, PROT_NONE) != 0) exit(2);
}

static void close_window(void) {
    if (mprotect(guarded, guarded_len, PROT_READ | PROT_WRITE) != 0) exit(2);
    window = 0;
}

#define REAL(ret, name, ...)                                                  \
    static ret (*real)(__VA_ARGS__);                                          \
    if (real == NULL) real = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);

char *getenv(const char *name) {
    note("getenv");
    REAL(char *, getenv, const char *);
    return real(name);
}

char *secure_getenv(const char *name) {
    note("secure_getenv");
    REAL(char *, secure_getenv, const char *);
    return real(name);
}

int open(const char *path, int flags, ...) {
    note("open");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    REAL(int, open, const char *, int, ...);
    return real(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    note("open64");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    REAL(int, open64, const char *, int, ...);
    return real(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...) {
    note("openat");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    REAL(int, openat, int, const char *, int, ...);
    return real(dir, path, flags, mode);
}

int openat64(int dir, const char *path, int flags, ...) {
    note("openat64");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    REAL(int, openat64, int, const char *, int, ...);
    return real(dir, path, flags, mode);
}

FILE *fopen(const char *path, const char *mode) {
    note("fopen");
    REAL(FILE *, fopen, const char *, const char *);
    return real(path, mode);
}

FILE *fopen64(const char *path, const char *mode) {
    note("fopen64");
    REAL(FILE *, fopen64, const char *, const char *);
    return real(path, mode);
}

int uname(struct utsname *buf) {
    note("uname");
    REAL(int, uname, struct utsname *);
    return real(buf);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    note("pthread_create");
    REAL(int, pthread_create, pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    return real(t, attr, start, arg);
}

static int threads(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static void *aligned(size_t size) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, size) != 0) exit(2);
    memset(p, 0, size);
    return p;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "dlopen")) {
        if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
        int before = threads();
        guard_environment();
        open_window();
        void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        close_window();
        if (h == NULL) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 2;
        }
        printf("load_calls %d %s\n", (int)calls, calls ? first : "-");
        printf("threads %d %d\n", before, threads());
        aclError (*reg)(void *, uint64_t, uint32_t) = (aclError(*)(void *, uint64_t, uint32_t))dlsym(h, "aclrtHostRegisterV2");
        if (reg == NULL) return 2;
        void *p = aligned(2 * 4096);
        open_window();
        int code = reg((char *)p + 16, 4096, ACL_HOST_REG_MAPPED);
        close_window();
        printf("rc register %d\n", code);
        printf("first_call_calls %d %s\n", (int)calls, calls ? first : "-");
        printf("first_call_environ %d\n", (int)environ_read);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "read_once")) {
        if (setenv("REGCHECK_RULES", "ACL-HOSTREG-ALIGN=off", 1) != 0) return 2;
        if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
        char *p = aligned(2 * 4096);
        printf("rc off %d\n", aclrtHostRegisterV2(p + 16, 4096, ACL_HOST_REG_MAPPED));
        if (setenv("REGCHECK_RULES", "ACL-HOSTREG-ALIGN=error", 1) != 0) return 2;
        printf("rc still_off %d\n", aclrtHostRegisterV2(p + 32, 4096, ACL_HOST_REG_MAPPED));
        return 0;
    }
    return 2;
}
