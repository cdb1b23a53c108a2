// hixl_cs's endpoints and its host-memory proxy in the simulator (libcann_hixl.so), after the
// vendor's src/hixl/cs/endpoint.cc, host_register_proxy.cc and hixl_cs_server.cc: which
// endpoints map host memory for the device, and the ref-counted aclrtHostRegister behind it.
#ifndef ACLSIM_SRC_HIXL_HOST_REG_H_
#define ACLSIM_SRC_HIXL_HOST_REG_H_

#include <cstdint>

#include "hcomm/hcomm_res_defs.h"

namespace aclsim __attribute__((visibility("hidden"))) {

// UB protocols (hixl_cs_server.cc IsUbEndpoint): UBC_TP, UBC_CTP.
bool IsUbEndpoint(const EndpointDesc &ep);
// An endpoint created alone (the server's, endpoint.cc IsDefaultHostVaMappingEnabled): on the
// device over UBOE, UB_RTP (UBG) or UBC_CTP.
bool DefaultHostVaMapping(const EndpointDesc &ep);
// The client's local endpoint (endpoint.cc IsHostVaMappingEnabledForPair): the default, except
// that UBC_CTP maps only toward a device endpoint.
bool PairHostVaMapping(const EndpointDesc &local, const EndpointDesc &remote);
// The server's endpoints (hixl_cs_server.cc NeedServerHostVaMapping): device UBOE and UB_RTP
// always, device UBC_CTP only when every UBC_CTP endpoint of the list is on the device.
bool ServerHostVaMapping(const EndpointDesc &ep, bool ub_ctp_all_device);
bool UbCtpEndpointsAllDevice(const EndpointDesc *list, uint32_t num);

// HostRegisterProxy::RegisterByDev: per physical device and host address, ref-counted. The
// first registration calls aclrtHostRegister(host, size, ACL_HOST_REGISTER_MAPPED, &dev)
// through the PLT (its error code is returned as is); the same address again with the same
// size adds a reference and gives the same device address; with another size PARAM_INVALID.
// NULL host or a device id above INT32_MAX: PARAM_INVALID.
uint32_t HostProxyRegister(uint32_t dev_phy_id, void *host, uint64_t size, uintptr_t &dev);
// HostRegisterProxy::UnregisterByDev: drops a reference; the last one calls
// aclrtHostUnregister (its error code is returned as is). An unknown address: SUCCESS.
uint32_t HostProxyUnregister(uint32_t dev_phy_id, void *host);

}  // namespace aclsim

#endif  // ACLSIM_SRC_HIXL_HOST_REG_H_
