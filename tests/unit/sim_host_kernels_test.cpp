// Every tutorial kernel at realistic sizes, compiled through the JIT pipeline for nvptx sm_80 and sm_90a and
// amdgpu gfx942, rewrites for the host (jit/sim/HostModule.h) and compiles there (jit/sim/HostJit.h) with every
// __tsim_* reference resolved. The runtime functions are stubs that abort: this compiles the emulator's input, it
// does not run it. (The GPU check table's cases are rewritten, compiled and run by ctest's gpu_check_sim_* tests.)
#include <gtest/gtest.h>

#include <llvm/IR/Module.h>

#include "SimHostTestUtil.h"
#include "backends/nvptx/NVPTXTarget.h"

namespace tessera::testing {
namespace {

struct TargetArch {
  const char* target;
  const char* arch;
};
constexpr TargetArch kTargets[] = {{"nvptx", "sm_80"}, {"nvptx", "sm_90a"}, {"amdgpu", "gfx942"}};

struct Param {
  SimKernelCase kernel;
  TargetArch target;
};

std::vector<Param> params() {
  std::vector<Param> all;
  for (const SimKernelCase& c : tutorialKernelCases())
    for (TargetArch t : kTargets) all.push_back({c, t});
  return all;
}

void PrintTo(const Param& p, std::ostream* os) { *os << p.kernel.name << " for " << p.target.target << " " << p.target.arch; }

class SimHostKernels : public ::testing::TestWithParam<Param> {};

TEST_P(SimHostKernels, RewritesAndCompilesForTheHost) {
  const Param& p = GetParam();
  std::shared_ptr<const jit::CompiledKernel> compiled;
  try {
    compiled = compileCase(p.kernel, p.target.target, p.target.arch);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (std::string(p.target.target) == "nvptx" && backends::nvptx::libdevicePath().empty() &&
        what.find("libdevice") != std::string::npos)
      GTEST_SKIP() << "needs libdevice, which is not installed: " << what;
    throw;
  }
  sim::HostModule host = sim::rewriteForHost(compiled->optimizedLLVMIR, compiled->name + ".opt.ll");
  EXPECT_EQ(host.kernel, compiled->name);
  EXPECT_EQ(host.target, p.target.target);
  ASSERT_NE(host.module->getFunction(host.entry), nullptr);
  // Every load and store of global or shared memory is a site; no kernel here lacks either.
  bool loads = false, stores = false;
  for (const sim::Site& s : host.sites) {
    loads |= s.kind == sim::SiteKind::Load;
    stores |= s.kind == sim::SiteKind::Store || s.kind == sim::SiteKind::AtomicRMW;
  }
  EXPECT_TRUE(loads && stores) << sim::formatSiteTable(host.sites);

  sim::HostJit jit(std::move(host), runtimeStubs());
  EXPECT_NE(jit.entry(), nullptr);
  EXPECT_EQ(jit.kernel(), compiled->name);
}

INSTANTIATE_TEST_SUITE_P(AllKernels, SimHostKernels, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return info.param.kernel.name + "_" + info.param.target.arch;
                         });

}  // namespace
}  // namespace tessera::testing
