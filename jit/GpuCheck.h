// Runs a kernel on the GPU and on the reference interpreter from the same random inputs and compares every
// buffer afterwards (outputs, and inputs that must stay unchanged). Used by tests/unit/jit_gpu_test.cpp and the
// tessera-gpu-check tool that scripts/gpu/ runs on a GPU machine.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "ir/Types.h"
#include "jit/Cache.h"
#include "jit/CudaDriver.h"
#include "jit/LoadedKernel.h"
#include "tessera/Kernel.h"

namespace tessera::jit {

// Host memory for one pointer argument, as raw element bytes.
struct HostBuffer {
  ir::ScalarKind element;
  std::vector<uint8_t> bytes;
};
using CheckArg = std::variant<HostBuffer, int64_t, double>;

struct CheckCase {
  std::string name;  // shown in the table: "vector_add n=98432"
  KernelDef kernel;
  Constants constants;
  LaunchGrid grid{1, 1, 1};
  std::vector<CheckArg> args;  // the runtime arguments, in order
  int numWarps = 4;
  double atol = 1e-6;  // float elements pass when |gpu - ref| <= atol + rtol * |ref|; integers must be equal
  double rtol = 1e-6;
};

struct CheckResult {
  enum class Status { Pass, Fail, Error };
  std::string name;
  Status status = Status::Error;
  double worstError = 0;  // largest |gpu - ref| / (atol + rtol * |ref|) over every element (<= 1 passes)
  size_t mismatches = 0;
  std::string firstMismatch;  // "buffer 2 [17]: gpu 1.5, interpreter 1.25"
  double gpuMilliseconds = 0;  // one launch after a warm-up, measured with CUDA events
  int registers = 0;
  int localBytes = 0;
  int64_t sharedBytes = 0;
  std::string message;  // the error, for Status::Error
};

CheckResult checkAgainstInterpreter(const CheckCase& c, KernelCache& cache, CudaDriver& driver = CudaDriver::instance());

// A fixed-width text table, one row per result, and a summary line.
std::string formatCheckTable(const std::vector<CheckResult>& results);

}  // namespace tessera::jit
