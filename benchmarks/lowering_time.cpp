// Compile time of the tutorial kernels for NVPTX (sm_90a), beside ptxas's time on the PTX they produce: the whole
// JIT compile (tracing excluded), and within it the tile-IR -> LLVM lowering and the LLVM optimization + PTX
// emission, each the median of several runs. Times are CPU seconds (of this thread; for ptxas, of its process), so
// that other work on a shared machine does not inflate them. The arguments are specialized as a launch on large
// contiguous row-major tensors would be (16-byte aligned pointers, sizes divisible by 16, unit strides equal to 1).
//
//   lowering_time                    prints the table
//   lowering_time --ptx-dir DIR      also writes each case's PTX to DIR/<case>.ptx (to diff two builds)
//   lowering_time --only SUBSTRING   only the cases whose name contains SUBSTRING
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "backends/Target.h"
#include "ir/Parser.h"
#include "jit/Compiler.h"
#include "jit/Specialization.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"

namespace {

using namespace tessera;

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";
constexpr const char* kArch = "sm_90a";
constexpr int kRuns = 3;

struct Case {
  std::string name;
  KernelDef kernel;
  Constants constants;
  int numWarps;
  std::set<std::string> unitParams;  // integer parameters a launch passes as 1 (unit strides)
};

std::vector<Case> cases() {
  const std::set<std::string> matmulUnit{"stride_ak", "stride_bn", "stride_cn"};
  auto matmul = [&](int bm, int bn, int bk, int warps) {
    return Case{"matmul_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + "_w" +
                    std::to_string(warps),
                kernels::matmul_kernel(), Constants{{"BM", bm}, {"BN", bn}, {"BK", bk}, {"GROUP_M", 8}}, warps,
                matmulUnit};
  };
  return {
      matmul(128, 128, 64, 8),
      matmul(128, 256, 64, 8),
      matmul(64, 64, 32, 4),
      {"matmul_epilogue_f16_gelu_128x128x64_w8", kernels::matmul_epilogue_f16_kernel(),
       Constants{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"GROUP_M", 8}, {"ACTIVATION", kernels::kActivationGeluTanh}},
       8, matmulUnit},
      {"vector_add_1024_w4", kernels::vector_add_kernel(), Constants{{"BLOCK", 1024}}, 4, {}},
      {"softmax_1024_w4", kernels::softmax_kernel(), Constants{{"BLOCK", 1024}}, 4, {}},
      {"layernorm_fwd_512_w4", kernels::layernorm_fwd_kernel(), Constants{{"BLOCK", 512}}, 4, {}},
      {"layernorm_bwd_dx_2048_w8", kernels::layernorm_bwd_dx_kernel(), Constants{{"BLOCK", 2048}}, 8, {}},
      {"layernorm_bwd_dwdb_4x256_w4", kernels::layernorm_bwd_dwdb_kernel(),
       Constants{{"BLOCK_M", 4}, {"BLOCK_N", 256}}, 4, {}},
  };
}

// The traced kernel with the launch facts of the file comment.
std::unique_ptr<ir::Module> specialized(const Case& c) {
  std::unique_ptr<ir::Module> m = c.kernel.trace(c.constants);
  std::vector<jit::ArgFacts> facts;
  for (const ParamInfo& p : c.kernel.runtimeParams()) {
    jit::ArgFacts f;
    f.equalTo1 = c.unitParams.count(p.name) > 0;
    f.divisibleBy16 = p.kind == ParamKind::Pointer || (p.type.isInt() && !f.equalTo1);
    facts.push_back(f);
  }
  jit::applySpecialization(*m->functions().at(0), facts);
  return m;
}

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// CPU time of the processes this one has waited for.
double childrenCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

double cpuSeconds(const std::function<void()>& body) {
  double start = threadCpuSeconds();
  body();
  return threadCpuSeconds() - start;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Ptxas {
  double seconds = -1;  // -1: ptxas is not installed
  std::string usage;    // the "Used N registers" line
};

Ptxas runPtxas(const std::string& ptx, const std::string& name) {
  Ptxas r;
  if (!std::filesystem::exists(kPtxas)) return r;
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tessera_lowering_time_" + std::to_string(::getpid()) + "_" + name + ".ptx");
  std::ofstream(path) << ptx;
  std::string cmd = std::string(kPtxas) + " -v -arch=" + kArch + " " + path.string() + " -o /dev/null 2>&1";
  std::vector<double> times;
  for (int run = 0; run < kRuns; ++run) {
    std::string log;
    double start = childrenCpuSeconds();
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) log += buf;
    if (p) pclose(p);  // waits: ptxas's CPU time is now in the children's
    times.push_back(childrenCpuSeconds() - start);
    size_t at = log.find("Used ");
    if (at != std::string::npos) r.usage = log.substr(at, log.find('\n', at) - at);
  }
  std::filesystem::remove(path);
  r.seconds = median(times);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string ptxDir, only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ptx-dir") == 0 && i + 1 < argc) ptxDir = argv[++i];
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--ptx-dir DIR] [--only SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  std::printf("%-40s %10s %10s %10s %10s %10s  %s\n", "case (sm_90a), CPU seconds", "compile", "lower", "optimize",
              "emit", "ptxas",
              "ptxas -v");
  for (const Case& c : cases()) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    std::unique_ptr<ir::Module> m = specialized(c);
    backends::TargetOptions options;
    options.arch = kArch;
    options.numWarps = c.numWarps;
    std::vector<double> compileTimes, lowerTimes, optimizeTimes, emitTimes;
    std::string ptx;
    for (int run = 0; run < kRuns; ++run) {
      jit::CompiledKernel k;
      compileTimes.push_back(cpuSeconds([&] { k = jit::compile(*m->functions().at(0), *target, options); }));
      ptx = k.binary;
      // The lowering alone, on the IR the pipeline handed to it.
      std::unique_ptr<ir::Module> laidOut = ir::parseModule(k.irAfterPass.back().second, "<laid out>");
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> lm;
      lowerTimes.push_back(cpuSeconds([&] { lm = target->lowerToLLVM(*laidOut->functions().at(0), ctx, options); }));
      std::string again;
      optimizeTimes.push_back(cpuSeconds([&] { target->optimize(*lm, options); }));
      emitTimes.push_back(cpuSeconds([&] { again = target->emit(*lm, options); }));
      if (again != ptx) std::fprintf(stderr, "warning: %s: lowering the reparsed IR gave different PTX\n", c.name.c_str());
    }
    Ptxas p = runPtxas(ptx, c.name);
    std::printf("%-40s %10.3f %10.3f %10.3f %10.3f %10.3f  %s\n", c.name.c_str(), median(compileTimes),
                median(lowerTimes), median(optimizeTimes), median(emitTimes), p.seconds, p.usage.c_str());
    std::fflush(stdout);
    if (!ptxDir.empty()) {
      std::filesystem::create_directories(ptxDir);
      std::ofstream(std::filesystem::path(ptxDir) / (c.name + ".ptx")) << ptx;
    }
  }
  return 0;
}
