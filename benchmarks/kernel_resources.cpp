// What ptxas says each standard kernel uses: registers, spill bytes (stored / loaded), stack frame, shared memory,
// and ptxas's own compile time, for the standard matmul configurations (f16, bf16, fp8 e4m3 and e5m2 inputs on
// sm_90a, e4m3 also with B transposed, f16 and bf16 on sm_80, f16 on both at ragged launches' sizes (M = N = K =
// 1000 and 999), f16
// through tensor descriptors on both, f16 as persistent kernels on both (and through descriptors, with TMA, on
// sm_90a), and warp-specialized through descriptors on sm_90a; i8 at 128x128x64 and
// 64x64x64; f32 with tf32 products at 128x128x32 and 64x64x32) and the tutorial softmax and layer norm kernels,
// and the attention forward configurations (f16 and bf16 on sm_90a and sm_80; ISSUE 12, item 4), also through
// tensor descriptors (attention_fwd_desc, f16 on sm_90a; K and V by TMA), and warp-specialized so. The
// tensor-core column says which tensor-core instruction the PTX uses, if any: a dot without one runs on FMAs.
//
//   kernel_resources [--csv FILE] [--only SUBSTRING] [--ptx-dir DIR] [--ptxas PATH] [--runs N]
//   benchmarks/plot_results.py FILE    turns the CSV into a PNG bar plot
#include <cstdio>

#include "backends/Target.h"
#include "benchmarks/support/BenchOptions.h"
#include "benchmarks/support/CaseRunner.h"
#include "benchmarks/support/KernelCases.h"
#include "benchmarks/support/Ptxas.h"
#include "benchmarks/support/ResultTable.h"
#include "jit/Compiler.h"

namespace {

using namespace tessera;
using namespace tessera::bench;

std::vector<KernelCase> resourceCases() {
  std::vector<KernelCase> cases;
  const std::vector<std::pair<std::string, std::string>> matmulTypes{
      {"f16", "sm_90a"}, {"bf16", "sm_90a"}, {"f8e4m3", "sm_90a"}, {"f8e5m2", "sm_90a"}, {"f16", "sm_80"}, {"bf16", "sm_80"}};
  for (const auto& [dtype, arch] : matmulTypes)
    for (const MatmulConfig& config : standardMatmulConfigs()) cases.push_back(matmulCase(dtype, config, arch));
  // f16 at the sizes of ragged launches: M = N = K = 1000 (specialized as multiples of 8: rows stay 16-byte
  // aligned) and 999 (no alignment beyond an element: no vectorized copies along K).
  for (int64_t size : {1000, 999})
    for (const char* arch : {"sm_90a", "sm_80"})
      for (const MatmulConfig& config : standardMatmulConfigs())
        cases.push_back(raggedMatmulCase("f16", config, arch, size));
  // The matmul reading A and B through tensor descriptors, beside the pointer one at each configuration.
  for (const char* arch : {"sm_90a", "sm_80"})
    for (const MatmulConfig& config : standardMatmulConfigs()) cases.push_back(matmulDescriptorCase(config, arch));
  // fp8 with B given as B^T: the K-major B that wgmma's 8-bit inputs need arrives by cp.async, not through registers.
  for (const MatmulConfig& config : standardMatmulConfigs())
    cases.push_back(matmulBTransposedCase("f8e4m3", config, "sm_90a"));
  for (const MatmulConfig& config : {MatmulConfig{128, 128, 64, 8}, MatmulConfig{64, 64, 64, 4}})
    cases.push_back(matmulCase("i8", config, "sm_90a"));
  for (const MatmulConfig& config : {MatmulConfig{128, 128, 32, 8}, MatmulConfig{64, 64, 32, 4}})
    cases.push_back(matmulCase("tf32", config, "sm_90a"));
  for (const auto& [dtype, arch] : std::vector<std::pair<std::string, std::string>>{
           {"f16", "sm_90a"}, {"bf16", "sm_90a"}, {"f16", "sm_80"}, {"bf16", "sm_80"}})
    for (const AttentionConfig& config : standardAttentionConfigs())
      cases.push_back(attentionCase(dtype, config, arch));
  // The attention forward through tensor descriptors (TMA on sm_90a).
  for (const AttentionConfig& config : standardAttentionConfigs())
    cases.push_back(attentionDescriptorCase("f16", config, "sm_90a"));
  // The f16 matmul as a persistent kernel (programs looping over the tiles) at every configuration.
  for (const char* arch : {"sm_90a", "sm_80"})
    for (const MatmulConfig& config : standardMatmulConfigs()) {
      KernelCase c = matmulCase("f16", config, arch);
      c.config += "_persistent";
      c.persistent = true;
      cases.push_back(std::move(c));
    }
  // ... and the descriptor matmul, persistent with TMA on sm_90a.
  for (const MatmulConfig& config : standardMatmulConfigs()) {
    KernelCase c = matmulDescriptorCase(config, "sm_90a");
    c.config += "_persistent";
    c.persistent = true;
    cases.push_back(std::move(c));
  }
  // ... and warp-specialized on sm_90a (a producer warpgroup issues the TMA copies), where num_warps is whole
  // warpgroups. ptxas's registers are then the count at entry of every thread (65536 / threads, in steps of 8), which
  // setmaxnreg splits: 40 for the producers, the rest for the consumers (docs/JIT.md, "Warp specialization").
  for (const MatmulConfig& config : standardMatmulConfigs()) {
    if (config.warps % 4) continue;
    KernelCase c = matmulDescriptorCase(config, "sm_90a");
    c.config += "_warp_specialized";
    c.warpSpecialize = true;
    cases.push_back(c);
    c.config += "_persistent";  // the producer runs ahead into the next tile during the epilogue
    c.persistent = true;
    cases.push_back(c);
    if (config.warps != 4) continue;  // ping-pong: two groups of num_warps consumer warps, each on its own tiles
    c.config += "_ping_pong";
    c.pingPong = true;
    cases.push_back(std::move(c));
  }
  // ... and the two descriptor matmuls bench_tutorials.py times (C in f16, through pointers or a TMA store),
  // warp-specialized and persistent, the configuration CUTLASS's H100 kernels use.
  for (const MatmulConfig& config : standardMatmulConfigs()) {
    if (config.warps % 4) continue;
    for (bool tmaStore : {false, true}) {
      KernelCase c = matmulDescriptorF16OutCase(config, "sm_90a", tmaStore);
      c.config += "_warp_specialized_persistent";
      c.warpSpecialize = c.persistent = true;
      cases.push_back(std::move(c));
    }
  }
  // ... and the attention through descriptors, warp-specialized (the producer issues both key loops' K and V copies),
  // also persistent.
  for (const AttentionConfig& config : standardAttentionConfigs()) {
    KernelCase c = attentionDescriptorCase("f16", config, "sm_90a");
    c.config += "_warp_specialized";
    c.warpSpecialize = true;
    cases.push_back(c);
    c.config += "_persistent";  // the producer's tile loop runs both key loops of every tile
    c.persistent = true;
    cases.push_back(std::move(c));
  }
  // ... and with the softmax overlapped with the next key block's Q K^T, plain and warp-specialized.
  for (const AttentionConfig& config : standardAttentionConfigs()) {
    KernelCase c = attentionOverlapCase("f16", config, "sm_90a");
    cases.push_back(c);
    c.config += "_warp_specialized";
    c.warpSpecialize = true;
    cases.push_back(std::move(c));
  }
  // The attention backward (FlashAttention-2) at head dims 64 and 128: dK and dV over 128 keys (or 64 on 4 warps;
  // 32 query rows at a time is Triton's tutorial's choice, and the one that does not spill at head dim 128), dQ over
  // 128 rows (or 64), f16 on sm_90a and sm_80.
  for (const char* arch : {"sm_90a", "sm_80"})
    for (int headDim : {64, 128})
      for (bool causal : {false, true}) {
        const AttentionConfig square{64, 64, headDim, 4, causal};
        for (const AttentionConfig& config :
             {AttentionConfig{64, 128, headDim, 8, causal}, AttentionConfig{32, 128, headDim, 8, causal}, square})
          cases.push_back(attentionBackwardCase("attention_bwd_dkdv", "f16", config, arch));
        for (const AttentionConfig& config : {AttentionConfig{128, 64, headDim, 8, causal}, square})
          cases.push_back(attentionBackwardCase("attention_bwd_dq", "f16", config, arch));
      }
  for (KernelCase& c : tutorialCases("sm_90a"))
    if (c.kernel == "softmax" || c.kernel.rfind("layernorm", 0) == 0) cases.push_back(std::move(c));
  return cases;
}

std::string tensorCoreInstruction(const std::string& ptx) {
  if (ptx.find("wgmma.") != std::string::npos) return "wgmma";
  if (ptx.find("mma.sync") != std::string::npos) return "mma.sync";
  return "none";
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions opts = parseBenchOptions(
      argc, argv, "Registers, spills, stack and shared memory of the standard kernels, from ptxas -v.");
  const bool havePtxas = ptxasInstalled(opts.ptxas);
  std::printf("kernel resources from ptxas -v; ptxas %s (%s)\n"
              "ptxas_ms: ptxas's \"Compile time\" (wall); ptxas_cpu_ms: its process's CPU time; medians of %d runs\n",
              ptxasVersion(opts.ptxas).c_str(), opts.ptxas.c_str(), opts.runs);
  ResultTable table({"case", "registers", "spill_stores_B", "spill_loads_B", "stack_B", "ptxas_smem_B",
                     "dynamic_smem_B", "ptxas_ms", "ptxas_cpu_ms", "tensor_cores"});
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  return measureCases(resourceCases(), opts, table, [&](const KernelCase& c) {
    const std::unique_ptr<ir::Module> traced = traceSpecialized(c);
    const jit::CompiledKernel k = jit::compile(*traced->functions().at(0), *target, c.targetOptions());
    savePtx(opts, c.name(), k.binary);
    std::vector<std::string> row{c.name()};
    if (havePtxas) {
      const PtxasReport r = runPtxas(opts.ptxas, k.binary, c.arch, opts.runs);
      for (int v : {r.registers, r.spillStoreBytes, r.spillLoadBytes, r.stackBytes, r.staticSharedBytes})
        row.push_back(std::to_string(v));
      row.push_back(std::to_string(k.sharedBytes));
      row.push_back(fixed(r.reportedMs, 2));
      row.push_back(fixed(r.cpuSeconds * 1e3, 2));
    } else {
      row.insert(row.end(), 5, "absent");
      row.push_back(std::to_string(k.sharedBytes));
      row.insert(row.end(), 2, "absent");
    }
    row.push_back(tensorCoreInstruction(k.binary));
    return row;
  });
}
