// libacl_rt.so of the simulator: streams (aclrtCreateStreamWithConfig, aclrtDestroyStream,
// aclrtSynchronizeStreamWithTimeout, aclrtStreamAbort), the copies issued on them
// (aclrtMemcpyAsync) and in batches (aclrtMemcpyBatch), and the device-id maps
// (aclrtGetPhyDevIdByLogicDevId, aclrtGetLogicDevIdByUserDevId). The acl layer's checks follow
// hicann/runtime src/acl/aclrt_impl/stream.cpp, memory.cpp and device.cpp; the runtime's own
// (a stream that is not live, a device that does not exist) are documented only.
//
// A simulated stream runs each task when it is issued: an asynchronous copy is complete when
// aclrtMemcpyAsync returns, so synchronising never waits and never times out.
#include <stdint.h>

#include <mutex>
#include <set>

#include "acl_internal.h"

using namespace aclsim;

namespace {

struct Stream {
    int32_t device;
    uint32_t priority;
    uint32_t flag;
};

std::set<Stream *> &live_streams() {  // with g_mu held; never freed (outlives static destructors)
    static auto *streams = new std::set<Stream *>();
    return *streams;
}

// NULL is the default stream of the current context; anything else must be live.
aclError check_stream(const char *api, aclrtStream stream) {
    if (stream == nullptr) {
        if (current_device() < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
        return ACL_SUCCESS;
    }
    std::lock_guard<std::mutex> g(g_mu);
    if (live_streams().count(static_cast<Stream *>(stream)) == 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, api, "stream is not a live stream of aclrtCreateStream*");
    return ACL_SUCCESS;
}

constexpr uint32_t kMaxStreamPriority = 7;  // "the priority of stream, value range:0~7"

aclError check_device_id(const char *api, int32_t id, int32_t *out) {
    if (out == nullptr) return fail(ACL_ERROR_INVALID_PARAM, api, "the output pointer is NULL");
    if (id < 0 || static_cast<uint32_t>(id) >= device_count())
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, api, fmt("device %d does not exist", id));
    *out = id;  // the simulated devices are all visible, numbered alike in every space
    return ACL_SUCCESS;
}

}  // namespace

extern "C" {

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag) {
    static const char api[] = "aclrtCreateStreamWithConfig";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    int32_t device = current_device();
    if (stream == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    } else if (device < 0) {
        rc = fail(ACL_ERROR_RT_CONTEXT_NULL, api, "no current context on the calling thread");
    } else if (priority > kMaxStreamPriority) {
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("priority %u is not in [0, 7]", priority));
    } else {
        Stream *s = new Stream{device, priority, flag};
        std::lock_guard<std::mutex> g(g_mu);
        live_streams().insert(s);
        *stream = s;
    }
    ACLSIM_TRACE(api, fmt("%p, %u, 0x%x", static_cast<void *>(stream), priority, flag), rc);
    return rc;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    static const char api[] = "aclrtDestroyStream";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (stream == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    } else {
        Stream *s = static_cast<Stream *>(stream);
        bool live;
        {
            std::lock_guard<std::mutex> g(g_mu);
            live = live_streams().erase(s) != 0;
        }
        if (live)
            delete s;
        else
            rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, "stream is not a live stream of aclrtCreateStream*");
    }
    ACLSIM_TRACE(api, fmt("%p", stream), rc);
    return rc;
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    static const char api[] = "aclrtSynchronizeStreamWithTimeout";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (timeout < -1)
        rc = fail(ACL_ERROR_RT_PARAM_INVALID, api, fmt("timeout %d is not in [-1, INT_MAX]", timeout));
    else
        rc = check_stream(api, stream);
    ACLSIM_TRACE(api, fmt("%p, %d", stream, timeout), rc);
    return rc;
}

aclError aclrtStreamAbort(aclrtStream stream) {
    static const char api[] = "aclrtStreamAbort";
    ACLSIM_COUNT(api);
    // "stream to be aborted, cannot be null": the runtime refuses NULL (107000); nothing is left
    // to abort on a live one
    aclError rc = stream == nullptr ? fail(ACL_ERROR_RT_PARAM_INVALID, api, "stream is NULL") : check_stream(api, stream);
    ACLSIM_TRACE(api, fmt("%p", stream), rc);
    return rc;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    static const char api[] = "aclrtMemcpyAsync";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    if (count == 0) {
        // nothing to copy: success before any other check
    } else if (dst == nullptr || src == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, dst ? "src is NULL" : "dst is NULL");
    } else if (stream != nullptr && (rc = check_stream(api, stream)) != ACL_SUCCESS) {
        // recorded by check_stream
    } else {
        rc = memcpy_body(api, dst, destMax, src, count, kind);
    }
    ACLSIM_TRACE(api, fmt("%p, %zu, %p, %zu, %d, %p", dst, destMax, src, count, static_cast<int>(kind), stream), rc);
    return rc;
}

aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                          aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex) {
    static const char api[] = "aclrtMemcpyBatch";
    ACLSIM_COUNT(api);
    aclError rc = ACL_SUCCESS;
    bool all_zero = true;
    for (size_t i = 0; sizes != nullptr && i < numBatches; i++) all_zero = all_zero && sizes[i] == 0;
    if (failIndex == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "failIndex is NULL");
    } else if (sizes == nullptr || numBatches == 0) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, sizes ? "numBatches is 0" : "sizes is NULL");
    } else if (all_zero) {
        *failIndex = SIZE_MAX;  // nothing to copy: no other check
    } else if (dsts == nullptr || destMaxs == nullptr || srcs == nullptr || attrs == nullptr || attrsIndexes == nullptr) {
        rc = fail(ACL_ERROR_INVALID_PARAM, api, "dsts, destMaxs, srcs, attrs and attrsIndexes must not be NULL");
    } else {
        for (size_t i = 0; rc == ACL_SUCCESS && i < numBatches; i++)
            if (destMaxs[i] < sizes[i])
                rc = fail(ACL_ERROR_INVALID_PARAM, api,
                          fmt("The memory copy size %zu at index %zu exceeds the size %zu of the destination buffer",
                              sizes[i], i, destMaxs[i]));
        for (size_t a = 0; rc == ACL_SUCCESS && a < numAttrs; a++)
            for (uint8_t b : attrs[a].rsv)
                if (b != 0 && rc == ACL_SUCCESS) rc = fail(ACL_ERROR_INVALID_PARAM, api, fmt("attrs[%zu].rsv must be 0", a));
        *failIndex = SIZE_MAX;
        for (size_t i = 0; rc == ACL_SUCCESS && i < numBatches; i++) {
            rc = memcpy_body(api, dsts[i], destMaxs[i], srcs[i], sizes[i], ACL_MEMCPY_DEFAULT);
            if (rc != ACL_SUCCESS) *failIndex = i;
        }
    }
    ACLSIM_TRACE(api, fmt("%zu batches, %zu attrs", numBatches, numAttrs), rc);
    return rc;
}

aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId) {
    static const char api[] = "aclrtGetPhyDevIdByLogicDevId";
    ACLSIM_COUNT(api);
    aclError rc = check_device_id(api, logicDevId, phyDevId);
    ACLSIM_TRACE(api, fmt("%d, %p", logicDevId, static_cast<void *>(phyDevId)), rc);
    return rc;
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId) {
    static const char api[] = "aclrtGetLogicDevIdByUserDevId";
    ACLSIM_COUNT(api);
    aclError rc = check_device_id(api, userDevid, logicDevId);
    ACLSIM_TRACE(api, fmt("%d, %p", userDevid, static_cast<void *>(logicDevId)), rc);
    return rc;
}

}  // extern "C"
