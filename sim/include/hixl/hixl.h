/*
 * hixl/hixl.h - class hixl::Hixl as exported by libcann_hixl.so (the vendor's documented interface),
 * written for the regcheck simulator. Non-virtual members; one std::unique_ptr member.
 */
#ifndef ACLSIM_HIXL_HIXL_H_
#define ACLSIM_HIXL_HIXL_H_

#include <map>
#include <memory>
#include <vector>

#include "hixl_types.h"

namespace hixl {
class ASCEND_FUNC_VISIBILITY Hixl {
 public:
  Hixl();
  ~Hixl();

  Status Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options);
  void Finalize();

  Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle);
  Status DeregisterMem(MemHandle mem_handle);

  Status Connect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);
  Status Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);
  Status ConnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);
  Status DisconnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);
  Status GetAsyncConnectStatus(const AscendString &remote_engine, AsyncConnectStatus &status);
  Status GetAsyncConnectStatus(std::map<AscendString, AsyncConnectStatus> &statuses);

  Status TransferSync(const AscendString &remote_engine, TransferOp operation,
                      const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis = 1000);
  Status TransferAsync(const AscendString &remote_engine, TransferOp operation,
                       const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                       TransferReq &req);
  Status GetTransferStatus(const TransferReq &req, TransferStatus &status);
  Status GetTransferStatus(const GetTransferStatusArgs &args, std::vector<TransferResult> &results);

  Status SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis = 1000);
  Status GetNotifies(std::vector<NotifyDesc> &notifies);

  static Status GetCapability(FeatureType feature_type, int32_t &value);

 private:
  class HixlImpl;
  std::unique_ptr<HixlImpl> impl_;
};
}  // namespace hixl

#endif  // ACLSIM_HIXL_HIXL_H_
