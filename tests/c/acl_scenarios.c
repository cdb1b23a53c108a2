/*
 * ACL registration scenarios for regcheck's integration tests. Run as
 *   acl_scenarios <scenario> [file]
 * Each vendor call prints "rc <label> <code>" on stdout; the Rust test decides what the
 * codes must be (bare, under LD_PRELOAD, linked with -lregcheck). Exit 0 unless the
 * scenario itself could not be set up (exit 2) or a check inside it failed (exit 1).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#define PAGE 4096u

static int rc(const char *label, int code) {
    printf("rc %s %d\n", label, code);
    fflush(stdout);
    return code;
}

static void die(const char *what) {
    fprintf(stderr, "acl_scenarios: setup failed: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void setup(void) {
    if (aclInit(NULL) != 0) die("aclInit");
    if (aclrtSetDevice(0) != 0) die("aclrtSetDevice");
}

static void *aligned(size_t size) {
    void *p = NULL;
    if (posix_memalign(&p, PAGE, size) != 0) die("posix_memalign");
    memset(p, 0, size);
    return p;
}

static void *map_anon(size_t size, int prot) {
    void *p = mmap(NULL, size, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap");
    return p;
}

/* regcheck's own API: called directly when linked with regcheck (REGCHECK_LINKED), found at
 * run time otherwise (present under LD_PRELOAD, absent in a bare run: -1). */
#ifdef REGCHECK_LINKED
#include "regcheck.h"
static long regcheck_live(void) { return (long)regcheck_live_host_registrations(); }
static size_t regcheck_last(char *buf, size_t len) { return regcheck_last_rejection(buf, len); }
#else
static long regcheck_live(void) {
    size_t (*f)(void) = (size_t (*)(void))dlsym(RTLD_DEFAULT, "regcheck_live_host_registrations");
    return f ? (long)f() : -1;
}
static size_t regcheck_last(char *buf, size_t len) {
    size_t (*f)(char *, size_t) = (size_t (*)(char *, size_t))dlsym(RTLD_DEFAULT, "regcheck_last_rejection");
    return f ? f(buf, len) : 0;
}
#endif

static void drop_ipc_lock_capability(void) {
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) != 0) die("capget");
    data[0].effective &= ~(1u << CAP_IPC_LOCK);
    data[0].permitted &= ~(1u << CAP_IPC_LOCK);
    if (syscall(SYS_capset, &hdr, data) != 0) die("capset");
}

struct worker {
    int id;
    int failures;
};

static void *register_many(void *arg) {
    struct worker *w = arg;
    if (aclrtSetDevice(0) != 0) {
        w->failures++;
        return NULL;
    }
    for (int i = 0; i < 200; i++) {
        void *p = aligned(PAGE);
        if (aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED) != 0) w->failures++;
        void *dev = NULL;
        if (aclrtHostGetDevicePointer(p, &dev, 0) != 0 || dev == NULL) w->failures++;
        if (aclrtHostUnregister(p) != 0) w->failures++;
        free(p);
    }
    return NULL;
}

static volatile int stop_noise;

static void *noisy_thread(void *arg) {
    (void)arg;
    if (aclrtSetDevice(0) != 0) return NULL;
    char *p = aligned(4 * PAGE);
    while (!stop_noise) {
        aclrtHostRegisterV2(p + 8, PAGE, ACL_HOST_REG_MAPPED); /* rejected and logged */
        if (aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED) == 0) aclrtHostUnregister(p);
    }
    return NULL;
}

/* A child of a fork scenario does a few calls: it exits within milliseconds, or it hangs (on a
 * lock inherited held). Waits at most CHILD_SECONDS for it, then kills it and says so. Returns
 * its exit status (128 + the signal that ended it), or -1 when it hung. */
enum { CHILD_SECONDS = 10 };

static int wait_child(pid_t pid) {
    int status = 0;
    for (int waited = 0; waited < CHILD_SECONDS * 100; waited++) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (done < 0) die("waitpid");
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fprintf(stderr, "acl_scenarios: child %d still running after %d s: hung; killed\n", (int)pid, CHILD_SECONDS);
    return -1;
}

static void *no_context_thread(void *arg) {
    int *out = arg;
    void *p = aligned(PAGE);
    *out = aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED);
    return NULL;
}

static void *borrowed_context_thread(void *arg) {
    aclrtContext ctx = arg;
    int code = aclrtSetCurrentContext(ctx);
    if (code != 0) return (void *)(intptr_t)code;
    void *p = aligned(PAGE);
    code = aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED);
    if (code == 0) code = aclrtHostUnregister(p);
    return (void *)(intptr_t)code;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: acl_scenarios <scenario> [file]\n");
        return 2;
    }
    const char *s = argv[1];
    setup();
    int failed = 0; /* a forked child hung or failed: exit 1 */

    if (!strcmp(s, "good")) {
        void *p = aligned(2 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
        void *dev = NULL;
        rc("devptr", aclrtHostGetDevicePointer((char *)p + 100, &dev, 0));
        printf("devptr_differs %d\n", dev != NULL && dev != (char *)p + 100);
        rc("unregister", aclrtHostUnregister(p));
        void *q = aligned(PAGE), *qdev = NULL;
        rc("register_v1", aclrtHostRegister(q, PAGE, ACL_HOST_REGISTER_MAPPED, &qdev));
        rc("unregister_v1", aclrtHostUnregister(q));
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "every_call")) {
        /* Each interposed function once, validly. */
        void *p = aligned(2 * PAGE), *dev = NULL, *q = aligned(PAGE), *qdev = NULL, *h = NULL, *d = NULL;
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
        rc("devptr", aclrtHostGetDevicePointer(p, &dev, 0));
        rc("unregister", aclrtHostUnregister(p));
        rc("register_v1", aclrtHostRegister(q, PAGE, ACL_HOST_REGISTER_MAPPED, &qdev));
        rc("unregister_v1", aclrtHostUnregister(q));
        rc("mallochost", aclrtMallocHost(&h, PAGE));
        rc("freehost", aclrtFreeHost(h));
        rc("malloc", aclrtMalloc(&d, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
        rc("free", aclrtFree(d));
        rc("setdevice", aclrtSetDevice(0));
        rc("resetdevice", aclrtResetDevice(0));
        rc("finalize", aclFinalize());
    } else if (!strcmp(s, "rejected_out_pointers")) {
        /* A rejected call writes the out-values the vendor's failure writes: *pDevice = NULL
         * before the runtime's 107000; nothing for the ACL layer's 100000. */
        void *const sentinel = (void *)(uintptr_t)0x5e5e5e5e5e5e5000ull;
        char *p = aligned(4 * PAGE);
        void *dev = sentinel;
        rc("devptr_unregistered", aclrtHostGetDevicePointer(p, &dev, 0));
        printf("devptr_unregistered_null %d\n", dev == NULL);
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        dev = sentinel;
        rc("devptr_flag", aclrtHostGetDevicePointer(p, &dev, 1));
        printf("devptr_flag_untouched %d\n", dev == sentinel);
        rc("unregister", aclrtHostUnregister(p));
        void *v1 = sentinel;
        rc("register_v1_misaligned", aclrtHostRegister(p + 16, PAGE, ACL_HOST_REGISTER_MAPPED, &v1));
        printf("register_v1_untouched %d\n", v1 == sentinel);
        v1 = sentinel;
        rc("register_v1_size_zero", aclrtHostRegister(p, 0, ACL_HOST_REGISTER_MAPPED, &v1));
        printf("register_v1_size_zero_untouched %d\n", v1 == sentinel);
    } else if (!strcmp(s, "null")) {
        rc("register", aclrtHostRegisterV2(NULL, PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "v1_devptr_null")) {
        rc("register", aclrtHostRegister(aligned(PAGE), PAGE, ACL_HOST_REGISTER_MAPPED, NULL));
    } else if (!strcmp(s, "size_zero")) {
        rc("register", aclrtHostRegisterV2(aligned(PAGE), 0, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "overflow")) {
        rc("register", aclrtHostRegisterV2((void *)(UINTPTR_MAX - PAGE + 1), 2 * PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "align")) {
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p + 16, PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "device_lifetime")) {
        /* The vendor drops a device's registrations when the device is released (the last
         * aclrtResetDevice matching aclrtSetDevice), not at aclFinalize (which resets nothing). */
        char *p = aligned(2 * PAGE);
        rc("register", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
        rc("set_again", aclrtSetDevice(0));
        rc("reset_once", aclrtResetDevice(0));
        rc("still_registered", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
        rc("reset_last", aclrtResetDevice(0));
        rc("set", aclrtSetDevice(0));
        rc("register_after_reset", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
        rc("finalize", aclFinalize());
        rc("init", aclInit(NULL));
        rc("set_after_init", aclrtSetDevice(0));
        rc("register_after_finalize", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "reset_keeps_pinned")) {
        /* What a device reset ends: on the runtime-table path a PINNED-only registration is in
         * the runtime's process-wide table, which only aclrtHostUnregister erases; a MAPPED one
         * also went to the driver, which forgets it with the device. */
        char *p = aligned(4 * PAGE);
        char *q = aligned(4 * PAGE);
        rc("register_pinned", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_PINNED));
        rc("register_mapped", aclrtHostRegisterV2(q, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("reset_last", aclrtResetDevice(0));
        rc("set", aclrtSetDevice(0));
        rc("register_pinned_again", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_PINNED));
        rc("unregister_pinned", aclrtHostUnregister(p));
        rc("unregister_pinned_twice", aclrtHostUnregister(p));
        rc("unregister_mapped", aclrtHostUnregister(q));
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "reset_keeps_mapped")) {
        /* On the runtime-table path the runtime's process-wide mapped table keeps a MAPPED
         * registration through its device's reset (the driver forgets it): registering over it
         * again is refused, without a current context too (up to 9.1.0 the tables' check comes
         * before the context's) and with a size that wraps (the table's check wraps with it),
         * and its unregistration fails at the driver. */
        char *q = aligned(8 * PAGE);
        rc("register_mapped", aclrtHostRegisterV2(q, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("reset_last", aclrtResetDevice(0));
        rc("no_context_misaligned", aclrtHostRegisterV2(q + 64, 2 * PAGE, ACL_HOST_REG_MAPPED));
        rc("set", aclrtSetDevice(0));
        rc("register_mapped_again", aclrtHostRegisterV2(q + PAGE, PAGE, ACL_HOST_REG_MAPPED));
        rc("wrapping_over", aclrtHostRegisterV2(q + 2 * PAGE, UINT64_MAX, ACL_HOST_REG_MAPPED));
        rc("register_beside", aclrtHostRegisterV2(q + 4 * PAGE, PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister_beside", aclrtHostUnregister(q + 4 * PAGE));
        rc("unregister_mapped", aclrtHostUnregister(q));
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "devptr_interior")) {
        /* The device pointer of an address inside a MAPPED registration: the driver's query
         * answers any address in it; the runtime's own table (no query) only its base. */
        char *p = aligned(4 * PAGE);
        void *dev = (void *)1, *inner = (void *)1;
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("devptr_base", aclrtHostGetDevicePointer(p, &dev, 0));
        rc("devptr_inside", aclrtHostGetDevicePointer(p + 8, &inner, 0));
        printf("inside_null %d\n", inner == NULL);
        printf("inside_offset %d\n", inner != NULL && (char *)inner - (char *)dev == 8);
        printf("base 0x%lx\n", (unsigned long)(uintptr_t)p);
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "overlap_other_device")) {
        /* The same range registered on two devices: the driver's check is per device, the
         * runtime's tables (the runtime-table path) are process-wide. */
        char *p = aligned(4 * PAGE);
        rc("register_first", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("set_other", aclrtSetDevice(1));
        rc("register_other", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister_other", aclrtHostUnregister(p));
        rc("set_first", aclrtSetDevice(0));
        rc("unregister_first", aclrtHostUnregister(p));
    } else if (!strcmp(s, "pinned_other_device")) {
        /* A PINNED-only registration unregistered from another device: the runtime's table is
         * process-wide, the driver's per device. */
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_PINNED));
        rc("set_other", aclrtSetDevice(1));
        rc("unregister_other", aclrtHostUnregister(p));
        rc("set_first", aclrtSetDevice(0));
        rc("unregister_first", aclrtHostUnregister(p));
    } else if (!strcmp(s, "v1_over_pinned")) {
        /* V1 over a PINNED-only V2 registration, then its unregistration (issue 33 item 1): the
         * runtime's tables never reach the driver for PINNED-only memory and V1 reads no table
         * (0, 0, 0); the driver's pin path knows it (507910, then 0). */
        char *p = aligned(4 * PAGE);
        void *dev = NULL;
        rc("register_pinned", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_PINNED));
        rc("register_v1", aclrtHostRegister(p, 4 * PAGE, ACL_HOST_REGISTER_MAPPED, &dev));
        rc("unregister", aclrtHostUnregister(p));
        rc("unregister_again", aclrtHostUnregister(p));
    } else if (!strcmp(s, "align_many")) {
        /* Five misaligned registrations, each at another address; after each, whether the
         * thread's last rejection names that address. */
        char *p = aligned(4 * PAGE);
        for (int i = 0; i < 5; i++) {
            char *at = p + 16 * (i + 1);
            rc("register", aclrtHostRegisterV2(at, PAGE, ACL_HOST_REG_MAPPED));
            char msg[2048] = "", addr[32];
            snprintf(addr, sizeof addr, "%p", (void *)at);
            regcheck_last(msg, sizeof msg);
            printf("last_names_call %d %d\n", i, strstr(msg, addr) != NULL);
        }
    } else if (!strcmp(s, "size_pages")) {
        void *p = aligned(2 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 5000, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "flag_zero")) {
        rc("register", aclrtHostRegisterV2(aligned(PAGE), PAGE, 0));
    } else if (!strcmp(s, "flag_unknown")) {
        rc("register", aclrtHostRegisterV2(aligned(PAGE), PAGE, ACL_HOST_REG_MAPPED | 0x20));
    } else if (!strcmp(s, "flag_reserved")) {
        rc("register", aclrtHostRegisterV2(aligned(PAGE), PAGE, ACL_HOST_REG_MAPPED | ACL_HOST_REG_READONLY));
    } else if (!strcmp(s, "v1_type_invalid")) {
        void *dev = NULL;
        rc("register", aclrtHostRegister(aligned(PAGE), PAGE, (aclrtHostRegisterType)3, &dev));
    } else if (!strcmp(s, "v1_type_reserved")) {
        void *dev = NULL;
        rc("register", aclrtHostRegister(aligned(PAGE), PAGE, ACL_HOST_REGISTER_IOMEMORY, &dev));
    } else if (!strcmp(s, "pinned_locked")) {
        void *p = NULL;
        if (aclrtMallocHost(&p, 4 * PAGE) != 0) die("aclrtMallocHost");
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    } else if (!strcmp(s, "pinned_only")) {
        void *p = aligned(PAGE);
        rc("register", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_PINNED));
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "pageable")) {
        /* malloc-style memory; on a kernel <= 5.10 this is the documented "exception". */
        void *p = aligned(PAGE);
        rc("register", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "mallochost")) {
        void *p = NULL;
        if (aclrtMallocHost(&p, 4 * PAGE) != 0) die("aclrtMallocHost");
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
        rc("freehost", aclrtFreeHost(p));
    } else if (!strcmp(s, "mlocked")) {
        void *p = aligned(PAGE);
        if (mlock(p, PAGE) != 0) die("mlock");
        rc("register", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "unmapped")) {
        char *p = map_anon(3 * PAGE, PROT_READ | PROT_WRITE);
        if (munmap(p + PAGE, PAGE) != 0) die("munmap");
        rc("register", aclrtHostRegisterV2(p, 3 * PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "file_backed")) {
        if (argc < 3) die("file_backed needs a file path");
        int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, 2 * PAGE) != 0) die("open/ftruncate");
        void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) die("mmap file");
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "memfd")) {
        int fd = memfd_create("regcheck-test", 0);
        if (fd < 0 || ftruncate(fd, 2 * PAGE) != 0) die("memfd_create");
        void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) die("mmap memfd");
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "shared_anon")) {
        /* A shared anonymous mapping: never aclrtMallocHost's. */
        void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) die("mmap shared anonymous");
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "unsupported_chip_misaligned")) {
        /* On a chip without host registration the driver refuses the chip before the range. */
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p + 16, PAGE, ACL_HOST_REG_MAPPED));
        void *dev = NULL;
        rc("register_v1", aclrtHostRegister(p + 16, PAGE, ACL_HOST_REGISTER_MAPPED, &dev));
    } else if (!strcmp(s, "devptr_other_device")) {
        /* The device pointer of a registration's base asked with another device current: the
         * runtime's table (no driver query) is process-wide, keyed by host address. */
        char *p = aligned(4 * PAGE);
        void *dev0 = NULL, *dev1 = (void *)1;
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("devptr", aclrtHostGetDevicePointer(p, &dev0, 0));
        rc("set_other", aclrtSetDevice(1));
        rc("devptr_other", aclrtHostGetDevicePointer(p, &dev1, 0));
        printf("other_same %d\n", dev1 == dev0);
        rc("set_first", aclrtSetDevice(0));
        rc("unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "devptr_after_reset")) {
        /* The device pointer of a MAPPED registration's base after the device's last reset:
         * the runtime's process-wide table (no driver query) keeps it through the reset. */
        char *p = aligned(4 * PAGE);
        void *dev = NULL;
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("reset_last", aclrtResetDevice(0));
        rc("set", aclrtSetDevice(0));
        rc("devptr", aclrtHostGetDevicePointer(p, &dev, 0));
    } else if (!strcmp(s, "reset_force")) {
        /* aclrtResetDeviceForce releases the device whatever the count of aclrtSetDevice: its
         * registrations end with it, and the same memory registers again. */
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("set_again", aclrtSetDevice(0));
        rc("reset_force", aclrtResetDeviceForce(0));
        rc("set", aclrtSetDevice(0));
        rc("register_after_reset", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("unregister", aclrtHostUnregister(p));
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "pinned_wrapping_size")) {
        /* A PINNED-only registration whose size runs past the end of the address space: the
         * runtime's own tables take it without the driver (the runtime-table path). */
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, UINT64_MAX, ACL_HOST_REG_PINNED));
        rc("unregister", aclrtHostUnregister(p));
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "stack")) {
        char buf[4 * PAGE] __attribute__((aligned(4096)));
        memset(buf, 1, sizeof buf);
        rc("register", aclrtHostRegisterV2(buf, PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "readonly")) {
        void *p = map_anon(PAGE, PROT_READ);
        rc("register", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "overlap")) {
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
        rc("overlap", aclrtHostRegisterV2(p + PAGE, 2 * PAGE, ACL_HOST_REG_MAPPED));
        rc("adjacent", aclrtHostRegisterV2(p + 2 * PAGE, 2 * PAGE, ACL_HOST_REG_MAPPED));
        if (aclrtSetDevice(1) != 0) die("aclrtSetDevice(1)");
        rc("other_device", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "no_context")) {
        pthread_t t;
        int code = -1;
        pthread_create(&t, NULL, no_context_thread, &code);
        pthread_join(t, NULL);
        rc("register", code);
    } else if (!strcmp(s, "borrowed_context")) {
        aclrtContext ctx = NULL;
        if (aclrtGetCurrentContext(&ctx) != 0) die("aclrtGetCurrentContext");
        pthread_t t;
        void *code = NULL;
        pthread_create(&t, NULL, borrowed_context_thread, ctx);
        pthread_join(t, &code);
        rc("register", (int)(intptr_t)code);
    } else if (!strcmp(s, "memlock")) {
        drop_ipc_lock_capability();
        struct rlimit lim = {64 * 1024, 64 * 1024};
        if (setrlimit(RLIMIT_MEMLOCK, &lim) != 0) die("setrlimit");
        void *p = aligned(64 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 64 * PAGE, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    } else if (!strcmp(s, "large")) {
        void *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
    } else if (!strcmp(s, "unregister_interior")) {
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("interior", aclrtHostUnregister(p + PAGE));
        rc("unregister", aclrtHostUnregister(p));
        rc("twice", aclrtHostUnregister(p));
    } else if (!strcmp(s, "devptr")) {
        char *p = aligned(4 * PAGE);
        void *dev = NULL;
        rc("unregistered", aclrtHostGetDevicePointer(p, &dev, 0));
        rc("register_pinned_only", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_PINNED));
        rc("not_mapped", aclrtHostGetDevicePointer(p, &dev, 0));
        rc("null_out", aclrtHostGetDevicePointer(p, NULL, 0));
        rc("flag", aclrtHostGetDevicePointer(p, &dev, 1));
    } else if (!strcmp(s, "freehost_registered")) {
        void *p = NULL;
        if (aclrtMallocHost(&p, 4 * PAGE) != 0) die("aclrtMallocHost");
        rc("register", aclrtHostRegisterV2(p, 4 * PAGE, ACL_HOST_REG_MAPPED));
        rc("freehost", aclrtFreeHost(p));
    } else if (!strcmp(s, "malloc_policy")) {
        void *d = NULL;
        rc("malloc", aclrtMalloc(&d, 1 << 20, (aclrtMemMallocPolicy)(0x1000 | ACL_MEM_MALLOC_HUGE_ONLY)));
        rc("free", aclrtFree(d));
    } else if (!strcmp(s, "concurrent")) {
        enum { N = 8 };
        pthread_t t[N];
        struct worker w[N];
        for (int i = 0; i < N; i++) {
            w[i].id = i;
            w[i].failures = 0;
            pthread_create(&t[i], NULL, register_many, &w[i]);
        }
        int failures = 0;
        for (int i = 0; i < N; i++) {
            pthread_join(t[i], NULL);
            failures += w[i].failures;
        }
        printf("failures %d\n", failures);
        printf("live %ld\n", regcheck_live());
    } else if (!strcmp(s, "fork_while_logging")) {
        /* Another thread keeps regcheck logging and registering while this one forks: every
         * child must be able to use regcheck (and its log) at once, never hang. The first fork
         * comes while that thread makes regcheck's first calls (its one-time set-up), the
         * later ones while it logs. A child still running after CHILD_SECONDS is hung: it is
         * killed, counted, and no more are forked. */
        pthread_t t;
        stop_noise = 0;
        pthread_create(&t, NULL, noisy_thread, NULL);
        int bad = 0, hung = 0;
        for (int i = 0; i < 40 && !hung; i++) {
            pid_t pid = fork();
            if (pid < 0) die("fork");
            if (pid == 0) {
                char *p = aligned(2 * PAGE);
                int a = aclrtHostRegisterV2(p + 8, PAGE, ACL_HOST_REG_MAPPED);
                int b = aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED);
                _exit(b == 0 && a != 0 ? 0 : 1);
            }
            int code = wait_child(pid);
            if (code == -1) hung++;
            else if (code != 0) bad++;
        }
        stop_noise = 1;
        pthread_join(t, NULL);
        printf("children_failed %d\n", bad);
        printf("children_hung %d\n", hung);
    } else if (!strcmp(s, "fork")) {
        char *p = aligned(4 * PAGE);
        rc("register", aclrtHostRegisterV2(p, 2 * PAGE, ACL_HOST_REG_MAPPED));
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) {
            /* The child knows the parent's registration and can take new ones. */
            rc("child_overlap", aclrtHostRegisterV2(p + PAGE, PAGE, ACL_HOST_REG_MAPPED));
            rc("child_register", aclrtHostRegisterV2(p + 2 * PAGE, PAGE, ACL_HOST_REG_MAPPED));
            rc("child_unregister", aclrtHostUnregister(p));
            printf("child_live %ld\n", regcheck_live());
            fflush(stdout);
            _exit(0);
        }
        int child = wait_child(pid);
        printf("child_exit %d\n", child);
        if (child != 0) failed = 1;
        rc("parent_unregister", aclrtHostUnregister(p));
    } else if (!strcmp(s, "fork_map")) {
        /* regcheck reads the memory map of the process that calls: after fork, the child's. */
        char *p = map_anon(PAGE, PROT_READ | PROT_WRITE);
        char *q = map_anon(PAGE, PROT_READ | PROT_WRITE);
        rc("register", aclrtHostRegisterV2(p, PAGE, ACL_HOST_REG_MAPPED));
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) {
            if (munmap(q, PAGE) != 0) die("munmap");
            rc("child_unmapped", aclrtHostRegisterV2(q, PAGE, ACL_HOST_REG_MAPPED));
            fflush(stdout);
            _exit(0);
        }
        int child = wait_child(pid);
        printf("child_exit %d\n", child);
        if (child != 0) failed = 1;
        rc("parent_mapped", aclrtHostRegisterV2(q, PAGE, ACL_HOST_REG_MAPPED));
    } else {
        fprintf(stderr, "acl_scenarios: unknown scenario %s\n", s);
        return 2;
    }
    return failed;
}
