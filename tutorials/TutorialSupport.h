// Shared plumbing for the tutorial programs: random inputs, result checks, and the IR round trip every
// tutorial shows (trace -> verify -> print -> parse -> print again).
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "jit/JitKernel.h"
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

inline tessera::interp::Buffer buffer(std::vector<float>& v) { return {v.data(), v.size() * sizeof(float)}; }

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

// Where a tutorial runs its kernels: always the reference interpreter and eager mode, plus the GPU (through the
// CUDA JIT) when a CUDA device is present.
enum class Backend { Interpreter, Eager, Gpu };

inline std::vector<Backend> availableBackends() {
  std::vector<Backend> b{Backend::Interpreter, Backend::Eager};
  if (tessera::jit::CudaDriver::instance().available()) b.push_back(Backend::Gpu);
  return b;
}

inline std::string backendName(Backend b) {
  switch (b) {
    case Backend::Interpreter: return "interpreter";
    case Backend::Eager: return "eager mode";
    case Backend::Gpu: return "GPU";
  }
  return "";
}

// Runs `k` on `backend` over host buffers. On the GPU every buffer is copied to the device, the kernel is JIT-compiled
// (once per specialization) and launched, and every buffer is copied back, so callers read results the same way.
inline void runOn(Backend backend, const tessera::KernelDef& k, tessera::interp::Grid grid,
                  const std::vector<tessera::interp::Arg>& args, const tessera::Constants& constants, int numWarps = 4) {
  if (backend == Backend::Interpreter) return k.runInterpreter(grid, args, constants);
  if (backend == Backend::Eager) return k.runEager(grid, args, constants);
  namespace jit = tessera::jit;
  std::vector<jit::DeviceBuffer> device;
  device.reserve(args.size());
  std::vector<jit::KernelArg> kernelArgs;
  for (const tessera::interp::Arg& a : args) {
    if (auto* b = std::get_if<tessera::interp::Buffer>(&a)) {
      device.emplace_back(b->bytes);
      device.back().copyFromHost(b->data, b->bytes);
      kernelArgs.emplace_back(device.back());
    } else if (auto* i = std::get_if<int64_t>(&a)) {
      kernelArgs.emplace_back(*i);
    } else {
      kernelArgs.emplace_back(std::get<double>(a));
    }
  }
  static std::map<std::string, std::unique_ptr<jit::JitKernel>> kernels;  // one handle (and its cache) per kernel
  auto& handle = kernels[k.name()];
  if (!handle) handle = std::make_unique<jit::JitKernel>(k);
  jit::LaunchOptions options;
  options.numWarps = numWarps;
  handle->launch({grid[0], grid[1], grid[2]}, kernelArgs, constants, options);
  jit::CudaDriver::instance().synchronize(nullptr, k.name());
  size_t next = 0;
  for (const tessera::interp::Arg& a : args)
    if (auto* b = std::get_if<tessera::interp::Buffer>(&a)) device[next++].copyToHost(b->data, b->bytes);
}

struct Report {
  std::string tutorial;
  int failures = 0;
  void check(const std::string& what, bool ok, const std::string& detail = "") {
    std::printf("  %-44s %s%s%s\n", what.c_str(), ok ? "ok" : "FAILED", detail.empty() ? "" : "  ", detail.c_str());
    failures += !ok;
  }
  int finish() const {
    std::printf("%s: %s\n", tutorial.c_str(), failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
  }
};

inline std::string fmtError(double e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(worst error %.3g of tolerance)", e);
  return buf;
}

}  // namespace tutorials
