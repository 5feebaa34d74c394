// The compile pipeline (jit/Compiler.cpp) against a stand-in target, so that the stage order, the recorded IR,
// the dump variables and the error messages are tested independently of NVPTX; then the real NVPTX target on the
// tutorial kernels: PTX that ptxas accepts for sm_90a and sm_80 with no spills and no local memory, and the
// optimized LLVM IR as a stage of its own; last, the AMDGPU target's assembly dump.
#include <gtest/gtest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "ScopedEnv.h"
#include "ir/Parser.h"
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

// Records what it was asked to lower, marks the module it optimizes, and emits a recognizable "binary" (only
// from an optimized module).
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
  void optimize(llvm::Module& m, const backends::TargetOptions&) const override {
    if (failOptimizing) throw Error("invalid LLVM IR after optimization (stand-in failure)");
    m.getOrInsertNamedMetadata("stand_in.optimized");
  }
  std::string emit(llvm::Module& m, const backends::TargetOptions& opts) const override {
    if (!m.getNamedMetadata("stand_in.optimized")) throw Error("emit() got a module that was not optimized");
    return "binary of " + m.getName().str() + " for " + opts.arch + " warps " + std::to_string(opts.numWarps);
  }
  std::string emitAssembly(const llvm::Module& m, const backends::TargetOptions&) const override {
    return "assembly of " + m.getName().str() + "\n";
  }
  bool failLowering = false, failOptimizing = false;
  mutable std::string lowered;
};

std::unique_ptr<ir::Module> vectorAddIR() { return kernels::vector_add_kernel().trace({{"BLOCK", int64_t(1024)}}); }

// The default pipeline (transforms/Pipeline.cpp), as docs/JIT.md documents it.
const std::vector<std::string> kDefaultPipeline = {"expand-descriptor-loads", "canonicalize-pointers", "transpose-loads",
                                                   "canonicalize", "cse", "dce",
                                                   "coalesce", "assign-layouts", "remove-layout-conversions",
                                                   "canonicalize", "cse", "dce",
                                                   "async-copy-dot-operands", "pipeline-loops",
                                                   "stage-copies-in-registers", "dce", "sink-to-uses",
                                                   "ping-pong-consumers", "order-consumer-groups",
                                                   "allocate-shared-memory", "insert-barriers"};

using EnvVar = testing_support::ScopedEnv;

// The error compiling the vector_add IR with `options` for the stand-in target; empty when it compiles.
std::string compileError(const backends::TargetOptions& options) {
  StandInTarget target;
  auto m = vectorAddIR();
  try {
    compile(*m->functions()[0], target, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JitCompile, NumWarpsMustBeAPowerOfTwo) {
  backends::TargetOptions options;
  options.numWarps = 3;
  const std::string error = compileError(options);
  EXPECT_NE(error.find("num_warps must be a power of two between 1 and 32, got 3"), std::string::npos) << error;
}

TEST(JitCompile, NumStagesMustBeBetweenOneAndTheMaximum) {
  for (int stages : {0, kMaxNumStages + 1}) {
    backends::TargetOptions options;
    options.numStages = stages;
    const std::string error = compileError(options);
    EXPECT_NE(error.find("num_stages must be between 1 and " + std::to_string(kMaxNumStages) + ", got " +
                         std::to_string(stages)),
              std::string::npos)
        << error;
  }
}

// matrix_instr_nonkdim (TargetOptions::matrixInstrSize): 0, 16 or 32, checked by compile and by a JitKernel's launch
// options alike, on every target (NVIDIA ignores a valid one).
TEST(JitCompile, ClusterShapesNeedNvptxAtSm90OrLaterAndAtMostEightPrograms) {
  auto error = [](const std::string& target, const std::string& arch, std::array<int, 3> shape, bool persistent) {
    try {
      checkClusterDims("ctx", target, arch, shape, persistent);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("nvptx", "sm_90a", {2, 1, 1}, false), "");
  EXPECT_EQ(error("nvptx", "sm_100a", {2, 2, 2}, false), "");  // the digits after sm_, not the first two
  EXPECT_EQ(error("nvptx", "sm_80", {1, 1, 1}, true), "");     // no clusters: nothing to check
  EXPECT_NE(error("nvptx", "sm_80", {2, 1, 1}, false).find("ctx: thread-block clusters (2x1x1) need sm_90 or later"),
            std::string::npos);
  EXPECT_NE(error("amdgpu", "gfx942", {2, 1, 1}, false).find("need sm_90 or later"), std::string::npos);
  EXPECT_NE(error("nvptx", "sm_90a", {3, 3, 1}, false).find("a cluster holds at most 8 programs, got 3x3x1"),
            std::string::npos);
  EXPECT_NE(error("nvptx", "sm_90a", {2, -1, 1}, false).find("cluster dimensions must be at least 1, got 2x-1x1"),
            std::string::npos);
  EXPECT_NE(error("nvptx", "sm_90a", {2, 1, 1}, true).find("persistent kernels do not run in thread-block clusters"),
            std::string::npos);
}

TEST(JitCompile, MatrixInstrSizeMustBeZeroSixteenOrThirtyTwo) {
  for (int size : {0, 16, 32, 8, 24, 64}) {
    backends::TargetOptions options;
    options.matrixInstrSize = size;
    const std::string error = compileError(options);
    if (size == 0 || size == 16 || size == 32)
      EXPECT_EQ(error, "") << size;
    else
      EXPECT_NE(error.find("matrix_instr_nonkdim must be 0 (the target's choice), 16 or 32, got " +
                           std::to_string(size)),
                std::string::npos)
          << error;
  }
  JitKernel kernel(kernels::vector_add_kernel());
  LaunchOptions launch;
  launch.matrixInstrSize = 24;
  try {
    kernel.compileOnly({KernelArg::pointer(0), KernelArg::pointer(0), KernelArg::pointer(0), int64_t(1024)},
                       {{"BLOCK", int64_t(256)}}, launch);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'vector_add': matrix_instr_nonkdim must be"), std::string::npos)
        << e.what();
  }
}

TEST(JitCompile, RecordsEveryStageAndLeavesTheInputAlone) {
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
  want.insert(want.end(), kDefaultPipeline.begin(), kDefaultPipeline.end());
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
  // The optimized module is a stage of its own: recorded after optimize(), before emit().
  EXPECT_EQ(k.llvmIR.find("stand_in.optimized"), std::string::npos) << k.llvmIR;
  EXPECT_NE(k.optimizedLLVMIR.find("!stand_in.optimized"), std::string::npos) << k.optimizedLLVMIR;
  // sharedBytes is the function's smem_bytes after allocation (vector_add needs none).
  std::smatch match;
  if (std::regex_search(target.lowered, match, std::regex("smem_bytes = (\\d+)")))
    EXPECT_EQ(k.sharedBytes, std::stoll(match[1]));
  else
    EXPECT_EQ(k.sharedBytes, 0);
}

TEST(JitCompile, ALaunchKeepsOnlyTheFinalTileIRAndWhatItsRuntimeLoads) {
  StandInTarget target;
  auto m = vectorAddIR();
  const ir::Function& f = *m->functions()[0];
  const CompiledKernel all = compile(f, target, {}, KeptIR::All);
  const CompiledKernel launch = compile(f, target, {}, KeptIR::ForLaunch);
  const CompiledKernel emulator = compile(f, target, {}, KeptIR::ForEmulator);
  for (const CompiledKernel* k : {&launch, &emulator}) {
    EXPECT_EQ(k->binary, all.binary);
    EXPECT_EQ(k->sharedBytes, all.sharedBytes);
    ASSERT_EQ(k->irAfterPass.size(), 1u);
    EXPECT_EQ(k->irAfterPass[0], all.irAfterPass.back()) << "the tile IR after the last pass, under its name";
    EXPECT_EQ(k->llvmIR, "");
  }
  EXPECT_EQ(launch.optimizedLLVMIR, "");
  EXPECT_EQ(emulator.optimizedLLVMIR, all.optimizedLLVMIR);
  EXPECT_NE(all.llvmIR, "");
  EXPECT_GT(all.irAfterPass.size(), 2u);
  // A dump asks for every stage whatever the caller keeps.
  EnvVar dump("TESSERA_DUMP_LLVM", "1");
  testing::internal::CaptureStderr();
  const CompiledKernel dumped = compile(f, target, {}, KeptIR::ForLaunch);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(dumped.llvmIR, all.llvmIR);
  EXPECT_EQ(dumped.irAfterPass, all.irAfterPass);
}

TEST(JitCompile, TargetFailuresNameKernelAndStage) {
  auto m = vectorAddIR();
  StandInTarget lowering;
  lowering.failLowering = true;
  StandInTarget optimizing;
  optimizing.failOptimizing = true;
  for (auto [target, message] :
       {std::pair<StandInTarget*, std::string>{&lowering, "stage 'lower to LLVM': cannot lower op 'dot'"},
        {&optimizing, "stage 'optimize LLVM': invalid LLVM IR after optimization (stand-in failure)"}}) {
    try {
      compile(*m->functions()[0], *target, {});
      ADD_FAILURE() << "expected an error: " << message;
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("JIT compile of @vector_add for stand-in arch_1, " + message), std::string::npos) << what;
    }
  }
}

TEST(JitCompile, PassFailuresNameKernelAndPass) {
  // Valid IR that assign-layouts rejects: a register value in a shared-memory layout.
  const char* text = R"(func @k(%out: ptr<i32>) {
  %a = arange {end = 64, start = 0} : tile<64xi32, #shared{max_phase = 1, order = [0], per_phase = 1, vec = 1}>
  %os = splat %out : tile<64xptr<i32>>
  %op = addptr %os, %a : tile<64xptr<i32>>
  store %op, %a
  return
}
)";
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "bad.tir");
  StandInTarget target;
  try {
    compile(*m->functions()[0], target, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("JIT compile of @k for stand-in arch_1, stage 'passes': pass 'assign-layouts' failed on "
                        "function @k: assign-layouts: tile value of type tile<64xi32, #shared"),
              std::string::npos)
        << what;
  }
}

TEST(JitCompile, DumpVariablesWriteEveryArtifact) {
  std::string pattern = (fs::temp_directory_path() / "tessera-dump-XXXXXX").string();
  fs::path dir = ::mkdtemp(pattern.data());
  StandInTarget target;
  auto m = vectorAddIR();
  std::string err;
  {
    EnvVar dumpDir("TESSERA_DUMP_DIR", dir.string());
    EnvVar dumpIR("TESSERA_DUMP_IR", "1");
    EnvVar dumpLLVM("TESSERA_DUMP_LLVM", "1");
    EnvVar dumpAsm("TESSERA_DUMP_ASM", "1");
    testing::internal::CaptureStderr();
    compile(*m->functions()[0], target, {});
    err = testing::internal::GetCapturedStderr();
  }
  // The tile IR comes from the pass manager, as in tessera-opt: the input once, then after every pass.
  EXPECT_NE(err.find("// -----// IR Dump Before expand-descriptor-loads (@vector_add) //----- //"), std::string::npos)
      << err;
  EXPECT_NE(err.find("// -----// IR Dump After coalesce (@vector_add) //----- //"), std::string::npos) << err;
  EXPECT_NE(err.find("// -----// LLVM IR as lowered (@vector_add)"), std::string::npos);
  EXPECT_NE(err.find("// -----// LLVM IR after optimization (@vector_add)"), std::string::npos);
  EXPECT_NE(err.find("// -----// Assembly (@vector_add, stand-in arch_1) //----- //\nassembly of vector_add"),
            std::string::npos)
      << err;
  std::vector<fs::path> kernelDirs;
  for (const auto& e : fs::directory_iterator(dir)) kernelDirs.push_back(e.path());
  ASSERT_EQ(kernelDirs.size(), 1u);
  EXPECT_EQ(kernelDirs[0].filename().string().rfind("vector_add-", 0), 0u) << kernelDirs[0];
  for (const char* file : {"00-input.tir", "07-coalesce.tir", "21-insert-barriers.tir", "kernel.ll", "kernel.opt.ll",
                           "kernel.s", "kernel.ptx"})
    EXPECT_TRUE(fs::exists(kernelDirs[0] / file)) << file;
  std::ifstream ptx(kernelDirs[0] / "kernel.ptx");
  std::string contents((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "binary of vector_add for arch_1 warps 4");
  fs::remove_all(dir);
}

// TESSERA_TIMINGS=1 prints one line per stage, in the order the stages run; nothing without it.
namespace {

// The stage names of the "tessera timing: @kernel target arch: stage: N.NNN ms" lines in `err`; a line of any
// other shape fails the test.
std::vector<std::string> timedStages(const std::string& err, const std::string& subject) {
  const std::regex line("tessera timing: " + subject + ": (.+): [0-9]+\\.[0-9]{3} ms");
  std::vector<std::string> stages;
  std::istringstream lines(err);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) stages.push_back(m[1]);
    else ADD_FAILURE() << "not a timing line: '" << l << "'";
  }
  return stages;
}

std::string compileCapturingStderr(const backends::Target& target, const ir::Function& f,
                                   KeptIR kept = KeptIR::All) {
  testing::internal::CaptureStderr();
  compile(f, target, {}, kept);
  return testing::internal::GetCapturedStderr();
}

}  // namespace

TEST(JitCompile, TimingsNameEveryStageInOrder) {
  StandInTarget target;
  auto m = vectorAddIR();
  std::string err;
  {
    EnvVar timings("TESSERA_TIMINGS", "1");
    err = compileCapturingStderr(target, *m->functions()[0]);
  }
  std::vector<std::string> want{"verify input"};
  for (const std::string& pass : kDefaultPipeline) want.push_back("pass " + pass);
  std::vector<std::string> wantForLaunch = want;
  want.insert(want.end(), {"passes", "verify tile IR", "lower to LLVM", "print LLVM IR", "optimize LLVM",
                           "print optimized LLVM IR", "emit ptx"});
  EXPECT_EQ(timedStages(err, "@vector_add stand-in arch_1"), want) << err;
  // TESSERA_VERIFY_EACH_PASS: `passes` verifies after each pass (naming the pass that broke the IR) instead.
  {
    EnvVar timings("TESSERA_TIMINGS", "1");
    EnvVar verifyEach("TESSERA_VERIFY_EACH_PASS", "1");
    err = compileCapturingStderr(target, *m->functions()[0]);
  }
  std::vector<std::string> wantVerifyingEach = want;
  wantVerifyingEach.erase(std::find(wantVerifyingEach.begin(), wantVerifyingEach.end(), "verify tile IR"));
  EXPECT_EQ(timedStages(err, "@vector_add stand-in arch_1"), wantVerifyingEach) << err;
  // A launch's compile prints only the final tile IR, and the optimized LLVM IR for the emulator.
  {
    EnvVar timings("TESSERA_TIMINGS", "1");
    err = compileCapturingStderr(target, *m->functions()[0], KeptIR::ForLaunch);
  }
  wantForLaunch.insert(wantForLaunch.end(),
                       {"passes", "verify tile IR", "print tile IR", "lower to LLVM", "optimize LLVM", "emit ptx"});
  EXPECT_EQ(timedStages(err, "@vector_add stand-in arch_1"), wantForLaunch) << err;

  EXPECT_EQ(compileCapturingStderr(target, *m->functions()[0]), "");
  EnvVar off("TESSERA_TIMINGS", "0");
  EXPECT_EQ(compileCapturingStderr(target, *m->functions()[0]), "");
}

// ---- the real NVPTX target

namespace {

std::unique_ptr<backends::Target> nvptxOrWhyNot(std::string& why) {
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

// optimize() and emit() are separate steps: the optimized LLVM IR the JIT records, read back on its own, emits
// exactly the PTX the JIT produced; so does the LLVM IR as lowered after an optimize() of its own.
TEST(JitCompileNvptx, OptimizedLLVMIRIsExactlyWhatIsEmitted) {
  std::string why;
  auto target = nvptxOrWhyNot(why);
  if (!target) GTEST_SKIP() << why;
  auto m = kernels::softmax_kernel().trace({{"BLOCK", int64_t(256)}});
  backends::TargetOptions options;
  options.arch = "sm_90a";
  options.numWarps = 4;
  CompiledKernel c = compile(*m->functions()[0], *target, options);
  auto parse = [](const std::string& text, llvm::LLVMContext& ctx) {
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(text, diag, ctx);
    if (!module) ADD_FAILURE() << diag.getMessage().str();
    return module;
  };
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> optimized = parse(c.optimizedLLVMIR, ctx);
  ASSERT_NE(optimized, nullptr);
  EXPECT_EQ(target->emitAssembly(*optimized, options), c.binary);
  EXPECT_EQ(target->emit(*optimized, options), c.binary) << "emitAssembly() left the module as it was";
  std::unique_ptr<llvm::Module> lowered = parse(c.llvmIR, ctx);
  ASSERT_NE(lowered, nullptr);
  target->optimize(*lowered, options);
  EXPECT_EQ(target->emit(*lowered, options), c.binary);
}

// The vector add as a JitKernel that compiles without a GPU (no driver is loaded), on stand-in arguments.
struct VectorAddWithoutDriver {
  CudaDriver noDriver{"libcuda-that-does-not-exist.so.1"};
  KernelCache cache{fs::path()};
  JitKernel kernel{kernels::vector_add_kernel(), cache, noDriver};
  void compile(const LaunchOptions& options) {
    auto p = [](int i) { return KernelArg::pointer(0x10000 * (i + 1)); };
    kernel.compileOnly({p(0), p(1), p(2), 4096}, {{"BLOCK", int64_t(1024)}}, options);
  }
};

// Through a JitKernel the timings start with the trace, which also runs for a cache hit (the traced IR is the key).
TEST(JitCompileNvptx, TimingsStartWithTheTrace) {
  std::string why;
  if (!nvptxOrWhyNot(why)) GTEST_SKIP() << why;
  VectorAddWithoutDriver k;
  LaunchOptions options;
  options.arch = "sm_80";
  EnvVar timings("TESSERA_TIMINGS", "1");
  for (bool cached : {false, true}) {
    testing::internal::CaptureStderr();
    k.compile(options);
    std::vector<std::string> stages = timedStages(testing::internal::GetCapturedStderr(), "@vector_add nvptx sm_80");
    ASSERT_FALSE(stages.empty());
    EXPECT_EQ(stages.front(), "trace");
    EXPECT_EQ(stages.back(), cached ? "trace" : "emit ptx");
    EXPECT_EQ(stages.size(), cached ? 1u : 2 + kDefaultPipeline.size() + 7)
        << "trace, verify input, each pass, passes, verify tile IR, lower, print, optimize, print, emit";
  }
}

// An error about the whole function from a pass (here warp_specialize on a kernel with no loop of TMA copies)
// points at the kernel's own source, where the trace found its first op, not at the JIT that traced it.
TEST(JitCompileNvptx, FunctionErrorsPointIntoTheKernel) {
  std::string why;
  if (!nvptxOrWhyNot(why)) GTEST_SKIP() << why;
  VectorAddWithoutDriver k;
  LaunchOptions options;
  options.arch = "sm_90a";
  options.warpSpecialize = true;
  try {
    k.compile(options);
    FAIL() << "warp_specialize of a kernel without a loop compiled";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("warp_specialize needs a loop in @vector_add"), std::string::npos) << e.what();
    const std::string& file = e.location().file;
    const std::string kernelFile = "tessera/kernels/vector_add.h";
    EXPECT_TRUE(file.size() >= kernelFile.size() && file.ends_with(kernelFile)) << e.what();
    EXPECT_GT(e.location().line, 0u);
  }
}

// The JIT asks the target for its layout policy, so an f16 matmul gets tensor cores (mma.sync with ldmatrix on
// sm_80, wgmma on sm_90a), while an f32 one stays on the FMA path.
TEST(JitCompileNvptx, F16MatmulUsesTensorCoresThroughThePipeline) {
  std::string why;
  auto target = nvptxOrWhyNot(why);
  if (!target) GTEST_SKIP() << why;
  auto m = kernels::matmul_kernel().trace(
      {{"BM", int64_t(64)}, {"BN", int64_t(64)}, {"BK", int64_t(32)}, {"GROUP_M", int64_t(8)}});
  for (const char* arch : {"sm_80", "sm_90a"}) {
    SCOPED_TRACE(arch);
    backends::TargetOptions options;
    options.arch = arch;
    options.numWarps = 4;
    CompiledKernel c = compile(*m->functions()[0], *target, options);
    if (std::string(arch) == "sm_80") {
      EXPECT_NE(c.binary.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
      EXPECT_NE(c.binary.find("ldmatrix.sync.aligned"), std::string::npos);
    } else {
      EXPECT_NE(c.binary.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), std::string::npos);
      EXPECT_EQ(c.binary.find("mma.sync.aligned"), std::string::npos);
    }
    EXPECT_EQ(c.binary.find("fma.rn.f32"), std::string::npos);
    // The dots read A and B from their shared buffers (ldmatrix, wgmma descriptors): the local_loads feeding
    // them are lowered to no per-element shared-memory loads at all (transforms::onlyDotsReadBufferOf).
    EXPECT_EQ(c.llvmIR.find("load half, ptr addrspace(3)"), std::string::npos) << arch;
    if (!fs::exists("/usr/local/cuda/bin/ptxas")) continue;
    std::string report;
    ASSERT_EQ(runPtxas(c.binary, arch, report), 0) << report;
    EXPECT_NE(report.find("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << report;
  }
}

// ---- the AMDGPU target: its assembly is not its artifact, so TESSERA_DUMP_ASM asks Target::emitAssembly for it.

TEST(JitCompileAmdgpu, AssemblyDumpIsTheIsaOfTheOptimizedModule) {
  std::unique_ptr<backends::Target> target = backends::createTarget("amdgpu");
  auto m = vectorAddIR();
  backends::TargetOptions options;
  options.arch = "gfx90a";
  std::string err;
  CompiledKernel c;
  {
    EnvVar dumpAsm("TESSERA_DUMP_ASM", "1");
    testing::internal::CaptureStderr();
    c = compile(*m->functions()[0], *target, options);
    err = testing::internal::GetCapturedStderr();
  }
  const std::string header = "// -----// Assembly (@vector_add, amdgpu gfx90a) //----- //\n";
  ASSERT_EQ(err.rfind(header, 0), 0u) << err.substr(0, 2000);
  std::string isa = err.substr(header.size());
  EXPECT_NE(isa.find(".amdhsa_kernel vector_add"), std::string::npos) << isa.substr(0, 2000);
  EXPECT_NE(isa.find("s_endpgm"), std::string::npos) << isa.substr(0, 2000);
  EXPECT_EQ(c.binary.rfind("\x7f" "ELF", 0), 0u) << "the artifact is still the code object";
  // The same text from the recorded optimized module, read back on its own.
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> optimized = llvm::parseAssemblyString(c.optimizedLLVMIR, diag, ctx);
  ASSERT_NE(optimized, nullptr) << diag.getMessage().str();
  EXPECT_EQ(target->emitAssembly(*optimized, options), isa);
}
