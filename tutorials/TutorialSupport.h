// Shared plumbing for the tutorial programs: the command line (which backend), random inputs, launches, result
// checks, and the IR round trip every tutorial shows (trace -> verify -> print -> parse -> print again).
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/tessera.h"

namespace tutorials {

inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Largest |got - want| / (atol + rtol * |want|); <= 1 means every element is within tolerance.
inline double worstError(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double e = std::fabs(static_cast<double>(got[i]) - want[i]) / (atol + rtol * std::fabs(want[i]));
    if (std::isnan(got[i]) != std::isnan(want[i])) e = INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

template <class T> tessera::interp::Buffer buffer(std::vector<T>& v) { return {v.data(), v.size() * sizeof(T)}; }

// Prints the traced IR when asked (TESSERA_TUTORIAL_PRINT_IR=1) and checks that it verifies and survives a
// print/parse/print round trip unchanged.
inline bool checkRoundTrip(const tessera::ir::Module& m) {
  std::string text = tessera::ir::print(m);
  if (const char* env = std::getenv("TESSERA_TUTORIAL_PRINT_IR"); env && std::string(env) == "1")
    std::printf("%s\n", text.c_str());
  tessera::ir::verify(m);
  auto reparsed = tessera::ir::parseModule(text, "<traced>");
  tessera::ir::verify(*reparsed);
  return tessera::ir::print(*reparsed) == text;
}

// Where a tutorial runs its kernels. Without --backend: the reference interpreter and eager mode, plus the GPU
// (through the CUDA JIT) when a CUDA device is present. --backend=NAME runs only one of them: interpreter, eager,
// gpu, or sim: the GPU code on the emulator (docs/Sim.md) for --arch=ARCH, else TESSERA_SIM_ARCH, else sm_90a,
// like the Python tutorials' --backend sim.
enum class Backend { Interpreter, Eager, Gpu, Sim };

struct Options {
  std::vector<Backend> backends;  // empty: the default set above
  std::string simArch = "sm_90a";
};

inline Options& options() {  // the program's, set by configure()
  static Options o;
  return o;
}

// Reads the command line into options(); prints the usage and exits with status 2 on anything else.
inline void configure(int argc, char** argv) {
  Options& o = options();
  if (const char* env = std::getenv("TESSERA_SIM_ARCH"); env && *env) o.simArch = env;
  const std::map<std::string, Backend> names{{"interpreter", Backend::Interpreter}, {"eager", Backend::Eager},
                                             {"gpu", Backend::Gpu}, {"sim", Backend::Sim}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.starts_with("--backend=") && names.count(arg.substr(10))) {
      o.backends = {names.at(arg.substr(10))};
    } else if (arg.starts_with("--arch=")) {
      o.simArch = arg.substr(7);
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s'\nusage: %s [--backend=interpreter|eager|gpu|sim] [--arch=ARCH]\n"
                   "  --arch: the arch the emulator models (sm_90a, sm_80, gfx90a, gfx942); default TESSERA_SIM_ARCH "
                   "or sm_90a\n", argv[0], arg.c_str(), argv[0]);
      std::exit(2);
    }
  }
  try {
    o.simArch = tessera::sim::emulatedArch("", o.simArch);
    if (o.backends == std::vector<Backend>{Backend::Gpu}) tessera::jit::selectRuntime("nvptx");  // says why not
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.message().c_str());
    std::exit(2);
  }
}

inline std::vector<Backend> availableBackends() {
  if (!options().backends.empty()) return options().backends;
  std::vector<Backend> b{Backend::Interpreter, Backend::Eager};
  if (tessera::jit::CudaDriver::instance().available()) b.push_back(Backend::Gpu);
  return b;
}

inline std::string backendName(Backend b) {
  switch (b) {
    case Backend::Interpreter: return "interpreter";
    case Backend::Eager: return "eager mode";
    case Backend::Gpu: return "GPU";
    case Backend::Sim: return "emulated " + options().simArch;
  }
  return "";
}

// The emulator's counters of every launch, merged per kernel, for the figures Report::finish prints.
struct KernelFigures {
  int launches = 0;
  tessera::sim::Counters counters;
};
inline std::map<std::string, KernelFigures>& emulatedFigures() {
  static std::map<std::string, KernelFigures> figures;
  return figures;
}

// Launches that threw (a GPU error, or the emulator's checks finding something); Report::finish counts them.
inline int& failedLaunches() {
  static int failed = 0;
  return failed;
}

// Runs `k` on `backend` over host buffers (pointer and tensor descriptor arguments). On the GPU and the emulator
// every buffer is copied to the device, the kernel is JIT-compiled (once per specialization) and launched, and every
// buffer is copied back, so callers read results the same way. A launch that throws is reported on stdout and
// counted as a failure.
inline void runOn(Backend backend, const tessera::KernelDef& k, tessera::interp::Grid grid,
                  const std::vector<tessera::interp::Arg>& args, const tessera::Constants& constants, int numWarps = 4) {
  if (backend == Backend::Interpreter) return k.runInterpreter(grid, args, constants);
  if (backend == Backend::Eager) return k.runEager(grid, args, constants);
  namespace jit = tessera::jit;
  tessera::sim::SimRuntime* emulator = backend == Backend::Sim ? &tessera::sim::simRuntime(options().simArch) : nullptr;
  jit::DeviceRuntime& runtime = emulator ? *emulator : jit::selectRuntime("nvptx");
  // Device buffers, released however the launch ends.
  struct Buffers {
    jit::DeviceRuntime& runtime;
    std::vector<jit::DeviceAddress> addresses;
    ~Buffers() {
      for (jit::DeviceAddress a : addresses) runtime.release(a);
    }
  } device{runtime, {}};
  // The host buffer behind a pointer or descriptor argument, or null.
  auto bufferOf = [](const tessera::interp::Arg& a) -> const tessera::interp::Buffer* {
    if (auto* b = std::get_if<tessera::interp::Buffer>(&a)) return b;
    if (auto* d = std::get_if<tessera::interp::TensorDesc>(&a)) return &d->buffer;
    return nullptr;
  };
  std::vector<jit::KernelArg> kernelArgs;
  for (const tessera::interp::Arg& a : args) {
    if (const tessera::interp::Buffer* b = bufferOf(a)) {
      device.addresses.push_back(runtime.allocate(std::max<size_t>(b->bytes, 1)));
      runtime.copyToDevice(device.addresses.back(), b->data, b->bytes);
      if (auto* d = std::get_if<tessera::interp::TensorDesc>(&a))
        kernelArgs.push_back(jit::KernelArg::tensorDescriptor(device.addresses.back(), d->shape, d->strides, d->block));
      else
        kernelArgs.push_back(jit::KernelArg::pointer(device.addresses.back(), b->bytes));  // sized: offsets32
    } else if (auto* i = std::get_if<int64_t>(&a)) {
      kernelArgs.emplace_back(*i);
    } else {
      kernelArgs.emplace_back(std::get<double>(a));
    }
  }
  static std::map<std::string, std::unique_ptr<jit::JitKernel>> kernels;  // one handle (and its cache) per kernel
  auto& handle = kernels[k.name()];
  if (!handle) handle = std::make_unique<jit::JitKernel>(k);
  jit::LaunchOptions launchOptions;
  launchOptions.numWarps = numWarps;
  launchOptions.runtime = emulator;
  try {
    handle->launch({grid[0], grid[1], grid[2]}, kernelArgs, constants, launchOptions);
    runtime.synchronize(nullptr, k.name());
  } catch (const tessera::Error& e) {
    std::printf("  launch of %s on %s failed: %s\n", k.name().c_str(), backendName(backend).c_str(), e.what());
    ++failedLaunches();
  }
  if (emulator) {
    if (std::optional<tessera::sim::Report> report = emulator->takeLastReport()) {
      KernelFigures& figures = emulatedFigures()[k.name()];
      ++figures.launches;
      figures.counters += report->total;
    }
  }
  size_t next = 0;
  for (const tessera::interp::Arg& a : args)
    if (const tessera::interp::Buffer* b = bufferOf(a)) runtime.copyToHost(b->data, device.addresses[next++], b->bytes);
}

// The emulated launches' figures as run_tutorials.sh collects them (the Python tutorials print the same table):
// coalescing (global load and store efficiency: requested / transferred bytes), bank conflicts (extra wavefronts)
// and barriers, per kernel.
inline void printEmulatedFigures(const std::string& tutorial) {
  if (emulatedFigures().empty()) return;
  std::printf("  memory figures per kernel (%s, emulated):\n", tutorial.c_str());
  std::printf("    %-28s %-7s %8s %7s %7s %14s %9s\n", "kernel", "arch", "launches", "ld.eff", "st.eff",
              "bank conflicts", "barriers");
  for (const auto& [kernel, f] : emulatedFigures())
    std::printf("    %-28s %-7s %8d %7.3f %7.3f %14llu %9llu\n", kernel.c_str(), options().simArch.c_str(), f.launches,
                f.counters.globalLoadEfficiency(), f.counters.globalStoreEfficiency(),
                static_cast<unsigned long long>(f.counters.sharedBankConflicts()),
                static_cast<unsigned long long>(f.counters.barriers));
}

struct Report {
  std::string tutorial;
  int failures = 0;
  void check(const std::string& what, bool ok, const std::string& detail = "") {
    std::printf("  %-44s %s%s%s\n", what.c_str(), ok ? "ok" : "FAILED", detail.empty() ? "" : "  ", detail.c_str());
    failures += !ok;
  }
  int finish() const {
    printEmulatedFigures(tutorial);
    const bool passed = failures == 0 && failedLaunches() == 0;
    std::printf("%s: %s\n", tutorial.c_str(), passed ? "PASS" : "FAIL");
    return passed ? 0 : 1;
  }
};

inline std::string fmtError(double e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(worst error %.3g of tolerance)", e);
  return buf;
}

}  // namespace tutorials
