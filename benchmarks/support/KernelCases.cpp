#include "benchmarks/support/KernelCases.h"

#include "jit/Specialization.h"
#include "tessera/kernels/attention.h"
#include "tessera/kernels/attention_backward.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"

namespace tessera::bench {

namespace {

const std::set<std::string> kMatmulUnitStrides{"stride_ak", "stride_bn", "stride_cn"};
const std::set<std::string> kMatmulBTransposedUnitStrides{"stride_ak", "stride_bk", "stride_cn"};

std::string tileName(const MatmulConfig& c) {
  return std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" + std::to_string(c.bk) + "_w" +
         std::to_string(c.warps) + "_s" + std::to_string(c.stages);
}

Constants matmulConstants(const MatmulConfig& c) {
  return Constants{{"BM", c.bm}, {"BN", c.bn}, {"BK", c.bk}, {"GROUP_M", 8}};
}

KernelDef matmulFor(const std::string& dtype) {
  if (dtype == "f16") return kernels::matmul_kernel();
  if (dtype == "bf16") return kernels::matmul_kernel_of<bf16>(dtype);
  if (dtype == "f8e4m3") return kernels::matmul_kernel_of<f8e4m3>(dtype);
  if (dtype == "f8e5m2") return kernels::matmul_kernel_of<f8e5m2>(dtype);
  if (dtype == "i8") return kernels::matmul_kernel_of<i8>(dtype);
  if (dtype == "tf32") return kernels::matmul_tf32_kernel();
  throw Error("matmul benchmark: no matmul for input type '" + dtype + "' (f16, bf16, f8e4m3, f8e5m2, i8 or tf32)");
}

KernelDef attentionFor(const std::string& dtype) {
  if (dtype == "f16") return kernels::attention_fwd_kernel();
  if (dtype == "bf16") return kernels::attention_fwd_bf16_kernel();
  throw Error("attention benchmark: no attention for input type '" + dtype + "' (f16 or bf16)");
}

}  // namespace

const std::vector<AttentionConfig>& standardAttentionConfigs() {
  static const std::vector<AttentionConfig> configs = [] {
    std::vector<AttentionConfig> all;
    for (bool causal : {false, true})
      for (AttentionConfig c : {AttentionConfig{128, 64, 64, 8}, AttentionConfig{128, 128, 64, 8},
                                AttentionConfig{128, 64, 128, 8}, AttentionConfig{128, 128, 128, 8},
                                AttentionConfig{64, 64, 64, 4}}) {
        c.causal = causal;
        all.push_back(c);
      }
    return all;
  }();
  return configs;
}

const std::vector<MatmulConfig>& standardMatmulConfigs() {
  static const std::vector<MatmulConfig> configs{{128, 128, 64, 4, 3}, {128, 128, 64, 8, 3}, {128, 256, 64, 8, 3},
                                                 {64, 256, 32, 4, 4},  {128, 64, 64, 4, 4},  {64, 64, 32, 4, 4}};
  return configs;
}

std::string KernelCase::name() const { return kernel + "_" + dtype + "_" + config + "_" + arch; }

backends::TargetOptions KernelCase::targetOptions() const {
  backends::TargetOptions options;
  options.arch = arch;
  options.numWarps = numWarps;
  options.numStages = numStages;
  options.persistent = persistent;
  options.warpSpecialize = warpSpecialize;
  options.pingPong = pingPong;
  options.matrixInstrSize = matrixInstrSize;
  return options;
}

KernelCase matmulCase(const std::string& dtype, const MatmulConfig& config, const std::string& arch) {
  return KernelCase{"matmul",         tileName(config),        dtype,        arch,
                    matmulFor(dtype), matmulConstants(config), config.warps, kMatmulUnitStrides, config.stages};
}

KernelCase matmulDescriptorCase(const MatmulConfig& config, const std::string& arch) {
  KernelCase c{"matmul_desc", tileName(config), "f16", arch, kernels::matmul_desc_kernel(), matmulConstants(config),
               config.warps, {"stride_cn"}, config.stages};
  c.descriptors = {{"a", ir::Type::tensorDesc({config.bm, config.bk}, ir::Type::f16())},
                   {"b", ir::Type::tensorDesc({config.bk, config.bn}, ir::Type::f16())}};
  return c;
}

KernelCase matmulDescriptorF16OutCase(const MatmulConfig& config, const std::string& arch, bool tmaStore) {
  KernelCase c = matmulDescriptorCase(config, arch);
  if (tmaStore) {
    c.kernel = "matmul_desc_tma_c";
    c.def = kernels::matmul_desc_tma_c_kernel<f16>("f16");
    c.unitParams = {};
    c.descriptors["c"] = ir::Type::tensorDesc({config.bm, config.bn}, ir::Type::f16());
  } else {
    c.kernel = "matmul_desc_out";
    c.def = kernels::matmul_desc_same_out_kernel<f16>("f16");
  }
  return c;
}

KernelCase matmulBTransposedCase(const std::string& dtype, const MatmulConfig& config, const std::string& arch) {
  KernelCase c = matmulCase(dtype, config, arch);
  c.config += "_bT";
  c.unitParams = kMatmulBTransposedUnitStrides;
  return c;
}

KernelCase raggedMatmulCase(const std::string& dtype, const MatmulConfig& config, const std::string& arch,
                            int64_t size) {
  KernelCase c = matmulCase(dtype, config, arch);
  c.config += "_ragged" + std::to_string(size);
  c.raggedSize = size;
  return c;
}

KernelCase attentionCase(const std::string& dtype, const AttentionConfig& config, const std::string& arch) {
  const std::string tiles = std::to_string(config.bm) + "x" + std::to_string(config.bn) + "_d" +
                            std::to_string(config.headDim) + "_w" + std::to_string(config.warps) +
                            (config.causal ? "_causal" : "");
  const Constants constants{
      {"BM", config.bm}, {"BN", config.bn}, {"HEAD_DIM", config.headDim}, {"CAUSAL", config.causal ? 1 : 0}};
  return KernelCase{"attention_fwd", tiles, dtype, arch, attentionFor(dtype), constants, config.warps, {}};
}

KernelCase attentionBackwardCase(const std::string& kernel, const std::string& dtype, const AttentionConfig& config,
                                 const std::string& arch) {
  if (dtype != "f16" && dtype != "bf16")
    throw Error("attention benchmark: no attention backward for input type '" + dtype + "' (f16 or bf16)");
  const std::string suffix = dtype == "f16" ? "" : "_bf16";
  KernelCase c = attentionCase(dtype, config, arch);
  c.kernel = kernel;
  const bool half = dtype == "f16";
  if (kernel == "attention_bwd_dkdv")
    c.def = half ? kernels::attention_bwd_dkdv_kernel_of<f16>(suffix)
                 : kernels::attention_bwd_dkdv_kernel_of<bf16>(suffix);
  else if (kernel == "attention_bwd_dq")
    c.def = half ? kernels::attention_bwd_dq_kernel_of<f16>(suffix) : kernels::attention_bwd_dq_kernel_of<bf16>(suffix);
  else
    throw Error("attention benchmark: no attention backward kernel '" + kernel + "' (attention_bwd_dkdv or _dq)");
  return c;
}

KernelCase attentionDescriptorCase(const std::string& dtype, const AttentionConfig& config, const std::string& arch) {
  KernelCase c = attentionCase(dtype, config, arch);
  c.kernel = "attention_fwd_desc";
  c.def = dtype == "f16" ? kernels::attention_fwd_desc_kernel() : kernels::attention_fwd_desc_bf16_kernel();
  const ir::Type element = dtype == "f16" ? ir::Type::f16() : ir::Type::scalar(ir::ScalarKind::BF16);
  const ir::Type queryBlock = ir::Type::tensorDesc({1, config.bm, config.headDim}, element);
  const ir::Type keyBlock = ir::Type::tensorDesc({1, config.bn, config.headDim}, element);
  c.descriptors = {{"q", queryBlock}, {"k", keyBlock}, {"v", keyBlock}, {"out", queryBlock}};
  return c;
}

KernelCase attentionOverlapCase(const std::string& dtype, const AttentionConfig& config, const std::string& arch) {
  KernelCase c = attentionDescriptorCase(dtype, config, arch);
  c.kernel = "attention_fwd_desc_overlap";
  c.def = dtype == "f16" ? kernels::attention_fwd_desc_overlap_kernel()
                         : kernels::attention_fwd_desc_overlap_bf16_kernel();
  return c;
}

std::vector<KernelCase> tutorialCases(const std::string& arch) {
  const MatmulConfig epilogueTiles{128, 128, 64, 8};
  Constants epilogue = matmulConstants(epilogueTiles);
  epilogue["ACTIVATION"] = kernels::kActivationGeluTanh;
  std::vector<KernelCase> cases{
      {"vector_add", "BLOCK=1024_w4", "f32", arch, kernels::vector_add_kernel(), {{"BLOCK", 1024}}, 4, {}},
      {"softmax", "BLOCK=1024_w4", "f32", arch, kernels::softmax_kernel(), {{"BLOCK", 1024}}, 4, {}},
      {"layernorm_fwd", "BLOCK=512_w4", "f32", arch, kernels::layernorm_fwd_kernel(), {{"BLOCK", 512}}, 4, {}},
      {"layernorm_bwd_dx", "BLOCK=2048_w8", "f32", arch, kernels::layernorm_bwd_dx_kernel(), {{"BLOCK", 2048}}, 8,
       {}},
      {"layernorm_bwd_dwdb", "BLOCK=4x256_w4", "f32", arch, kernels::layernorm_bwd_dwdb_kernel(),
       {{"BLOCK_M", 4}, {"BLOCK_N", 256}}, 4, {}},
      {"matmul_epilogue_gelu", tileName(epilogueTiles), "f16", arch, kernels::matmul_epilogue_f16_kernel(), epilogue,
       epilogueTiles.warps, kMatmulUnitStrides, epilogueTiles.stages},
  };
  // Tutorial 5 at issue 12's first configuration (BM 128, BN 64, head dim 64, 8 warps), causal and not.
  for (bool causal : {false, true}) cases.push_back(attentionCase("f16", AttentionConfig{128, 64, 64, 8, causal}, arch));
  return cases;
}

std::unique_ptr<ir::Module> traceSpecialized(const KernelCase& c) {
  std::unique_ptr<ir::Module> m = c.def.trace(c.constants, c.descriptors);
  std::vector<jit::ArgFacts> facts;
  for (const ParamInfo& p : c.def.runtimeParams()) {
    jit::ArgFacts f;
    f.equalTo1 = c.unitParams.count(p.name) > 0;
    const bool size = p.type.isInt() && !f.equalTo1;
    f.divisibleBy16 = p.kind == ParamKind::Pointer || p.kind == ParamKind::TensorDescriptor ||
                      (size && c.raggedSize % 16 == 0);
    f.divisibleBy8 = size && !f.divisibleBy16 && c.raggedSize % 8 == 0;  // as jit::argumentFacts decides
    f.offsets32 = p.kind == ParamKind::Pointer;  // buffers of known size (DeviceBuffers), under 2^31 elements
    if (p.kind == ParamKind::TensorDescriptor) f.descriptorType = c.descriptors.at(p.name);
    facts.push_back(f);
  }
  jit::applySpecialization(*m->functions().at(0), facts);
  return m;
}

}  // namespace tessera::bench
