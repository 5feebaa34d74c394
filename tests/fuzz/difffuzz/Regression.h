// Regression files (tests/fuzz/regressions/*.tir): a reduced failing program as specialized tile IR, after a
// header of `// key: value` lines giving its launch and how its buffers are filled, and the program itself as
// statements (ProgramText.h), so the file alone replays it (checkIR, Differential.h): the IR on every arch,
// the statements in eager mode (`eager` among the archs). ctest replays every file: a fixed bug's file must pass
// everywhere; an open one (`expect: fail`, with the reason) must still fail, so that fixing it is noticed.
// Files written before the statements were kept replay everywhere but in eager mode.
//
//   // tessera-fuzz regression: eager mismatch
//   // detail: 3 elements; buffer 1 [4]: eager 2, interpreter 3
//   // expect: pass
//   // grid: 2 1
//   // warps: 4
//   // limit: 100
//   // archs: eager sm_80 sm_90a gfx942
//   // buffer: input f32 64 1234        (role, dtype, elements in all, data seed[, approx])
//   // program: 1234                    (its seed, which names the kernel)
//   // stmt: load result=1 type=f32[6] buffer=0
//   // stmt: store type=f32[6] buffer=1 arg=1:f32[6]
//   func @fuzz_1234(...) { ... }
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jit/LoadedKernel.h"
#include "tests/fuzz/difffuzz/Differential.h"
#include "tests/fuzz/difffuzz/Program.h"

namespace tessera::fuzz {

struct RegressionBuffer {
  BufferSpec spec;
  int64_t elements = 0;
};

struct Regression {
  std::string title;   // the finding's signature
  std::string detail;  // its first line
  bool expectFailure = false;
  std::string reason;  // why it is still open (expectFailure)
  jit::LaunchGrid grid{1, 1, 1};
  int numWarps = 4;
  int64_t limitPercent = 100;
  std::vector<std::string> archs;
  std::vector<RegressionBuffer> buffers;
  std::optional<Program> program;  // absent in files older than the `// stmt:` lines
  std::string ir;
};

// The regression for a reduced program and its finding (ir: Outcome::specializedIR); `archs` may include "eager".
Regression makeRegression(const Program& p, const Finding& finding, const std::string& ir,
                          const std::vector<std::string>& archs);

std::string formatRegression(const Regression& r);
// Throws tessera::Error naming the file and line for a malformed header or statement, a statement naming a buffer
// the header does not list, or `eager` among the archs of a file without statements.
Regression parseRegression(const std::string& text, const std::string& fileName);

// Runs a regression: its findings (none expected unless expectFailure).
Outcome replay(const Regression& r);

}  // namespace tessera::fuzz
