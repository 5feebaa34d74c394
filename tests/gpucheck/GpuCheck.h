// Runs a kernel on a device and on the reference interpreter from the same random inputs and compares every
// buffer afterwards (outputs, and inputs that must stay unchanged). Test support, not part of the library: used by
// tests/unit/jit_gpu_test.cpp and tools/tessera-gpu-check.cpp (which scripts/gpu/ runs on a GPU machine). The
// device is any jit::DeviceRuntime: the kernel is compiled for the runtime's target and native arch.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/Types.h"
#include "jit/Cache.h"
#include "jit/CompiledKernel.h"
#include "jit/DeviceRuntime.h"
#include "jit/LoadedKernel.h"
#include "tessera/Kernel.h"

namespace tessera::gpucheck {

// How a float buffer's elements must agree. Integers always compare bit for bit.
struct Tolerance {
  double atol = 0, rtol = 0;  // |device - ref| <= atol + rtol * |ref|
  bool bitExact = false;      // instead: the same bits (any NaN matches any NaN: the interpreter keeps no payloads)
};

// Host memory for one pointer argument, as raw element bytes.
struct HostBuffer {
  ir::ScalarKind element;
  std::vector<uint8_t> bytes;
  std::optional<Tolerance> tolerance;  // this buffer's, instead of the case's atol/rtol
};
using CheckArg = std::variant<HostBuffer, int64_t, double>;

struct CheckCase {
  std::string name;  // shown in the table: "vector_add n=98432"
  KernelDef kernel;
  Constants constants;
  jit::LaunchGrid grid{1, 1, 1};
  std::vector<CheckArg> args;  // the runtime arguments, in order
  int numWarps = 4;
  double atol = 1e-6;  // float elements pass when |gpu - ref| <= atol + rtol * |ref|; integers must be equal
  double rtol = 1e-6;
  int numStages = 3;  // shared-memory stages of pipelined loops (jit::LaunchOptions::numStages); last, so that
                      // positional initializers of the fields above keep their meaning
  bool persistent = false;  // a persistent kernel (jit::LaunchOptions::persistent): programs loop over the tiles
  int matrixInstrSize = 0;  // AMD's matrix instructions' M and N (jit::LaunchOptions::matrixInstrSize)
};

struct CheckResult {
  enum class Status { Pass, Fail, Error };
  std::string name;
  Status status = Status::Error;
  double worstError = 0;  // largest |gpu - ref| / (atol + rtol * |ref|) over every element (<= 1 passes)
  size_t mismatches = 0;
  std::string firstMismatch;  // "buffer 2 [17]: gpu 1.5, interpreter 1.25"
  // One more launch after the checked one, on the host clock from the launch to the end of the wait for it
  // (empty when CheckOptions::timeLaunch is off).
  std::optional<double> launchMilliseconds;
  std::optional<int> registers;   // per thread; empty where the runtime cannot tell (HIP)
  std::optional<int> localBytes;  // per thread, likewise
  int64_t sharedBytes = 0;
  std::string message;  // the error, for Status::Error
  // The launch never finished (jit::KernelTimeout, past $TESSERA_GPU_TIMEOUT): the GPU is still running it, and
  // any later launch would wait behind it.
  bool deviceHung = false;
};

struct CheckOptions {
  // Launch once more and time it. The emulator's time says nothing of a GPU's: tessera-gpu-check --runtime=sim
  // turns this off, which halves its launches.
  bool timeLaunch = true;
  // Changes the compiled kernel before it is loaded: tests plant bugs in its optimized LLVM IR this way.
  std::function<void(jit::CompiledKernel&)> plant;
};

CheckResult checkAgainstInterpreter(const CheckCase& c, jit::KernelCache& cache, jit::DeviceRuntime& runtime,
                                    const CheckOptions& options = {});

// The pieces of checkAgainstInterpreter, for callers comparing more than two executions (tools/tessera-fuzz).
// Each returns the case's pointer arguments after one run, in argument order, from the case's initial contents.
// What the kernel prints (debug_print) goes to `debugOut` (null: std::cout).
std::vector<HostBuffer> runOnInterpreter(const CheckCase& c, std::ostream* debugOut = nullptr);
std::vector<HostBuffer> runEager(const CheckCase& c, std::ostream* debugOut = nullptr);
// The interpreter on a function already traced (or parsed), launched over `args`.
std::vector<HostBuffer> interpretFunction(const ir::Function& f, const jit::LaunchGrid& grid,
                                          const std::vector<CheckArg>& args, std::ostream* debugOut = nullptr);
struct DeviceRun {
  std::shared_ptr<const jit::CompiledKernel> compiled;
  std::vector<HostBuffer> buffers;
};
// Compiles the case for the runtime's target and native arch, launches it once and copies every buffer back.
DeviceRun runOnDevice(const CheckCase& c, jit::KernelCache& cache, jit::DeviceRuntime& runtime);
// Lowers and optimizes `f`, a function the tile-IR passes have been through (its shared memory placed, its barriers
// in), for `target` and `arch` as the JIT does after its passes: the kernel launchCompiled loads. Tests that change
// the IR between the passes and the lowering compile it this way.
std::shared_ptr<const jit::CompiledKernel> compileAfterPasses(const ir::Function& f, const std::string& target,
                                                              const std::string& arch, int numWarps);
// Loads an already compiled kernel through the runtime and launches it once over copies of `args`.
std::vector<HostBuffer> launchCompiled(std::shared_ptr<const jit::CompiledKernel> compiled,
                                       const std::vector<ir::Type>& paramTypes, const jit::LaunchGrid& grid,
                                       const std::vector<CheckArg>& args, jit::DeviceRuntime& runtime);
// Compares `got` against `reference` buffer by buffer (each buffer's tolerance, else `caseTolerance`), adding to
// `r`'s worstError, mismatches and firstMismatch ("buffer 2 [17]: <gotName> 1.5, <referenceName> 1.25").
void compareBuffers(const std::vector<HostBuffer>& reference, const std::vector<HostBuffer>& got,
                    const Tolerance& caseTolerance, CheckResult& r, const std::string& gotName = "gpu",
                    const std::string& referenceName = "interpreter");

// A fixed-width text table, one row per result, and a summary line.
std::string formatCheckTable(const std::vector<CheckResult>& results);

}  // namespace tessera::gpucheck
