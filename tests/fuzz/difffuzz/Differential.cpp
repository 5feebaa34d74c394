#include "tests/fuzz/difffuzz/Differential.h"

#include <cctype>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
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
  if (what.ends_with("mismatch")) return key;
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

// Runs one execution into the buffers it leaves, writing what it prints (debug_print) to the stream.
using Execution = std::function<std::vector<gpucheck::HostBuffer>(std::ostream& printed)>;

// Collects findings against one reference: its buffers, and what it printed.
class Comparison {
 public:
  Comparison(Outcome& outcome, const Execution& reference) : outcome_(outcome) {
    std::ostringstream printed;
    reference_ = reference(printed);
    referencePrinted_ = printed.str();
  }

  // Runs `execution` and records a mismatch or the error it throws. Executions with the interpreter's semantics
  // (`printsLikeInterpreter`: eager mode, the interpreter after passes) must also print the same text; the
  // emulator prints through printf, in the device's formats.
  void check(const std::string& where, const Execution& execution, bool printsLikeInterpreter) {
    try {
      std::ostringstream printed;
      compare(where, execution(printed));
      if (printsLikeInterpreter) comparePrinted(where, printed.str());
    } catch (const std::exception& e) {
      outcome_.findings.push_back({where, "error", e.what()});
    }
  }

 private:
  void compare(const std::string& where, const std::vector<gpucheck::HostBuffer>& got) {
    gpucheck::CheckResult r;
    gpucheck::compareBuffers(reference_, got, gpucheck::Tolerance{0, 0, true}, r, where, "interpreter");
    if (r.mismatches)
      outcome_.findings.push_back({where, "mismatch", std::to_string(r.mismatches) + " elements; " + r.firstMismatch});
  }
  void comparePrinted(const std::string& where, const std::string& printed) {
    if (printed == referencePrinted_) return;
    std::istringstream got(printed), want(referencePrinted_);
    std::string gotLine, wantLine;
    int line = 1;
    for (; std::getline(got, gotLine) && std::getline(want, wantLine) && gotLine == wantLine; ++line) {
    }
    outcome_.findings.push_back({where, "print mismatch",
                                 "printed line " + std::to_string(line) + ": " + where + " '" + gotLine +
                                     "', interpreter '" + wantLine + "'"});
  }

  Outcome& outcome_;
  std::vector<gpucheck::HostBuffer> reference_;
  std::string referencePrinted_;
};

// The interpreter on the tile IR the pass pipeline produced for a compiled kernel.
std::vector<gpucheck::HostBuffer> interpretPipelineOutput(const jit::CompiledKernel& compiled,
                                                          const jit::LaunchGrid& grid,
                                                          const std::vector<gpucheck::CheckArg>& args,
                                                          std::ostream& printed) {
  std::unique_ptr<ir::Module> m = ir::parseModule(compiled.irAfterPass.back().second, "<after the passes>");
  return gpucheck::interpretFunction(*m->functions().at(0), grid, args, &printed);
}

std::string specializedIRFor(const gpucheck::CheckCase& c, const std::string& arch) {
  std::vector<jit::KernelArg> args;
  for (const gpucheck::CheckArg& a : c.args) {
    if (const auto* b = std::get_if<gpucheck::HostBuffer>(&a))
      args.push_back(jit::KernelArg::pointer(256, b->bytes.size()));  // as allocated: aligned, sized
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
  std::optional<Comparison> comparison;
  try {
    // Traces first: a program the DSL rejects stops here.
    comparison.emplace(outcome, [&](std::ostream& printed) { return gpucheck::runOnInterpreter(c, &printed); });
  } catch (const std::exception& e) {
    outcome.invalid = true;
    outcome.invalidReason = e.what();
    return outcome;
  }
  std::string failingArch;
  if (targets.eager)
    comparison->check("eager", [&](std::ostream& printed) { return gpucheck::runEager(c, &printed); }, true);
  for (const std::string& arch : targets.archs) {
    jit::KernelCache cache{std::filesystem::path()};  // in memory, for this program only
    std::shared_ptr<const jit::CompiledKernel> compiled;
    const size_t before = outcome.findings.size();
    comparison->check(
        arch,
        [&](std::ostream&) {
          gpucheck::DeviceRun run = gpucheck::runOnDevice(c, cache, sim::simRuntime(arch));
          compiled = run.compiled;
          return run.buffers;
        },
        false);
    if (compiled)
      comparison->check(
          arch + " pipeline",
          [&](std::ostream& printed) { return interpretPipelineOutput(*compiled, c.grid, c.args, printed); }, true);
    if (failingArch.empty() && outcome.findings.size() > before) failingArch = arch;
  }
  if (!outcome.findings.empty()) {
    if (failingArch.empty()) failingArch = targets.archs.empty() ? "sm_90a" : targets.archs.front();
    outcome.specializedIR = specializedIRFor(c, failingArch);
  }
  return outcome;
}

Outcome checkIR(const std::string& irText, const jit::LaunchGrid& grid, int numWarps,
                const std::vector<gpucheck::CheckArg>& args, const Targets& targets, const Program* program) {
  if (targets.eager && !program) throw Error("fuzz: replaying eager mode needs the program, not only its tile IR");
  Outcome outcome;
  std::unique_ptr<ir::Module> m;
  std::optional<Comparison> comparison;
  try {
    m = ir::parseModule(irText, "<regression>");
    comparison.emplace(outcome, [&](std::ostream& printed) {
      return gpucheck::interpretFunction(*m->functions().at(0), grid, args, &printed);
    });
  } catch (const std::exception& e) {
    outcome.invalid = true;
    outcome.invalidReason = e.what();
    return outcome;
  }
  const ir::Function& f = *m->functions().at(0);
  outcome.specializedIR = irText;
  if (targets.eager)
    comparison->check("eager", [&](std::ostream& printed) { return gpucheck::runEager(makeCase(*program), &printed); },
                      true);
  for (const std::string& arch : targets.archs) {
    sim::SimRuntime& runtime = sim::simRuntime(arch);
    std::shared_ptr<const jit::CompiledKernel> compiled;
    comparison->check(
        arch,
        [&](std::ostream&) {
          backends::TargetOptions options;
          options.arch = arch;
          options.numWarps = numWarps;
          compiled = std::make_shared<const jit::CompiledKernel>(
              jit::compile(f, *backends::createTarget(runtime.target()), options));
          return gpucheck::launchCompiled(compiled, f.argumentTypes(), grid, args, runtime);
        },
        false);
    if (compiled)
      comparison->check(
          arch + " pipeline",
          [&](std::ostream& printed) { return interpretPipelineOutput(*compiled, grid, args, printed); }, true);
  }
  return outcome;
}

}  // namespace tessera::fuzz
