/*
 * What regcheck does before its first intercepted call.
 *
 *   load_time dlopen <path of libregcheck.so>
 *     This program defines getenv, open, fopen, uname, pthread_create... ahead of libc (an
 *     executable's definitions come first), counting calls while a window is open. It opens
 *     the window around dlopen of libregcheck.so: "load_calls <n> <first>" and the threads
 *     before and after. Then around the first intercepted call, through dlsym:
 *     "first_call_calls <n> <first>" (regcheck starts: the counter sees it).
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "acl/acl.h"

static int window, calls;
static char first[64];

static void note(const char *name) {
    if (!window) return;
    if (calls++ == 0) snprintf(first, sizeof first, "%s", name);
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
        window = 1;
        void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        window = 0;
        if (h == NULL) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 2;
        }
        printf("load_calls %d %s\n", calls, calls ? first : "-");
        printf("threads %d %d\n", before, threads());
        aclError (*reg)(void *, uint64_t, uint32_t) = (aclError(*)(void *, uint64_t, uint32_t))dlsym(h, "aclrtHostRegisterV2");
        if (reg == NULL) return 2;
        void *p = aligned(2 * 4096);
        calls = 0;
        first[0] = 0;
        window = 1;
        int code = reg((char *)p + 16, 4096, ACL_HOST_REG_MAPPED);
        window = 0;
        printf("rc register %d\n", code);
        printf("first_call_calls %d %s\n", calls, calls ? first : "-");
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
