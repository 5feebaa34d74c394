// Tutorial 2: fused row softmax (one row per program). See 02_softmax.md.
#include "tessera/kernels/softmax.h"
#include "tutorials/TutorialSupport.h"

int main(int argc, char** argv) {
  tutorials::configure(argc, argv);
  using namespace tutorials;
  using namespace tessera::kernels;
  Report report{"02 softmax"};
  const int64_t rows = 37, cols = 781;  // BLOCK = 1024 > cols: the tail of each row is masked
  const int block = 1024;
  std::vector<float> in = randomFloats(rows * cols, 3, -8.0f, 8.0f);
  std::vector<double> want(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(in[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(in[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = std::exp(in[r * cols + c] - m) / s;
  }
  tessera::KernelDef k = softmax_kernel();
  tessera::Constants constants{{"BLOCK", block}};
  report.check("trace, verify, print, parse, print", checkRoundTrip(*k.trace(constants)));
  for (Backend backend : availableBackends()) {
    std::vector<float> out(rows * cols, NAN);
    std::vector<tessera::interp::Arg> args{buffer(out), buffer(in), cols, cols, cols};
    runOn(backend, k, {rows, 1, 1}, args, constants);
    double err = worstError(out, want, 1e-7, 1e-5);
    report.check(backendName(backend) + " matches C++ (" + std::to_string(rows) + "x" +
                     std::to_string(cols) + ")",
                 err <= 1, fmtError(err));
  }
  return report.finish();
}
