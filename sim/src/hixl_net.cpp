// The simulator's HIXL transport (see hixl_net.h).
#include "hixl_net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "hixl_common.h"

namespace aclsim {

namespace {

constexpr int kTickMs = 100;         // how often a blocked service thread looks at `stopping_`
constexpr int kPayloadWaitMs = 10000;  // a request's payload must follow its header within this

// Waits until `fd` is ready for `events` or the deadline passes (deadline < 0: no deadline).
// Returns 1 ready, 0 timed out, -1 error.
int WaitFd(int fd, short events, int64_t deadline) {
  for (;;) {
    int wait = -1;
    if (deadline >= 0) {
      int64_t left = deadline - NowMs();
      if (left <= 0) return 0;
      wait = left > 1000000 ? 1000000 : static_cast<int>(left);
    }
    struct pollfd p {
      fd, events, 0
    };
    int rc = poll(&p, 1, wait);
    if (rc > 0) return 1;
    if (rc == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

uint32_t SendAll(int fd, const void *data, size_t n, int64_t deadline) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int w = WaitFd(fd, POLLOUT, deadline);
      if (w == 0) return hixl::TIMEOUT;
      if (w < 0) return hixl::FAILED;
      continue;
    }
    return hixl::FAILED;
  }
  return hixl::SUCCESS;
}

uint32_t RecvAll(int fd, void *data, size_t n, int64_t deadline) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k == 0) return hixl::FAILED;  // the peer closed the connection
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int w = WaitFd(fd, POLLIN, deadline);
      if (w == 0) return hixl::TIMEOUT;
      if (w < 0) return hixl::FAILED;
      continue;
    }
    return hixl::FAILED;
  }
  return hixl::SUCCESS;
}

void TuneSocket(int fd) {
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int fl = fcntl(fd, F_GETFD);
  if (fl >= 0) (void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

}  // namespace

uint32_t ConnectTo(const std::string &ip, int port, int timeout_ms, int &fd) {
  const int64_t deadline = NowMs() + timeout_ms;
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  struct addrinfo *res = nullptr;
  std::string port_str = std::to_string(port);
  if (getaddrinfo(ip.c_str(), port_str.c_str(), &hints, &res) != 0 || res == nullptr) return hixl::PARAM_INVALID;
  uint32_t rc = hixl::FAILED;
  for (struct addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0) continue;
    int fl = fcntl(s, F_GETFL);
    (void)fcntl(s, F_SETFL, fl | O_NONBLOCK);
    int c = connect(s, ai->ai_addr, ai->ai_addrlen);
    if (c != 0 && errno == EINPROGRESS) {
      int w = WaitFd(s, POLLOUT, deadline);
      if (w == 0) {
        close(s);
        rc = hixl::TIMEOUT;
        break;
      }
      int err = 0;
      socklen_t len = sizeof err;
      if (w < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = EIO;
      c = err == 0 ? 0 : -1;
    }
    if (c == 0) {
      TuneSocket(s);
      fd = s;
      rc = hixl::SUCCESS;
      break;
    }
    close(s);
    rc = NowMs() >= deadline ? hixl::TIMEOUT : hixl::FAILED;
  }
  freeaddrinfo(res);
  return rc;
}

Link::~Link() { Close(); }

bool Link::Broken() {
  std::lock_guard<std::mutex> g(mu_);
  return broken_ || fd_ < 0;
}

void Link::Close() {
  std::lock_guard<std::mutex> g(mu_);
  if (fd_ >= 0) {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    fd_ = -1;
  }
  broken_ = true;
}

uint32_t Link::Call(const WireReq &req, const void *payload, int timeout_ms, uint32_t &status, std::string &rsp) {
  std::lock_guard<std::mutex> g(mu_);
  if (broken_ || fd_ < 0) return hixl::FAILED;
  const int64_t deadline = NowMs() + (timeout_ms > 0 ? timeout_ms : 1);
  uint32_t rc = SendAll(fd_, &req, sizeof req, deadline);
  if (rc == hixl::SUCCESS && req.len > 0) rc = SendAll(fd_, payload, req.len, deadline);
  WireRsp r{};
  if (rc == hixl::SUCCESS) rc = RecvAll(fd_, &r, sizeof r, deadline);
  if (rc == hixl::SUCCESS) {
    try {
      rsp.resize(r.len);
    } catch (...) {
      rc = hixl::FAILED;
    }
    if (rc == hixl::SUCCESS && r.len > 0) rc = RecvAll(fd_, &rsp[0], r.len, deadline);
  }
  if (rc != hixl::SUCCESS) {
    broken_ = true;  // the stream is out of step (or gone): no later request can use it
    shutdown(fd_, SHUT_RDWR);
    return rc;
  }
  status = r.status;
  return hixl::SUCCESS;
}

uint32_t Service::Listen(const std::string &ip, int port, int backlog) {
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  struct addrinfo *res = nullptr;
  std::string port_str = std::to_string(port);
  if (getaddrinfo(ip.c_str(), port_str.c_str(), &hints, &res) != 0 || res == nullptr) return hixl::FAILED;
  uint32_t rc = hixl::FAILED;
  for (struct addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0) continue;
    int on = 1;
    (void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(s, ai->ai_addr, ai->ai_addrlen) == 0 && listen(s, backlog > 0 ? backlog : 128) == 0) {
      listen_fd_ = s;
      rc = hixl::SUCCESS;
      break;
    }
    close(s);
  }
  freeaddrinfo(res);
  return rc;
}

void Service::Start(Handler handler) {
  handler_ = std::move(handler);
  stopping_ = false;
  acceptor_ = std::thread([this]() { AcceptLoop(); });
}

void Service::AcceptLoop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (stopping_) return;
    }
    ReapFinished();
    int w = WaitFd(listen_fd_, POLLIN, NowMs() + kTickMs);
    if (w <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    TuneSocket(fd);
    std::lock_guard<std::mutex> g(mu_);
    if (stopping_) {
      close(fd);
      return;
    }
    fds_.insert(fd);
    uint64_t id = next_id_++;
    threads_.emplace(id, std::thread([this, id, fd]() { Serve(id, fd); }));
  }
}

void Service::ReapFinished() {
  std::vector<std::thread> done;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (uint64_t id : finished_) {
      auto it = threads_.find(id);
      if (it == threads_.end()) continue;
      done.push_back(std::move(it->second));
      threads_.erase(it);
    }
    finished_.clear();
  }
  for (auto &t : done)
    if (t.joinable()) t.join();  // it has ended, or is returning from Serve
}

void Service::Serve(uint64_t id, int fd) {
  Conn conn;
  conn.fd = fd;
  for (;;) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (stopping_) break;
    }
    int w = WaitFd(fd, POLLIN, NowMs() + kTickMs);
    if (w == 0) continue;
    if (w < 0) break;
    WireReq req{};
    if (RecvAll(fd, &req, sizeof req, NowMs() + kPayloadWaitMs) != hixl::SUCCESS) break;
    std::string payload;
    if (req.len > (1ULL << 34)) break;  // nonsense: drop the peer
    try {
      payload.resize(req.len);
    } catch (...) {
      break;
    }
    if (req.len > 0 && RecvAll(fd, &payload[0], req.len, NowMs() + kPayloadWaitMs) != hixl::SUCCESS) break;
    std::string rsp;
    WireRsp r{};
    r.status = handler_(conn, req, payload, rsp);
    r.len = rsp.size();
    if (SendAll(fd, &r, sizeof r, NowMs() + kPayloadWaitMs) != hixl::SUCCESS) break;
    if (!rsp.empty() && SendAll(fd, rsp.data(), rsp.size(), NowMs() + kPayloadWaitMs) != hixl::SUCCESS) break;
  }
  std::lock_guard<std::mutex> g(mu_);
  fds_.erase(fd);
  shutdown(fd, SHUT_RDWR);
  close(fd);
  finished_.push_back(id);
}

void Service::Stop() {
  std::map<uint64_t, std::thread> threads;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (listen_fd_ < 0 && !acceptor_.joinable()) return;
    stopping_ = true;
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
  }
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> g(mu_);
    threads.swap(threads_);
    finished_.clear();
  }
  for (auto &kv : threads)
    if (kv.second.joinable()) kv.second.join();
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
  }
}

}  // namespace aclsim
