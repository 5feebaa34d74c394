// Compile time of the tutorial kernels and the standard f16 matmul configurations for NVPTX sm_90a, stage by stage
// (tracing, the tile-IR passes, lowering to LLVM, LLVM optimization, PTX emission), beside ptxas's time on the PTX
// they produce, and the ratio of the two: ISSUE 11 asks that everything before ptxas take at most half of ptxas's
// time. Each time is the median of --runs runs, in CPU milliseconds (of this thread; for ptxas, of its process),
// so that other work on a shared machine does not inflate them. The stages are the JIT's (jit/Compiler.cpp); each
// case's PTX is checked against jit::compile's, so the table cannot drift from what the JIT does.
//
// The ratio is paired: each run times the JIT's compile and then ptxas on its PTX, back to back, and the column is
// the median of the runs' ratios. On a shared machine whose speed drifts by 2x over seconds (measured here), the
// medians of times taken in separate batches can put the JIT in a slow minute and ptxas in a fast one; two
// measurements a few milliseconds apart see the same machine.
//
//   compile_time [--csv FILE] [--only SUBSTRING] [--ptx-dir DIR] [--ptxas PATH] [--runs N]
//   benchmarks/plot_results.py FILE    turns the CSV into a PNG bar plot
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdio>

#include "backends/Target.h"
#include "benchmarks/support/BenchOptions.h"
#include "benchmarks/support/CaseRunner.h"
#include "benchmarks/support/CpuTime.h"
#include "benchmarks/support/KernelCases.h"
#include "benchmarks/support/Ptxas.h"
#include "benchmarks/support/ResultTable.h"
#include "ir/Verifier.h"
#include "jit/Compiler.h"
#include "transforms/Pipeline.h"

namespace {

using namespace tessera;
using namespace tessera::bench;

constexpr const char* kArch = "sm_90a";

struct StageTimes {
  std::vector<double> trace, passes, lower, optimize, emit;  // CPU seconds, one per run
  std::vector<double> jit;  // jit::compile of the traced kernel as a GPU launch runs it, end to end (KeptIR::ForLaunch)
};

// One run of the JIT's stages on `c`, each timed; returns the PTX.
std::string compileOnce(const KernelCase& c, const backends::Target& target, const backends::TargetOptions& options,
                        StageTimes& times) {
  std::unique_ptr<ir::Module> traced;
  times.trace.push_back(cpuSecondsOf([&] { traced = traceSpecialized(c); }));
  std::unique_ptr<ir::Function> f = traced->functions().at(0)->clone();
  times.passes.push_back(cpuSecondsOf([&] {
    f->attrs()["num_warps"] = ir::Attr::integer(options.numWarps);
    ir::verify(*f);
    transforms::PassManager passes;
    transforms::addDefaultPipeline(passes, target.passOptions(options.numWarps, options.numStages));
    passes.setVerifyEach(false);  // as jit::compile: the input and the pipeline's output
    passes.run(*f);
    ir::verify(*f);
  }));
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  times.lower.push_back(cpuSecondsOf([&] { module = target.lowerToLLVM(*f, context, options); }));
  times.optimize.push_back(cpuSecondsOf([&] { target.optimize(*module, options); }));
  std::string ptx;
  times.emit.push_back(cpuSecondsOf([&] { ptx = target.emit(*module, options); }));
  return ptx;
}

std::string ms(double seconds) { return fixed(seconds * 1e3, 2); }

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions opts = parseBenchOptions(
      argc, argv, "Compile time by stage of the tutorial kernels and the standard matmul configurations (sm_90a).");
  std::vector<KernelCase> cases = tutorialCases(kArch);
  for (const MatmulConfig& config : standardMatmulConfigs()) cases.push_back(matmulCase("f16", config, kArch));

  const bool havePtxas = ptxasInstalled(opts.ptxas);
  std::printf("compile time, CPU ms (median of %d runs; tessera/ptxas: median of the runs' paired ratios); "
              "ptxas %s (%s)\n",
              opts.runs, ptxasVersion(opts.ptxas).c_str(), opts.ptxas.c_str());
  ResultTable table({"case", "trace_ms", "passes_ms", "lower_ms", "optimize_ms", "emit_ms", "jit_ms", "tessera_ms",
                     "ptxas_ms", "tessera/ptxas"});
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  return measureCases(cases, opts, table, [&](const KernelCase& c) -> std::vector<std::string> {
    const backends::TargetOptions options = c.targetOptions();
    StageTimes t;
    std::vector<double> ptxasTimes, ratios;
    std::string ptx;
    const std::unique_ptr<ir::Module> traced = traceSpecialized(c);
    for (int run = 0; run < opts.runs; ++run) {
      ptx = compileOnce(c, *target, options, t);
      std::string jitPtx;
      t.jit.push_back(cpuSecondsOf([&] {
        jitPtx = jit::compile(*traced->functions().at(0), *target, options, jit::KeptIR::ForLaunch).binary;
      }));
      if (jitPtx != ptx) throw Error("the stages timed here produced other PTX than jit::compile: update compileOnce");
      if (!havePtxas) continue;
      ptxasTimes.push_back(runPtxas(opts.ptxas, ptx, c.arch, 1).cpuSeconds);
      // What a launch waits for: tracing, then the JIT's compile with everything it verifies, prints and keeps.
      ratios.push_back((t.trace.back() + t.jit.back()) / ptxasTimes.back());
    }
    savePtx(opts, c.name(), ptx);
    const double tessera = median(t.trace) + median(t.jit);
    std::string ptxasCell = "absent", ratioCell = "n/a";
    if (havePtxas) {
      ptxasCell = ms(median(ptxasTimes));
      ratioCell = fixed(median(ratios), 3);
    }
    return {c.name(), ms(median(t.trace)), ms(median(t.passes)), ms(median(t.lower)), ms(median(t.optimize)),
            ms(median(t.emit)), ms(median(t.jit)), ms(tessera), ptxasCell, ratioCell};
  });
}
