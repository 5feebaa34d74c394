// The GPU-vs-interpreter harness (tests/gpucheck/GpuCheck.h) over a DeviceRuntime that is not a GPU: host memory
// stands in for device memory and each test decides what a "launch" does, so the harness's copies, argument
// packing, comparison and reporting are tested without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "backends/Target.h"
#include "ir/Error.h"
#include "jit/DeviceRuntime.h"
#include "tessera/kernels/vector_add.h"
#include "tests/gpucheck/GpuCheck.h"

using namespace tessera;
using namespace tessera::gpucheck;

namespace {

// Device memory is host memory; launches run `onLaunch`. Register counts are not reported (as with HIP).
class HostRuntime final : public jit::DeviceRuntime {
 public:
  std::function<void(void** params)> onLaunch;

  std::string target() const override { return "nvptx"; }
  std::string apiName() const override { return "host"; }
  std::string binaryFormat() const override { return "ptx"; }
  bool available() const override { return true; }
  std::string unavailableReason() const override { return ""; }
  std::string nativeArch() const override { return "sm_80"; }
  jit::DeviceAddress allocate(size_t bytes) override {
    ++liveAllocations;
    return reinterpret_cast<jit::DeviceAddress>(new uint8_t[bytes]);
  }
  void release(jit::DeviceAddress p) noexcept override {
    --liveAllocations;
    delete[] reinterpret_cast<uint8_t*>(p);
  }
  void copyToDevice(jit::DeviceAddress dst, const void* src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  }
  void copyToHost(void* dst, jit::DeviceAddress src, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  }
  void synchronize(jit::DeviceStream, const std::string&) override {}
  jit::DeviceModule loadModule(const jit::CompiledKernel&) override { return this; }
  void unloadModule(jit::DeviceModule) noexcept override {}
  jit::DeviceFunction getFunction(jit::DeviceModule, const std::string&) override { return this; }
  bool launchesWithDynamicSharedMemory() const override { return false; }
  void raiseSharedMemoryLimit(jit::DeviceFunction, int64_t, const std::string&) override {}
  int registersPerThread(jit::DeviceFunction, const std::string& kernel) override {
    throw Error("kernel '" + kernel + "': the host runtime has no registers");
  }
  int localBytesPerThread(jit::DeviceFunction, const std::string&) override { return 0; }
  void launch(jit::DeviceFunction, const unsigned[3], const unsigned[3], unsigned, jit::DeviceStream, void** params,
              const std::string&) override {
    onLaunch(params);
  }

  int liveAllocations = 0;
};

HostBuffer floats(const std::vector<float>& values) {
  HostBuffer b{ir::ScalarKind::F32, std::vector<uint8_t>(values.size() * sizeof(float)), std::nullopt};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

constexpr int64_t kN = 100;

CheckCase vectorAddCase() {
  std::vector<float> x(kN), y(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = 0.5f * i, y[i] = 3.0f - i;
  return CheckCase{"vector_add n=100", kernels::vector_add_kernel(), {{"BLOCK", int64_t(128)}}, {1, 1, 1},
                   {floats(x), floats(y), floats(std::vector<float>(kN)), kN}};
}

// What the vector_add kernel does, reading its packed parameters: three 64-bit addresses, then n as an i32.
void addOnHost(void** params) {
  auto buffer = [&](int i) { return *reinterpret_cast<float**>(params[i]); };
  int32_t n = *static_cast<int32_t*>(params[3]);
  for (int32_t i = 0; i < n; ++i) buffer(2)[i] = buffer(0)[i] + buffer(1)[i];
}

class GpuCheckOverARuntime : public testing::Test {
 protected:
  void SetUp() override {
    try {
      backends::createTarget("nvptx");
    } catch (const Error& e) {
      GTEST_SKIP() << "the kernel compiles for the runtime's target, nvptx: " << e.what();
    }
  }
  jit::KernelCache cache{std::filesystem::path()};
  HostRuntime runtime;
};

TEST_F(GpuCheckOverARuntime, ADeviceThatComputesTheKernelPasses) {
  runtime.onLaunch = addOnHost;
  CheckResult r = checkAgainstInterpreter(vectorAddCase(), cache, runtime);
  EXPECT_EQ(r.status, CheckResult::Status::Pass) << r.message << r.firstMismatch;
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.worstError, 0);
  EXPECT_FALSE(r.registers.has_value());  // the runtime cannot tell: the row shows "-", the check still runs
  EXPECT_EQ(r.localBytes, 0);
  EXPECT_EQ(runtime.liveAllocations, 0);
  std::string table = formatCheckTable({r});
  EXPECT_NE(table.find("vector_add n=100"), std::string::npos) << table;
  EXPECT_NE(table.find("1 cases: 1 passed, 0 failed, 0 errors"), std::string::npos) << table;
}

TEST_F(GpuCheckOverARuntime, AWrongElementFailsAndIsNamed) {
  runtime.onLaunch = [](void** params) {
    addOnHost(params);
    (*reinterpret_cast<float**>(params[2]))[17] += 1.0f;
  };
  CheckResult r = checkAgainstInterpreter(vectorAddCase(), cache, runtime);
  EXPECT_EQ(r.status, CheckResult::Status::Fail);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_EQ(r.firstMismatch, "buffer 2 [17]: gpu -4.5, interpreter -5.5");
}

TEST_F(GpuCheckOverARuntime, AnInputTheDeviceChangesFails) {
  runtime.onLaunch = [](void** params) {
    addOnHost(params);
    (*reinterpret_cast<float**>(params[0]))[3] = 0;  // x must stay as it was
  };
  CheckResult r = checkAgainstInterpreter(vectorAddCase(), cache, runtime);
  EXPECT_EQ(r.status, CheckResult::Status::Fail);
  EXPECT_EQ(r.firstMismatch, "buffer 0 [3]: gpu 0, interpreter 1.5");
}

TEST_F(GpuCheckOverARuntime, ADeviceErrorIsReportedAndTheMemoryReleased) {
  runtime.onLaunch = [](void**) { throw Error("kernel 'vector_add': launch failed"); };
  CheckResult r = checkAgainstInterpreter(vectorAddCase(), cache, runtime);
  EXPECT_EQ(r.status, CheckResult::Status::Error);
  EXPECT_EQ(r.message, "error: kernel 'vector_add': launch failed");
  EXPECT_EQ(runtime.liveAllocations, 0);
}

}  // namespace
