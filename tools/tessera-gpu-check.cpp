// tessera-gpu-check: runs every tutorial kernel and op case (tests/gpucheck/Cases.h) on the GPU, or under the
// emulator, and on the reference interpreter, and prints one table row per case. Exit status 0 when every case
// passes, 1 otherwise, 2 without a GPU (or for a bad command line). scripts/gpu/run_on_gpu.sh runs it on the GPU
// machine; ctest runs it under the emulator.
//
//   tessera-gpu-check [--runtime=cuda|hip|sim] [--arch=ARCH] [--checks=LIST] [--xfail=SUBSTRING]... [--timeout=S]
//                     [--kfd-topology=DIR] [substring]
//     --runtime=cuda an NVIDIA GPU through the CUDA driver (the default)
//     --runtime=hip  an AMD GPU through the HIP runtime, compiling for TESSERA_HIP_ARCH or the GPU's arch
//     --kfd-topology=DIR
//                    with --runtime=hip: where the amdgpu driver's KFD topology nodes are, which give the GPU's arch
//                    and compute units (default /sys/class/kfd/kfd/topology/nodes)
//     --runtime=sim  the emulator (jit/sim/SimRuntime.h); --arch picks what it emulates: sm_90a (default), sm_80,
//                    gfx90a or gfx942. Each case launches once (a GPU run launches once more, timed)
//     --checks       the emulator's checks, as compute-sanitizer's --tool picks one: all (default), none, or a
//                    comma-separated list of memcheck, racecheck, initcheck, synccheck (runtime/Checks.h)
//     --xfail        cases whose name contains it are known to fail: the run passes only if each of them fails
//                    (so a fixed bug is noticed) and every other case passes
//     --conflict-free-conversions
//                    with --runtime=sim: the run also fails if a layout conversion (convert_layout) of any case
//                    costs shared-memory bank conflicts (the emulator's counters); the cases whose conversions do
//                    are listed either way
//     --multiprocessors=N
//                    with --runtime=sim: the emulated GPU's multiprocessors, which a persistent case's launch
//                    counts (default: the arch's flagship GPU's); 1 makes every persistent case loop over its tiles
//     --timeout=S    on a GPU (cuda, hip): a case whose launch has not finished after S seconds (default 60, or
//                    $TESSERA_GPU_TIMEOUT when set) is reported with its kernel's name, and the run stops there:
//                    the GPU is still running it, so every later launch would wait behind it
//     substring      only the cases whose name contains it
//   tessera-gpu-check --version
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/Error.h"
#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "jit/HipRuntime.h"
#include "jit/sim/SimRuntime.h"
#include "tests/gpucheck/Cases.h"
#include "tools/VersionFlag.h"

namespace {

struct Options {
  std::string runtime = "cuda";
  std::string arch;
  std::string filter;
  std::string checks;  // empty: all
  std::vector<std::string> expectedFailures;
  bool conflictFreeConversions = false;
  unsigned multiprocessors = 0;  // 0: the emulated arch's flagship GPU's
  std::string timeout;           // seconds, for TESSERA_GPU_TIMEOUT; empty: its value, else 60
  std::string kfdTopology;       // hip: the KFD topology's nodes; empty: the driver's
  bool expectedToFail(const std::string& name) const {
    for (const std::string& x : expectedFailures)
      if (name.find(x) != std::string::npos) return true;
    return false;
  }
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("--runtime=")) o.runtime = a.substr(10);
    else if (a.starts_with("--arch=")) o.arch = a.substr(7);
    else if (a.starts_with("--checks=")) o.checks = a.substr(9);
    else if (a.starts_with("--xfail=")) o.expectedFailures.push_back(a.substr(8));
    else if (a == "--conflict-free-conversions") o.conflictFreeConversions = true;
    else if (a.starts_with("--multiprocessors=")) {
      const std::string n = a.substr(18);
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos || std::stoul(n) == 0)
        return false;
      o.multiprocessors = static_cast<unsigned>(std::stoul(n));
    }
    else if (a.starts_with("--kfd-topology=") && a.size() > 15) o.kfdTopology = a.substr(15);
    else if (a.starts_with("--timeout=")) {
      o.timeout = a.substr(10);
      char* end = nullptr;
      const double seconds = std::strtod(o.timeout.c_str(), &end);
      if (o.timeout.empty() || *end != '\0' || !(seconds > 0) || !std::isfinite(seconds)) return false;
    }
    else if (a.starts_with("--")) return false;
    else o.filter = a;
  }
  if (!o.kfdTopology.empty() && o.runtime != "hip") return false;
  return (o.runtime == "sim" && o.timeout.empty()) ||
         ((o.runtime == "cuda" || o.runtime == "hip") && !o.conflictFreeConversions && o.multiprocessors == 0);
}

// The extra shared-memory wavefronts the layout conversions of the emulator's last launch cost.
uint64_t conversionBankConflicts(tessera::sim::SimRuntime& emulator) {
  uint64_t conflicts = 0;
  if (std::optional<tessera::sim::Report> report = emulator.takeLastReport())
    for (const tessera::sim::OpCounters& op : report->ops)
      if (op.op == "convert_layout") conflicts += op.counters.sharedBankConflicts();
  return conflicts;
}

}  // namespace

int main(int argc, char** argv) {
  // Line by line, in order with the progress lines on stderr: a run stopped from outside (a time limit) keeps
  // everything it printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (tessera::tools::printVersionIfAsked(argc, argv, "tessera-gpu-check")) return 0;
  using namespace tessera::gpucheck;
  using namespace tessera::jit;
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: tessera-gpu-check [--runtime=cuda|hip|sim] [--arch=ARCH] [--checks=LIST] "
                         "[--xfail=SUBSTRING]... [--conflict-free-conversions (sim)] [--multiprocessors=N (sim)] "
                         "[--timeout=SECONDS (cuda, hip)] [--kfd-topology=DIR (hip)] [substring]\n");
    return 2;
  }
  std::unique_ptr<DeviceRuntime> gpu;
  DeviceRuntime* runtime = nullptr;
  tessera::sim::SimRuntime* emulator = nullptr;
  if (options.runtime == "sim") {
    try {
      const tessera::sim::Checks checks =
          options.checks.empty() ? tessera::sim::Checks(true) : tessera::sim::Checks::parse(options.checks);
      tessera::sim::SimRuntime& sim = tessera::sim::simRuntime(options.arch.empty() ? "sm_90a" : options.arch, checks);
      std::printf("emulator (sim): %s %s, checks: %s\n", sim.target().c_str(), sim.nativeArch().c_str(),
                  sim.checks().str().c_str());
      sim.setMultiprocessors(options.multiprocessors);
      runtime = emulator = &sim;
    } catch (const tessera::Error& e) {
      std::fprintf(stderr, "tessera-gpu-check: %s\n", e.what());
      return 2;
    }
  } else {
    if (!options.arch.empty() || !options.checks.empty()) {
      std::fprintf(stderr, "tessera-gpu-check: --arch and --checks are for --runtime=sim (a GPU runs its own arch; "
                           "use compute-sanitizer for its checks)\n");
      return 2;
    }
    if (options.runtime == "cuda") {
      CudaDriver& driver = CudaDriver::instance();
      if (!driver.available()) {
        std::fprintf(stderr, "tessera-gpu-check: %s\n", driver.unavailableReason().c_str());
        return 2;
      }
      std::printf("GPU: %s (compute capability %d, %d SMs), compiling for %s\n", driver.deviceName().c_str(),
                  driver.computeCapability(), driver.multiprocessorCount(), driver.nativeArch().c_str());
      gpu = makeCudaDeviceRuntime(driver);
    } else {
      HipRuntime& hip = HipRuntime::instance();
      if (!hip.available()) {
        std::fprintf(stderr, "tessera-gpu-check: %s\n", hip.unavailableReason().c_str());
        return 2;
      }
      gpu = options.kfdTopology.empty() ? makeHipDeviceRuntime(hip) : makeHipDeviceRuntime(hip, options.kfdTopology);
      try {
        std::printf("AMD GPU through HIP (%d device(s)), compiling for %s\n", hip.deviceCount(),
                    gpu->nativeArch().c_str());
      } catch (const tessera::Error& e) {
        std::fprintf(stderr, "tessera-gpu-check: %s\n", e.what());
        return 2;
      }
    }
    runtime = gpu.get();
    // A kernel that never ends must not take the whole run with it (CudaDriver/HipRuntime::synchronize).
    if (!options.timeout.empty()) setenv("TESSERA_GPU_TIMEOUT", options.timeout.c_str(), 1);
    else setenv("TESSERA_GPU_TIMEOUT", "60", 0);
  }
  KernelCache cache{std::filesystem::path()};  // always compile with this build
  CheckOptions checkOptions;
  checkOptions.timeLaunch = options.runtime != "sim";  // the emulator's time says nothing of a GPU's
  std::vector<CheckResult> results;
  std::vector<std::pair<std::string, uint64_t>> conflictingConversions;
  std::string hung;  // the case whose launch never finished
  size_t notRun = 0;
  for (const CheckCase& c : allCases()) {
    if (!options.filter.empty() && c.name.find(options.filter) == std::string::npos) continue;
    if (!hung.empty()) {
      ++notRun;
      continue;
    }
    results.push_back(checkAgainstInterpreter(c, cache, *runtime, checkOptions));
    const CheckResult& r = results.back();
    std::fprintf(stderr, "%-6s %s\n", r.status == CheckResult::Status::Pass ? "pass" : "FAIL", c.name.c_str());
    if (r.deviceHung) hung = c.name;
    if (emulator)
      if (uint64_t conflicts = conversionBankConflicts(*emulator)) conflictingConversions.emplace_back(c.name, conflicts);
  }
  std::printf("\n%s", formatCheckTable(results).c_str());
  if (!hung.empty())
    std::printf("\nstopped after '%s': its launch never finished, and every later launch would wait behind it; "
                "%zu case(s) not run\n", hung.c_str(), notRun);
  bool ok = true;
  if (emulator) {
    std::printf("\nlayout conversions with shared-memory bank conflicts: %zu case(s)\n", conflictingConversions.size());
    for (const auto& [name, conflicts] : conflictingConversions)
      std::printf("  %-60s %llu extra wavefronts\n", name.c_str(), static_cast<unsigned long long>(conflicts));
    ok = !options.conflictFreeConversions || conflictingConversions.empty();
  }
  for (const CheckResult& r : results) {
    const bool passed = r.status == CheckResult::Status::Pass, expectedFailure = options.expectedToFail(r.name);
    if (passed && expectedFailure) {
      ok = false;
      std::printf("\n== %s\npassed, but --xfail says it fails: drop the --xfail\n", r.name.c_str());
    }
    if (passed) continue;
    ok = ok && expectedFailure;
    std::printf("\n== %s%s\n%s\n", r.name.c_str(), expectedFailure ? " (expected to fail)" : "",
                r.status == CheckResult::Status::Error ? r.message.c_str() : r.firstMismatch.c_str());
  }
  return ok && hung.empty() ? 0 : 1;
}
