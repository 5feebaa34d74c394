// A tensor descriptor argument launched on the emulator through LoadedKernel: the launch packs the fields and the
// sim runtime's encoding of the tensor map into one 256-byte parameter (backends/common/DescriptorParameter.h), which the kernel
// receives by value. The hand-written kernel (TmaTestKernel.h) reads two fields and copies a box with the table's
// cp.async.bulk.tensor.2d from the map at byte 128, so a wrong field, a wrong map (dimensions not reversed,
// strides not in bytes) or a parameter passed by pointer instead of by value shows in its output.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "TmaTestKernel.h"
#include "ir/Error.h"
#include "jit/LoadedKernel.h"
#include "jit/sim/SimRuntime.h"

namespace tessera::testing {
namespace {

constexpr int64_t kRows = 20, kCols = 48, kBoxRows = 16, kBoxCols = 64;

std::shared_ptr<const jit::CompiledKernel> compiledKernel() {
  auto k = std::make_shared<jit::CompiledKernel>();
  k->name = "tma_load";
  k->target = "nvptx";
  k->arch = "sm_90a";
  k->format = "ptx";
  k->numWarps = 4;
  k->warpSize = 32;
  k->sharedBytes = 1024 + kBoxRows * kBoxCols * 2;
  k->optimizedLLVMIR = tmaModule(kBoxRows * kBoxCols * 2, -8, 4, /*descriptorParameter=*/true);
  k->tensorMaps = {{0, 0}};
  return k;
}

struct Device {
  jit::DeviceRuntime& runtime = sim::simRuntime("sm_90a");
  jit::DeviceAddress tensor = runtime.allocate(kRows * kCols * 2);
  jit::DeviceAddress out = runtime.allocate(kBoxRows * kBoxCols * 2);
  jit::DeviceAddress fields = runtime.allocate(16);
  ~Device() {
    for (jit::DeviceAddress a : {tensor, out, fields}) runtime.release(a);
  }
};

const std::vector<ir::Type> kParams{ir::Type::tensorDesc({kBoxRows, kBoxCols}, ir::Type::f16()),
                                    ir::Type::ptr(ir::Type::f16()), ir::Type::ptr(ir::Type::i64())};

TEST(SimDescriptorLaunch, TheKernelReadsTheFieldsAndCopiesThroughTheEncodedMap) {
  Device device;
  std::vector<uint16_t> tensor(kRows * kCols);
  std::iota(tensor.begin(), tensor.end(), uint16_t(1));
  device.runtime.copyToDevice(device.tensor, tensor.data(), tensor.size() * 2);
  jit::LoadedKernel loaded(compiledKernel(), kParams, device.runtime);
  loaded.launch({1, 1, 1}, {jit::KernelArg::tensorDescriptor(device.tensor, {kRows, kCols}, {kCols, 1},
                                                             {kBoxRows, kBoxCols}),
                            jit::KernelArg::pointer(device.out), jit::KernelArg::pointer(device.fields)});
  int64_t fields[2];
  device.runtime.copyToHost(fields, device.fields, sizeof fields);
  EXPECT_EQ(fields[0], kRows);
  EXPECT_EQ(fields[1], kCols);
  std::vector<uint16_t> out(kBoxRows * kBoxCols);
  device.runtime.copyToHost(out.data(), device.out, out.size() * 2);
  for (int64_t r = 0; r < kBoxRows; ++r)
    for (int64_t c = 0; c < kBoxCols; ++c) {
      const int64_t x = c - 8, y = r + 4;
      const uint16_t expected = x >= 0 && x < kCols && y < kRows ? tensor[y * kCols + x] : 0;
      ASSERT_EQ(out[r * kBoxCols + c], expected) << "row " << r << " column " << c;
    }
}

TEST(SimDescriptorLaunch, ABadDescriptorIsRefusedBeforeTheLaunch) {
  Device device;
  jit::LoadedKernel loaded(compiledKernel(), kParams, device.runtime);
  auto launchWith = [&](jit::KernelArg desc) {
    try {
      loaded.launch({1, 1, 1}, {desc, jit::KernelArg::pointer(device.out), jit::KernelArg::pointer(device.fields)});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(launchWith(jit::KernelArg::tensorDescriptor(device.tensor, {kRows, kCols}, {kCols + 4, 1},
                                                        {kBoxRows, kBoxCols}))
                .find("kernel 'tma_load': descriptor argument 0: strides[0] is 52 elements (104 bytes)"),
            std::string::npos);
  EXPECT_NE(launchWith(jit::KernelArg::tensorDescriptor(device.tensor, {kRows, kCols}, {kCols, 1}, {kBoxRows, 32}))
                .find("its block differs from the one the kernel was compiled for"),
            std::string::npos);
  EXPECT_NE(launchWith(jit::KernelArg::pointer(device.tensor)).find("must be a tensor descriptor"), std::string::npos);
}

TEST(SimDescriptorLaunch, TheSimRuntimeRefusesAMapItCannotEncode) {
  jit::TensorMapRequest r;
  r.element = ir::Type::f16();
  r.rank = 1;
  r.base = 4096;
  r.dims = {64};
  r.box = {64};
  r.swizzleBytes = 64;  // 128 bytes of box row, wider than the swizzle span
  try {
    sim::simRuntime("sm_90a").encodeTensorMap(r, "k");
    FAIL() << "encoded a map whose box row is wider than its swizzle";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sim: kernel 'k': cannot encode its tensor map: the box's inner dimension "
                                         "is 128 bytes, wider than the 64-byte swizzle"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::testing
