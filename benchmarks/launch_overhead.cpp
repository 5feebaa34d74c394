// Launch overhead from C++: the cost of launching an empty kernel on the reference interpreter with grid (1,),
// as the median over many batches of launches. "cached" launches run IR traced once (what a Python launch with
// known Const values does); "uncached" ones trace on every call (KernelDef::runInterpreter).
//
//   launch_overhead            prints a table
//   launch_overhead --raw      prints "name median_us" lines (read by benchmarks/launch_overhead.py)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "benchmarks/empty_kernel.h"

namespace {

struct Measurement {
  std::string name;
  double medianMicros;
};

// Median over `batches` of the mean time per call within a batch of `perBatch` calls.
double medianMicros(const std::function<void()>& launch, int batches, int perBatch) {
  for (int i = 0; i < perBatch; ++i) launch();  // warm up caches and allocators
  std::vector<double> perCall;
  for (int b = 0; b < batches; ++b) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < perBatch; ++i) launch();
    std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
    perCall.push_back(elapsed.count() / perBatch);
  }
  std::nth_element(perCall.begin(), perCall.begin() + perCall.size() / 2, perCall.end());
  return perCall[perCall.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool raw = argc > 1 && std::strcmp(argv[1], "--raw") == 0;
  using namespace tessera;
  KernelDef kernel = bench::empty_kernel();
  const Constants constants{{"BLOCK", int64_t{128}}};
  std::vector<float> x(128), y(128);
  const std::vector<interp::Arg> args{interp::Buffer{x.data(), x.size() * sizeof(float)},
                                      interp::Buffer{y.data(), y.size() * sizeof(float)}, int64_t{128}, 2.0};
  const interp::Grid grid{1, 1, 1};

  std::unique_ptr<ir::Module> traced = kernel.trace(constants);
  const ir::Function& function = *traced->functions()[0];

  std::vector<Measurement> results{
      {"C++ cached launch (interp::run on traced IR)",
       medianMicros([&] { interp::run(function, args, grid); }, 101, 2000)},
      {"C++ uncached launch (KernelDef::runInterpreter: trace + run)",
       medianMicros([&] { kernel.runInterpreter(grid, args, constants); }, 31, 200)},
  };
  for (const Measurement& m : results) {
    if (raw) std::printf("%s\t%.4f\n", m.name.c_str(), m.medianMicros);
  }
  if (!raw) {
    std::printf("%-62s %12s\n", "launch of an empty kernel, grid (1,), interpreter", "median (us)");
    for (const Measurement& m : results) std::printf("%-62s %12.3f\n", m.name.c_str(), m.medianMicros);
  }
  return 0;
}
