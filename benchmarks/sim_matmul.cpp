// The tutorial matmul under the emulator, the way a user reaches it (jit::JitKernel's compile, SimRuntime's load and
// launch): M = N = K = 512, f16 inputs, 128x128x64 tiles, 8 warps, GROUP_M 8 (16 programs of 256 threads). Prints
// one row per stage with its wall-clock and process CPU time, and checks the result against a host reference.
// The goal (issue 10): the whole run with checks on under 10 s on the 2-core CI machine.
//   sim_matmul [arch]   (default sm_90a; sm_80, gfx90a, gfx942: the accumulator conversion goes through LDS in rounds)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/LoadedKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"

using namespace tessera;

namespace {

constexpr int64_t kSize = 512;

struct Times {
  double wall = 0, cpu = 0;
};

// Runs `stage` and returns its wall-clock time and the CPU time of every thread of this process meanwhile.
Times timed(const std::function<void()>& stage) {
  const auto wall = std::chrono::steady_clock::now();
  const std::clock_t cpu = std::clock();
  stage();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
          static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string arch = argc > 1 ? argv[1] : "sm_90a";
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> a(kSize * kSize), b(kSize * kSize);
  for (uint16_t& x : a) x = ir::encodeF16(dist(rng));
  for (uint16_t& x : b) x = ir::encodeF16(dist(rng));
  std::vector<float> c(kSize * kSize);
  const jit::DeviceAddress da = runtime.allocate(a.size() * 2), db = runtime.allocate(b.size() * 2),
                           dc = runtime.allocate(c.size() * 4);
  runtime.copyToDevice(da, a.data(), a.size() * 2);
  runtime.copyToDevice(db, b.data(), b.size() * 2);
  const std::vector<jit::KernelArg> args{jit::KernelArg::pointer(da), jit::KernelArg::pointer(db),
                                         jit::KernelArg::pointer(dc), kSize, kSize, kSize, kSize, int64_t(1), kSize,
                                         int64_t(1), kSize, int64_t(1)};
  const Constants constants{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"GROUP_M", 8}};
  const KernelDef def = kernels::matmul_kernel();
  jit::KernelCache cache{std::filesystem::path()};
  jit::LaunchOptions options;
  options.numWarps = 8;
  options.target = runtime.target();
  options.arch = arch;
  std::vector<ir::Type> paramTypes;
  for (const ParamInfo& p : def.runtimeParams()) paramTypes.push_back(p.type);

  std::shared_ptr<const jit::CompiledKernel> compiled;
  std::unique_ptr<jit::LoadedKernel> loaded;
  const jit::LaunchGrid grid{(kSize / 128) * (kSize / 128), 1, 1};
  std::vector<std::pair<std::string, Times>> rows;
  rows.emplace_back("compile (tile IR -> optimized GPU module)",
                    timed([&] { compiled = jit::JitKernel(def, cache).compileOnly(args, constants, options); }));
  rows.emplace_back("load (rewrite for the host, host JIT)", timed([&] {
                      loaded = std::make_unique<jit::LoadedKernel>(compiled, paramTypes, runtime);
                    }));
  rows.emplace_back("launch, checks on", timed([&] { loaded->launch(grid, args); }));
  runtime.setChecks(false);
  rows.emplace_back("launch, checks off", timed([&] { loaded->launch(grid, args); }));
  runtime.setChecks(true);
  runtime.copyToHost(c.data(), dc, c.size() * 4);

  double worst = 0;
  for (int64_t i = 0; i < kSize; ++i)
    for (int64_t j = 0; j < kSize; ++j) {
      double want = 0;
      for (int64_t k = 0; k < kSize; ++k) want += double(ir::decodeF16(a[i * kSize + k])) * ir::decodeF16(b[k * kSize + j]);
      worst = std::max(worst, std::fabs(c[i * kSize + j] - want));
    }

  std::printf("tutorial matmul 512x512x512 f16, 128x128x64 tiles, 8 warps, %s, %u host threads\n", arch.c_str(),
              std::thread::hardware_concurrency());
  std::printf("%-44s %10s %10s\n", "stage", "wall s", "cpu s");
  Times checked;
  for (const auto& [name, t] : rows) {
    std::printf("%-44s %10.3f %10.3f\n", name.c_str(), t.wall, t.cpu);
    if (name != "launch, checks off") checked.wall += t.wall, checked.cpu += t.cpu;
  }
  std::printf("%-44s %10.3f %10.3f   (goal: under 10 s wall)\n", "compile + load + launch with checks", checked.wall,
              checked.cpu);
  std::printf("max |error| against a host reference: %.2g\n", worst);
  const sim::Report report = *runtime.lastReport();
  std::printf("%s", report.countersTable().c_str());
  for (jit::DeviceAddress p : {da, db, dc}) runtime.release(p);
  return worst < 1e-3 ? 0 : 1;
}
