// Tutorial 3: layer normalization forward, with the saved mean and 1/std. See 03_layernorm.md.
#include "tutorials/TutorialSupport.h"
#include "tutorials/kernels/layernorm.h"

int main() {
  using namespace tutorials;
  Report report{"03 layernorm"};
  const int64_t rows = 23, cols = 1500;  // BLOCK = 512: three chunks per row, the last one masked
  const int block = 512;
  const float eps = 1e-5f;
  std::vector<float> x = randomFloats(rows * cols, 4, -3.0f, 3.0f), w = randomFloats(cols, 5), b = randomFloats(cols, 6);
  std::vector<double> want(rows * cols), wantMean(rows), wantRstd(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    double rstd = 1.0 / std::sqrt(var / cols + eps);
    wantMean[r] = mean;
    wantRstd[r] = rstd;
    for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = (x[r * cols + c] - mean) * rstd * w[c] + b[c];
  }
  tessera::KernelDef k = layernorm_fwd_kernel();
  tessera::Constants constants{{"BLOCK", block}};
  report.check("trace, verify, print, parse, print", checkRoundTrip(*k.trace(constants)));
  for (bool eager : {false, true}) {
    std::vector<float> y(rows * cols, NAN), mean(rows, NAN), rstd(rows, NAN);
    std::vector<tessera::interp::Arg> args{buffer(x), buffer(y), buffer(w), buffer(b), buffer(mean), buffer(rstd),
                                           cols, cols, static_cast<double>(eps)};
    if (eager) k.runEager({rows, 1, 1}, args, constants);
    else k.runInterpreter({rows, 1, 1}, args, constants);
    double err = std::max({worstError(y, want, 1e-5, 1e-4), worstError(mean, wantMean, 1e-6, 1e-5),
                           worstError(rstd, wantRstd, 1e-6, 1e-5)});
    report.check(std::string(eager ? "eager mode" : "interpreter") + " matches C++ (" + std::to_string(rows) + "x" +
                     std::to_string(cols) + ")",
                 err <= 1, fmtError(err));
  }
  return report.finish();
}
