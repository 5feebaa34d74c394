#include "jit/Compiler.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "jit/Sha256.h"
#include "transforms/PassManager.h"

namespace tessera::jit {

namespace {

bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// Keeps the IR of every stage in the result and dumps each artifact as soon as it exists (so a compile that
// fails halfway still leaves the stages before the failure on disk), as the TESSERA_DUMP_* variables ask.
class StageRecorder {
 public:
  StageRecorder(CompiledKernel& kernel, const std::string& inputIR) : kernel_(kernel) {
    dumpIR_ = envFlag("TESSERA_DUMP_IR");
    dumpLLVM_ = envFlag("TESSERA_DUMP_LLVM");
    dumpPTX_ = envFlag("TESSERA_DUMP_PTX");
    if (const char* dir = std::getenv("TESSERA_DUMP_DIR"); dir && *dir) {
      // One folder per specialization: the same kernel compiled with other constants must not overwrite it.
      dumpDir_ = std::filesystem::path(dir) / (kernel.name + "-" + sha256Hex(inputIR).substr(0, 12));
      std::error_code ec;
      std::filesystem::create_directories(dumpDir_, ec);
      if (ec) throw Error("TESSERA_DUMP_DIR: cannot create '" + dumpDir_.string() + "': " + ec.message());
    }
  }

  void tileIR(const std::string& stage, const std::string& text) {
    kernel_.irAfterPass.emplace_back(stage, text);
    if (dumpIR_) std::cerr << "// -----// Tessera IR after " << stage << " (@" << kernel_.name << ") //----- //\n" << text;
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%02zu-", kernel_.irAfterPass.size() - 1);
    writeFile(prefix + stage + ".tir", text);
  }
  void llvmIR(const std::string& text, bool optimized) {
    (optimized ? kernel_.optimizedLLVMIR : kernel_.llvmIR) = text;
    if (dumpLLVM_)
      std::cerr << "// -----// LLVM IR " << (optimized ? "after optimization" : "as lowered") << " (@" << kernel_.name
                << ") //----- //\n" << text;
    writeFile(optimized ? "kernel.opt.ll" : "kernel.ll", text);
  }
  void binary(const std::string& bytes) {
    kernel_.binary = bytes;
    if (dumpPTX_ && kernel_.format == "ptx")
      std::cerr << "// -----// PTX (@" << kernel_.name << ", " << kernel_.arch << ") //----- //\n" << bytes;
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
  bool dumpIR_ = false, dumpLLVM_ = false, dumpPTX_ = false;
  std::filesystem::path dumpDir_;
};

std::string printLLVM(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  os.flush();
  return text;
}

// Runs `stage`, turning any failure into a tessera::Error that says which kernel and which stage failed.
void inStage(const std::string& kernelContext, const std::string& stage, const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    throw Error(kernelContext + ", stage '" + stage + "': " + e.message(), e.location());
  } catch (const std::exception& e) {
    throw Error(kernelContext + ", stage '" + stage + "': " + e.what());
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const std::vector<std::string> kCleanup = {"canonicalize", "cse", "dce"};
const std::vector<std::string> kLayouts = {"coalesce", "assign-layouts", "remove-layout-conversions"};
const std::vector<std::string> kSharedMemory = {"allocate-shared-memory", "insert-barriers"};

}  // namespace

const std::vector<std::string>& pipelinePassNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto* group : {&kCleanup, &kLayouts, &kCleanup, &kSharedMemory}) all.insert(all.end(), group->begin(), group->end());
    return all;
  }();
  return names;
}

std::vector<std::string> missingPipelinePasses() {
  std::vector<std::string> missing;
  for (const std::string& name : pipelinePassNames())
    if (!transforms::createPass(name) && std::find(missing.begin(), missing.end(), name) == missing.end())
      missing.push_back(name);
  return missing;
}

CompiledKernel compile(const ir::Function& input, const backends::Target& target,
                       const backends::TargetOptions& requested) {
  backends::TargetOptions options = requested;
  if (options.arch.empty()) options.arch = target.defaultArch();
  const std::string context = "JIT compile of @" + input.name() + " for " + target.name() + " " + options.arch;
  if (options.numWarps <= 0 || (options.numWarps & (options.numWarps - 1)) != 0 || options.numWarps > 32)
    throw Error(context + ": num_warps must be a power of two between 1 and 32, got " +
                std::to_string(options.numWarps));
  if (std::vector<std::string> missing = missingPipelinePasses(); !missing.empty())
    throw Error(context + ": the pipeline needs pass" + (missing.size() > 1 ? "es " : " ") + "'" + joined(missing) +
                "' but the pass registry has no such pass (registered: " + joined(transforms::registeredPassNames()) +
                ")");

  CompiledKernel kernel;
  kernel.name = input.name();
  kernel.target = target.name();
  kernel.arch = options.arch;
  kernel.format = target.binaryFormat();
  kernel.numWarps = options.numWarps;
  kernel.warpSize = target.warpSize();

  // 1. Work on a copy that records the warp count the layout passes must plan for.
  std::unique_ptr<ir::Function> f = input.clone();
  f->attrs()["num_warps"] = ir::Attr::integer(options.numWarps);
  StageRecorder record(kernel, ir::print(*f));
  inStage(context, "verify input", [&] { ir::verify(*f); });
  record.tileIR("input", ir::print(*f));

  transforms::PassOptions passOptions{options.numWarps, target.warpSize(), nullptr};
  passOptions.layoutPolicy = target.layoutPolicy(passOptions);  // e.g. mma.sync accumulators on NVPTX
  auto runPasses = [&](const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      std::unique_ptr<transforms::Pass> pass = transforms::createPass(name, passOptions);
      inStage(context, name, [&] {
        pass->run(*f);
        ir::verify(*f);
      });
      record.tileIR(name, ir::print(*f));
    }
  };

  // 2. Target-independent cleanup of what the frontend traced.
  runPasses(kCleanup);
  // 3. Layouts: coalesced memory accesses first, then every other tile, then drop conversions that cancel.
  runPasses(kLayouts);
  // 4. Clean up what the layout passes left behind (dead conversions, duplicated index math).
  runPasses(kCleanup);
  // 5. Shared memory: offsets for every scratch buffer, then the barriers between conflicting accesses.
  runPasses(kSharedMemory);
  inStage(context, "verify output", [&] { ir::verify(*f); });
  if (f->attrs().count("smem_bytes")) {
    const ir::Attr& smem = f->attrs().at("smem_bytes");
    if (!smem.isInt() || smem.getInt() < 0)
      throw Error(context + ": function attribute smem_bytes must be a non-negative int, got " + smem.str());
    kernel.sharedBytes = smem.getInt();
  }

  // 6. Lower to LLVM IR, then let the target optimize it and emit the artifact.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module;
  inStage(context, "lower to LLVM", [&] {
    module = target.lowerToLLVM(*f, llvmContext, options);
    if (!module) throw Error("the target returned no module");
  });
  record.llvmIR(printLLVM(*module), /*optimized=*/false);
  std::string binary;
  inStage(context, "emit " + kernel.format, [&] { binary = target.emitBinary(*module, options); });
  record.llvmIR(printLLVM(*module), /*optimized=*/true);
  record.binary(binary);
  return kernel;
}

}  // namespace tessera::jit
