// The simulator's stand-ins for other vendor libraries (sim/src/standins), through their headers:
// rtPointerGetAttributes (libruntime.so), hccl::MemMappingManager (libhccl.so, declared here as
// its callers declare it), the log library (libascendalog.so), and
// hixl::FabricMemTransferService::MallocMem/FreeMem (libcann_hixl.so).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "acl/acl.h"
#include "base/err_msg.h"
#include "check.h"
#include "dlog_pub.h"
#include "fabric_mem/fabric_mem_transfer_service.h"
#include "hccl/hccl_types.h"
#include "runtime/mem.h"

namespace hccl {
class MemMappingManager {
 public:
  static MemMappingManager &GetInstance(int deviceLogicID);
  HcclResult GetDevVA(int deviceLogicID, void *addr, unsigned long long size, void *&devVA);
  HcclResult ReleaseDevVA(int deviceLogicID, void *addr, unsigned long long size);
};
}  // namespace hccl

static void pointer_attributes() {
  rtPointerAttributes_t a{};
  void *dev = nullptr, *host = nullptr;
  EXPECT_EQ(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_ONLY), 0);
  EXPECT_EQ(rtPointerGetAttributes(&a, static_cast<char *>(dev) + 100), 0);
  EXPECT_EQ(a.memoryType, RT_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(a.locationType, RT_MEMORY_LOC_DEVICE);
  EXPECT_EQ(a.deviceID, 1);
  EXPECT_EQ(a.pageSize, 2 * 1024 * 1024);
  EXPECT_EQ(aclrtMallocHost(&host, 4096), 0);
  EXPECT_EQ(rtPointerGetAttributes(&a, host), 0);
  EXPECT_EQ(a.memoryType, RT_MEMORY_TYPE_HOST);
  EXPECT_EQ(a.locationType, RT_MEMORY_LOC_HOST);
  void *user = std::malloc(64);
  EXPECT_EQ(rtPointerGetAttributes(&a, user), 0);
  EXPECT_EQ(a.memoryType, RT_MEMORY_TYPE_USER);
  EXPECT_EQ(a.locationType, RT_MEMORY_LOC_UNREGISTERED);
  EXPECT_EQ(rtPointerGetAttributes(nullptr, user), 107000);
  EXPECT_EQ(rtPointerGetAttributes(&a, nullptr), 107000);
  std::free(user);
  EXPECT_EQ(aclrtFreeHost(host), 0);
  EXPECT_EQ(aclrtFree(dev), 0);
}

static void mem_mapping() {
  static char buf[8192];
  auto &mgr = hccl::MemMappingManager::GetInstance(1);
  EXPECT_TRUE(&mgr == &hccl::MemMappingManager::GetInstance(1));
  EXPECT_TRUE(&hccl::MemMappingManager::GetInstance(999) == &hccl::MemMappingManager::GetInstance(0));
  void *va = nullptr;
  EXPECT_EQ(mgr.GetDevVA(1, buf, sizeof buf, va), HCCL_SUCCESS);
  EXPECT_TRUE(va != nullptr);
  void *inner = nullptr;
  EXPECT_EQ(mgr.GetDevVA(1, buf + 100, 10, inner), HCCL_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(inner), reinterpret_cast<uintptr_t>(va) + 100);
  EXPECT_EQ(mgr.GetDevVA(1, nullptr, 10, inner), HCCL_E_PARA);
  EXPECT_EQ(mgr.ReleaseDevVA(1, buf + 100, 10), HCCL_SUCCESS);
  EXPECT_EQ(mgr.ReleaseDevVA(1, buf, sizeof buf), HCCL_SUCCESS);
  EXPECT_EQ(mgr.ReleaseDevVA(1, buf, sizeof buf), HCCL_E_PARA);  // the last reference is gone
}

static void logging() {
  EXPECT_EQ(dlog_getlevel(GE, nullptr), DLOG_ERROR);
  EXPECT_EQ(CheckLogLevel(GE, DLOG_INFO), 0);
  EXPECT_EQ(CheckLogLevel(GE, DLOG_ERROR), 1);
  EXPECT_EQ(dlog_setlevel(GE, DLOG_INFO, 1), 0);
  EXPECT_EQ(CheckLogLevel(GE, DLOG_INFO), 1);
  EXPECT_EQ(dlog_setlevel(GE, 9, 1), -1);
  DlogRecord(GE, DLOG_INFO, "standin-log %d", 42);
  DlogFlush();
  REPORT_INNER_ERR_MSG("E19999", "standin-report %s", "x");
  EXPECT_EQ(error_message::ReportUserDefinedErrMsg("E10001", "user %d", 1), 0);
}

static void fabric_mem() {
  void *p = nullptr;
  EXPECT_EQ(hixl::FabricMemTransferService::MallocMem(hixl::MEM_DEVICE, 2 * 1024 * 1024, &p), hixl::SUCCESS);
  rtPointerAttributes_t a{};
  EXPECT_EQ(rtPointerGetAttributes(&a, p), 0);
  EXPECT_EQ(a.memoryType, RT_MEMORY_TYPE_DEVICE);
  std::memset(p, 7, 16);  // the simulator's device memory is host memory of the process
  EXPECT_EQ(hixl::FabricMemTransferService::FreeMem(p), hixl::SUCCESS);
  EXPECT_EQ(hixl::FabricMemTransferService::FreeMem(p), hixl::FAILED);
  void *h = nullptr;
  EXPECT_EQ(hixl::FabricMemTransferService::MallocMem(hixl::MEM_HOST, 1024U * 1024U * 1024U, &h), hixl::SUCCESS);
  EXPECT_EQ(hixl::FabricMemTransferService::FreeMem(h), hixl::SUCCESS);
  EXPECT_EQ(hixl::FabricMemTransferService::MallocMem(hixl::MEM_DEVICE, 0, &p), hixl::PARAM_INVALID);
  EXPECT_EQ(hixl::FabricMemTransferService::FreeMem(nullptr), hixl::PARAM_INVALID);
}

int main() {
  EXPECT_EQ(aclrtSetDevice(1), 0);
  pointer_attributes();
  mem_mapping();
  logging();
  fabric_mem();
  return CHECK_DONE();
}
