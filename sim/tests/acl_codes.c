/* The simulated ACL runtime's own checks and codes (run bare, default environment:
 * SoC Ascend910B1, the machine's kernel, which must be newer than 5.10). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_log.h"
#include "aclsim.h"
#include "check.h"

static size_t page;

static void *anon(size_t pages) {
    void *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

struct thread_arg {
    void *buf;
    aclrtContext ctx;
    aclError rc_before;
    aclError rc_after;
};

static void *thread_main(void *argp) {
    struct thread_arg *a = (struct thread_arg *)argp;
    a->rc_before = aclrtHostRegisterV2(a->buf, page, ACL_HOST_REG_MAPPED);
    aclrtSetCurrentContext(a->ctx);
    a->rc_after = aclrtHostRegisterV2(a->buf, page, ACL_HOST_REG_MAPPED);
    return NULL;
}

int main(void) {
    page = (size_t)sysconf(_SC_PAGESIZE);
    aclrtContext sentinel = (aclrtContext)(uintptr_t)0x1234;
    aclrtContext ctx = sentinel;
    int32_t dev = -1;

    /* ---- before aclInit: no context, and devices and contexts need no aclInit ---- */
    EXPECT_EQ(aclrtGetCurrentContext(&ctx), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_TRUE(ctx == sentinel);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    void *pre = NULL;
    EXPECT_EQ(aclrtMallocHost(&pre, 4096), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtMalloc(&pre, 4096, ACL_MEM_MALLOC_HUGE_ONLY), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_TRUE(pre == NULL);
    EXPECT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT_EQ(dev, 1);
    EXPECT_EQ(aclrtMallocHost(&pre, 4096), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(pre), ACL_SUCCESS);
    aclrtContext pre_ctx = NULL;
    EXPECT_EQ(aclrtCreateContext(&pre_ctx, 1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(pre_ctx), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    /* a first aclFinalize without aclInit succeeds; the next one is a repeat */
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);

    EXPECT_EQ(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
    EXPECT_EQ(aclInit(NULL), ACL_SUCCESS);
    EXPECT_EQ(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_EQ(aclInit("/nonexistent/acl.json"), ACL_ERROR_REPEAT_INITIALIZE); /* the repeat comes first */
    EXPECT_TRUE(aclGetRecentErrMsg() != NULL);

    /* ---- no current context: argument checks first, then 107002 ---- */
    void *buf = anon(8);
    EXPECT_EQ(aclrtHostRegisterV2(NULL, page, ACL_HOST_REG_MAPPED), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, ACL_HOST_REG_MAPPED), ACL_ERROR_RT_CONTEXT_NULL);

    /* ---- devices and contexts ---- */
    EXPECT_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT_EQ(dev, 0);
    EXPECT_EQ(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    EXPECT_TRUE(ctx != NULL && ctx != sentinel);
    aclrtContext ctx0 = ctx;
    uint32_t ndev = 0;
    EXPECT_EQ(aclrtGetDeviceCount(&ndev), ACL_SUCCESS);
    EXPECT_EQ(ndev, 8);

    aclrtContext ctx1 = NULL;
    EXPECT_EQ(aclrtCreateContext(&ctx1, 1), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT_EQ(dev, 1);
    EXPECT_EQ(aclrtDestroyContext(ctx1), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetCurrentContext(&ctx), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtSetCurrentContext(ctx1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtDestroyContext(ctx0), ACL_ERROR_RT_PARAM_INVALID); /* a default context */
    EXPECT_EQ(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSetCurrentContext(ctx0), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT_EQ(dev, 0);

    /* ---- SoC and versions ---- */
    const char *soc = aclrtGetSocName();
    EXPECT_TRUE(soc != NULL && strcmp(soc, "Ascend910B1") == 0);
    char ver[128] = {0};
    int32_t num = 0;
    EXPECT_EQ(aclsysGetVersionStr((char *)"CANN", ver), ACL_SUCCESS);
    EXPECT_TRUE(strcmp(ver, "9.1.0") == 0); /* the default release profile */
    EXPECT_EQ(aclsysGetVersionNum((char *)"CANN", &num), ACL_SUCCESS);
    EXPECT_EQ(num, 90100000);
    EXPECT_EQ(aclsysGetVersionStr(NULL, ver), ACL_ERROR_INVALID_PARAM);

    /* ---- allocations ---- */
    void *host = NULL;
    EXPECT_EQ(aclrtMallocHost(&host, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocHost(NULL, 4096), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocHost(&host, 3 * page), ACL_SUCCESS);
    EXPECT_TRUE(host != NULL && ((uintptr_t)host % page) == 0);
    memset(host, 0x5a, 3 * page);
    void *devmem = NULL;
    EXPECT_EQ(aclrtMalloc(&devmem, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(&devmem, 100, (aclrtMemMallocPolicy)(0x1000 | ACL_MEM_MALLOC_HUGE_ONLY)), ACL_SUCCESS);
    EXPECT_TRUE(devmem != NULL);
    memset(devmem, 1, 100);
    EXPECT_EQ(aclrtFree(devmem), ACL_SUCCESS);
    EXPECT_EQ(aclrtMalloc(&devmem, 64, (aclrtMemMallocPolicy)0x7fffffff), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(devmem), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);

    /* ---- V2 argument checks ---- */
    EXPECT_EQ(aclrtHostRegisterV2(NULL, page, ACL_HOST_REG_MAPPED), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostRegisterV2(buf, 0, ACL_HOST_REG_MAPPED), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, 0x1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, ACL_HOST_REG_MAPPED | 0x20), ACL_ERROR_RT_PARAM_INVALID);

    /* ---- the driver: alignment and mappings -> 507899 ---- */
    EXPECT_EQ(aclrtHostRegisterV2((char *)buf + 64, page, ACL_HOST_REG_MAPPED), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    void *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_EQ(aclrtHostRegisterV2(ro, page, ACL_HOST_REG_MAPPED), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    void *hole = anon(2);
    munmap((char *)hole + page, page);
    EXPECT_EQ(aclrtHostRegisterV2(hole, 2 * page, ACL_HOST_REG_MAPPED), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    EXPECT_EQ(aclrtHostRegisterV2(hole, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(hole), ACL_SUCCESS);

    char path[] = "/tmp/aclsim-file-XXXXXX";
    int fd = mkstemp(path);
    EXPECT_TRUE(fd >= 0);
    EXPECT_EQ(ftruncate(fd, (off_t)page), 0);
    void *filemap = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    /* Under qemu-user the emulated /proc/self/maps does not always show the file: the test
     * harness then sets ACL_CODES_NO_FILE_MAPPING and this one case is left out, said aloud. */
    if (getenv("ACL_CODES_NO_FILE_MAPPING"))
        printf("skipped: the file-backed mapping case (ACL_CODES_NO_FILE_MAPPING)\n");
    else
        EXPECT_EQ(aclrtHostRegisterV2(filemap, page, ACL_HOST_REG_MAPPED), ACL_ERROR_RT_DRV_INTERNAL_ERROR);
    unlink(path);

    /* shared memory that is not a regular file is fine */
    int mfd = memfd_create("aclsim-test", 0);
    EXPECT_EQ(ftruncate(mfd, (off_t)page), 0);
    void *memfdmap = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    EXPECT_EQ(aclrtHostRegisterV2(memfdmap, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(memfdmap), ACL_SUCCESS);
    char shmname[64];
    snprintf(shmname, sizeof shmname, "/aclsim-test-%d", (int)getpid());
    int sfd = shm_open(shmname, O_CREAT | O_RDWR, 0600);
    EXPECT_TRUE(sfd >= 0);
    EXPECT_EQ(ftruncate(sfd, (off_t)page), 0);
    void *shmmap = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
    shm_unlink(shmname);
    EXPECT_EQ(aclrtHostRegisterV2(shmmap, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(shmmap), ACL_SUCCESS);
    int shmid = shmget(IPC_PRIVATE, page, IPC_CREAT | 0600);
    EXPECT_TRUE(shmid >= 0);
    void *sysv = shmat(shmid, NULL, 0);
    shmctl(shmid, IPC_RMID, NULL);
    EXPECT_EQ(aclrtHostRegisterV2(sysv, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(sysv), ACL_SUCCESS);
    void *shanon = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    EXPECT_EQ(aclrtHostRegisterV2(shanon, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(shanon), ACL_SUCCESS);

    /* ---- overlap (byte-granular) -> 507910; adjacent is fine ---- */
    EXPECT_EQ(aclrtHostRegisterV2(buf, 4 * page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostRegisterV2(buf, 4 * page, ACL_HOST_REG_MAPPED), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_EQ(aclrtHostRegisterV2((char *)buf + 2 * page, page, ACL_HOST_REG_MAPPED),
              ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_EQ(aclrtHostRegisterV2(buf, 1, ACL_HOST_REG_MAPPED), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_EQ(aclrtHostRegisterV2((char *)buf + 4 * page, page, ACL_HOST_REG_PINNED), ACL_SUCCESS);

    /* ---- device pointers ---- */
    void *dptr = NULL;
    EXPECT_EQ(aclrtHostGetDevicePointer(NULL, &dptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostGetDevicePointer(buf, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostGetDevicePointer(buf, &dptr, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostGetDevicePointer(buf, &dptr, 0), ACL_SUCCESS);
    EXPECT_TRUE(dptr != NULL && dptr != buf);
    /* the default driver (25.3.rc1) lacks the device-pointer query: the runtime's table is looked
     * up by the registration's base only (register_memory.cc GetMappedDevicePointer) */
    void *dptr2 = NULL;
    EXPECT_EQ(aclrtHostGetDevicePointer((char *)buf + 100, &dptr2, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_TRUE(dptr2 == NULL);
    EXPECT_TRUE(aclsimDeviceToHost((char *)dptr + 100) == (char *)buf + 100);
    dptr = (void *)1;
    EXPECT_EQ(aclrtHostGetDevicePointer((char *)buf + 4 * page, &dptr, 0), ACL_ERROR_RT_PARAM_INVALID); /* PINNED only */
    EXPECT_TRUE(dptr == NULL);
    dptr = (void *)1;
    EXPECT_EQ(aclrtHostGetDevicePointer((char *)buf + 6 * page, &dptr, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_TRUE(dptr == NULL);

    /* ---- unregister ---- */
    EXPECT_EQ(aclrtHostUnregister(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostUnregister((char *)buf + page), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(aclrtHostUnregister(buf), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(buf), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(aclrtHostUnregister((char *)buf + 4 * page), ACL_SUCCESS);

    /* ---- PINNED on page-locked memory: the runtime's tables strip PINNED before the driver
     * (api_impl.cc ApiImpl::HostRegisterV2), so only the driver path rejects it (acl_modes.c) ---- */
    EXPECT_EQ(aclrtHostRegisterV2(host, page, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(host), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostRegisterV2(host, page, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(host), ACL_SUCCESS);

    /* ---- V1 ---- */
    void *v1dev = NULL;
    EXPECT_EQ(aclrtHostRegister(buf, page, ACL_HOST_REGISTER_MAPPED, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostRegister(NULL, page, ACL_HOST_REGISTER_MAPPED, &v1dev), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostRegister(buf, 0, ACL_HOST_REGISTER_MAPPED, &v1dev), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtHostRegister(buf, page, (aclrtHostRegisterType)1, &v1dev), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_EQ(aclrtHostRegister(buf, page, (aclrtHostRegisterType)12, &v1dev), ACL_SUCCESS);
    EXPECT_TRUE(v1dev != NULL && v1dev != buf);
    EXPECT_EQ(aclrtHostGetDevicePointer(buf, &dptr, 0), ACL_SUCCESS);
    EXPECT_TRUE(dptr == v1dev);

    /* ---- the runtime's tables are process-wide (register_memory.cc): a range registered on
     * device 0 is registered for device 1 too; the unregistration goes to the driver of the
     * current device, which does not know it there ---- */
    EXPECT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, ACL_HOST_REG_MAPPED), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_EQ(aclrtHostUnregister(buf), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(aclrtSetCurrentContext(ctx0), ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister(buf), ACL_SUCCESS);

    /* ---- contexts are per thread ---- */
    struct thread_arg ta = {(char *)buf + 5 * page, ctx0, -1, -1};
    pthread_t th;
    pthread_create(&th, NULL, thread_main, &ta);
    pthread_join(th, NULL);
    EXPECT_EQ(ta.rc_before, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(ta.rc_after, ACL_SUCCESS);
    EXPECT_EQ(aclrtHostUnregister((char *)buf + 5 * page), ACL_SUCCESS);

    /* ---- the last error message ---- */
    EXPECT_EQ(aclrtHostUnregister((char *)buf + 7 * page), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    const char *msg = aclGetRecentErrMsg();
    /* the vendor's message (api_error.cc ApiErrorDecorator::HostUnregister, EE1018) */
    EXPECT_TRUE(msg != NULL && strstr(msg, "Unregistering host memory failed") != NULL &&
                strstr(msg, "ErrorCode=EE1018") != NULL);

    /* ---- the flag message (api_error.cc ApiErrorDecorator::HostRegisterV2, EE1011) ---- */
    EXPECT_EQ(aclrtHostRegisterV2(buf, page, 0x1), ACL_ERROR_RT_PARAM_INVALID);
    msg = aclGetRecentErrMsg();
    EXPECT_TRUE(msg != NULL && strstr(msg, "Value 1 for parameter flag is invalid") != NULL &&
                strstr(msg, "ErrorCode=EE1011") != NULL);

    /* ---- pointer attributes, host-map capabilities ---- */
    aclrtPtrAttributes pa;
    void *dmem = NULL;
    EXPECT_EQ(aclrtMalloc(&dmem, 4096, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
    EXPECT_EQ(aclrtPointerGetAttributes(dmem, &pa), ACL_SUCCESS);
    EXPECT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(pa.pageSize, 2 << 20);
    EXPECT_EQ(aclrtFree(dmem), ACL_SUCCESS);
    EXPECT_EQ(aclrtPointerGetAttributes(host, &pa), ACL_SUCCESS);
    EXPECT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_HOST);
    EXPECT_EQ(aclrtPointerGetAttributes(buf, &pa), ACL_SUCCESS);
    EXPECT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    EXPECT_EQ(aclrtPointerGetAttributes(buf, NULL), ACL_ERROR_INVALID_PARAM);
    aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    EXPECT_EQ(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_PCIEDMA, &cap), ACL_SUCCESS);
    EXPECT_EQ(cap, ACL_RT_HOST_MEM_MAP_SUPPORTED);
    EXPECT_EQ(aclrtHostMemMapCapabilities(0, (aclrtHacType)10, &cap), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtHostMemMapCapabilities(99, ACL_RT_HAC_TYPE_AIC, &cap), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, NULL), ACL_ERROR_INVALID_PARAM);

    /* ---- what libcann_hixl.so asks (hicann/hixl src/hixl/common/hixl_log.h) ---- */
    int32_t rtver = 0;
    EXPECT_EQ(aclsysGetVersionNum((char *)"runtime", &rtver), ACL_SUCCESS);
    EXPECT_EQ(rtver, 90100000); /* ACLSIM_CANN_VERSION 9.1.0 (the default profile): below 9.2.0's 90200000 */
    EXPECT_EQ(acllogCheckDebugLevel(0, 3), 1);
    EXPECT_EQ(acllogCheckDebugLevel(0, 1), 0);
    acllogRecord(0, 3, "%s", "not printed without ASCEND_SLOG_PRINT_TO_STDOUT=1");

    /* ---- call counters ---- */
    aclsimResetCallCounts();
    EXPECT_EQ(aclsimGetCallCount("aclrtGetSocName"), 0);
    aclrtGetSocName();
    aclrtGetSocName();
    aclrtHostUnregister(NULL);
    EXPECT_EQ(aclsimGetCallCount("aclrtGetSocName"), 2);
    EXPECT_EQ(aclsimGetCallCount("aclrtHostUnregister"), 1);
    EXPECT_EQ(aclsimGetCallCount("aclrtHostRegisterV2"), 0);
    EXPECT_EQ(aclsimGetCallCount(NULL), 0);

    EXPECT_EQ(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(host), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    close(fd);
    close(mfd);
    close(sfd);
    return CHECK_DONE();
}
