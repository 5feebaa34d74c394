// tessera-gpu-check: runs every tutorial kernel and op case (tests/gpucheck/Cases.h) on the GPU and on the
// reference interpreter, and prints one table row per case. Exit status 0 when every case passes, 1 otherwise, 2
// without a GPU. scripts/gpu/run_on_gpu.sh runs it on the GPU machine.
//
//   tessera-gpu-check [substring]   only the cases whose name contains the substring
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "tests/gpucheck/Cases.h"

int main(int argc, char** argv) {
  using namespace tessera::gpucheck;
  using namespace tessera::jit;
  CudaDriver& driver = CudaDriver::instance();
  if (!driver.available()) {
    std::fprintf(stderr, "tessera-gpu-check: %s\n", driver.unavailableReason().c_str());
    return 2;
  }
  std::printf("GPU: %s (compute capability %d, %d SMs), compiling for %s\n", driver.deviceName().c_str(),
              driver.computeCapability(), driver.multiprocessorCount(), driver.nativeArch().c_str());
  std::unique_ptr<DeviceRuntime> runtime = makeCudaDeviceRuntime(driver);
  std::string filter = argc > 1 ? argv[1] : "";
  KernelCache cache{std::filesystem::path()};  // always compile with this build
  std::vector<CheckResult> results;
  for (const CheckCase& c : allCases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    results.push_back(checkAgainstInterpreter(c, cache, *runtime));
    const CheckResult& r = results.back();
    std::fprintf(stderr, "%-6s %s\n", r.status == CheckResult::Status::Pass ? "pass" : "FAIL", c.name.c_str());
  }
  std::printf("\n%s", formatCheckTable(results).c_str());
  bool ok = true;
  for (const CheckResult& r : results) {
    if (r.status == CheckResult::Status::Pass) continue;
    ok = false;
    std::printf("\n== %s\n%s\n", r.name.c_str(), r.status == CheckResult::Status::Error ? r.message.c_str()
                                                                                      : r.firstMismatch.c_str());
  }
  return ok ? 0 : 1;
}
