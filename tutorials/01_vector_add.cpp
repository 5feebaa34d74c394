// Tutorial 1: vector add. Traces the kernel, round-trips its IR, and runs it on the reference interpreter and
// in eager mode (and on the GPU when a CUDA device is present) against a plain C++ loop. See 01_vector_add.md.
#include "tessera/kernels/vector_add.h"
#include "tutorials/TutorialSupport.h"

int main(int argc, char** argv) {
  tutorials::configure(argc, argv);
  using namespace tutorials;
  using namespace tessera::kernels;
  Report report{"01 vector add"};
  const int64_t n = 98'432 + 17;  // not a multiple of the block: the last program is partly masked
  const int block = 1024;
  std::vector<float> x = randomFloats(n, 1), y = randomFloats(n, 2);
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = static_cast<double>(x[i]) + static_cast<double>(y[i]);

  tessera::KernelDef k = vector_add_kernel();
  tessera::Constants constants{{"BLOCK", block}};
  report.check("trace, verify, print, parse, print", checkRoundTrip(*k.trace(constants)));

  tessera::interp::Grid grid{(n + block - 1) / block, 1, 1};
  for (Backend backend : availableBackends()) {
    std::vector<float> out(n, NAN);
    std::vector<tessera::interp::Arg> args{buffer(x), buffer(y), buffer(out), n};
    runOn(backend, k, grid, args, constants);
    double err = worstError(out, want, 1e-6, 1e-6);
    report.check(backendName(backend) + " matches C++ (n=" + std::to_string(n) + ")",
                 err <= 1, fmtError(err));
  }
  return report.finish();
}
