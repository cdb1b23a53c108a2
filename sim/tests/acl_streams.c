/* The ACL calls Mooncake's transfer engine and store import, on the simulator: streams
 * (aclrtCreateStreamWithConfig, aclrtDestroyStream, aclrtSynchronizeStreamWithTimeout,
 * aclrtStreamAbort), aclrtMemcpyAsync, aclrtMemcpyBatch, the device-id maps, IPC keys, shareable
 * handles of physical memory (imported by a forked child: the same bytes), aclrtMemSetAccess and
 * aclrtReserveMemAddressNoUCMemory: the checks in the vendor's order and their codes.
 * Prints "checks=N failures=M". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim.h"
#include "check.h"

#define MIB2 ((size_t)2 << 20)

static void streams_and_copies(void) {
    aclrtStream s = NULL;
    char host[64], back[64];
    void *dev = NULL;
    memset(host, 'm', sizeof host);
    EXPECT_EQ(aclrtCreateStreamWithConfig(&s, 0, 0), ACL_ERROR_RT_CONTEXT_NULL); /* no device yet */
    EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateStreamWithConfig(NULL, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtCreateStreamWithConfig(&s, 8, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtCreateStreamWithConfig(&s, 7, 0x3), ACL_SUCCESS);
    EXPECT_TRUE(s != NULL);
    EXPECT_EQ(aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);

    /* aclrtMemcpyAsync: count 0, NULL, a dead stream, then aclrtMemcpy's checks; done at once */
    EXPECT_EQ(aclrtMemcpyAsync(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpyAsync(NULL, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, (aclrtStream)host), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpyAsync(dev, 32, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 1000), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(NULL, -1), ACL_SUCCESS); /* the default stream */
    memset(back, 0, sizeof back);
    EXPECT_EQ(aclrtMemcpyAsync(back, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, NULL), ACL_SUCCESS);
    EXPECT_TRUE(memcmp(back, host, sizeof host) == 0);
    EXPECT_EQ(aclrtStreamAbort(NULL), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtStreamAbort(s), ACL_SUCCESS);

    /* aclrtMemcpyBatch */
    void *dsts[2] = {dev, back}, *srcs[2] = {host, dev};
    size_t maxs[2] = {64, 64}, sizes[2] = {64, 64}, zero[2] = {0, 0}, idx[1] = {0}, fail = 0;
    aclrtMemcpyBatchAttr attr;
    memset(&attr, 0, sizeof attr);
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &attr, idx, 1, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 0, &attr, idx, 1, &fail), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyBatch(NULL, NULL, NULL, zero, 2, NULL, NULL, 0, &fail), ACL_SUCCESS); /* all empty */
    EXPECT_EQ(fail, SIZE_MAX);
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, NULL, idx, 1, &fail), ACL_ERROR_INVALID_PARAM);
    maxs[1] = 8;
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &attr, idx, 1, &fail), ACL_ERROR_INVALID_PARAM);
    maxs[1] = 64;
    attr.rsv[3] = 1;
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &attr, idx, 1, &fail), ACL_ERROR_INVALID_PARAM);
    attr.rsv[3] = 0;
    memset(back, 0, sizeof back);
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &attr, idx, 1, &fail), ACL_SUCCESS);
    EXPECT_EQ(fail, SIZE_MAX);
    EXPECT_TRUE(memcmp(back, host, sizeof host) == 0);
    srcs[1] = NULL;
    EXPECT_EQ(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &attr, idx, 1, &fail), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(fail, 1u);

    EXPECT_EQ(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
}

static void device_ids(void) {
    int32_t id = -1;
    EXPECT_EQ(aclrtGetPhyDevIdByLogicDevId(3, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetPhyDevIdByLogicDevId(3, &id), ACL_SUCCESS);
    EXPECT_EQ(id, 3);
    EXPECT_EQ(aclrtGetLogicDevIdByUserDevId(2, &id), ACL_SUCCESS);
    EXPECT_EQ(id, 2);
    EXPECT_EQ(aclrtGetLogicDevIdByUserDevId(8, &id), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtGetPhyDevIdByLogicDevId(-1, &id), ACL_ERROR_RT_INVALID_DEVICEID);
}

static void ipc_keys(void) {
    void *dev = NULL, *got = NULL;
    char key[64];
    EXPECT_EQ(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtIpcMemGetExportKey(NULL, 4096, key, sizeof key, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtIpcMemGetExportKey(dev, 4096, NULL, sizeof key, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtIpcMemGetExportKey(key, 4096, key, sizeof key, 0), ACL_ERROR_RT_PARAM_INVALID); /* not aclrtMalloc's */
    EXPECT_EQ(aclrtIpcMemGetExportKey(dev, 8192, key, sizeof key, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtIpcMemGetExportKey(dev, 4096, key, 4, 0), ACL_ERROR_RT_PARAM_INVALID); /* the key does not fit */
    EXPECT_EQ(aclrtIpcMemGetExportKey(dev, 4096, key, sizeof key, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtIpcMemImportByKey(NULL, key, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtIpcMemImportByKey(&got, key, 0), ACL_SUCCESS);
    EXPECT_TRUE(got == dev);
    EXPECT_EQ(aclrtIpcMemImportByKey(&got, "aclsim-ipc-1-1000", 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT); /* another process's */
    EXPECT_EQ(aclrtIpcMemImportByKey(&got, "nonsense", 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtIpcMemClose(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT_EQ(aclrtIpcMemClose(key), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
}

static aclrtPhysicalMemProp device_prop(void) {
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

/* Maps `h` at a new reservation: its address, or NULL. */
static char *map_handle(aclrtDrvMemHandle h) {
    void *va = NULL;
    if (aclrtReserveMemAddressNoUCMemory(&va, MIB2, 0, NULL, 0) != ACL_SUCCESS) return NULL;
    if (aclrtMapMem(va, MIB2, 0, h, 0) != ACL_SUCCESS) return NULL;
    return (char *)va;
}

static void shareable_handles_and_access(void) {
    aclrtPhysicalMemProp prop = device_prop();
    aclrtDrvMemHandle h = NULL, imported = NULL;
    aclrtMemFabricHandle fabric;
    uint64_t plain = 0;
    void *va = NULL;
    EXPECT_EQ(aclrtReserveMemAddressNoUCMemory(NULL, MIB2, 0, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtReserveMemAddressNoUCMemory(&va, MIB2, 0, NULL, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocPhysical(&h, MIB2, &prop, 0), ACL_SUCCESS);
    char *mine = map_handle(h);
    EXPECT_TRUE(mine != NULL);
    if (mine == NULL) return;

    aclrtMemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    EXPECT_EQ(aclrtMemSetAccess(mine, MIB2, &access, 1), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemSetAccess(mine, MIB2, NULL, 1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemSetAccess(mine, 2 * MIB2, &access, 1), ACL_ERROR_RT_PARAM_INVALID); /* past the mapping */
    access.flags = (aclrtMemAccessFlags)2;
    EXPECT_EQ(aclrtMemSetAccess(mine, MIB2, &access, 1), ACL_ERROR_RT_PARAM_INVALID);

    EXPECT_EQ(aclrtMemExportToShareableHandleV2(NULL, 1, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &fabric), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemExportToShareableHandleV2(h, 1, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemExportToShareableHandleV2((aclrtDrvMemHandle)&plain, 1, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &fabric),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemExportToShareableHandleV2(h, 1, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &fabric), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemExportToShareableHandleV2(h, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &plain), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemImportFromShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 1, &imported),
              ACL_ERROR_INVALID_PARAM); /* flags reserved */
    EXPECT_EQ(aclrtMemImportFromShareableHandleV2(NULL, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported),
              ACL_ERROR_INVALID_PARAM);

    /* another process imports both kinds and writes through them; this one sees the bytes */
    mine[0] = 'p';
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        aclrtDrvMemHandle a = NULL, b = NULL;
        int ok = aclrtMemImportFromShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &a) == ACL_SUCCESS &&
                 aclrtMemImportFromShareableHandleV2(&plain, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &b) == ACL_SUCCESS;
        char *x = ok ? map_handle(a) : NULL, *y = ok ? map_handle(b) : NULL;
        if (x == NULL || y == NULL || x[0] != 'p') _exit(1);
        x[1] = 'c';
        y[2] = 'd';
        _exit(0);
    }
    int status = -1;
    EXPECT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(mine[1], 'c');
    EXPECT_EQ(mine[2], 'd');

    /* in this process too: a second handle on the same bytes */
    EXPECT_EQ(aclrtMemImportFromShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported), ACL_SUCCESS);
    char *again = map_handle(imported);
    EXPECT_TRUE(again != NULL && again[1] == 'c');
    memset(&fabric, 0, sizeof fabric);
    EXPECT_EQ(aclrtMemImportFromShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported),
              ACL_ERROR_RT_PARAM_INVALID);
}

int main(void) {
    streams_and_copies();
    device_ids();
    ipc_keys();
    shareable_handles_and_access();
    return CHECK_DONE();
}
