// Helpers for the simulator's HIXL test programs: engine names, a port nobody listens on, bounded
// waits (ports for engines: aclsimClaimPort, aclsim_port.h).
#ifndef ACLSIM_TESTS_HIXL_TEST_UTIL_H_
#define ACLSIM_TESTS_HIXL_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "aclsim_port.h"

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
