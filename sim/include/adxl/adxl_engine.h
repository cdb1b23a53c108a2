/*
 * adxl/adxl_engine.h - class adxl::AdxlEngine as exported by libllm_datadist.so (the vendor's
 * interface: member names, parameter types, defaults), written for the regcheck simulator.
 * Non-virtual members and one std::unique_ptr member, so sizeof(AdxlEngine) is one pointer
 * (programs allocate it themselves, e.g. with std::make_shared).
 */
#ifndef ACLSIM_ADXL_ADXL_ENGINE_H_
#define ACLSIM_ADXL_ADXL_ENGINE_H_

#include <map>
#include <memory>
#include <vector>

#include "adxl_types.h"

#ifndef ACLSIM_ADXL_AFTER_9_1
#define ACLSIM_ADXL_AFTER_9_1
#endif

namespace adxl {
class ASCEND_FUNC_VISIBILITY AdxlEngine {
 public:
  AdxlEngine();
  ~AdxlEngine();  // finalises

  // local_engine: "ip", "ip:port", "[ipv6]" or "[ipv6]:port"; a port > 0 makes this engine listen
  Status Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options);
  void Finalize();

  Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle);
  Status DeregisterMem(MemHandle mem_handle);

  Status Connect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);
  Status Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  Status TransferSync(const AscendString &remote_engine, TransferOp operation,
                      const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis = 1000);
  Status TransferAsync(const AscendString &remote_engine, TransferOp operation,
                       const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                       TransferReq &req);
  Status GetTransferStatus(const TransferReq &req, TransferStatus &status);

  Status SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis = 1000);
  Status GetNotifies(std::vector<NotifyDesc> &notifies);

  // ACL virtual-memory allocations (fabric memory), and their export for other processes
  static Status MallocMem(MemType type, size_t size, void **ptr);
  // After 9.1.0 only (hicann/hixl 6d1c2b6): the 9.1.0 install root's libllm_datadist.so has no
  // definition (sim/README.md, "Release profiles"). A program meant for both releases declares it
  // weak and tests its address, as Mooncake's adxl_compat.h does: define ACLSIM_ADXL_AFTER_9_1 as
  // __attribute__((weak)) before including this header.
  ACLSIM_ADXL_AFTER_9_1 static Status ExportToShareableHandle(void *addr, ShareableHandle &handle);
  static Status FreeMem(void *ptr);

  // value: FEATURE_SUPPORTED or FEATURE_NOT_SUPPORTED (also for features it does not know)
  static Status GetCapability(FeatureType feature_type, int32_t &value);

 private:
  class AdxlEngineImpl;
  std::unique_ptr<AdxlEngineImpl> impl_;
};
}  // namespace adxl

#endif  // ACLSIM_ADXL_ADXL_ENGINE_H_
