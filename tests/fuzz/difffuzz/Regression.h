// Regression files (tests/fuzz/regressions/*.tir): a reduced failing program as specialized tile IR, after a
// header of `// key: value` lines giving its launch and how its buffers are filled, so the file alone replays it
// (checkIR, Differential.h). ctest replays every file: a fixed bug's file must pass on every arch; an open one
// (`expect: fail`, with the reason) must still fail, so that fixing it is noticed.
//
//   // tessera-fuzz regression: sm_80 mismatch
//   // detail: 3 elements; buffer 1 [4]: sm_80 2, interpreter 3
//   // expect: pass
//   // grid: 2 1
//   // warps: 4
//   // limit: 100
//   // archs: sm_80 sm_90a gfx942
//   // buffer: input f32 64 1234        (role, dtype, elements in all, data seed[, approx])
//   module { ... }
#pragma once

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
  std::string ir;
};

// The regression for a reduced program and its finding (ir: Outcome::specializedIR).
Regression makeRegression(const Program& p, const Finding& finding, const std::string& ir,
                          const std::vector<std::string>& archs);

std::string formatRegression(const Regression& r);
// Throws tessera::Error naming the file and line for a malformed header.
Regression parseRegression(const std::string& text, const std::string& fileName);

// Runs a regression: its findings (none expected unless expectFailure).
Outcome replay(const Regression& r);

}  // namespace tessera::fuzz
