// Every tutorial kernel (tessera/kernels/*.h), traced and compiled through the JIT pipeline for gfx90a and
// gfx942. No AMD GPU exists here: the code objects are checked with llvm-readelf-19 --notes (kernel symbol,
// wave64, LDS equal to the allocator's smem_bytes, no private segment) and llvm-objdump-19 (no scratch
// accesses). Nothing is executed on AMD hardware.
#include <gtest/gtest.h>

#include <functional>

#include "AMDGPUTestUtil.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"

namespace tessera::testing {
namespace {

struct TutorialKernelCase {
  std::string name;
  std::function<KernelDef()> kernel;
  Constants constants;
};

std::vector<TutorialKernelCase> cases() {
  const Constants blocks{{"BM", 16}, {"BN", 16}, {"BK", 16}, {"GROUP_M", 2}};
  const Constants big{{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}};
  std::vector<TutorialKernelCase> c = {
      {"vector_add", tessera::kernels::vector_add_kernel, {{"BLOCK", 1024}}},
      {"softmax", tessera::kernels::softmax_kernel, {{"BLOCK", 1024}}},
      {"layernorm_fwd", tessera::kernels::layernorm_fwd_kernel, {{"BLOCK", 1024}}},
      {"layernorm_bwd_dx", tessera::kernels::layernorm_bwd_dx_kernel, {{"BLOCK", 1024}}},
      {"layernorm_bwd_dwdb", tessera::kernels::layernorm_bwd_dwdb_kernel, {{"BLOCK_M", 32}, {"BLOCK_N", 128}}},
      {"layernorm_bwd_atomic", tessera::kernels::layernorm_bwd_atomic_kernel, {{"BLOCK", 1024}}},
      {"matmul_16", tessera::kernels::matmul_kernel, blocks},
      {"matmul_64", tessera::kernels::matmul_kernel, big},
  };
  for (int activation = 0; activation < 4; ++activation) {
    Constants k = big;
    k["ACTIVATION"] = activation;
    c.push_back({"matmul_epilogue_" + std::to_string(activation), tessera::kernels::matmul_epilogue_kernel, k});
    c.push_back({"matmul_epilogue_f16_" + std::to_string(activation), tessera::kernels::matmul_epilogue_f16_kernel, k});
  }
  return c;
}

class AMDGPUTutorialNoHardware : public ::testing::TestWithParam<TutorialKernelCase> {};

TEST_P(AMDGPUTutorialNoHardware, CompilesToCleanWave64CodeObjects) {
  const TutorialKernelCase& c = GetParam();
  std::unique_ptr<ir::Module> m = c.kernel().trace(c.constants);
  ir::Function& f = *m->functions().at(0);
  for (unsigned i = 0; i < f.numArguments(); ++i)  // what specialization knows about 16-byte aligned pointers
    if (f.argument(i)->type().isPtr()) f.argAttrs(i)["divisibility"] = ir::Attr::integer(16);
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    jit::CompiledKernel k = compileForAmdgpu(f, arch);
    EXPECT_EQ(k.name, c.kernel().name());
    EXPECT_EQ(k.warpSize, 64);
    expectGoodCodeObject(k, arch, /*noSpills=*/true);
  }
}

// Tiles whose shared memory cannot fit in a workgroup's LDS even with the accumulator's conversion in rounds
// (dot operand staging of 128x256 and 256x128 f16: 128 KiB) get the target's clear error; 128x128x64 tiles,
// whose 67584-byte conversion buffer goes in two rounds, compile, their operands in 2 stages of LDS buffers (3
// would not fit).
TEST(AMDGPUSharedMemoryLimit, ConversionsGoInRoundsAndWhatCannotFitIsAnError) {
  auto compileMatmul = [](int bk) {
    std::unique_ptr<ir::Module> m =
        tessera::kernels::matmul_kernel().trace({{"BM", 128}, {"BN", 128}, {"BK", bk}, {"GROUP_M", 8}});
    return compileForAmdgpu(*m->functions().at(0), "gfx942", 8);
  };
  jit::CompiledKernel fits = compileMatmul(64);
  // The operand buffers: 2 stages of 128x64 and 64x128 f16. The accumulator's conversion after the loop reuses
  // their bytes: 64 of 128 rows of 528 bytes per round (a 16-byte pad, the least conflicting).
  EXPECT_EQ(fits.sharedBytes, 65536);
  ASSERT_FALSE(fits.irAfterPass.empty());
  const std::string& laidOut = fits.irAfterPass.back().second;
  EXPECT_NE(laidOut.find("smem<2x128x64xf16"), std::string::npos);
  EXPECT_NE(laidOut.find("smem_bytes = 33792"), std::string::npos);
  try {
    compileMatmul(256);
    FAIL() << "128 KiB of LDS must not compile";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("needs 131072 bytes of shared memory (LDS), more than the 65536"), std::string::npos)
        << e.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Tutorials, AMDGPUTutorialNoHardware, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<TutorialKernelCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tessera::testing
