/* A plugin linked against the vendor library, for audit_deepbind.c. Its calls go through its
 * PLT; opened with RTLD_DEEPBIND they bind to the vendor library ahead of the global scope
 * (so ahead of a preloaded libregcheck.so): only the audit module can point them back. */
#include <stdint.h>

extern int aclInit(const char *configPath);
extern int aclrtSetDevice(int32_t deviceId);
extern int aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);
extern int aclrtHostUnregister(void *ptr);

int audit_plugin_init(void) {
    int rc = aclInit(0);
    return rc != 0 ? rc : aclrtSetDevice(0);
}

int audit_plugin_register(void *ptr, uint64_t size) { return aclrtHostRegisterV2(ptr, size, 0x2u); }

int audit_plugin_unregister(void *ptr) { return aclrtHostUnregister(ptr); }
