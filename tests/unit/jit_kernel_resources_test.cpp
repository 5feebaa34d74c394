// jit::kernelResources: PTX through ptxas -v, AMDGPU code objects through their metadata, and clear errors where
// the figures cannot be had (tests/python/test_jit.py checks the figures against ptxas run by hand).
#include <gtest/gtest.h>

#include "ir/Error.h"
#include "jit/Compiler.h"
#include "jit/KernelResources.h"
#include "jit/PtxasUsage.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/vector_add.h"

namespace tessera::testing {
namespace {

std::string errorOf(const jit::CompiledKernel& kernel, const std::string& ptxas = "") {
  try {
    jit::kernelResources(kernel, ptxas);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

jit::CompiledKernel compiled(const KernelDef& kernel, const Constants& constants, const std::string& target,
                             const std::string& arch, int numWarps = 4) {
  const std::unique_ptr<ir::Module> traced = kernel.trace(constants);
  backends::TargetOptions options;
  options.arch = arch;
  options.numWarps = numWarps;
  return jit::compile(*traced->functions().at(0), *backends::createTarget(target), options);
}

jit::CompiledKernel vectorAdd(const std::string& target, const std::string& arch) {
  return compiled(kernels::vector_add_kernel(), {{"BLOCK", 1024}}, target, arch);
}

TEST(KernelResources, AmdgpuFiguresComeFromTheCodeObject) {
  const jit::KernelResources r = jit::kernelResources(vectorAdd("amdgpu", "gfx942"));
  EXPECT_EQ(r.source, "code object metadata");
  ASSERT_TRUE(r.figure("vgprs"));
  EXPECT_GT(*r.figure("vgprs"), 0);
  EXPECT_EQ(r.figure("vgpr_spills"), 0);
  EXPECT_FALSE(r.figure("registers")) << "PTX's figure names are not an AMDGPU code object's";
  // A 256x256 tile on 2 waves holds 512 f32 accumulators per lane, more than its VGPRs and AGPRs: it spills.
  const jit::KernelResources spilling = jit::kernelResources(
      compiled(kernels::matmul_kernel(), {{"BM", 256}, {"BN", 256}, {"BK", 32}, {"GROUP_M", 8}}, "amdgpu", "gfx942", 2));
  EXPECT_GT(spilling.figure("vgpr_spills").value_or(0), 0);
  EXPECT_GT(spilling.figure("scratch_bytes").value_or(0), 0);
}

TEST(KernelResources, PtxFiguresComeFromPtxas) {
  if (!jit::findPtxas()) GTEST_SKIP() << "ptxas is not installed";
  const jit::KernelResources r = jit::kernelResources(vectorAdd("nvptx", "sm_90a"));
  EXPECT_NE(r.source.find("ptxas -v"), std::string::npos) << r.source;
  ASSERT_TRUE(r.figure("registers"));
  EXPECT_GT(*r.figure("registers"), 0);
  EXPECT_EQ(r.figure("spill_store_bytes"), 0);
}

TEST(KernelResources, ErrorsNameTheKernelAndWhy) {
  jit::CompiledKernel ptx = vectorAdd("nvptx", "sm_90a");
  EXPECT_NE(errorOf(ptx, "/nonexistent/ptxas").find("'/nonexistent/ptxas' is not an executable file"),
            std::string::npos);
  jit::CompiledKernel broken = vectorAdd("amdgpu", "gfx942");
  broken.binary = "not an ELF";
  EXPECT_NE(errorOf(broken).find("vector_add"), std::string::npos) << errorOf(broken);
  jit::CompiledKernel unknown = broken;
  unknown.target.clear();
  EXPECT_NE(errorOf(unknown).find("kernel 'vector_add': its hsaco records no register figures"), std::string::npos)
      << errorOf(unknown);
}

}  // namespace
}  // namespace tessera::testing
