// The dlopen'ed CUDA driver without a GPU: clear errors instead of crashes, for a missing library, a library
// that is not a CUDA driver, and every entry point of an unavailable driver. Also the argument packing of
// launches and the driver enum values against cuda.h when that header is installed.
#include <gtest/gtest.h>

#include <cstring>

#include "ir/Error.h"
#include "ir/Types.h"
#include "jit/CudaDriver.h"
#include "jit/LoadedKernel.h"

#if __has_include(</usr/local/cuda/include/cuda.h>)
#include </usr/local/cuda/include/cuda.h>
#define TESSERA_HAVE_CUDA_H 1
#endif

using namespace tessera::jit;
using tessera::ir::ScalarKind;
using tessera::ir::Type;

namespace {

// Runs `fn`, expecting a tessera::Error whose message contains every piece of `needles`.
template <class F>
void expectErrorContaining(F fn, std::initializer_list<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "expected a tessera::Error";
  } catch (const tessera::Error& e) {
    for (const std::string& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(JitCudaDriver, MissingLibraryIsReportedNotFatal) {
  CudaDriver driver("libcuda-that-does-not-exist.so.1");
  EXPECT_FALSE(driver.available());
  EXPECT_NE(driver.unavailableReason().find("cannot load the CUDA driver library 'libcuda-that-does-not-exist.so.1'"),
            std::string::npos)
      << driver.unavailableReason();
  EXPECT_NE(driver.unavailableReason().find("compileOnly"), std::string::npos) << "should say what still works";
}

TEST(JitCudaDriver, LibraryThatIsNotADriverIsReported) {
  CudaDriver driver("libm.so.6");
  EXPECT_FALSE(driver.available());
  EXPECT_NE(driver.unavailableReason().find("not a usable CUDA driver library"), std::string::npos)
      << driver.unavailableReason();
  EXPECT_NE(driver.unavailableReason().find("cuInit"), std::string::npos) << driver.unavailableReason();
}

TEST(JitCudaDriver, EveryEntryPointOfAnUnavailableDriverThrowsClearly) {
  CudaDriver driver("libcuda-that-does-not-exist.so.1");
  const std::string prefix = "CUDA is not available: cannot load the CUDA driver library";
  expectErrorContaining([&] { driver.deviceName(); }, {prefix});
  expectErrorContaining([&] { driver.computeCapability(); }, {prefix});
  expectErrorContaining([&] { driver.nativeArch(); }, {prefix});
  expectErrorContaining([&] { driver.allocate(16); }, {prefix});
  expectErrorContaining([&] { driver.copyToDevice(0, nullptr, 4); }, {prefix});
  expectErrorContaining([&] { driver.copyToHost(nullptr, 0, 4); }, {prefix});
  expectErrorContaining([&] { driver.createStream(); }, {prefix});
  expectErrorContaining([&] { driver.synchronize(nullptr); }, {prefix});
  expectErrorContaining([&] { driver.createEvent(); }, {prefix});
  expectErrorContaining([&] { driver.loadModule(".version 8.0", "k"); }, {prefix});
  expectErrorContaining([&] { DeviceBuffer buffer(64, driver); }, {prefix});
  unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  expectErrorContaining([&] { driver.launch(nullptr, grid, block, 0, nullptr, nullptr, "k"); }, {prefix});
  // Cleanup paths stay silent no-ops: they run in destructors.
  driver.release(0x1000);
  driver.destroyStream(nullptr);
  driver.unloadModule(nullptr);
}

TEST(JitCudaDriver, ProcessDriverWithoutAGpuSaysWhy) {
  CudaDriver& driver = CudaDriver::instance();
  if (driver.available()) GTEST_SKIP() << "a GPU is available here (" << driver.deviceName() << ")";
  EXPECT_FALSE(driver.unavailableReason().empty());
  expectErrorContaining([&] { DeviceBuffer b(4); }, {"CUDA is not available", driver.unavailableReason()});
}

TEST(JitDeviceBuffer, EmptyBufferCopiesAreErrors) {
  DeviceBuffer empty;
  EXPECT_EQ(empty.ptr(), 0u);
  float x = 0;
  expectErrorContaining([&] { empty.copyFromHost(&x, sizeof x); }, {"4 bytes do not fit in a buffer of 0"});
  expectErrorContaining([&] { empty.copyFromHost(&x, 0); }, {"empty"});
  expectErrorContaining([&] { empty.copyToHost(&x, 0); }, {"empty"});
  DeviceBuffer moved = std::move(empty);
  EXPECT_EQ(moved.bytes(), 0u);
}

TEST(JitKernelArguments, PackToTheParameterWidths) {
  auto pack = [](Type t, const KernelArg& a) { return packKernelArgument(t, a, "k", 0); };
  EXPECT_EQ(pack(Type::ptr(Type::f32()), KernelArg::pointer(0x1122334455667788ull)),
            (std::vector<uint8_t>{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
  EXPECT_EQ(pack(Type::i32(), -2), (std::vector<uint8_t>{0xfe, 0xff, 0xff, 0xff}));
  EXPECT_EQ(pack(Type::i64(), 1).size(), 8u);
  EXPECT_EQ(pack(Type::i1(), true), (std::vector<uint8_t>{1}));
  EXPECT_EQ(pack(Type::scalar(ScalarKind::U16), 0xabcd), (std::vector<uint8_t>{0xcd, 0xab}));
  EXPECT_EQ(pack(Type::f32(), 1.0), (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3f}));
  EXPECT_EQ(pack(Type::f16(), 1.0), (std::vector<uint8_t>{0x00, 0x3c}));
  EXPECT_EQ(pack(Type::scalar(ScalarKind::BF16), -2.0), (std::vector<uint8_t>{0x00, 0xc0}));
  EXPECT_EQ(pack(Type::scalar(ScalarKind::F64), 0.5).size(), 8u);
  expectErrorContaining([&] { pack(Type::i32(), 1.5); }, {"kernel 'k'", "argument 0", "must be an integer"});
  expectErrorContaining([&] { pack(Type::ptr(Type::f32()), 3); }, {"must be a device pointer"});
  expectErrorContaining([&] { pack(Type::f32(), KernelArg::pointer(16)); }, {"must be a floating-point number"});
}

TEST(JitKernelArguments, DescriptorsPackTheirFields) {
  const Type desc = Type::tensorDesc({8, 16}, Type::f32());
  const std::vector<uint8_t> bytes =
      packKernelArgument(desc, KernelArg::tensorDescriptor(0x1000, {30, 40}, {48, 1}, {8, 16}), "k", 2);
  ASSERT_EQ(bytes.size(), 40u);  // base, 2 shapes, 2 strides; the launch appends a tensor map where there is one
  int64_t fields[5];
  std::memcpy(fields, bytes.data(), sizeof fields);
  EXPECT_EQ(std::vector<int64_t>(fields, fields + 5), (std::vector<int64_t>{0x1000, 30, 40, 48, 1}));
  expectErrorContaining([&] { packKernelArgument(desc, KernelArg::pointer(16), "k", 2); },
                        {"kernel 'k'", "argument 2", "must be a tensor descriptor"});
  expectErrorContaining(
      [&] { packKernelArgument(Type::ptr(Type::f32()), KernelArg::tensorDescriptor(16, {8}, {1}, {8}), "k", 0); },
      {"not a tensor descriptor"});
  expectErrorContaining(
      [&] { packKernelArgument(desc, KernelArg::tensorDescriptor(0x1000, {30, 40}, {48, 1}, {8, 32}), "k", 2); },
      {"descriptor argument 2", "its block differs from the one the kernel was compiled for"});
  expectErrorContaining(
      [&] { packKernelArgument(desc, KernelArg::tensorDescriptor(0x1004, {30, 40}, {48, 1}, {8, 16}), "k", 2); },
      {"descriptor argument 2: the base address 4100 is not 16-byte aligned"});
}

#ifdef TESSERA_HAVE_CUDA_H
TEST(JitCudaDriver, DeclaredEnumValuesMatchCudaH) {
  static_assert(cu::kSuccess == CUDA_SUCCESS);
  static_assert(cu::kNotReady == CUDA_ERROR_NOT_READY);
  static_assert(cu::kDeviceAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  static_assert(cu::kDeviceAttrComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  static_assert(cu::kDeviceAttrComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  static_assert(cu::kDeviceAttrMaxSharedMemoryPerBlockOptin == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  static_assert(cu::kFuncAttrSharedSizeBytes == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  static_assert(cu::kFuncAttrLocalSizeBytes == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  static_assert(cu::kFuncAttrNumRegs == CU_FUNC_ATTRIBUTE_NUM_REGS);
  static_assert(cu::kFuncAttrMaxDynamicSharedSizeBytes == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  static_assert(cu::kJitInfoLogBuffer == CU_JIT_INFO_LOG_BUFFER);
  static_assert(cu::kJitInfoLogBufferSizeBytes == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
  static_assert(cu::kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
  static_assert(cu::kJitErrorLogBufferSizeBytes == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
  static_assert(cu::kTensorMapUint8 == CU_TENSOR_MAP_DATA_TYPE_UINT8);
  static_assert(cu::kTensorMapUint16 == CU_TENSOR_MAP_DATA_TYPE_UINT16);
  static_assert(cu::kTensorMapUint32 == CU_TENSOR_MAP_DATA_TYPE_UINT32);
  static_assert(cu::kTensorMapInt32 == CU_TENSOR_MAP_DATA_TYPE_INT32);
  static_assert(cu::kTensorMapUint64 == CU_TENSOR_MAP_DATA_TYPE_UINT64);
  static_assert(cu::kTensorMapInt64 == CU_TENSOR_MAP_DATA_TYPE_INT64);
  static_assert(cu::kTensorMapFloat16 == CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  static_assert(cu::kTensorMapFloat32 == CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  static_assert(cu::kTensorMapFloat64 == CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
  static_assert(cu::kTensorMapBfloat16 == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  static_assert(cu::kTensorMapSwizzleNone == CU_TENSOR_MAP_SWIZZLE_NONE);
  static_assert(cu::kTensorMapSwizzleNone + 3 == CU_TENSOR_MAP_SWIZZLE_128B);
  static_assert(sizeof(cu::TensorMap) == sizeof(CUtensorMap) && alignof(cu::TensorMap) == alignof(CUtensorMap));
  static_assert(sizeof(cu::DevicePtr) == sizeof(CUdeviceptr));
  static_assert(std::is_same_v<cu::Stream, CUstream> && std::is_same_v<cu::Function, CUfunction>);
  static_assert(std::is_same_v<cu::Module, CUmodule> && std::is_same_v<cu::Context, CUcontext>);
  SUCCEED() << "checked at compile time";
}
#endif
