// The engines behind the simulator's hixl::Hixl, one per initialised instance, selected per
// configuration as the vendor's engine factory does (comm, hixl_cs, fabric memory). Each engine
// that has a port listens on its `ip:port` and serves its peers' requests on its own threads.
#ifndef ACLSIM_SRC_HIXL_ENGINE_H_
#define ACLSIM_SRC_HIXL_ENGINE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hixl_common.h"
#include "hixl_net.h"

namespace aclsim __attribute__((visibility("hidden"))) {

enum class EngineKind : uint32_t { kComm = 1, kHixlCs = 2, kFabric = 3 };
const char *KindName(EngineKind kind);

// What Initialize's options say, parsed the vendor's way (hixl_options.cpp).
struct EngineOptions {
  std::map<std::string, std::string> raw;
  bool fabric = false;                // EnableUseFabricMem=1
  bool has_local_comm_res = false;    // LocalCommRes (or its adxl spelling) non-empty
  std::string local_comm_res_version;  // its JSON "version"
  bool protocol_desc = false;         // comm_resource_config.protocol_desc non-empty
  std::vector<std::string> protocols;
  bool has_buffer_pool = false;
  std::string buffer_pool;
  bool auto_connect = false;
};

// PARAM_INVALID when an option cannot be parsed (the vendor's factory then makes no engine).
uint32_t ParseEngineOptions(const std::map<std::string, std::string> &raw, EngineOptions &out);
// The engine the vendor's factory selects for these options on this SoC.
EngineKind SelectEngine(const EngineOptions &o);
// The engine's own option checks at Initialize: supported keys, BufferPool.
// Fills the pool geometry (0 buffers: no pool).
uint32_t CheckEngineOptions(EngineKind kind, const EngineOptions &o, uint64_t &pool_bytes);

struct XferOp {
  uintptr_t local;
  uintptr_t remote;
  size_t len;
};

// The engine state of one initialised hixl::Hixl.
class Engine {
 public:
  explicit Engine(std::string name) : name_(std::move(name)) {}
  ~Engine() { Finalize(); }
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  uint32_t Initialize(const std::map<std::string, std::string> &options);
  void Finalize();
  bool Initialized();
  EngineKind Kind() const { return kind_; }
  const std::string &Name() const { return name_; }

  uint32_t RegisterMem(uintptr_t addr, size_t len, int type, void *&handle);
  uint32_t DeregisterMem(void *handle);
  uint32_t Connect(const std::string &remote, int timeout_ms);
  uint32_t Disconnect(const std::string &remote);
  // ConnectAsync (connect) or DisconnectAsync: queued for the workers.
  uint32_t Submit(bool connect, const std::string &remote, int timeout_ms);
  // NOT_CONNECT (0) when nothing was submitted for `remote`.
  int AsyncStatus(const std::string &remote);
  std::map<std::string, int> AsyncStatuses();

  uint32_t TransferSync(const std::string &remote, int op, const std::vector<XferOp> &ops, int timeout_ms);
  uint32_t TransferAsync(const std::string &remote, int op, const std::vector<XferOp> &ops, const void *user_data,
                         void *&req);
  // `status`: TransferStatus value (1 COMPLETED, 3 FAILED).
  uint32_t TransferStatusOf(void *req, int &status);
  struct Result {
    void *req;
    const void *user_data;
    int status;
  };
  uint32_t TransferStatuses(uint32_t max_count, std::vector<Result> &out);

  uint32_t SendNotify(const std::string &remote, const std::string &name, const std::string &msg, int timeout_ms);
  uint32_t GetNotifies(std::vector<std::pair<std::string, std::string>> &out);

 private:
  struct Peer {
    std::string name;
    EngineKind kind = EngineKind::kComm;
    std::unique_ptr<Link> link;
    RegTable regs;  // the peer's registrations when the link was made
  };
  struct AsyncReq {
    const void *user_data;
    int status;
    uint32_t code;
    std::string remote;
  };
  struct Task {
    bool connect;
    std::string remote;
    int timeout_ms;
  };

  // The comm engine's registration with HCCL's global memory (ChannelMsgHandler::RegisterMem /
  // DeregisterMem): HCCL's code mapped as ConvertCommErrorToAdxlStatus does.
  uint32_t HcclRegister(uintptr_t addr, size_t len, int type, void *&handle);
  uint32_t HcclDeregister(void *handle);
  uint32_t Serve(Service::Conn &conn, const WireReq &req, const std::string &payload, std::string &rsp);
  std::shared_ptr<Peer> FindPeer(const std::string &remote);
  // Checks the ops and decides direct or staged; returns SUCCESS or the vendor's code.
  uint32_t Plan(const Peer &peer, int op, const std::vector<XferOp> &ops, bool async, bool &staged);
  uint32_t PlanFabric(const Peer &peer, const std::vector<XferOp> &ops);  // with mu_ held
  // The checks of both transfer calls, then the transfer: returns the checks' code and puts
  // the transfer's in `moved`.
  uint32_t Transfer(const std::string &remote, int op, const std::vector<XferOp> &ops, bool async, int timeout_ms,
                    uint32_t &moved);
  uint32_t Move(Peer &peer, int op, const std::vector<XferOp> &ops, bool staged, int timeout_ms);
  void StartWorkers();  // with mu_ held
  void Worker();
  void SetAsync(const std::string &remote, int status);

  const std::string name_;
  EngineKind kind_ = EngineKind::kComm;
  std::mutex mu_;
  bool initialized_ = false;
  bool listening_ = false;
  bool auto_connect_ = false;  // AutoConnect=1: transfers link (and unlink on failure) by themselves
  RegTable regs_;
  // The comm engine: the HCCL handles it was given (the vendor's handle_to_addr_; a handle whose
  // HCCL deregistration failed stays, its range gone from regs_, as in the vendor's)
  std::set<void *> hccl_handles_;
  std::map<std::string, std::shared_ptr<Peer>> links_;  // outgoing, by remote name
  std::vector<std::pair<std::string, std::string>> inbox_;
  std::map<void *, AsyncReq> reqs_;
  uint64_t pool_bytes_ = 0;
  std::vector<void *> pool_mem_;
  void *ctx_ = nullptr;
  Service service_;

  // ConnectAsync / DisconnectAsync: two workers, a bounded queue, statuses as submitted
  std::condition_variable task_cv_;
  std::deque<Task> tasks_;
  std::set<std::string> doing_;
  std::map<std::string, int> async_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace aclsim

#endif  // ACLSIM_SRC_HIXL_ENGINE_H_
