/*
 * The ACL half of docs/conformance.md, one function per row: each sets up what the vendor's unit
 * test sets up (product, registration path, mocked runtime or driver answers: ACLSIM_* settings
 * and the aclsim.h answer hooks), makes the calls through ACL and prints the outcome of every
 * call the vendor's test checks, in the table's notation: an ACL code, or `reg=N` / `unreg=N` /
 * `unregex=N` (calls of the driver's halHostRegister / halHostUnregister / halHostUnregisterEx
 * so far), or `loc=host|device|unregistered` (aclrtPointerGetAttributes' location).
 * Usage: conformance_acl ROW-ID (prints "ROW-ID: outcome, ...") | conformance_acl --list.
 * The vendor files cited are in hicann/runtime @ 681ef76:
 *   A = tests/ut/acl/testcase/acl_runtime_unittest.cpp
 *   M = tests/ut/runtime/runtime/test/platform/910B/rt_utest_api_memory.cc
 *   V = tests/ut/runtime/runtime/test/platform/910B/rt_utest_api_cloudv2.cc
 *   D = tests/ut/runtime/runtime/test/platform/cloud/rt_utest_npu_driver.cc
 *   C = tests/ut/acl/testcase/acl_common_unittest.cpp
 *   LE = tests/ut/slog/ut/ep/alog_host/testcase/alog_host_excp_utest.cc
 *   LF = tests/ut/slog/ut/ep/alog_host/testcase/alog_host_func_utest.cc
 *   R = the public code itself where no unit test covers it: src/runtime/api/impl/api_impl.cc,
 *       src/acl/aclrt_impl/device.cpp
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_log.h"
#include "aclsim.h"

static char g_out[4096];

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...) {
    size_t n = strlen(g_out);
    if (n > 0) n += (size_t)snprintf(g_out + n, sizeof(g_out) - n, ", ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_out + n, sizeof(g_out) - n, fmt, ap);
    va_end(ap);
}

static void rc(aclError e) { put("%d", e); }
static void count(const char *label, const char *name) {
    put("%s=%llu", label, (unsigned long long)aclsimGetCallCount(name));
}
#define REG() count("reg", "halHostRegister")
#define UNREG() count("unreg", "halHostUnregister")
#define UNREGEX() count("unregex", "halHostUnregisterEx")

/* A small heap object, as the vendor's tests register (std::make_unique<uint32_t>). */
static void *obj(void) { return malloc(16); }
static void *at(void *p, uintptr_t off) { return (void *)((uintptr_t)p + off); }

/* Runtime-level rows: the registration path by ACLSIM_PIN_REGISTER ("1" the driver path, "0" the
 * runtime's tables), the driver's device-pointer query by ACLSIM_DEVPTR_QUERY, on device 0. */
static void rt_setup(const char *pin, const char *query) {
    if (pin != NULL) setenv("ACLSIM_PIN_REGISTER", pin, 1);
    setenv("ACLSIM_CANN_VERSION", "9.2.0", 1); /* the rows of the vendor's master (681ef76) */
    if (query != NULL) setenv("ACLSIM_DEVPTR_QUERY", query, 1);
    aclrtSetDevice(0);
    aclsimResetCallCounts();
}
/* The driver's registration calls answer success without looking (the tests' capture stubs). */
static void stub_driver(void) {
    aclsimStubAnswer("halHostRegister", 0);
    aclsimStubAnswer("halHostUnregister", 0);
}

/* ---- A: the ACL layer over a mocked runtime ---- */

/* The vendor's ACL tests run with a device set and every runtime call stubbed. */
static void ut_env(void) { aclrtSetDevice(0); }

static void c01(void) { /* A:283 aclrtResetDeviceForceTest */
    rc(aclrtResetDeviceForce(0));
    aclsimInjectAnswer("rtDeviceResetForce", ACL_ERROR_RT_PARAM_INVALID);
    rc(aclrtResetDeviceForce(0));
    rc(aclrtSetDevice(0));
    rc(aclrtSetDevice(0));
    rc(aclrtResetDeviceForce(0));
    aclsimInjectAnswer("rtDeviceReset", ACL_ERROR_RT_PARAM_INVALID);
    rc(aclrtResetDevice(0));
}

static void c02(void) { /* A:1668 memoryFreeHostTest */
    void *p = NULL;
    aclrtSetDevice(0);
    rc(aclrtFreeHost(NULL));
    rc(aclrtMallocHost(&p, 1));
    rc(aclrtFreeHost(p));
    rc(aclrtMallocHost(&p, 1));
    aclsimInjectAnswer("rtFreeHost", ACL_ERROR_RT_PARAM_INVALID);
    rc(aclrtFreeHost(p));
    rc(aclrtFreeHost(p));
}

static void c03(void) { /* A:5278 aclrtMallocHostWithCfg_succ_without_cfg */
    void *p = NULL;
    aclrtSetDevice(0);
    rc(aclrtMallocHostWithCfg(&p, 1024, NULL));
}

static void c04(void) { /* A:5286 aclrtMallocHostWithCfg_succ_with_cfg */
    void *p = NULL;
    aclrtMallocAttribute a;
    memset(&a, 0, sizeof(a));
    a.attr = ACL_RT_MEM_ATTR_MODULE_ID;
    a.value.moduleId = 1;
    aclrtMallocConfig cfg = {&a, 1};
    aclrtSetDevice(0);
    rc(aclrtMallocHostWithCfg(&p, 1024, &cfg));
}

static void c05(void) { /* A:5298 aclrtMallocHostWithCfg_fail_with_invalid_addr */
    aclrtSetDevice(0);
    rc(aclrtMallocHostWithCfg(NULL, 1024, NULL));
}

static void c06(void) { /* A:5305 aclrtMallocHostWithCfg_fail_with_invalid_0_size */
    void *p = NULL;
    aclrtSetDevice(0);
    rc(aclrtMallocHostWithCfg(&p, 0, NULL));
}

static void c07(void) { /* A:5313 aclrtMallocHostWithCfg_fail_with_rts_error */
    void *p = NULL;
    aclrtSetDevice(0);
    aclsimInjectAnswer("rtsMallocHost", ACL_ERROR_RT_PARAM_INVALID);
    rc(aclrtMallocHostWithCfg(&p, 1024, NULL));
}

static void c08(void) { /* A:5324 aclrtPointerGetAttributes_succ */
    aclrtPtrAttributes at_;
    rc(aclrtPointerGetAttributes((void *)0xff, &at_));
}

static void c09(void) { /* A:5332 aclrtPointerGetAttributes_failed01 */
    aclrtPtrAttributes at_;
    rc(aclrtPointerGetAttributes(NULL, &at_));
}

static void c10(void) { /* A:5340 aclrtPointerGetAttributes_failed02 */
    aclrtPtrAttributes at_;
    aclsimInjectAnswer("rtsPointerGetAttributes", ACL_ERROR_RT_FAILURE);
    rc(aclrtPointerGetAttributes((void *)0xff, &at_));
}

static void c11(void) { /* A:5350 aclrtHostRegister_succ */
    void *dev = NULL;
    ut_env();
    aclsimStubAnswer("rtsHostRegister", 0);
    rc(aclrtHostRegister((void *)0xff, 1024, ACL_HOST_REGISTER_MAPPED, &dev));
}

static void c12(void) { /* A:5360 aclrtHostRegister_failed01 */
    void *dev = NULL;
    ut_env();
    rc(aclrtHostRegister(NULL, 1024, ACL_HOST_REGISTER_MAPPED, &dev));
}

static void c13(void) { /* A:5370 aclrtHostRegister_failed02 */
    void *dev = NULL;
    ut_env();
    rc(aclrtHostRegister((void *)0xff, 0, ACL_HOST_REGISTER_MAPPED, &dev));
}

static void c14(void) { /* A:5380 aclrtHostRegister_failed03 */
    void *dev = NULL;
    ut_env();
    aclsimInjectAnswer("rtsHostRegister", ACL_ERROR_RT_FAILURE);
    rc(aclrtHostRegister((void *)0xff, 1024, ACL_HOST_REGISTER_MAPPED, &dev));
}

static void c15(void) { /* A:5392 aclrtHostUnregister_succ */
    ut_env();
    aclsimStubAnswer("rtsHostUnregister", 0);
    rc(aclrtHostUnregister((void *)0xff));
}

static void c16(void) { /* A:5399 aclrtHostUnregister_failed01 */
    ut_env();
    rc(aclrtHostUnregister(NULL));
}

static void c17(void) { /* A:5406 aclrtHostUnregister_failed02 */
    ut_env();
    aclsimInjectAnswer("rtsHostUnregister", ACL_ERROR_RT_FAILURE);
    rc(aclrtHostUnregister((void *)0xff));
}

static void c18(void) { /* A:5414 aclrtHostRegisterV2_succ */
    static const uint32_t flags[] = {ACL_HOST_REG_MAPPED, ACL_HOST_REG_PINNED, ACL_HOST_REG_IOMEMORY,
                                     ACL_HOST_REG_READONLY, ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY};
    ut_env();
    aclsimStubAnswer("rtHostRegisterV2", 0);
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) rc(aclrtHostRegisterV2((void *)0xff, 1024, flags[i]));
}

static void c19(void) { /* A:5450 aclrtHostRegisterV2_failed01 */
    ut_env();
    rc(aclrtHostRegisterV2(NULL, 1024, ACL_HOST_REG_MAPPED));
}

static void c20(void) { /* A:5459 aclrtHostRegisterV2_failed02 */
    ut_env();
    rc(aclrtHostRegisterV2((void *)0xff, 0, ACL_HOST_REG_MAPPED));
}

static void c21(void) { /* A:5468 aclrtHostRegisterV2_failed03 */
    ut_env();
    aclsimInjectAnswer("rtHostRegisterV2", ACL_ERROR_RT_FAILURE);
    rc(aclrtHostRegisterV2((void *)0xff, 1024, ACL_HOST_REG_MAPPED));
}

static void c22(void) { /* A:5478 aclrtHostGetDevicePointer_succ */
    void *dev = NULL;
    ut_env();
    aclsimStubAnswer("rtHostGetDevicePointer", 0);
    rc(aclrtHostGetDevicePointer((void *)0xff, &dev, 0));
}

static void c23(void) { /* A:5487 aclrtHostGetDevicePointer_failed01 */
    void *dev = NULL;
    ut_env();
    rc(aclrtHostGetDevicePointer(NULL, &dev, 0));
}

static void c24(void) { /* A:5496 aclrtHostGetDevicePointer_failed02 */
    void *dev = NULL;
    ut_env();
    rc(aclrtHostGetDevicePointer((void *)0xff, &dev, 1));
}

static void c25(void) { /* A:5505 aclrtHostGetDevicePointer_failed03 */
    void *dev = NULL;
    ut_env();
    aclsimInjectAnswer("rtHostGetDevicePointer", ACL_ERROR_RT_FAILURE);
    rc(aclrtHostGetDevicePointer((void *)0xff, &dev, 0));
}

static void c26(void) { /* A:5528 aclrtHostMemMapCapabilities_succ */
    aclrtHostMemMapCapability cap;
    ut_env();
    aclsimInjectAnswer("rtHostMemMapCapabilities", 0);
    rc(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, &cap));
}

static void c27(void) { /* A:5540 aclrtHostMemMapCapabilities_failed */
    aclrtHostMemMapCapability cap;
    ut_env();
    aclsimInjectAnswer("rtHostMemMapCapabilities", ACL_ERROR_RT_PARAM_INVALID);
    rc(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, &cap));
}

/* ---- M: the runtime's host allocation with a configuration ---- */

static aclError malloc_cfg(aclrtMallocAttribute *attrs, aclrtMallocAttrType t, uint32_t v, void **p) {
    aclrtMallocConfig cfg = {attrs, 1};
    memset(attrs, 0, sizeof(*attrs));
    attrs->attr = t;
    if (t == ACL_RT_MEM_ATTR_VA_FLAG)
        attrs->value.vaFlag = v;
    else
        attrs->value.moduleId = (uint16_t)v;
    return aclrtMallocHostWithCfg(p, 60, &cfg);
}

static void c28(void) { /* M:380 rtsMallocHost_001 (the NULL-attrs case) */
    void *p = NULL;
    aclrtMallocConfig cfg = {NULL, 1};
    aclrtSetDevice(0);
    rc(aclrtMallocHostWithCfg(&p, 1, &cfg));
}

static void c29(void) { /* M:411 rtsMallocHost_002 */
    aclrtMallocAttribute a;
    void *p = NULL;
    aclrtSetDevice(0);
    rc(malloc_cfg(&a, ACL_RT_MEM_ATTR_RSV, 0, &p));
    rc(malloc_cfg(&a, ACL_RT_MEM_ATTR_DEVICE_ID, 0, &p));
    rc(malloc_cfg(&a, ACL_RT_MEM_ATTR_MODULE_ID, 1, &p));
    rc(aclrtFreeHost(p));
}

static void c30(void) { /* M:446 rtsMallocHost_003 */
    aclrtMallocAttribute a;
    void *p = NULL;
    aclrtSetDevice(0);
    rc(malloc_cfg(&a, ACL_RT_MEM_ATTR_VA_FLAG, 0, &p));
    rc(aclrtFreeHost(p));
    rc(malloc_cfg(&a, ACL_RT_MEM_ATTR_VA_FLAG, 1, &p));
}

/* ---- M: the two registration paths ---- */

/* One V2 registration and its unregistration, with the driver calls after each. */
static void v2_pair(uint32_t flag) {
    void *p = obj();
    stub_driver();
    rc(aclrtHostRegisterV2(p, 4, flag));
    REG();
    rc(aclrtHostUnregister(p));
    UNREG();
    UNREGEX();
}

static void c31(void) { rt_setup("1", NULL); v2_pair(ACL_HOST_REG_PINNED); }  /* M:574 drv_pin_only */
static void c32(void) { rt_setup("1", NULL); v2_pair(ACL_HOST_REG_MAPPED); }  /* M:598 drv_mapped_only */
static void c33(void) { /* M:622 host_register_v2_drv_pin_mapped_combined */
    rt_setup("1", NULL);
    v2_pair(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED);
}

static void c34(void) { /* M:648 host_register_v2_drv_already_registered */
    void *p = obj();
    rt_setup("1", NULL);
    aclsimInjectAnswer("halHostRegister", 0);
    aclsimStubAnswer("halHostRegister", 13 /* DRV_ERROR_BUSY */);
    aclsimStubAnswer("halHostUnregister", 0);
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_PINNED));
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_PINNED));
    rc(aclrtHostUnregister(p));
}

static void c35(void) { /* M:671 host_register_v2_drv_error */
    rt_setup("1", NULL);
    aclsimStubAnswer("halHostRegister", 0xfffe /* DRV_ERROR_NOT_SUPPORT */);
    rc(aclrtHostRegisterV2(obj(), 4, ACL_HOST_REG_PINNED));
}

static void c36(void) { rt_setup("0", NULL); v2_pair(ACL_HOST_REG_PINNED); }  /* M:686 sw_pin_only */
static void c37(void) { rt_setup("0", NULL); v2_pair(ACL_HOST_REG_MAPPED); }  /* M:711 sw_mapped_only */
static void c38(void) { /* M:737 host_register_v2_sw_pin_mapped_no_pin_flag */
    rt_setup("0", NULL);
    v2_pair(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED);
}

static void c39(void) { /* M:763 host_register_v2_sw_drv_fail */
    void *p = obj();
    rt_setup("0", NULL);
    aclsimStubAnswer("halHostRegister", 7 /* DRV_ERROR_INNER_ERR */);
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_MAPPED));
    rc(aclrtHostUnregister(p));
}

static void c40(void) { /* M:782 host_register_v2_sw_pin_then_pin_mapped_duplicate */
    void *p = obj();
    rt_setup("0", NULL);
    stub_driver();
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_PINNED));
    REG();
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    REG();
    rc(aclrtHostRegisterV2(at(p, 1), 4, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    REG();
    rc(aclrtHostUnregister(p));
}

static void c41(void) { /* M:810 host_unregister_v2_drv_unregistered */
    rt_setup("1", NULL);
    aclsimStubAnswer("halHostUnregister", 11 /* DRV_ERROR_NOT_EXIST */);
    rc(aclrtHostUnregister(obj()));
}

static void c42(void) { /* M:825 host_unregister_v2_sw_unregistered */
    rt_setup("0", NULL);
    rc(aclrtHostUnregister(obj()));
}

/* One V1 MAPPED registration and its unregistration, with the driver calls after each. */
static void v1_pair(void) {
    void *p = obj(), *dev = NULL;
    stub_driver();
    rc(aclrtHostRegister(p, 4, ACL_HOST_REGISTER_MAPPED, &dev));
    REG();
    rc(aclrtHostUnregister(p));
    UNREG();
    UNREGEX();
}

static void c43(void) { rt_setup("1", NULL); v1_pair(); } /* M:838 host_register_mapped_drv */

static void v1_duplicate(const char *pin) {
    void *p = obj(), *dev = NULL;
    rt_setup(pin, NULL);
    aclsimInjectAnswer("halHostRegister", 0);
    aclsimStubAnswer("halHostRegister", 13 /* DRV_ERROR_BUSY */);
    aclsimStubAnswer("halHostUnregister", 0);
    rc(aclrtHostRegister(p, 4, ACL_HOST_REGISTER_MAPPED, &dev));
    rc(aclrtHostRegister(p, 4, ACL_HOST_REGISTER_MAPPED, &dev));
    rc(aclrtHostUnregister(p));
}

static void c44(void) { v1_duplicate("1"); }             /* M:863 host_register_duplicate_drv */
static void c45(void) { rt_setup("0", NULL); v1_pair(); } /* M:887 host_register_mapped_sw */
static void c46(void) { v1_duplicate("0"); }             /* M:913 host_register_duplicate_sw */

/* Every flag combination of a "forall" test registered (and unregistered, unchecked). */
static void v2_all(const char *pin, uint32_t extra) {
    static const uint32_t f[] = {
        ACL_HOST_REG_IOMEMORY,
        ACL_HOST_REG_READONLY,
        ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY,
        ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_MAPPED,
        ACL_HOST_REG_READONLY | ACL_HOST_REG_MAPPED,
        ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY,
    };
    static const uint32_t g[] = {
        ACL_HOST_REG_IOMEMORY,
        ACL_HOST_REG_READONLY,
        ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY,
        ACL_HOST_REG_MAPPED | ACL_HOST_REG_READONLY,
        ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY,
        ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY,
    };
    const uint32_t *flags = extra != 0 ? g : f;
    void *p = obj();
    rt_setup(pin, NULL);
    stub_driver();
    for (size_t i = 0; i < 6; i++) {
        rc(aclrtHostRegisterV2(p, 4, flags[i] | extra));
        (void)aclrtHostUnregister(p);
    }
}

static void c47(void) { v2_all("1", 0); }                   /* M:937 host_register_v2_forall_nopin */
static void c48(void) { v2_all("1", ACL_HOST_REG_PINNED); } /* M:988 host_register_v2_forall_withpin */
static void c49(void) { v2_all("0", 0); }                   /* M:1048 host_register_v2_forall_olddrv_nopin */
static void c50(void) { v2_all("0", ACL_HOST_REG_PINNED); } /* M:1099 host_register_v2_forall_olddrv_withpin */

static void v1_all(const char *pin) {
    static const uint32_t t[] = {4, 8, 0 | 8, 0 | 4, 8 | 4, 0 | 4 | 8};
    void *p = obj(), *dev = NULL;
    rt_setup(pin, NULL);
    stub_driver();
    for (size_t i = 0; i < 6; i++) {
        rc(aclrtHostRegister(p, 4, (aclrtHostRegisterType)t[i], &dev));
        (void)aclrtHostUnregister(p);
    }
}

static void c51(void) { v1_all("1"); } /* M:1157 host_register_forall */
static void c52(void) { v1_all("0"); } /* M:1216 host_register_forall_olddrv */

/* ---- V: the runtime's tables and device pointers ---- */

static void c53(void) { /* V:1220 host_register_pinned */
    void *p = obj(), *dev = (void *)0x123;
    rt_setup("0", "0");
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_PINNED));
    rc(aclrtHostGetDevicePointer(p, &dev, 0));
    put(dev == NULL ? "null" : "set");
    for (uintptr_t off = 1; off <= 4; off++) rc(aclrtHostRegisterV2(at(p, off), 4, ACL_HOST_REG_PINNED));
    rc(aclrtHostUnregister(p));
    rc(aclrtHostUnregister(at(p, 4)));
}

static void c54(void) { /* V:1275 host_register_pinned_mapped (the flag-1 look-up: see the table) */
    void *p = obj(), *p2 = obj(), *dev = (void *)0x123;
    rt_setup("0", "0");
    stub_driver();
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    rc(aclrtHostGetDevicePointer(p, &dev, 0));
    put(dev == p ? "=host" : "other");
    for (uintptr_t off = 1; off <= 4; off++) rc(aclrtHostRegisterV2(at(p, off), 4, ACL_HOST_REG_PINNED));
    rc(aclrtHostGetDevicePointer(at(p, 4), &dev, 0));
    put(dev == NULL ? "null" : "set");
    rc(aclrtHostUnregister(p));
    rc(aclrtHostUnregister(at(p, 4)));
    rc(aclrtHostRegister(p2, 4, ACL_HOST_REGISTER_MAPPED, &dev));
    rc(aclrtHostUnregister(p2));
}

static void c55(void) { /* V:1334 host_get_device_pointer_hal_not_support */
    void *p = obj(), *dev = NULL;
    rt_setup("0", "1");
    stub_driver();
    aclsimStubAnswer("halMemHostGetDevPointer", 0xfffe /* DRV_ERROR_NOT_SUPPORT */);
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_MAPPED));
    rc(aclrtHostGetDevicePointer(p, &dev, 0));
    rc(aclrtHostUnregister(p));
}

static void c56(void) { /* V:1355 host_register_atomic */
    void *p = obj(), *dev = (void *)0x123;
    rt_setup("0", "0");
    stub_driver();
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_PINNED));
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    rc(aclrtHostGetDevicePointer(p, &dev, 0));
    put(dev == NULL ? "null" : "set");
    rc(aclrtHostUnregister(p));
}

static void c57(void) { /* V:1377 host_register_iomemory_readonly */
    static const uint32_t f[] = {ACL_HOST_REG_READONLY, ACL_HOST_REG_IOMEMORY,
                                 ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY};
    rt_setup("0", "0");
    stub_driver();
    for (size_t i = 0; i < 3; i++) {
        void *p = obj(), *dev = (void *)0x123;
        rc(aclrtHostRegisterV2(p, 4, f[i]));
        rc(aclrtHostGetDevicePointer(p, &dev, 0));
        put(dev == p ? "=host" : "other");
        rc(aclrtHostUnregister(p));
    }
}

static void c58(void) { /* V:1424 pin_memory_attribute */
    void *p = obj();
    aclrtPtrAttributes a;
    rt_setup("0", NULL);
    rc(aclrtHostRegisterV2(p, 4, ACL_HOST_REG_PINNED));
    rc(aclrtPointerGetAttributes(p, &a));
    put("loc=%s", a.location.type == ACL_MEM_LOCATION_TYPE_HOST       ? "host"
                  : a.location.type == ACL_MEM_LOCATION_TYPE_DEVICE ? "device"
                                                                     : "unregistered");
    rc(aclrtHostUnregister(p));
}

/* ---- D: the cloud chip (training series) through the driver ---- */

static void c59(void) { /* D:50 host_register */
    void *dev = NULL;
    int x = 10;
    setenv("ACLSIM_SOC_NAME", "Ascend910A", 1);
    rt_setup("1", NULL);
    aclsimStubAnswer("halHostRegister", 0);
    aclsimStubAnswer("halHostUnregister", 0);
    rc(aclrtHostRegister(&x, 100, ACL_HOST_REGISTER_MAPPED, &dev));
    rc(aclrtHostUnregister(&x));
    rc(aclrtHostUnregister(&x));
}

/* ---- C: the version number of a package (aclsysGetVersionNum over a version.info) ---- */

/* The vendor's tests write share/info/runtime/version.info; the simulator's runtime version is
 * ACLSIM_CANN_VERSION. Prints the code, then the number when it succeeded. */
static void version_num(const char *version) {
    int32_t num = 0;
    setenv("ACLSIM_CANN_VERSION", version, 1);
    aclError e = aclsysGetVersionNum((char *)"runtime", &num);
    rc(e);
    if (e == ACL_SUCCESS) put("%d", num);
}

static void c60(void) { version_num("8.5.0.beta.1"); }  /* C:969 aclsysGetVersionNum_ComplexSemVer_Success */
static void c61(void) { version_num("8.5"); }           /* C:1086 aclsysGetVersionNum_InvalidFormat_Fail */
static void c62(void) { version_num("8.5.0-gamma"); }   /* C:1107 aclsysGetVersionNum_InvalidFormat_Fail_02 */
static void c63(void) { version_num("8"); }             /* C:1128 aclsysGetVersionNum_InvalidFormat_Fail_03 */
static void c64(void) { version_num("A"); }             /* C:1150 aclsysGetVersionNum_InvalidFormat_Fail_04 */
static void c65(void) { version_num("8.5.0..alpha"); }  /* C:1172 aclsysGetVersionNum_InvalidFormat_Fail_05 */
static void c66(void) { version_num("8.5.0-rc.1a"); }   /* C:1194 aclsysGetVersionNum_InvalidFormat_Fail_06 */

/* ---- LE, LF: the log level check libcann_hixl.so asks (acllogCheckDebugLevel) ---- */

static void c67(void) { /* LE:453 AcllogInterfaceError */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "0", 1);
    put("%d", acllogCheckDebugLevel(0xff00, 4 + 1)); /* DLOG_NULL + 1 */
    put("%d", acllogCheckDebugLevel(-1, 1));         /* DLOG_INFO */
    put("%d", acllogCheckDebugLevel(-1, 3));         /* DLOG_ERROR */
}

static void c68(void) { /* LF:1091 AcllogCheckDebugLogLevelInterface */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);
    put("%d", acllogCheckDebugLevel(0xff00, 0)); /* DLOG_DEBUG */
    put("%d", acllogCheckDebugLevel(0xff00, 1)); /* DLOG_INFO */
    put("%d", acllogCheckDebugLevel(0xffff, 2)); /* DLOG_WARN */
    put("%d", acllogCheckDebugLevel(0xffff, 3)); /* DLOG_ERROR */
    put("%d", acllogCheckDebugLevel(0xff00, 5)); /* DLOG_NULL + 1 */
}

/* ---- CP: the release profiles (ACLSIM_CANN_VERSION), each difference once per profile ----
 * R9 = hicann/runtime tag v9.1.0 (src/runtime/core/src/api_impl/api_impl.cc, api_error.cc);
 * RM = hicann/runtime 681ef76 (src/runtime/api/impl/api_impl.cc, src/runtime/driver/npu_driver_mem.cc). */

static void profile(const char *version, const char *pin) {
    if (version != NULL) setenv("ACLSIM_CANN_VERSION", version, 1);
    if (pin != NULL) setenv("ACLSIM_PIN_REGISTER", pin, 1);
    aclrtSetDevice(0);
    aclsimResetCallCounts();
}

static void *pages(size_t n) {
    void *p = NULL;
    return posix_memalign(&p, 4096, n * 4096) == 0 ? p : NULL;
}

static void runtime_version_num(void) {
    int32_t num = 0;
    aclError e = aclsysGetVersionNum((char *)"runtime", &num);
    rc(e);
    if (e == ACL_SUCCESS) put("%d", num);
}

static void cp01(void) { profile(NULL, NULL); runtime_version_num(); }     /* R9 share/info/runtime/version.info */
static void cp02(void) { profile("9.2.0", NULL); runtime_version_num(); }  /* RM */

/* V1 over a PINNED-only V2 registration, then its unregistration (issue 33 item 1). */
static void v1_over_pinned(void) {
    void *p = pages(4), *dev = NULL;
    rc(aclrtHostRegisterV2(p, 4 * 4096, ACL_HOST_REG_PINNED));
    rc(aclrtHostRegister(p, 4 * 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    rc(aclrtHostUnregister(p));
    REG();
    UNREG();
    UNREGEX();
}
static void cp03(void) { profile("9.1.0", "1"); v1_over_pinned(); }  /* R9 api_impl.cc:2405-2446 */
static void cp04(void) { profile("9.2.0", "1"); v1_over_pinned(); }  /* RM api_impl.cc:2584, npu_driver_mem.cc:242 */

/* A PINNED-only registration through a device reset, registered again without a context. */
static void pinned_through_reset(void) {
    void *p = pages(4);
    rc(aclrtHostRegisterV2(p, 4 * 4096, ACL_HOST_REG_PINNED));
    rc(aclrtResetDevice(0));
    rc(aclrtHostRegisterV2(p, 4 * 4096, ACL_HOST_REG_PINNED));
    rc(aclrtSetDevice(0));
    rc(aclrtHostUnregister(p));
}
static void cp05(void) { profile("9.1.0", "0"); pinned_through_reset(); }  /* R9 api_error.cc:1572 */
static void cp06(void) { profile("9.2.0", "0"); pinned_through_reset(); }  /* RM api_impl.cc:2574-2598 */

/* IOMEMORY|PINNED (issue 33 item 11): the IO mapping, PINNED dropped with IO memory. */
static void io_pinned(void) {
    void *p = pages(1);
    rc(aclrtHostRegisterV2(p, 4096, ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_PINNED));
    rc(aclrtHostUnregister(p));
}
static void cp07(void) { profile("9.1.0", "0"); io_pinned(); }  /* R9 api_impl.cc:2427-2441 */
static void cp08(void) { profile("9.2.0", "1"); io_pinned(); }  /* M:997 host_register_v2_forall_withpin */

/* ---- R: the runtime's public code itself, beyond its unit tests (issue 33) ---- */

/* A page of heap memory, 4 KiB aligned (the real driver's alignment). */
static char *page_buf(size_t pages) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, pages * 4096) != 0) abort();
    memset(p, 0, pages * 4096);
    return p;
}

static void c69(void) { /* R: api_impl.cc HostRegisterV2/HostRegister: the driver answers for the chip first */
    setenv("ACLSIM_SOC_NAME", "Ascend310P3", 1);
    char *p = page_buf(2);
    void *dev = NULL;
    rt_setup("1", NULL);
    rc(aclrtHostRegisterV2(p + 16, 4096, ACL_HOST_REG_MAPPED));
    rc(aclrtHostRegister(p + 16, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
}

static void c70(void) { /* R: api_impl.cc:2647 HostGetDevicePointer: *pDevice = GetMappedDevicePointer(pHost) */
    char *p = page_buf(1);
    void *dev = (void *)0x123;
    rt_setup("0", "0");
    rc(aclrtHostGetDevicePointer(p, &dev, 0));
    put(dev == NULL ? "null" : "set");
}

static void c71(void) { /* R: api_impl.cc:2647 HostGetDevicePointer: the mapped table is process-wide */
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    char *p = page_buf(1);
    void *dev0 = NULL, *dev1 = NULL;
    rt_setup("0", "0");
    rc(aclrtHostRegisterV2(p, 4096, ACL_HOST_REG_MAPPED));
    rc(aclrtHostGetDevicePointer(p, &dev0, 0));
    rc(aclrtSetDevice(1));
    rc(aclrtHostGetDevicePointer(p, &dev1, 0));
    put(dev1 == dev0 ? "same" : "other");
    rc(aclrtSetDevice(0));
    rc(aclrtHostUnregister(p));
}

static void c72(void) { /* R: api_impl.cc HostRegisterV2: PINNED-only goes to the runtime's table alone */
    char *p = page_buf(1);
    rt_setup("0", NULL);
    rc(aclrtHostRegisterV2(p, UINT64_MAX, ACL_HOST_REG_PINNED));
    REG();
    rc(aclrtHostUnregister(p));
}

static void c73(void) { /* R: device.cpp:101 aclrtResetDeviceForceImpl: the device released at once */
    char *p = page_buf(1);
    rt_setup("1", NULL);
    rc(aclrtHostRegisterV2(p, 4096, ACL_HOST_REG_MAPPED));
    rc(aclrtSetDevice(0));
    rc(aclrtResetDeviceForce(0));
    rc(aclrtSetDevice(0));
    rc(aclrtHostRegisterV2(p, 4096, ACL_HOST_REG_MAPPED));
    rc(aclrtHostUnregister(p));
}

static const struct {
    const char *id;
    void (*fn)(void);
} kRows[] = {
    {"ACL-C01", c01}, {"ACL-C02", c02}, {"ACL-C03", c03}, {"ACL-C04", c04}, {"ACL-C05", c05},
    {"ACL-C06", c06}, {"ACL-C07", c07}, {"ACL-C08", c08}, {"ACL-C09", c09}, {"ACL-C10", c10},
    {"ACL-C11", c11}, {"ACL-C12", c12}, {"ACL-C13", c13}, {"ACL-C14", c14}, {"ACL-C15", c15},
    {"ACL-C16", c16}, {"ACL-C17", c17}, {"ACL-C18", c18}, {"ACL-C19", c19}, {"ACL-C20", c20},
    {"ACL-C21", c21}, {"ACL-C22", c22}, {"ACL-C23", c23}, {"ACL-C24", c24}, {"ACL-C25", c25},
    {"ACL-C26", c26}, {"ACL-C27", c27}, {"ACL-C28", c28}, {"ACL-C29", c29}, {"ACL-C30", c30},
    {"ACL-C31", c31}, {"ACL-C32", c32}, {"ACL-C33", c33}, {"ACL-C34", c34}, {"ACL-C35", c35},
    {"ACL-C36", c36}, {"ACL-C37", c37}, {"ACL-C38", c38}, {"ACL-C39", c39}, {"ACL-C40", c40},
    {"ACL-C41", c41}, {"ACL-C42", c42}, {"ACL-C43", c43}, {"ACL-C44", c44}, {"ACL-C45", c45},
    {"ACL-C46", c46}, {"ACL-C47", c47}, {"ACL-C48", c48}, {"ACL-C49", c49}, {"ACL-C50", c50},
    {"ACL-C51", c51}, {"ACL-C52", c52}, {"ACL-C53", c53}, {"ACL-C54", c54}, {"ACL-C55", c55},
    {"ACL-C56", c56}, {"ACL-C57", c57}, {"ACL-C58", c58}, {"ACL-C59", c59}, {"ACL-C60", c60},
    {"ACL-C61", c61}, {"ACL-C62", c62}, {"ACL-C63", c63}, {"ACL-C64", c64}, {"ACL-C65", c65},
    {"ACL-C66", c66}, {"ACL-C67", c67}, {"ACL-C68", c68}, {"ACL-C69", c69}, {"ACL-C70", c70},
    {"ACL-C71", c71}, {"ACL-C72", c72}, {"ACL-C73", c73},
    {"ACL-CP01", cp01}, {"ACL-CP02", cp02}, {"ACL-CP03", cp03}, {"ACL-CP04", cp04},
    {"ACL-CP05", cp05}, {"ACL-CP06", cp06}, {"ACL-CP07", cp07}, {"ACL-CP08", cp08},
};

int main(int argc, char **argv) {
    size_t n = sizeof(kRows) / sizeof(kRows[0]);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++) printf("%s\n", kRows[i].id);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s ROW-ID | --list\n", argv[0]);
        return 2;
    }
    /* the registration rows run on a kernel that registers pageable memory */
    setenv("ACLSIM_KERNEL_RELEASE", "6.6.0", 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(argv[1], kRows[i].id) == 0) {
            kRows[i].fn();
            printf("%s: %s\n", kRows[i].id, g_out);
            return 0;
        }
    }
    fprintf(stderr, "no row %s\n", argv[1]);
    return 2;
}
