/* Random host registrations over every kind of memory a program can point at, and at what it
 * cannot: heap, page-aligned heap, aclrtMallocHost, read-only and inaccessible mappings,
 * unmapped holes, the stack, a file mapping, shared and mlocked memory, the kernel half, the
 * non-canonical gap, the top of user space, NULL and random values; with sizes from 0 to
 * UINT64_MAX (including the exact size that makes the end wrap to 0).
 *
 * usage: acl_edges_random SEED COUNT FILE   (FILE: a scratch file on a disk filesystem)
 *
 * Prints `leak <code> ...` for every call the vendor answered with its opaque driver error
 * (507899), `codes <code>:<count> ...` and `calls <n> ok <n>`. A successful registration is
 * unregistered at once (which must succeed). Deterministic for a seed. */
#define _GNU_SOURCE
#include <acl/acl.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DRIVER_INTERNAL 507899
#define PAGES 8

static uint64_t rng_state;

static uint64_t next(void) {
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }

enum kind {
    HEAP, HEAP_ALIGNED, MALLOC_HOST, READ_ONLY, NO_ACCESS, HOLE, STACK, FILE_MAP, SHARED, LOCKED,
    KERNEL, NON_CANONICAL, USER_TOP, NULL_PTR, RANDOM, WRAP_EDGE, KIND_COUNT
};
static const char *const kind_names[KIND_COUNT] = {
    "heap", "heap_aligned", "malloc_host", "read_only", "no_access", "hole", "stack", "file",
    "shared", "locked", "kernel", "non_canonical", "user_top", "null", "random", "wrap_edge"};

struct pools {
    size_t page;
    char *heap;
    char *heap_aligned;
    char *malloc_host;
    char *read_only;
    char *no_access;
    char *hole;
    char *file_map;
    char *shared;
    char *locked;
};

static uintptr_t pick_ptr(const struct pools *p, enum kind k, char *stack_buf) {
    size_t span = PAGES * p->page;
    uintptr_t off = below(4) == 0 ? below(span) : below(PAGES) * p->page; /* mostly page offsets */
    switch (k) {
    case HEAP: return (uintptr_t)p->heap + below(span);
    case HEAP_ALIGNED: return (uintptr_t)p->heap_aligned + off;
    case MALLOC_HOST: return (uintptr_t)p->malloc_host + off;
    case READ_ONLY: return (uintptr_t)p->read_only + off;
    case NO_ACCESS: return (uintptr_t)p->no_access + off;
    case HOLE: return (uintptr_t)p->hole + off;
    case STACK: return ((uintptr_t)stack_buf + p->page - 1) / p->page * p->page;
    case FILE_MAP: return (uintptr_t)p->file_map + off;
    case SHARED: return (uintptr_t)p->shared + off;
    case LOCKED: return (uintptr_t)p->locked + off;
    case KERNEL: return 0xffff800000000000ULL + below(1ULL << 40) * p->page;
    case NON_CANONICAL: return (1ULL << 47) + below(1ULL << 30) * p->page;
    case USER_TOP: return 0x7ffffffff000ULL - below(4) * p->page;
    case NULL_PTR: return 0;
    case RANDOM: return next();
    case WRAP_EDGE: return 0xfffffffffffff000ULL - below(4) * p->page;
    default: return 0;
    }
}

static uint64_t pick_size(uintptr_t ptr, size_t page) {
    switch (below(12)) {
    case 0: return 0;
    case 1: return 1 + below(page);
    case 2: return page;
    case 3: return (1 + below(PAGES)) * page;
    case 4: return (1 + below(2 * PAGES)) * page; /* may run past the pool */
    case 5: return UINT64_MAX;
    case 6: return (uint64_t)0 - (uint64_t)ptr; /* the end wraps to exactly 0 */
    case 7: return 1ULL << 63;
    case 8: return 1ULL << 40;
    case 9: return next();
    case 10: return (uint64_t)0 - (uint64_t)ptr - page; /* ends one page below the wrap */
    default: return page * (1 + below(3));
    }
}

static char *must_map(size_t len, int prot, int flags, int fd) {
    void *m = mmap(NULL, len, prot, flags, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return m;
}

struct hist {
    int code[64];
    int count[64];
    int n;
};

static void count(struct hist *h, int code) {
    for (int i = 0; i < h->n; i++)
        if (h->code[i] == code) {
            h->count[i]++;
            return;
        }
    if (h->n < 64) {
        h->code[h->n] = code;
        h->count[h->n++] = 1;
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SEED COUNT FILE\n", argv[0]);
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 0) | 1;
    long calls = strtol(argv[2], NULL, 0);
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;

    struct pools p;
    memset(&p, 0, sizeof p);
    p.page = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = PAGES * p.page;
    p.heap = malloc(span + 64);
    if (posix_memalign((void **)&p.heap_aligned, p.page, span) != 0) return 2;
    void *mh = NULL;
    if (aclrtMallocHost(&mh, span) != 0) return 2;
    p.malloc_host = mh;
    p.read_only = must_map(span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    p.no_access = must_map(span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    p.hole = must_map(span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)span) != 0) {
        perror(argv[3]);
        return 2;
    }
    p.file_map = must_map(span, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
    p.shared = must_map(span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
    p.locked = must_map(span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    (void)mlock(p.locked, span); /* may fail without privilege: then it is plain anonymous memory */
    munmap(p.hole, span);         /* last, so that no other mapping lands in the hole */

    char stack_buf[8 * 4096];
    memset(stack_buf, 0, sizeof stack_buf);
    struct hist h = {.n = 0};
    long ok = 0, leaks = 0;
    static const uint32_t flags[] = {ACL_HOST_REG_MAPPED, ACL_HOST_REG_PINNED,
                                     ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED, 0, 0x40};
    for (long i = 0; i < calls; i++) {
        enum kind k = (enum kind)below(KIND_COUNT);
        uintptr_t ptr = pick_ptr(&p, k, stack_buf);
        uint64_t size = pick_size(ptr, p.page);
        int v1 = below(4) == 0;
        uint32_t flag = below(8) == 0 ? flags[3 + below(2)] : flags[below(3)];
        aclrtHostRegisterType type = below(6) == 0 ? ACL_HOST_REGISTER_IOMEMORY : ACL_HOST_REGISTER_MAPPED;
        void *dev = NULL;
        int rc = v1 ? aclrtHostRegister((void *)ptr, size, type, &dev) : aclrtHostRegisterV2((void *)ptr, size, flag);
        count(&h, rc);
        if (rc == DRIVER_INTERNAL) {
            leaks++;
            printf("leak %d %s %s(ptr=0x%llx, size=0x%llx, %s=0x%x)\n", rc, kind_names[k],
                   v1 ? "aclrtHostRegister" : "aclrtHostRegisterV2", (unsigned long long)ptr,
                   (unsigned long long)size, v1 ? "type" : "flag", v1 ? (unsigned)type : flag);
        }
        if (rc == 0) {
            ok++;
            int u = aclrtHostUnregister((void *)ptr);
            if (u != 0) {
                printf("unregister failed %d for %s ptr=0x%llx\n", u, kind_names[k], (unsigned long long)ptr);
                return 1;
            }
        }
        if (below(8) == 0) { /* a device-pointer query of the same address: never a driver error */
            void *d = NULL;
            int g = aclrtHostGetDevicePointer((void *)ptr, &d, 0);
            count(&h, g);
            if (g == DRIVER_INTERNAL) {
                leaks++;
                printf("leak %d %s aclrtHostGetDevicePointer(pHost=0x%llx)\n", g, kind_names[k],
                       (unsigned long long)ptr);
            }
        }
    }
    printf("codes");
    for (int i = 0; i < h.n; i++) printf(" %d:%d", h.code[i], h.count[i]);
    printf("\ncalls %ld ok %ld leaks %ld\n", calls, ok, leaks);
    close(fd);
    return 0;
}
