// The simulator's HIXL transport: TCP between engines (and between HixlCS clients and servers),
// in one process or across processes. A listening side runs a service thread per connection
// that answers the peer's requests itself (one-sided transfers: the application threads of the
// serving process take no part).
#ifndef ACLSIM_SRC_HIXL_NET_H_
#define ACLSIM_SRC_HIXL_NET_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace aclsim __attribute__((visibility("hidden"))) {

// Requests. A request is a WireReq and `len` payload bytes; the answer a WireRsp and `len` bytes.
enum WireOp : uint32_t {
  kOpHello = 1,  // payload: the caller's name; answer: the server's kind (u32) and registrations
  kOpRegs = 2,   // answer: the registrations
  kOpRead = 3,   // a = address, b = length; answer: the bytes
  kOpWrite = 4,  // a = address, b = length, payload: the bytes
  kOpNotify = 5, // payload: name, NUL, message
};
// flags: the range need not be registered (the comm engine's staging through its buffer pool)
constexpr uint32_t kWireStaged = 1;

struct WireReq {
  uint32_t op;
  uint32_t flags;
  uint64_t a;
  uint64_t b;
  uint64_t len;
};
struct WireRsp {
  uint32_t status;
  uint32_t pad;
  uint64_t len;
};

// Connects to ip:port within `timeout_ms`: SUCCESS; FAILED as soon as the connection is refused
// (or the address cannot be reached); TIMEOUT when nobody answered within the timeout.
uint32_t ConnectTo(const std::string &ip, int port, int timeout_ms, int &fd);

// The client side of one connection: one request at a time. A transport failure (peer gone,
// no answer within the timeout) breaks the link for good: later calls fail at once.
class Link {
 public:
  explicit Link(int fd) : fd_(fd) {}
  ~Link();
  Link(const Link &) = delete;
  Link &operator=(const Link &) = delete;

  // One round trip. Returns SUCCESS (then `status` is the peer's answer and `rsp` its payload),
  // FAILED (connection lost) or TIMEOUT (no answer in time).
  uint32_t Call(const WireReq &req, const void *payload, int timeout_ms, uint32_t &status, std::string &rsp);
  bool Broken();
  // Closes the connection (the peer sees it at once).
  void Close();

 private:
  std::mutex mu_;
  int fd_;
  bool broken_ = false;
};

// The serving side: a listening socket, an accept thread and one thread per connection.
class Service {
 public:
  struct Conn {
    int fd = -1;
    std::string peer;  // the name the peer gave in its hello
  };
  // Answers one request: returns the status for the peer, fills `rsp`.
  using Handler = std::function<uint32_t(Conn &, const WireReq &, const std::string &payload, std::string &rsp)>;

  Service() = default;
  ~Service() { Stop(); }
  Service(const Service &) = delete;
  Service &operator=(const Service &) = delete;

  // Binds (SO_REUSEADDR) and listens on ip:port; SUCCESS, or FAILED (address in use, not local...).
  uint32_t Listen(const std::string &ip, int port, int backlog);
  // Starts serving (after Listen).
  void Start(Handler handler);
  bool Listening() const { return listen_fd_ >= 0; }
  // Stops accepting, drops every connection, joins every thread. Idempotent. Must not be called
  // with a lock the handler takes.
  void Stop();

 private:
  void AcceptLoop();
  void Serve(uint64_t id, int fd);
  // Joins the connection threads that have ended (their stacks go back to the system).
  void ReapFinished();

  int listen_fd_ = -1;
  Handler handler_;
  std::thread acceptor_;
  std::mutex mu_;
  bool stopping_ = false;
  std::set<int> fds_;
  // One thread per accepted connection, by a number of their own; those that ended are listed
  // in finished_ until joined (an ended thread keeps its stack until it is joined).
  std::map<uint64_t, std::thread> threads_;
  std::vector<uint64_t> finished_;
  uint64_t next_id_ = 0;
};

}  // namespace aclsim

#endif  // ACLSIM_SRC_HIXL_NET_H_
