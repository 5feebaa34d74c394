// Helpers of tests/unit/sim_planted_bugs_test.cpp: running a kernel under the emulator (SimRuntime) against the
// reference interpreter, optionally with a bug planted in its optimized LLVM IR, and reading that launch's report.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/LoadedKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/tessera.h"
#include "tests/gpucheck/GpuCheck.h"

namespace tessera::testing {

inline gpucheck::HostBuffer f32Buffer(const std::vector<float>& values) {
  gpucheck::HostBuffer b{ir::ScalarKind::F32, std::vector<uint8_t>(values.size() * sizeof(float))};
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

// Values in [-1, 1) from a fixed linear congruential sequence, exactly representable in f16 (multiples of 1/64).
inline std::vector<float> sampleValues(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(seed >> 25) - 64) / 64.0f;
  }
  return v;
}

inline gpucheck::HostBuffer f16Buffer(const std::vector<float>& values) {
  gpucheck::HostBuffer b{ir::ScalarKind::F16, std::vector<uint8_t>(values.size() * 2)};
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t bits = static_cast<uint16_t>(ir::encodeF16(values[i]));
    std::memcpy(b.bytes.data() + 2 * i, &bits, 2);
  }
  return b;
}

// Replaces every occurrence of `from` in `text` by `to` and returns how many there were, so a test can assert
// that its plant changed the code (a plant that matches nothing would make the test prove nothing).
inline int replaceAll(std::string& text, const std::string& from, const std::string& to) {
  int count = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++count;
  }
  return count;
}

// What one emulated launch gave: the comparison with the interpreter and the emulator's report.
struct SimOutcome {
  gpucheck::CheckResult check;
  sim::Report report;
};

// Runs `c` under the emulator of `arch` (sm_90a, sm_80, gfx942, ...) and on the interpreter; `plant` edits the
// compiled kernel first.
inline SimOutcome runUnderSim(const gpucheck::CheckCase& c, const std::string& arch,
                              std::function<void(jit::CompiledKernel&)> plant = {}) {
  static jit::KernelCache cache{std::filesystem::path()};
  gpucheck::CheckOptions options;
  options.timeLaunch = false;
  options.plant = std::move(plant);
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  SimOutcome out{gpucheck::checkAgainstInterpreter(c, cache, runtime, options), {}};
  std::optional<sim::Report> report = runtime.lastReport();
  if (report) out.report = std::move(*report);
  return out;
}

// Launches `c` under the emulator alone, without the interpreter (which rejects what the emulator is to report,
// an out-of-bounds load for one), and returns the launch's report.
inline sim::Report launchOnlyUnderSim(const gpucheck::CheckCase& c, const std::string& arch) {
  static jit::KernelCache cache{std::filesystem::path()};
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  std::vector<jit::DeviceAddress> buffers;
  std::vector<jit::KernelArg> args;
  for (const gpucheck::CheckArg& a : c.args) {
    if (const auto* b = std::get_if<gpucheck::HostBuffer>(&a)) {
      buffers.push_back(runtime.allocate(b->bytes.size()));
      runtime.copyToDevice(buffers.back(), b->bytes.data(), b->bytes.size());
      args.push_back(jit::KernelArg::pointer(buffers.back()));
    } else if (const auto* i = std::get_if<int64_t>(&a)) {
      args.emplace_back(*i);
    } else {
      args.emplace_back(std::get<double>(a));
    }
  }
  jit::LaunchOptions options;
  options.numWarps = c.numWarps;
  options.target = runtime.target();
  options.arch = arch;
  std::vector<ir::Type> paramTypes;
  for (const ParamInfo& p : c.kernel.runtimeParams()) paramTypes.push_back(p.type);
  jit::LoadedKernel loaded(jit::JitKernel(c.kernel, cache).compileOnly(args, c.constants, options), paramTypes,
                           runtime);
  try {
    loaded.launch(c.grid, args);
  } catch (const Error&) {
    // The findings are in the report.
  }
  for (jit::DeviceAddress p : buffers) runtime.release(p);
  std::optional<sim::Report> report = runtime.lastReport();
  EXPECT_TRUE(report && report->kernel == c.kernel.name()) << "the kernel did not launch";
  return report ? *report : sim::Report{};
}

// The first kept finding of `kind`, or null.
inline const sim::Finding* firstFinding(const sim::Report& r, sim::FindingKind kind) {
  for (const sim::Finding& f : r.findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

// The counters of the tile-IR op `op` written at line `line` of this test's source file, or null.
inline const sim::OpCounters* opCounters(const sim::Report& r, const std::string& op, uint32_t line) {
  for (const sim::OpCounters& o : r.ops)
    if (o.op == op && o.line == line && o.file.ends_with("sim_planted_bugs_test.cpp")) return &o;
  return nullptr;
}

}  // namespace tessera::testing
