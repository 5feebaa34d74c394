// Runs a check in a child process, so that a crash is a finding rather than the end of the fuzzing run: LLVM's
// instruction selection aborts the process on what it cannot select ("LLVM ERROR: Cannot select"), and a
// miscompiled or misemulated kernel may fault.
#pragma once

#include <functional>

#include "tests/fuzz/difffuzz/Differential.h"

namespace tessera::fuzz {

// The check's outcome, or one finding {"process", "crash", <its last stderr line or the signal>} when the child
// died. POSIX only (fork).
Outcome checkInChildProcess(const std::function<Outcome()>& check);

}  // namespace tessera::fuzz
