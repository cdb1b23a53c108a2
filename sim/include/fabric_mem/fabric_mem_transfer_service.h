// fabric_mem/fabric_mem_transfer_service.h - stand-in of the part of HIXL's fabric-memory
// service that programs use directly (the vendor's benchmarks allocate their buffers with it):
// the static MallocMem, FreeMem and ExportToShareableHandle of hixl::FabricMemTransferService, implemented by the
// simulator's libcann_hixl.so. Signatures from hicann/hixl
// src/hixl/fabric_mem/fabric_mem_transfer_service.h; not the vendor's file (the class's
// instance members are internal to the library and absent here).
#ifndef ACLSIM_FABRIC_MEM_FABRIC_MEM_TRANSFER_SERVICE_H_
#define ACLSIM_FABRIC_MEM_FABRIC_MEM_TRANSFER_SERVICE_H_

#include <cstddef>

#include "acl/acl_rt.h"
#include "hixl/hixl_types.h"

namespace hixl {
class FabricMemTransferService {
 public:
  // Allocates `size` bytes of fabric-shareable memory of `type` (MEM_DEVICE: device HBM with huge
  // pages on the current device; MEM_HOST: host memory, 1 GiB pages first, then 2 MiB pages),
  // reserved and mapped with the ACL VMM calls; *ptr is its virtual address.
  // PARAM_INVALID for another type, a size of 0 or a NULL ptr; FAILED when an ACL call fails.
  static Status MallocMem(MemType type, size_t size, void **ptr);
  // Unmaps and frees memory of MallocMem. PARAM_INVALID for NULL; FAILED for an address
  // MallocMem did not return.
  static Status FreeMem(void *ptr);
  // Exports the physical memory behind a MallocMem allocation as a fabric handle (the first call
  // exports it with aclrtMemExportToShareableHandleV2, later ones return the same handle).
  // PARAM_INVALID for NULL or an address MallocMem did not return (or already freed); the ACL
  // code when the export fails.
  static Status ExportToShareableHandle(void *addr, aclrtMemFabricHandle &share_handle);
};
}  // namespace hixl

#endif  // ACLSIM_FABRIC_MEM_FABRIC_MEM_TRANSFER_SERVICE_H_
