// Helpers for the simulator's HIXL test programs: free local ports, engine names, bounded waits.
#ifndef ACLSIM_TESTS_HIXL_TEST_UTIL_H_
#define ACLSIM_TESTS_HIXL_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <string>

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released), and
// not one this process was given before: the system may hand a released port out again at the
// next bind to port 0, and two engines of one program must not get the same port.
static inline int FreePort() {
  static std::mutex mu;
  static std::set<int> given;
  std::lock_guard<std::mutex> g(mu);
  for (int attempt = 0; attempt < 100; attempt++) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, reinterpret_cast<struct sockaddr *>(&a), sizeof a) != 0 ||
        getsockname(s, reinterpret_cast<struct sockaddr *>(&a), &len) != 0) {
      perror("FreePort");
      if (s >= 0) close(s);
      return -1;
    }
    close(s);
    if (given.insert(ntohs(a.sin_port)).second) return ntohs(a.sin_port);
  }
  return -1;
}

// A TCP port on 127.0.0.1 where nobody listens, for the rest of the process: a socket bound to
// it and never listening holds it, so connections are refused and no engine (of this process or
// another) can take it.
static inline int RefusingPort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || bind(s, reinterpret_cast<struct sockaddr *>(&a), sizeof a) != 0 ||
      getsockname(s, reinterpret_cast<struct sockaddr *>(&a), &len) != 0) {
    perror("RefusingPort");
    return -1;
  }
  return ntohs(a.sin_port);  // the socket stays open until the process ends
}

static inline std::string EngineName(int port) { return "127.0.0.1:" + std::to_string(port); }

static inline long long MonoMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

#endif  // ACLSIM_TESTS_HIXL_TEST_UTIL_H_
