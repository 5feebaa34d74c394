#include "tests/fuzz/difffuzz/Differential.h"

#include <cctype>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>

#include "ir/Error.h"
#include "ir/Parser.h"
#include "jit/Cache.h"
#include "ir/Printer.h"
#include "jit/Compiler.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tests/fuzz/difffuzz/ProgramKernel.h"

namespace tessera::fuzz {

std::string Finding::signature() const {
  std::string key = where + " " + what;
  if (what == "mismatch") return key;
  // The message without numbers or addresses ("Cannot select: 0x55f6...: bf16 = uint_to_fp").
  std::string message;
  std::istringstream words(detail.substr(0, detail.find('\n')));
  for (std::string word; words >> word;) {
    if (word.starts_with("0x")) continue;
    for (char c : word)
      if (!std::isdigit(static_cast<unsigned char>(c))) message += c;
    message += ' ';
  }
  return key + ": " + message.substr(0, 160);
}

namespace {

// Collects findings against one reference.
class Comparison {
 public:
  Comparison(Outcome& outcome, std::vector<gpucheck::HostBuffer> reference)
      : outcome_(outcome), reference_(std::move(reference)) {}

  // Runs `produce` (the buffers of one execution) and records a mismatch or the error it throws.
  void check(const std::string& where, const std::function<std::vector<gpucheck::HostBuffer>()>& produce) {
    try {
      compare(where, produce());
    } catch (const std::exception& e) {
      outcome_.findings.push_back({where, "error", e.what()});
    }
  }
  void compare(const std::string& where, const std::vector<gpucheck::HostBuffer>& got) {
    gpucheck::CheckResult r;
    gpucheck::compareBuffers(reference_, got, gpucheck::Tolerance{0, 0, true}, r, where, "interpreter");
    if (r.mismatches)
      outcome_.findings.push_back({where, "mismatch", std::to_string(r.mismatches) + " elements; " + r.firstMismatch});
  }

 private:
  Outcome& outcome_;
  std::vector<gpucheck::HostBuffer> reference_;
};

// The interpreter on the tile IR the pass pipeline produced for a compiled kernel.
std::vector<gpucheck::HostBuffer> interpretPipelineOutput(const jit::CompiledKernel& compiled,
                                                          const jit::LaunchGrid& grid,
                                                          const std::vector<gpucheck::CheckArg>& args) {
  std::unique_ptr<ir::Module> m = ir::parseModule(compiled.irAfterPass.back().second, "<after the passes>");
  return gpucheck::interpretFunction(*m->functions().at(0), grid, args);
}

std::string specializedIRFor(const gpucheck::CheckCase& c, const std::string& arch) {
  std::vector<jit::KernelArg> args;
  for (const gpucheck::CheckArg& a : c.args) {
    if (std::holds_alternative<gpucheck::HostBuffer>(a)) args.push_back(jit::KernelArg::pointer(256));  // as allocated
    else if (const auto* i = std::get_if<int64_t>(&a)) args.push_back(*i);
    else args.push_back(std::get<double>(a));
  }
  jit::LaunchOptions options;
  options.numWarps = c.numWarps;
  options.target = sim::simRuntime(arch).target();
  options.arch = arch;
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel kernel(c.kernel, cache);
  return ir::print(*kernel.specializedIR(kernel.specialize(args, c.constants, options)));
}

}  // namespace

std::string specializedIR(const Program& p, const std::string& arch) { return specializedIRFor(makeCase(p), arch); }

Outcome checkProgram(const Program& p, const Targets& targets) {
  Outcome outcome;
  const gpucheck::CheckCase c = makeCase(p);
  std::vector<gpucheck::HostBuffer> reference;
  try {
    reference = gpucheck::runOnInterpreter(c);  // traces first: a program the DSL rejects stops here
  } catch (const std::exception& e) {
    outcome.invalid = true;
    outcome.invalidReason = e.what();
    return outcome;
  }
  Comparison comparison(outcome, std::move(reference));
  std::string failingArch;
  if (targets.eager) comparison.check("eager", [&] { return gpucheck::runEager(c); });
  for (const std::string& arch : targets.archs) {
    jit::KernelCache cache{std::filesystem::path()};  // in memory, for this program only
    std::shared_ptr<const jit::CompiledKernel> compiled;
    const size_t before = outcome.findings.size();
    comparison.check(arch, [&] {
      gpucheck::DeviceRun run = gpucheck::runOnDevice(c, cache, sim::simRuntime(arch));
      compiled = run.compiled;
      return run.buffers;
    });
    if (compiled)
      comparison.check(arch + " pipeline", [&] { return interpretPipelineOutput(*compiled, c.grid, c.args); });
    if (failingArch.empty() && outcome.findings.size() > before) failingArch = arch;
  }
  if (!outcome.findings.empty()) {
    if (failingArch.empty()) failingArch = targets.archs.empty() ? "sm_90a" : targets.archs.front();
    outcome.specializedIR = specializedIRFor(c, failingArch);
  }
  return outcome;
}

Outcome checkIR(const std::string& irText, const jit::LaunchGrid& grid, int numWarps,
                const std::vector<gpucheck::CheckArg>& args, const std::vector<std::string>& archs) {
  Outcome outcome;
  std::unique_ptr<ir::Module> m;
  std::vector<gpucheck::HostBuffer> reference;
  try {
    m = ir::parseModule(irText, "<regression>");
    reference = gpucheck::interpretFunction(*m->functions().at(0), grid, args);
  } catch (const std::exception& e) {
    outcome.invalid = true;
    outcome.invalidReason = e.what();
    return outcome;
  }
  const ir::Function& f = *m->functions().at(0);
  Comparison comparison(outcome, std::move(reference));
  outcome.specializedIR = irText;
  for (const std::string& arch : archs) {
    sim::SimRuntime& runtime = sim::simRuntime(arch);
    std::shared_ptr<const jit::CompiledKernel> compiled;
    comparison.check(arch, [&] {
      backends::TargetOptions options;
      options.arch = arch;
      options.numWarps = numWarps;
      compiled = std::make_shared<const jit::CompiledKernel>(
          jit::compile(f, *backends::createTarget(runtime.target()), options));
      return gpucheck::launchCompiled(compiled, f.argumentTypes(), grid, args, runtime);
    });
    if (compiled) comparison.check(arch + " pipeline", [&] { return interpretPipelineOutput(*compiled, grid, args); });
  }
  return outcome;
}

}  // namespace tessera::fuzz
