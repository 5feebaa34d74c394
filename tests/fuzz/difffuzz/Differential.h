// Runs one program everywhere and compares every buffer with the reference interpreter's:
//   - eager mode (the DSL run op by op);
//   - for each emulated arch (jit/sim: sm_80, sm_90a, gfx90a, gfx942): the kernel compiled by the JIT exactly as
//     for that GPU, run under the emulator, whose checks (races, out-of-bounds accesses, barrier divergence...)
//     count as failures too;
//   - for each arch, the interpreter again on the tile IR the default pass pipeline left for it.
// Buffers must agree bit for bit, except approximate math (Tolerance.h); what eager mode and the interpreter after
// each pipeline print (debug_print) must be the interpreter's text.
#pragma once

#include <string>
#include <vector>

#include "jit/LoadedKernel.h"
#include "tests/fuzz/difffuzz/Program.h"
#include "tests/gpucheck/GpuCheck.h"

namespace tessera::fuzz {

struct Finding {
  std::string where;   // "eager", "sm_80", "sm_80 pipeline" (the interpreter after sm_80's passes)
  std::string what;    // "mismatch", "print mismatch" (debug_print's text), "error", or "crash" (where: "process")
  std::string detail;  // the first mismatch, or the error message
  // What makes two findings the same bug for the reducer: where, what, and an error's first line without
  // numbers or addresses (a mismatch's detail names elements, values or lines, which change as the program shrinks).
  std::string signature() const;
};

struct Outcome {
  bool invalid = false;       // the program could not be traced or interpreted: a generator bug
  std::string invalidReason;
  std::vector<Finding> findings;
  std::string specializedIR;  // when something failed: the tile IR the first failing arch compiled (with argument facts)
};

struct Targets {
  std::vector<std::string> archs{"sm_80", "sm_90a", "gfx942"};
  bool eager = true;
};

Outcome checkProgram(const Program& p, const Targets& targets);

// The tile IR the JIT compiles for the program on `arch`: traced, with the facts of its arguments (alignment).
std::string specializedIR(const Program& p, const std::string& arch);

// The same comparisons for a kernel given as (specialized) tile IR, as regression files keep it: the
// interpreter on it is the reference; every arch compiles it, runs it and interprets its pipeline's output, and
// eager mode (targets.eager) runs `program`, which the IR was traced from (eager mode runs DSL calls, not IR).
Outcome checkIR(const std::string& irText, const jit::LaunchGrid& grid, int numWarps,
                const std::vector<gpucheck::CheckArg>& args, const Targets& targets, const Program* program);

}  // namespace tessera::fuzz
