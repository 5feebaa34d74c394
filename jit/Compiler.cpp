#include "jit/Compiler.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "backends/common/LowerToLLVM.h"
#include "ir/EnvFlag.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "jit/Sha256.h"
#include "jit/Specialization.h"
#include "jit/Timings.h"
#include "transforms/PassManager.h"
#include "transforms/Pipeline.h"

namespace tessera::jit {

namespace {

// The (parameter, swizzle) pairs the lowering listed in backends::kTensorMapsMetadata.
std::vector<std::pair<unsigned, int>> tensorMapsOf(const llvm::Module& m) {
  std::vector<std::pair<unsigned, int>> maps;
  if (const llvm::NamedMDNode* md = m.getNamedMetadata(backends::kTensorMapsMetadata))
    for (const llvm::MDNode* entry : md->operands()) {
      auto field = [&](unsigned i) {
        return llvm::mdconst::extract<llvm::ConstantInt>(entry->getOperand(i))->getZExtValue();
      };
      maps.emplace_back(static_cast<unsigned>(field(0)), static_cast<int>(field(1)));
    }
  return maps;
}

// The dots the lowering listed in backends::kDotsMetadata.
std::vector<DotReport> dotsOf(const llvm::Module& m) {
  std::vector<DotReport> dots;
  if (const llvm::NamedMDNode* md = m.getNamedMetadata(backends::kDotsMetadata))
    for (const llvm::MDNode* entry : md->operands()) {
      auto field = [&](unsigned i) { return llvm::cast<llvm::MDString>(entry->getOperand(i))->getString().str(); };
      dots.push_back({field(0), field(1), field(2)});
    }
  return dots;
}

std::string printLLVM(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  os.flush();
  return text;
}

// Keeps the IR of the stages `kept` asks for in the result and dumps each artifact as soon as it exists (so a
// compile that fails halfway still leaves the stages before the failure on disk), as the TESSERA_DUMP_* variables
// ask. The tile IR is printed to stderr by the pass manager itself (TESSERA_DUMP_IR), as it is for tessera-opt.
class StageRecorder {
 public:
  StageRecorder(CompiledKernel& kernel, KeptIR kept) : kernel_(kernel) {
    dumpLLVM_ = envFlag("TESSERA_DUMP_LLVM");
    dumpAsm_ = envFlag("TESSERA_DUMP_ASM");
    const char* dir = std::getenv("TESSERA_DUMP_DIR");
    if (dir && *dir) dumpDir_ = dir;
    keepAll_ = kept == KeptIR::All || dumpLLVM_ || !dumpDir_.empty() || envFlag("TESSERA_DUMP_IR");
    keepOptimizedLLVM_ = keepAll_ || kept == KeptIR::ForEmulator;
  }
  bool keepsEveryStage() const { return keepAll_; }
  bool keepsOptimizedLLVM() const { return keepOptimizedLLVM_; }

  void input(const ir::Function& f) {
    if (!keepAll_) return;
    const std::string text = ir::print(f);
    if (!dumpDir_.empty()) {
      // One folder per specialization: the same kernel compiled with other constants must not overwrite it.
      dumpDir_ /= kernel_.name + "-" + sha256Hex(text).substr(0, 12);
      std::error_code ec;
      std::filesystem::create_directories(dumpDir_, ec);
      if (ec) throw Error("TESSERA_DUMP_DIR: cannot create '" + dumpDir_.string() + "': " + ec.message());
    }
    tileIR("input", text);
  }
  void tileIR(const std::string& stage, const std::string& text) {
    kernel_.irAfterPass.emplace_back(stage, text);
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%02zu-", kernel_.irAfterPass.size() - 1);
    writeFile(prefix + stage + ".tir", text);
  }
  void llvmIR(const llvm::Module& m, bool optimized) {
    const std::string text = printLLVM(m);
    (optimized ? kernel_.optimizedLLVMIR : kernel_.llvmIR) = text;
    if (dumpLLVM_)
      std::cerr << "// -----// LLVM IR " << (optimized ? "after optimization" : "as lowered") << " (@" << kernel_.name
                << ") //----- //\n" << text;
    writeFile(optimized ? "kernel.opt.ll" : "kernel.ll", text);
  }
  bool wantsAssembly() const { return dumpAsm_; }
  void assembly(const std::string& text) {
    std::cerr << "// -----// Assembly (@" << kernel_.name << ", " << kernel_.target << " " << kernel_.arch
              << ") //----- //\n" << text;
    writeFile("kernel.s", text);
  }
  void binary(const std::string& bytes) {
    kernel_.binary = bytes;
    writeFile("kernel." + kernel_.format, bytes);
  }

 private:
  void writeFile(const std::string& fileName, const std::string& contents) {
    if (dumpDir_.empty()) return;
    std::ofstream out(dumpDir_ / fileName, std::ios::binary | std::ios::trunc);
    out << contents;
    if (!out) throw Error("TESSERA_DUMP_DIR: cannot write '" + (dumpDir_ / fileName).string() + "'");
  }

  CompiledKernel& kernel_;
  bool dumpLLVM_ = false, dumpAsm_ = false, keepAll_ = true, keepOptimizedLLVM_ = true;
  std::filesystem::path dumpDir_;
};

// Runs each stage, timing it for TESSERA_TIMINGS and turning any failure into a tessera::Error that says which
// kernel and which stage failed.
class StageRunner {
 public:
  StageRunner(std::string context, const StageTimings& timings) : context_(std::move(context)), timings_(timings) {}

  void operator()(const std::string& stage, const std::function<void()>& body) const {
    try {
      timings_.time(stage, body);
    } catch (const Error& e) {
      throw Error(context_ + ", stage '" + stage + "': " + e.message(), e.location());
    } catch (const std::exception& e) {
      throw Error(context_ + ", stage '" + stage + "': " + e.what());
    }
  }

 private:
  std::string context_;
  const StageTimings& timings_;
};

}  // namespace

void checkClusterDims(const std::string& context, const std::string& target, const std::string& arch,
                      const std::array<int, 3>& clusterDims, bool persistent) {
  if (clusterDims == std::array<int, 3>{1, 1, 1}) return;
  const std::string shape = clusterShapeText(clusterDims);
  int64_t programs = 1;
  for (int d : clusterDims) {
    if (d < 1) throw Error(context + ": cluster dimensions must be at least 1, got " + shape);
    programs *= d;
  }
  // Eight is the portable limit; sixteen needs a per-kernel opt-in the launch does not make.
  if (programs > 8) throw Error(context + ": a cluster holds at most 8 programs, got " + shape);
  // "sm_90a" -> 90, "sm_100a" -> 100 (the digits after "sm_").
  int computeCapability = 0;
  for (size_t i = 3; arch.rfind("sm_", 0) == 0 && i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    computeCapability = computeCapability * 10 + (arch[i] - '0');
  if (target != "nvptx" || computeCapability < 90)
    throw Error(context + ": thread-block clusters (" + shape + ") need sm_90 or later");
  if (persistent) throw Error(context + ": persistent kernels do not run in thread-block clusters yet");
}

void checkMatrixInstrSize(const std::string& context, int matrixInstrSize) {
  if (matrixInstrSize != 0 && matrixInstrSize != 16 && matrixInstrSize != 32)
    throw Error(context + ": matrix_instr_nonkdim must be 0 (the target's choice), 16 or 32, got " +
                std::to_string(matrixInstrSize));
}

CompiledKernel compile(const ir::Function& input, const backends::Target& target,
                       const backends::TargetOptions& requested, KeptIR kept) {
  backends::TargetOptions options = requested;
  if (options.arch.empty()) options.arch = target.defaultArch();
  const std::string context = "JIT compile of @" + input.name() + " for " + target.name() + " " + options.arch;
  if (options.numWarps <= 0 || (options.numWarps & (options.numWarps - 1)) != 0 || options.numWarps > 32)
    throw Error(context + ": num_warps must be a power of two between 1 and 32, got " +
                std::to_string(options.numWarps));
  if (options.numStages < 1 || options.numStages > kMaxNumStages)
    throw Error(context + ": num_stages must be between 1 and " + std::to_string(kMaxNumStages) + ", got " +
                std::to_string(options.numStages));
  checkMatrixInstrSize(context, options.matrixInstrSize);
  checkClusterDims(context, target.name(), options.arch, options.clusterDims, options.persistent || options.pingPong);

  CompiledKernel kernel;
  kernel.name = input.name();
  kernel.target = target.name();
  kernel.arch = options.arch;
  kernel.format = target.binaryFormat();
  kernel.numWarps = options.numWarps;
  kernel.warpSize = target.warpSize();
  const StageTimings timings(kernel.name, kernel.target, kernel.arch);
  const StageRunner stage(context, timings);

  // 1. Work on a copy that records the warp count the layout passes must plan for; verify it.
  std::unique_ptr<ir::Function> f = input.clone();
  f->attrs()["num_warps"] = ir::Attr::integer(options.numWarps);
  StageRecorder record(kernel, kept);
  record.input(*f);
  stage("verify input", [&] { ir::verify(*f); });

  // 2. The default pipeline (transforms/Pipeline.cpp) for this target's warps and layout preferences, verified once
  // at its end: verifying after each of its passes (TESSERA_VERIFY_EACH_PASS=1, as tessera-opt and the tests do,
  // to name the pass that broke the IR) was 3% of a matmul's compile. The callback times each pass and keeps the
  // IR after it where asked.
  transforms::PassManager passes;
  const bool verifyEachPass = envFlag("TESSERA_VERIFY_EACH_PASS");
  passes.setVerifyEach(verifyEachPass);
  // e.g. mma.sync accumulators, and how far ahead loops copy
  transforms::PassOptions requestedPasses;
  requestedPasses.numWarps = options.numWarps;
  requestedPasses.numStages = options.numStages;
  requestedPasses.arch = options.arch;
  requestedPasses.persistent = options.persistent || options.pingPong;  // ping-pong groups alternate over tiles
  requestedPasses.warpSpecialize = options.warpSpecialize || options.pingPong;
  requestedPasses.consumerTurns = options.consumerTurns;
  requestedPasses.pingPong = options.pingPong;
  requestedPasses.matrixInstrSize = options.matrixInstrSize;
  const transforms::PassOptions passOptions = target.passOptions(std::move(requestedPasses));
  transforms::addDefaultPipeline(passes, passOptions);
  passes.setAfterPassCallback([&](const std::string& pass, double seconds, const auto& ir) {
    timings.report("pass " + pass, seconds);
    if (record.keepsEveryStage()) record.tileIR(pass, ir());
  });
  stage("passes", [&] { passes.run(*f); });
  if (!verifyEachPass)
    stage("verify tile IR", [&] {
      try {
        ir::verify(*f);
      } catch (const Error& e) {
        throw Error("the pass pipeline left invalid IR (TESSERA_VERIFY_EACH_PASS=1 names the pass): " + e.message(),
                    e.location());
      }
    });
  if (!record.keepsEveryStage() && !passes.passNames().empty())
    stage("print tile IR", [&] { record.tileIR(passes.passNames().back(), ir::print(*f)); });
  if (f->attrs().count("smem_bytes")) {
    const ir::Attr& smem = f->attrs().at("smem_bytes");
    if (!smem.isInt() || smem.getInt() < 0)
      throw Error(context + ": function attribute smem_bytes must be a non-negative int, got " + smem.str());
    kernel.sharedBytes = smem.getInt();
  }

  kernel.persistent = f->attrs().count(ir::kPersistentAttr) != 0;
  kernel.clusterDims = options.clusterDims;
  for (const auto& op : f->body()->ops())
    if (op->is(ir::OpKind::WarpSpecialize)) {
      kernel.producerWarps = static_cast<int>(op->intAttr("producer_warps"));
      if (op->hasAttr("consumer_groups")) kernel.consumerGroups = static_cast<int>(op->intAttr("consumer_groups"));
    }

  // 3. Lower to LLVM IR.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module;
  stage("lower to LLVM", [&] {
    module = target.lowerToLLVM(*f, llvmContext, options);
    if (!module) throw Error("the target returned no module");
  });
  if (record.keepsEveryStage()) stage("print LLVM IR", [&] { record.llvmIR(*module, /*optimized=*/false); });
  kernel.tensorMaps = tensorMapsOf(*module);
  kernel.dots = dotsOf(*module);

  // 4. Let the target optimize it (vendor libraries linked, O3, verified): exactly the module emitted next.
  stage("optimize LLVM", [&] { target.optimize(*module, options); });
  if (record.keepsOptimizedLLVM())
    stage("print optimized LLVM IR", [&] { record.llvmIR(*module, /*optimized=*/true); });
  if (record.wantsAssembly()) stage("assembly", [&] { record.assembly(target.emitAssembly(*module, options)); });

  // 5. Emit the artifact the runtime loads.
  stage("emit " + kernel.format, [&] { record.binary(target.emit(*module, options)); });
  return kernel;
}

}  // namespace tessera::jit
