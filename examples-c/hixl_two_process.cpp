// hixl_two_process: the classic cross-process HIXL failure, in two processes.
//
// A server process registers a buffer, a client process connects to it and READs it: that
// works. Then the server registers a second buffer, *after* the client's link was made, and
// tells the client its address. The link only knows the registrations the server had when it
// was made: the client's READ of the second buffer fails, in the client process, with a bare
// status code, far from the server's call that caused it.
//
// Under regcheck the mistake is named in the server process, at the RegisterMem that comes
// too late, with the fix (register everything before peers connect).
//
//   ./hixl_two_process
//   LD_PRELOAD=target/release/libregcheck.so ./hixl_two_process
//
// One binary: the process forks the server. Both use the vendor's recommended options (the
// hixl_cs engine, `comm_resource_config.protocol_desc`). Every wait is bounded.
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclsim_port.h"
#include "hixl/hixl.h"

namespace {

const size_t kLen = 64 * 1024;
const int kWaitMs = 10000;

using Options = std::map<hixl::AscendString, hixl::AscendString>;

// One message through a pipe: a tag and a value, waited for at most kWaitMs.
struct Msg {
  char tag[16];
  uint64_t value;
};

bool Send(int fd, const char *tag, uint64_t value) {
  Msg m{};
  snprintf(m.tag, sizeof m.tag, "%s", tag);
  m.value = value;
  return write(fd, &m, sizeof m) == static_cast<ssize_t>(sizeof m);
}

bool Receive(int fd, const char *tag, uint64_t *value) {
  struct pollfd p = {fd, POLLIN, 0};
  Msg m{};
  if (poll(&p, 1, kWaitMs) != 1 || read(fd, &m, sizeof m) != static_cast<ssize_t>(sizeof m)) return false;
  if (strncmp(m.tag, tag, sizeof m.tag) != 0) return false;
  *value = m.value;
  return true;
}

Options HixlCsOptions() {
  Options o;
  o[hixl::OPTION_GLOBAL_RESOURCE_CONFIG] = R"({"comm_resource_config.protocol_desc": ["roce:device"]})";
  return o;
}

void *DeviceBuffer(uint8_t fill) {
  void *p = nullptr;
  if (aclrtMalloc(&p, kLen, ACL_MEM_MALLOC_HUGE_ONLY) != 0) return nullptr;
  std::vector<uint8_t> bytes(kLen, fill);
  if (aclrtMemcpy(p, kLen, bytes.data(), kLen, ACL_MEMCPY_HOST_TO_DEVICE) != 0) return nullptr;
  return p;
}

hixl::MemHandle Register(hixl::Hixl &h, void *p, const char *what) {
  hixl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(p);
  mem.len = kLen;
  hixl::MemHandle handle = nullptr;
  uint32_t rc = h.RegisterMem(mem, hixl::MEM_DEVICE, handle);
  printf("server: RegisterMem(%s) -> %u\n", what, rc);
  return rc == 0 ? handle : nullptr;
}

// The server: registers `first`, lets the client link, then registers `late`.
int Server(const std::string &name, int in, int out) {
  if (aclrtSetDevice(0) != 0) return 10;
  hixl::Hixl server;
  uint32_t rc = server.Initialize(name.c_str(), HixlCsOptions());
  printf("server: Initialize(\"%s\") -> %u\n", name.c_str(), rc);
  if (rc != 0) return 11;
  void *first = DeviceBuffer(0x11), *late = DeviceBuffer(0x22);
  if (first == nullptr || late == nullptr) return 12;
  hixl::MemHandle h1 = Register(server, first, "first buffer, before the client links");
  if (h1 == nullptr || !Send(out, "first", reinterpret_cast<uintptr_t>(first))) return 13;
  uint64_t unused = 0;
  if (!Receive(in, "linked", &unused)) return 14;
  // The mistake: the client's link exists already and will never learn of this region.
  hixl::MemHandle h2 = Register(server, late, "second buffer, after the client linked");
  if (!Send(out, "late", reinterpret_cast<uintptr_t>(late))) return 15;
  if (!Receive(in, "done", &unused)) return 16;
  if (h2 != nullptr) server.DeregisterMem(h2);
  server.DeregisterMem(h1);
  server.Finalize();
  return 0;
}

// The client: links to the server and READs both buffers.
int Client(const std::string &name, const std::string &server, int in, int out) {
  if (aclrtSetDevice(0) != 0) return 20;
  hixl::Hixl client;
  uint32_t rc = client.Initialize(name.c_str(), HixlCsOptions());
  printf("client: Initialize(\"%s\") -> %u\n", name.c_str(), rc);
  if (rc != 0) return 21;
  void *local = nullptr;
  if (aclrtMalloc(&local, kLen, ACL_MEM_MALLOC_HUGE_ONLY) != 0) return 22;
  hixl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(local);
  mem.len = kLen;
  hixl::MemHandle handle = nullptr;
  if (client.RegisterMem(mem, hixl::MEM_DEVICE, handle) != 0) return 23;
  uint64_t first = 0, late = 0;
  if (!Receive(in, "first", &first)) return 24;
  rc = client.Connect(server.c_str(), kWaitMs);
  printf("client: Connect(\"%s\") -> %u\n", server.c_str(), rc);
  if (rc != 0 || !Send(out, "linked", 0)) return 25;
  std::vector<hixl::TransferOpDesc> op = {{reinterpret_cast<uintptr_t>(local), first, kLen}};
  rc = client.TransferSync(server.c_str(), hixl::READ, op, kWaitMs);
  printf("client: TransferSync(READ the first buffer) -> %u\n", rc);
  int result = rc == 0 ? 0 : 26;
  if (!Receive(in, "late", &late)) return 27;
  op[0].remote_addr = late;
  rc = client.TransferSync(server.c_str(), hixl::READ, op, kWaitMs);
  printf("client: TransferSync(READ the second buffer) -> %u%s\n", rc,
         rc == 0 ? "" : "   <- fails here, in the client; the cause is in the server");
  client.Disconnect(server.c_str(), kWaitMs);
  Send(out, "done", 0);
  client.DeregisterMem(handle);
  client.Finalize();
  return result;
}

}  // namespace

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  alarm(60);  // nothing here may hang
  int server_port = aclsimClaimPort(), client_port = aclsimClaimPort();
  if (server_port < 0 || client_port < 0) return 2;
  std::string server = "127.0.0.1:" + std::to_string(server_port);
  std::string client = "127.0.0.1:" + std::to_string(client_port);
  int to_server[2], to_client[2];
  if (pipe(to_server) != 0 || pipe(to_client) != 0) return 2;
  if (aclInit(nullptr) != 0) return 2;
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    int rc = Server(server, to_server[0], to_client[1]);
    fflush(stdout);
    _exit(rc);
  }
  int rc = Client(client, server, to_client[0], to_server[1]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 2;
  int server_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  printf("hixl_two_process: client %d, server %d: %s\n", rc, server_rc,
         rc == 0 && server_rc == 0 ? "OK" : "FAILED");
  return rc == 0 && server_rc == 0 ? 0 : 1;
}
