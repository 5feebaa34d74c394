// The compile pipeline (jit/Compiler.cpp) against a stand-in target, so that the stage order, the recorded IR,
// the dump variables and the error messages are tested independently of NVPTX; then the real NVPTX target on the
// tutorial kernels: PTX that ptxas accepts for sm_90a and sm_80 with no spills and no local memory.
#include <gtest/gtest.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "ir/Printer.h"
#include "jit/Compiler.h"
#include "jit/JitKernel.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"
#include "tests/gpucheck/Cases.h"
#include "transforms/PassManager.h"

namespace fs = std::filesystem;
using namespace tessera;
using namespace tessera::jit;

namespace {

// Records what it was asked to lower and emits a recognizable "binary".
class StandInTarget : public backends::Target {
 public:
  const char* name() const override { return "stand-in"; }
  int warpSize() const override { return 32; }
  std::string defaultArch() const override { return "arch_1"; }
  std::string binaryFormat() const override { return "ptx"; }
  std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                            const backends::TargetOptions& opts) const override {
    if (failLowering) throw Error("cannot lower op 'dot' (stand-in failure)");
    lowered = ir::print(f);
    auto m = std::make_unique<llvm::Module>(f.name(), ctx);
    llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                           llvm::GlobalValue::ExternalLinkage, f.name(), *m);
    return m;
  }
  std::string emitBinary(llvm::Module& m, const backends::TargetOptions& opts) const override {
    return "binary of " + m.getName().str() + " for " + opts.arch + " warps " + std::to_string(opts.numWarps);
  }
  bool failLowering = false;
  mutable std::string lowered;
};

std::unique_ptr<ir::Module> vectorAddIR() { return kernels::vector_add_kernel().trace({{"BLOCK", int64_t(1024)}}); }

bool pipelineAvailable(std::string& why) {
  std::vector<std::string> missing = missingPipelinePasses();
  for (const std::string& m : missing) why += (why.empty() ? "passes not registered yet: " : ", ") + m;
  return missing.empty();
}

struct EnvVar {
  EnvVar(const char* n, const std::string& v) : name(n) { ::setenv(n, v.c_str(), 1); }
  ~EnvVar() { ::unsetenv(name); }
  const char* name;
};

}  // namespace

TEST(JitCompile, NumWarpsMustBeAPowerOfTwo) {
  StandInTarget target;
  auto m = vectorAddIR();
  backends::TargetOptions options;
  options.numWarps = 3;
  try {
    compile(*m->functions()[0], target, options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_warps must be a power of two between 1 and 32, got 3"), std::string::npos)
        << e.what();
  }
}

TEST(JitCompile, EveryPipelinePassIsRegistered) {
  // compile() refuses to start, naming each missing pass, when this list is not empty.
  EXPECT_EQ(missingPipelinePasses(), std::vector<std::string>{});
}

TEST(JitCompile, PipelineOrderIsTheDocumentedOne) {
  EXPECT_EQ(pipelinePassNames(),
            (std::vector<std::string>{"canonicalize", "cse", "dce", "coalesce", "assign-layouts",
                                      "remove-layout-conversions", "canonicalize", "cse", "dce",
                                      "allocate-shared-memory", "insert-barriers"}));
}

TEST(JitCompile, RecordsEveryStageAndLeavesTheInputAlone) {
  std::string why;
  if (!pipelineAvailable(why)) GTEST_SKIP() << why;
  StandInTarget target;
  auto m = vectorAddIR();
  const ir::Function& f = *m->functions()[0];
  const std::string before = ir::print(f);
  backends::TargetOptions options;
  options.numWarps = 8;
  CompiledKernel k = compile(f, target, options);
  EXPECT_EQ(ir::print(f), before) << "compile must work on a copy";

  std::vector<std::string> stages;
  for (const auto& [stage, text] : k.irAfterPass) stages.push_back(stage);
  std::vector<std::string> want{"input"};
  for (const std::string& p : pipelinePassNames()) want.push_back(p);
  EXPECT_EQ(stages, want);
  EXPECT_NE(k.irAfterPass.front().second.find("num_warps = 8"), std::string::npos) << k.irAfterPass.front().second;
  EXPECT_EQ(target.lowered, k.irAfterPass.back().second) << "the target gets the IR after the last pass";
  EXPECT_NE(target.lowered.find("#blocked"), std::string::npos) << "tiles carry layouts by then:\n" << target.lowered;
  EXPECT_EQ(k.name, "vector_add");
  EXPECT_EQ(k.target, "stand-in");
  EXPECT_EQ(k.arch, "arch_1");  // the target's default
  EXPECT_EQ(k.numWarps, 8);
  EXPECT_EQ(k.warpSize, 32);
  EXPECT_EQ(k.threadsPerProgram(), 256);
  EXPECT_EQ(k.binary, "binary of vector_add for arch_1 warps 8");
  EXPECT_NE(k.llvmIR.find("declare void @vector_add()"), std::string::npos) << k.llvmIR;
  // sharedBytes is the function's smem_bytes after allocation (vector_add needs none).
  std::smatch match;
  if (std::regex_search(target.lowered, match, std::regex("smem_bytes = (\\d+)")))
    EXPECT_EQ(k.sharedBytes, std::stoll(match[1]));
  else
    EXPECT_EQ(k.sharedBytes, 0);
}

TEST(JitCompile, TargetFailuresNameKernelAndStage) {
  std::string why;
  if (!pipelineAvailable(why)) GTEST_SKIP() << why;
  StandInTarget target;
  target.failLowering = true;
  auto m = vectorAddIR();
  try {
    compile(*m->functions()[0], target, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("JIT compile of @vector_add for stand-in arch_1, stage 'lower to LLVM': cannot lower op 'dot'"),
              std::string::npos)
        << what;
  }
}

TEST(JitCompile, DumpVariablesWriteEveryArtifact) {
  std::string why;
  if (!pipelineAvailable(why)) GTEST_SKIP() << why;
  std::string pattern = (fs::temp_directory_path() / "tessera-dump-XXXXXX").string();
  fs::path dir = ::mkdtemp(pattern.data());
  StandInTarget target;
  auto m = vectorAddIR();
  std::string err;
  {
    EnvVar dumpDir("TESSERA_DUMP_DIR", dir.string());
    EnvVar dumpIR("TESSERA_DUMP_IR", "1");
    EnvVar dumpLLVM("TESSERA_DUMP_LLVM", "1");
    EnvVar dumpPTX("TESSERA_DUMP_PTX", "1");
    testing::internal::CaptureStderr();
    compile(*m->functions()[0], target, {});
    err = testing::internal::GetCapturedStderr();
  }
  EXPECT_NE(err.find("// -----// Tessera IR after coalesce (@vector_add) //----- //"), std::string::npos);
  EXPECT_NE(err.find("// -----// LLVM IR as lowered (@vector_add)"), std::string::npos);
  EXPECT_NE(err.find("// -----// PTX (@vector_add, arch_1)"), std::string::npos);
  EXPECT_NE(err.find("binary of vector_add"), std::string::npos);
  std::vector<fs::path> kernelDirs;
  for (const auto& e : fs::directory_iterator(dir)) kernelDirs.push_back(e.path());
  ASSERT_EQ(kernelDirs.size(), 1u);
  EXPECT_EQ(kernelDirs[0].filename().string().rfind("vector_add-", 0), 0u) << kernelDirs[0];
  for (const char* file : {"00-input.tir", "04-coalesce.tir", "11-insert-barriers.tir", "kernel.ll", "kernel.opt.ll",
                           "kernel.ptx"})
    EXPECT_TRUE(fs::exists(kernelDirs[0] / file)) << file;
  std::ifstream ptx(kernelDirs[0] / "kernel.ptx");
  std::string contents((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "binary of vector_add for arch_1 warps 4");
  fs::remove_all(dir);
}

// ---- the real NVPTX target

namespace {

std::unique_ptr<backends::Target> nvptxOrWhyNot(std::string& why) {
  if (!pipelineAvailable(why)) return nullptr;
  try {
    return backends::createTarget("nvptx");
  } catch (const Error& e) {
    why = std::string("no NVPTX target: ") + e.what();
    return nullptr;
  }
}

struct TutorialKernel {
  KernelDef def;
  Constants constants;
  std::vector<KernelArg> args;
  int numWarps;
};

std::vector<TutorialKernel> tutorialKernels() {
  auto p = [](int i) { return KernelArg::pointer(0x10000 * (i + 1)); };  // 16-byte aligned fake addresses
  return {
      {kernels::vector_add_kernel(), {{"BLOCK", int64_t(1024)}}, {p(0), p(1), p(2), 98432}, 4},
      {kernels::softmax_kernel(), {{"BLOCK", int64_t(1024)}}, {p(0), p(1), 781, 781, 781}, 4},
      {kernels::layernorm_fwd_kernel(), {{"BLOCK", int64_t(512)}}, {p(0), p(1), p(2), p(3), p(4), p(5), 1500, 1500, 1e-5}, 4},
      {kernels::matmul_kernel(),
       {{"BM", int64_t(64)}, {"BN", int64_t(64)}, {"BK", int64_t(32)}, {"GROUP_M", int64_t(4)}},
       {p(0), p(1), p(2), 512, 512, 512, 512, 1, 512, 1, 512, 1},
       4},
  };
}

// Runs ptxas on `ptx`; returns its exit status and its -v report.
int runPtxas(const std::string& ptx, const std::string& arch, std::string& report) {
  std::string pattern = (fs::temp_directory_path() / "tessera-ptxas-XXXXXX").string();
  fs::path dir = ::mkdtemp(pattern.data());
  { std::ofstream(dir / "k.ptx") << ptx; }
  std::string cmd = "/usr/local/cuda/bin/ptxas -arch=" + arch + " -v -o " + (dir / "k.cubin").string() + " " +
                    (dir / "k.ptx").string() + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::array<char, 512> buf;
  while (pipe && std::fgets(buf.data(), buf.size(), pipe)) report += buf.data();
  int status = pipe ? ::pclose(pipe) : -1;
  fs::remove_all(dir);
  return status;
}

}  // namespace

TEST(JitCompileNvptx, TutorialKernelsCompileToPtxThatPtxasAcceptsWithoutSpills) {
  std::string why;
  auto target = nvptxOrWhyNot(why);
  if (!target) GTEST_SKIP() << why;
  bool havePtxas = fs::exists("/usr/local/cuda/bin/ptxas");
  KernelCache cache{fs::path()};
  for (const char* arch : {"sm_90a", "sm_80"}) {
    for (TutorialKernel& t : tutorialKernels()) {
      SCOPED_TRACE(t.def.name() + " " + arch);
      JitKernel k(t.def, cache);
      LaunchOptions options;
      options.numWarps = t.numWarps;
      options.arch = arch;
      std::shared_ptr<const CompiledKernel> c;
      ASSERT_NO_THROW(c = k.compileOnly(t.args, t.constants, options));
      EXPECT_EQ(c->format, "ptx");
      EXPECT_EQ(c->arch, arch);
      EXPECT_NE(c->binary.find(".entry " + t.def.name()), std::string::npos);
      EXPECT_NE(c->binary.find(std::string(".target ") + arch), std::string::npos);
      // Specialization reached the IR: 16-byte aligned pointers are marked.
      EXPECT_NE(c->irAfterPass.front().second.find("{divisibility = 16}"), std::string::npos);
      // A second compile of the same specialization is a cache hit.
      EXPECT_EQ(k.compileOnly(t.args, t.constants, options).get(), c.get());
      if (!havePtxas) continue;
      std::string report;
      ASSERT_EQ(runPtxas(c->binary, arch, report), 0) << report;
      EXPECT_NE(report.find("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"), std::string::npos)
          << report;
    }
  }
}

// Every GPU-vs-interpreter case (tests/gpucheck/Cases.h) compiles for sm_90a to PTX that ptxas accepts, and its
// interpreter reference runs, so that the GPU table only ever reports real mismatches.
TEST(JitCompileNvptx, EveryGpuCheckCaseCompilesAndItsReferenceRuns) {
  std::string why;
  auto target = nvptxOrWhyNot(why);
  if (!target) GTEST_SKIP() << why;
  bool havePtxas = fs::exists("/usr/local/cuda/bin/ptxas");
  KernelCache cache{fs::path()};
  for (const gpucheck::CheckCase& c : gpucheck::allCases()) {
    SCOPED_TRACE(c.name);
    std::vector<KernelArg> args;
    std::vector<interp::Arg> interpArgs;
    std::vector<std::vector<uint8_t>> copies;
    copies.reserve(c.args.size());
    for (const gpucheck::CheckArg& a : c.args) {
      if (const auto* b = std::get_if<gpucheck::HostBuffer>(&a)) {
        args.push_back(KernelArg::pointer(0x10000 * (args.size() + 1)));
        copies.push_back(b->bytes);
        interpArgs.push_back(interp::Buffer{copies.back().data(), copies.back().size()});
      } else if (const auto* i = std::get_if<int64_t>(&a)) {
        args.push_back(*i);
        interpArgs.push_back(*i);
      } else {
        args.push_back(std::get<double>(a));
        interpArgs.push_back(std::get<double>(a));
      }
    }
    try {
      c.kernel.runInterpreter(c.grid, interpArgs, c.constants);
    } catch (const Error& e) {
      ADD_FAILURE() << "interpreter: " << e.what();
      continue;
    }
    JitKernel k(c.kernel, cache);
    LaunchOptions options;
    options.numWarps = c.numWarps;
    options.arch = "sm_90a";
    std::shared_ptr<const CompiledKernel> compiled;
    try {
      compiled = k.compileOnly(args, c.constants, options);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    if (!havePtxas) continue;
    std::string report;
    EXPECT_EQ(runPtxas(compiled->binary, "sm_90a", report), 0) << report;
  }
}

// The JIT asks the target for its layout policy, so an f16 matmul gets mma.sync accumulators and tensor cores,
// while an f32 one stays on the FMA path.
TEST(JitCompileNvptx, F16MatmulUsesTensorCoresThroughThePipeline) {
  std::string why;
  auto target = nvptxOrWhyNot(why);
  if (!target) GTEST_SKIP() << why;
  auto m = kernels::matmul_kernel().trace(
      {{"BM", int64_t(64)}, {"BN", int64_t(64)}, {"BK", int64_t(32)}, {"GROUP_M", int64_t(8)}});
  backends::TargetOptions options;
  options.arch = "sm_90a";
  options.numWarps = 4;
  CompiledKernel c = compile(*m->functions()[0], *target, options);
  EXPECT_NE(c.binary.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
  EXPECT_NE(c.binary.find("ldmatrix.sync.aligned"), std::string::npos);
  EXPECT_EQ(c.binary.find("fma.rn.f32"), std::string::npos);
  if (!fs::exists("/usr/local/cuda/bin/ptxas")) return;
  std::string report;
  ASSERT_EQ(runPtxas(c.binary, "sm_90a", report), 0) << report;
  EXPECT_NE(report.find("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << report;
}
