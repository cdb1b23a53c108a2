// hixl_cs's endpoint rules and host-memory proxy (see hixl_host_reg.h).
#include "hixl_host_reg.h"

#include <climits>
#include <map>
#include <mutex>
#include <utility>

#include "acl/acl.h"
#include "hixl/hixl_types.h"
#include "hixl_common.h"

namespace aclsim {

namespace {

bool OnDevice(const EndpointDesc &ep) { return ep.loc.locType == ENDPOINT_LOC_TYPE_DEVICE; }

struct Mapped {
  uint64_t size;
  uintptr_t dev;
  int refs;
};

std::mutex &ProxyMutex() {
  static std::mutex *m = new std::mutex;  // never destroyed
  return *m;
}
// (device, host address) -> mapping
std::map<std::pair<uint32_t, uintptr_t>, Mapped> &Proxy() {
  static auto *m = new std::map<std::pair<uint32_t, uintptr_t>, Mapped>;
  return *m;
}

}  // namespace

bool IsUbEndpoint(const EndpointDesc &ep) {
  return ep.protocol == COMM_PROTOCOL_UBC_TP || ep.protocol == COMM_PROTOCOL_UBC_CTP;
}

// UBG (UB_RTP) maps host memory after 9.1 only (tag v9.1.0's endpoint.cc and hixl_cs_server.cc
// name UBOE and UBC_CTP).
bool UbgMaps(const EndpointDesc &ep) { return ep.protocol == COMM_PROTOCOL_UBG && ReleaseAfter91(); }

bool DefaultHostVaMapping(const EndpointDesc &ep) {
  return OnDevice(ep) && (ep.protocol == COMM_PROTOCOL_UBOE || UbgMaps(ep) || ep.protocol == COMM_PROTOCOL_UBC_CTP);
}

bool PairHostVaMapping(const EndpointDesc &local, const EndpointDesc &remote) {
  if (!DefaultHostVaMapping(local)) return false;
  return local.protocol != COMM_PROTOCOL_UBC_CTP || OnDevice(remote);
}

bool ServerHostVaMapping(const EndpointDesc &ep, bool ub_ctp_all_device) {
  if (!OnDevice(ep)) return false;
  return ep.protocol == COMM_PROTOCOL_UBOE || UbgMaps(ep) || (ub_ctp_all_device && ep.protocol == COMM_PROTOCOL_UBC_CTP);
}

bool UbCtpEndpointsAllDevice(const EndpointDesc *list, uint32_t num) {
  for (uint32_t i = 0; i < num; i++)
    if (list[i].protocol == COMM_PROTOCOL_UBC_CTP && !OnDevice(list[i])) return false;
  return true;
}

uint32_t HostProxyRegister(uint32_t dev_phy_id, void *host, uint64_t size, uintptr_t &dev) {
  if (dev_phy_id > static_cast<uint32_t>(INT32_MAX) || host == nullptr) return hixl::PARAM_INVALID;
  std::lock_guard<std::mutex> g(ProxyMutex());
  auto key = std::make_pair(dev_phy_id, reinterpret_cast<uintptr_t>(host));
  auto it = Proxy().find(key);
  if (it != Proxy().end()) {
    if (it->second.size != size) return hixl::PARAM_INVALID;  // already registered with another size
    it->second.refs++;
    dev = it->second.dev;
    return hixl::SUCCESS;
  }
  void *dev_ptr = nullptr;
  aclError rc = aclrtHostRegister(host, size, ACL_HOST_REGISTER_MAPPED, &dev_ptr);
  if (rc != ACL_SUCCESS) return static_cast<uint32_t>(rc);
  Proxy()[key] = Mapped{size, reinterpret_cast<uintptr_t>(dev_ptr), 1};
  dev = reinterpret_cast<uintptr_t>(dev_ptr);
  return hixl::SUCCESS;
}

uint32_t HostProxyUnregister(uint32_t dev_phy_id, void *host) {
  if (dev_phy_id > static_cast<uint32_t>(INT32_MAX) || host == nullptr) return hixl::PARAM_INVALID;
  std::lock_guard<std::mutex> g(ProxyMutex());
  auto it = Proxy().find(std::make_pair(dev_phy_id, reinterpret_cast<uintptr_t>(host)));
  if (it == Proxy().end()) return hixl::SUCCESS;  // not registered: nothing to do
  if (--it->second.refs > 0) return hixl::SUCCESS;
  aclError rc = aclrtHostUnregister(host);
  if (rc != ACL_SUCCESS) return static_cast<uint32_t>(rc);
  Proxy().erase(it);
  return hixl::SUCCESS;
}

}  // namespace aclsim
