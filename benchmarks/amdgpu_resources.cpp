// What the AMDGPU backend says each standard kernel uses on gfx942, the counterpart of kernel_resources' ptxas
// table: VGPRs, AGPRs, VGPR spills, SGPRs, SGPR spills, LDS and scratch bytes per work-item, read from the code
// object's metadata note (backends/amdgpu/CodeObjectMetadata.h: the "amdhsa.kernels" map LLVM writes into every
// HSA code object), for the standard matmul configurations (f16, bf16), the attention forward configurations
// (f16, causal and not) and the i8 matmul at 128x128x64 and 64x64x64 (as kernel_resources has them), and the
// standard matmuls again on 32x32x8 instructions (matrix_instr_nonkdim=32; rows "..._mfma32", where the policy
// takes them: N a multiple of 32 per wave), and attention at BM 128 on 4 waves on both instructions. No GPU and no
// ROCm tool are needed: the JIT emits the code object in process.
//
//   amdgpu_resources [--csv FILE] [--only SUBSTRING] [--runs N]
#include <cstdio>
#include <optional>
#include <string>

#include <llvm/Config/llvm-config.h>

#include "backends/Target.h"
#include "backends/amdgpu/CodeObjectMetadata.h"
#include "benchmarks/support/BenchOptions.h"
#include "benchmarks/support/CaseRunner.h"
#include "benchmarks/support/KernelCases.h"
#include "benchmarks/support/ResultTable.h"
#include "jit/Compiler.h"

namespace {

using namespace tessera;
using namespace tessera::bench;

constexpr const char* kArch = "gfx942";

std::vector<KernelCase> resourceCases() {
  std::vector<KernelCase> cases;
  for (const char* dtype : {"f16", "bf16"})
    for (const MatmulConfig& config : standardMatmulConfigs()) cases.push_back(matmulCase(dtype, config, kArch));
  for (const AttentionConfig& config : standardAttentionConfigs()) cases.push_back(attentionCase("f16", config, kArch));
  for (const MatmulConfig& config : {MatmulConfig{128, 128, 64, 8}, MatmulConfig{64, 64, 64, 4}})
    cases.push_back(matmulCase("i8", config, kArch));  // v_mfma_i32_16x16x32_i8
  for (const char* dtype : {"f16", "bf16"})
    for (const MatmulConfig& config : standardMatmulConfigs()) {
      KernelCase large = matmulCase(dtype, config, kArch);  // v_mfma_f32_32x32x8 where the dot's N allows
      large.matrixInstrSize = 32;
      large.config += "_mfma32";
      cases.push_back(large);
    }
  // Attention where each of 4 waves owns whole 32-row blocks, on 16x16 and on 32x32 instructions.
  for (const AttentionConfig& config :
       {AttentionConfig{128, 64, 64, 4, false}, AttentionConfig{128, 64, 128, 4, false}})
    for (int matrixInstrSize : {16, 32}) {
      KernelCase c = attentionCase("f16", config, kArch);
      c.matrixInstrSize = matrixInstrSize;
      c.config += "_mfma" + std::to_string(matrixInstrSize);
      cases.push_back(c);
    }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions opts = parseBenchOptions(
      argc, argv, "VGPRs, AGPRs, spills, LDS and scratch of the standard kernels on gfx942, from the code object.");
  std::printf("kernel resources on %s from the code object's amdhsa.kernels metadata (LLVM %s)\n", kArch,
              LLVM_VERSION_STRING);
  ResultTable table({"case", "vgprs", "agprs", "vgpr_spills", "sgprs", "sgpr_spills", "lds_B", "scratch_B"});
  std::unique_ptr<backends::Target> target = backends::createTarget("amdgpu");
  return measureCases(resourceCases(), opts, table, [&](const KernelCase& c) {
    const std::unique_ptr<ir::Module> traced = traceSpecialized(c);
    const jit::CompiledKernel k = jit::compile(*traced->functions().at(0), *target, c.targetOptions());
    const backends::amdgpu::KernelResourceUsage usage = backends::amdgpu::codeObjectResources(k.binary, c.name());
    std::vector<std::string> row{c.name()};
    for (const std::optional<int64_t>& value : {usage.vgprs, usage.agprs, usage.vgprSpills, usage.sgprs,
                                                usage.sgprSpills, usage.ldsBytes, usage.scratchBytes})
      row.push_back(value ? std::to_string(*value) : "-");
    return row;
  });
}
