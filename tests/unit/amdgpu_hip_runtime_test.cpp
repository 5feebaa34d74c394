// The HIP runtime without HIP: no machine here has libamdhip64 or an AMD GPU, so these tests check that the
// runtime reports itself unavailable with a reason and that every entry point then throws a clear error. The
// launch path's argument checks run before the runtime is touched and are tested here too.
#include <gtest/gtest.h>

#include "AMDGPUTestUtil.h"
#include "ir/Error.h"
#include "jit/HipRuntime.h"

namespace tessera::testing {
namespace {

std::string messageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HipRuntimeNoAmdGpu, MissingLibraryIsUnavailableWithAReason) {
  jit::HipRuntime hip({"/nonexistent/libamdhip64.so", "libtessera_no_such_hip.so.5"});
  EXPECT_FALSE(hip.available());
  EXPECT_NE(hip.unavailableReason().find("could not be loaded"), std::string::npos) << hip.unavailableReason();
  EXPECT_NE(hip.unavailableReason().find("/nonexistent/libamdhip64.so"), std::string::npos);
  EXPECT_NE(hip.unavailableReason().find("libtessera_no_such_hip.so.5"), std::string::npos);
}

TEST(HipRuntimeNoAmdGpu, LibraryWithoutHipSymbolsIsUnavailable) {
  jit::HipRuntime hip({"libm.so.6"});
  EXPECT_FALSE(hip.available());
  EXPECT_NE(hip.unavailableReason().find("no symbol hipInit"), std::string::npos) << hip.unavailableReason();
}

TEST(HipRuntimeNoAmdGpu, EveryEntryPointThrowsNamingTheCallAndTheReason) {
  jit::HipRuntime hip({"/nonexistent/libamdhip64.so"});
  const std::string reason = hip.unavailableReason();
  struct Call { const char* name; std::function<void()> fn; };
  std::vector<Call> calls = {
      {"hipGetDeviceCount", [&] { hip.deviceCount(); }},
      {"hipMalloc", [&] { hip.allocate(16); }},
      {"hipMemcpy", [&] { char c; hip.copyToHost(&c, nullptr, 1); }},
      {"hipMemcpy", [&] { char c = 0; hip.copyToDevice(nullptr, &c, 1); }},
      {"hipStreamCreate", [&] { hip.createStream(); }},
      {"hipStreamSynchronize", [&] { hip.synchronize(nullptr); }},
      {"hipModuleLoadData (kernel 'k')", [&] { hip.loadModule("\x7f" "ELF", "k"); }},
      {"hipModuleGetFunction (kernel 'k')", [&] { hip.getFunction(nullptr, "k"); }},
  };
  for (const Call& c : calls) {
    SCOPED_TRACE(c.name);
    std::string msg = messageOf(c.fn);
    EXPECT_NE(msg.find(c.name), std::string::npos) << msg;
    EXPECT_NE(msg.find("HIP is not available"), std::string::npos) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
  }
  hip.release(nullptr);  // never throws (used in destructors)
}

TEST(HipRuntimeNoAmdGpu, LaunchChecksTargetAndArgumentsThenNamesTheKernel) {
  jit::HipRuntime hip({"/nonexistent/libamdhip64.so"});
  jit::CompiledKernel k = compileTextForAmdgpu(R"(
func @scale(%x: ptr<f32> {divisibility = 16}, %n: i32) {
  %offs = arange {end = 256, start = 0} : tile<256xi32>
  %b = splat %x : tile<256xptr<f32>>
  %p = addptr %b, %offs : tile<256xptr<f32>>
  %v = load %p : tile<256xf32>
  %w = add %v, %v : tile<256xf32>
  store %p, %w
  return
}
)", "gfx90a");
  std::vector<ir::Type> params = {ir::Type::ptr(ir::Type::f32()), ir::Type::i32()};
  std::string msg = messageOf([&] { hip.launchKernel(k, params, {1, 1, 1}, {jit::KernelArg::pointer(256), 7}); });
  EXPECT_NE(msg.find("launching kernel 'scale'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HIP is not available"), std::string::npos) << msg;
  msg = messageOf([&] { hip.launchKernel(k, params, {1, 1, 1}, {jit::KernelArg::pointer(256)}); });
  EXPECT_NE(msg.find("takes 2 arguments, got 1"), std::string::npos) << msg;
  msg = messageOf([&] { hip.launchKernel(k, params, {0, 1, 1}, {jit::KernelArg::pointer(256), 7}); });
  EXPECT_NE(msg.find("grid dimensions"), std::string::npos) << msg;
  jit::CompiledKernel ptx = k;
  ptx.target = "nvptx";
  ptx.format = "ptx";
  msg = messageOf([&] { hip.launchKernel(ptx, params, {1, 1, 1}, {jit::KernelArg::pointer(256), 7}); });
  EXPECT_NE(msg.find("compiled for nvptx"), std::string::npos) << msg;
}

TEST(HipRuntimeNoAmdGpu, ProcessWideRuntimeAndTargetChoice) {
  jit::HipRuntime& hip = jit::HipRuntime::instance();
  if (hip.available()) GTEST_SKIP() << "an AMD GPU is present; this test covers machines without one";
  EXPECT_FALSE(hip.unavailableReason().empty());
  // With no GPU of either kind the choice fails naming both reasons; with a CUDA GPU it is nvptx.
  try {
    EXPECT_EQ(jit::firstAvailableTarget(), "nvptx");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("HIP: " + hip.unavailableReason()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::testing
