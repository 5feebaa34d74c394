// Shared helpers of the sim_host_* tests: the kernels the emulator must handle (every tutorial kernel at
// realistic sizes), compiled through the JIT pipeline without a GPU, and
// runtime symbols for compiling rewritten modules.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "jit/JitKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/RuntimeSymbols.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"

namespace tessera::testing {

struct SimKernelCase {
  std::string name;  // a gtest-safe name
  KernelDef kernel;
  Constants constants;
  std::vector<jit::KernelArg> args;
  int numWarps = 4;
};

inline std::string testName(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// A pointer argument 256-byte aligned, as every DeviceBuffer is: specialization marks it divisible by 16.
inline jit::KernelArg alignedPointer() { return jit::KernelArg::pointer(256); }

inline std::vector<SimKernelCase> tutorialKernelCases() {
  const jit::KernelArg p = alignedPointer();
  const int64_t n = 512;  // matmul M = N = K; rows of 4096 for softmax and layernorm
  std::vector<SimKernelCase> cases;
  auto matmulArgs = [&] {
    return std::vector<jit::KernelArg>{p, p, p, n, n, n, n, int64_t(1), n, int64_t(1), n, int64_t(1)};
  };
  cases.push_back({"matmul_128x128x64_warps8", kernels::matmul_kernel(),
                   {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"GROUP_M", 8}}, matmulArgs(), 8});
  cases.push_back({"matmul_64x64x32_warps4", kernels::matmul_kernel(),
                   {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}}, matmulArgs(), 4});
  for (int activation = 0; activation < 4; ++activation) {
    const Constants k{{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}, {"ACTIVATION", activation}};
    cases.push_back({"matmul_epilogue_" + std::to_string(activation), kernels::matmul_epilogue_kernel(), k,
                     matmulArgs(), 4});
    cases.push_back({"matmul_epilogue_f16_" + std::to_string(activation), kernels::matmul_epilogue_f16_kernel(), k,
                     matmulArgs(), 4});
  }
  const int64_t cols = 4096;
  cases.push_back({"softmax_4096", kernels::softmax_kernel(), {{"BLOCK", 4096}}, {p, p, cols, cols, cols}, 8});
  cases.push_back({"layernorm_fwd_4096", kernels::layernorm_fwd_kernel(), {{"BLOCK", 4096}},
                   {p, p, p, p, p, p, cols, cols, 1e-5}, 8});
  cases.push_back({"layernorm_bwd_dx_4096", kernels::layernorm_bwd_dx_kernel(), {{"BLOCK", 4096}},
                   {p, p, p, p, p, p, p, p, cols, int64_t(64), cols, int64_t(4)}, 8});
  cases.push_back({"layernorm_bwd_dwdb", kernels::layernorm_bwd_dwdb_kernel(), {{"BLOCK_M", 32}, {"BLOCK_N", 128}},
                   {p, p, p, p, int64_t(16), cols}, 4});
  cases.push_back({"layernorm_bwd_atomic_4096", kernels::layernorm_bwd_atomic_kernel(), {{"BLOCK", 4096}},
                   {p, p, p, p, p, p, p, p, cols, int64_t(64), cols, int64_t(4)}, 8});
  return cases;
}

// Compiles `c` for `target`/`arch` through the JIT pipeline (no GPU needed), with a cache of its own.
inline std::shared_ptr<const jit::CompiledKernel> compileCase(const SimKernelCase& c, const std::string& target,
                                                              const std::string& arch) {
  static jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel kernel(c.kernel, cache);
  jit::LaunchOptions options;
  options.numWarps = c.numWarps;
  options.target = target;
  options.arch = arch;
  return kernel.compileOnly(c.args, c.constants, options);
}

// Stand-ins for the runtime's functions: the tests compile rewritten kernels without running them.
[[noreturn]] inline void runtimeStubCalled() {
  std::fprintf(stderr, "a __tsim_* stub was called: these tests compile kernels, they do not run them\n");
  std::abort();
}

// The runtime's functions, every one resolved to runtimeStubCalled.
inline sim::RuntimeSymbols runtimeStubs() {
  sim::RuntimeSymbols stubs = sim::runtimeSymbols();
  for (auto& [name, address] : stubs) address = reinterpret_cast<const void*>(&runtimeStubCalled);
  return stubs;
}

}  // namespace tessera::testing
