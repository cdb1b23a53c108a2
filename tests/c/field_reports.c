/* The registration mistakes (and one non-mistake) the field reports, each named by its public
 * report. Prints `rc <label> <code>` for each vendor call.
 *
 *   field_reports shm_pinned           vllm-ascend PR #13894: a MAP_SHARED mapping of a /dev/shm
 *                                      file registered with ACL_HOST_REG_PINNED (a real use)
 *   field_reports shm_pinned_unlinked  the same, the file unlinked once mapped
 *   field_reports same_base            vllm-ascend PR #15624: two components register one base
 *                                      with different lengths
 *   field_reports double_unregister    vllm-ascend #10724: a registration unregistered again at
 *                                      shutdown */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl.h"

#define SIZE (2u << 20)

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void *shm_buffer(int unlink_it) {
    char name[64];
    snprintf(name, sizeof name, "/regcheck-field-%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, SIZE) != 0) die("shm_open");
    void *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) die("mmap");
    close(fd);
    if (unlink_it) shm_unlink(name);
    memset(p, 0, SIZE);
    return p;
}

/* Two components of one program, each registering the KV buffer it was handed. */
__attribute__((noinline)) int kv_component_a_register(void *p, size_t n) {
    return (int)aclrtHostRegisterV2(p, n, ACL_HOST_REG_MAPPED);
}

__attribute__((noinline)) int kv_component_b_register(void *p, size_t n) {
    return (int)aclrtHostRegisterV2(p, n, ACL_HOST_REG_MAPPED);
}

__attribute__((noinline)) int kv_release(void *p) { return (int)aclrtHostUnregister(p); }

__attribute__((noinline)) int engine_shutdown(void *p) { return (int)aclrtHostUnregister(p); }

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *s = argv[1];
    setvbuf(stdout, NULL, _IONBF, 0);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 3;
    if (!strncmp(s, "shm_pinned", 10)) {
        void *p = shm_buffer(!strcmp(s, "shm_pinned_unlinked"));
        printf("rc register %d\n", (int)aclrtHostRegisterV2(p, SIZE, ACL_HOST_REG_PINNED));
        printf("rc unregister %d\n", (int)aclrtHostUnregister(p));
        if (strcmp(s, "shm_pinned_unlinked") != 0) {
            char name[64];
            snprintf(name, sizeof name, "/regcheck-field-%d", (int)getpid());
            shm_unlink(name);
        }
    } else if (!strcmp(s, "same_base")) {
        void *p = NULL;
        if (posix_memalign(&p, 1u << 16, SIZE) != 0) die("posix_memalign");
        printf("rc register_a %d\n", kv_component_a_register(p, SIZE / 2));
        printf("rc register_b %d\n", kv_component_b_register(p, SIZE));
        printf("rc unregister %d\n", (int)aclrtHostUnregister(p));
        free(p);
    } else if (!strcmp(s, "double_unregister")) {
        void *p = NULL;
        if (posix_memalign(&p, 1u << 16, SIZE) != 0) die("posix_memalign");
        printf("rc register %d\n", kv_component_a_register(p, SIZE));
        printf("rc release %d\n", kv_release(p));
        printf("rc shutdown %d\n", engine_shutdown(p));
        free(p);
    } else {
        return 2;
    }
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
