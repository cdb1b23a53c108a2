/*
 * Stands in for one of the vendor's own libraries that calls ACL itself (as libcann_hixl.so's
 * hixl_cs engine registers host memory with aclrtHostRegister): built as libllm_datadist.so in
 * the directory of the vendor's ACL library, as in the vendor's lib64. Its calls reach regcheck
 * through its PLT. tests/callsite.rs also builds it as a user's plugins/libruntime.so: a vendor
 * file name elsewhere is the application's.
 */
#include <stdint.h>

#include "acl/acl.h"

/* A registration that breaks a rule (ptr 64 bytes past a page boundary). */
int vendor_register_misaligned(char *page) { return aclrtHostRegisterV2(page + 64, 4096, ACL_HOST_REG_MAPPED); }

/* A clean registration of a whole page, and its unregistration. */
int vendor_register(void *page) { return aclrtHostRegisterV2(page, 4096, ACL_HOST_REG_MAPPED); }
int vendor_unregister(void *page) { return aclrtHostUnregister(page); }
