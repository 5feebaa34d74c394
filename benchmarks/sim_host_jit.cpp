// The emulator's host compile of the tutorial matmul: M = N = K = 512, 128x128x64 tiles, 8 warps, nvptx sm_90a
// (16 programs of 256 threads). For each host optimization level: the time to rewrite the optimized GPU module
// (jit/sim/HostModule.h), to compile it for this machine (jit/sim/HostJit.h), and to run it under the runtime
// (checks on), with the result compared with a host reference. docs/Sim.md records the figures behind
// HostJit's default level.
//   sim_host_jit [host threads]   (default: 2)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "tessera/kernels/matmul.h"

using namespace tessera;
using namespace tessera::sim;

namespace {

constexpr int64_t kSize = 512;
constexpr int kBlock = 128, kBlockK = 64, kWarps = 8;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 2;
  const Constants constants{{"BM", kBlock}, {"BN", kBlock}, {"BK", kBlockK}, {"GROUP_M", 8}};
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel kernel(kernels::matmul_kernel(), cache);
  jit::LaunchOptions options;
  options.numWarps = kWarps;
  options.target = "nvptx";
  options.arch = "sm_90a";
  const jit::KernelArg p = jit::KernelArg::pointer(256);
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const jit::CompiledKernel> compiled =
      kernel.compileOnly({p, p, p, kSize, kSize, kSize, kSize, int64_t(1), kSize, int64_t(1), kSize, int64_t(1)},
                         constants, options);
  std::printf("GPU compile (tile IR -> optimized NVPTX module): %.3f s\n", secondsSince(start));

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> a(kSize * kSize), b(kSize * kSize);
  std::vector<double> reference(kSize * kSize, 0.0);
  for (uint16_t& x : a) x = static_cast<uint16_t>(ir::encodeF16(dist(rng)));
  for (uint16_t& x : b) x = static_cast<uint16_t>(ir::encodeF16(dist(rng)));
  for (int64_t i = 0; i < kSize; ++i)
    for (int64_t k = 0; k < kSize; ++k) {
      const double aik = ir::decodeF16(a[i * kSize + k]);
      for (int64_t j = 0; j < kSize; ++j) reference[i * kSize + j] += aik * ir::decodeF16(b[k * kSize + j]);
    }

  int failures = 0;
  for (HostOptLevel level : {HostOptLevel::O0, HostOptLevel::O1, HostOptLevel::O2}) {
    const char* name = level == HostOptLevel::O0 ? "O0" : level == HostOptLevel::O1 ? "O1" : "O2";
    start = std::chrono::steady_clock::now();
    HostModule host = rewriteForHost(compiled->optimizedLLVMIR, "matmul.opt.ll");
    const double rewrite = secondsSince(start);
    start = std::chrono::steady_clock::now();
    HostJit jit(std::move(host), runtimeSymbols(), level);
    const double compile = secondsSince(start);

    Program program;
    program.kernel = jit.kernel();
    program.target = jit.target();
    program.numWarps = kWarps;
    program.sharedBytes = static_cast<uint32_t>(compiled->sharedBytes);
    program.sites = jit.sites();
    program.entry = jit.entry();
    std::vector<float> c(kSize * kSize, 0.0f);
    void* aPtr = a.data();
    void* bPtr = b.data();
    void* cPtr = c.data();
    int32_t size = kSize, one = 1;
    void* params[] = {&aPtr, &bPtr, &cPtr, &size, &size, &size, &size, &one, &size, &one, &size, &one};
    LaunchConfig config;
    config.threads = threads;
    config.allocations = {{reinterpret_cast<uint64_t>(aPtr), a.size() * 2},
                          {reinterpret_cast<uint64_t>(bPtr), b.size() * 2},
                          {reinterpret_cast<uint64_t>(cPtr), c.size() * 4}};
    const uint32_t programs = (kSize / kBlock) * (kSize / kBlock);
    start = std::chrono::steady_clock::now();
    Report report = launch(program, {programs, 1, 1}, params, config);
    const double run = secondsSince(start);

    double worst = 0;
    for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - reference[i]));
    const bool ok = !report.failed() && worst < 1e-3;
    failures += !ok;
    std::printf("host %s: rewrite %.3f s, host compile %.3f s, run (%u threads, checks on) %.3f s, max |error| %.2g%s\n",
                name, rewrite, compile, threads, run, worst, ok ? "" : "  FAILED");
    if (report.failed()) std::printf("%s", report.findingsText().c_str());
  }
  return failures == 0 ? 0 : 1;
}
