// Tutorial 3: layer normalization, forward (with the saved mean and 1/std) and backward (dx, and dw/db reduced
// across programs both in two stages and with atomics). See 03_layernorm.md.
#include <algorithm>

#include "tessera/kernels/layernorm.h"
#include "tutorials/TutorialSupport.h"

namespace {

using namespace tutorials;
using namespace tessera::kernels;
using tessera::interp::Arg;

constexpr int64_t kRows = 23, kCols = 1500;  // forward BLOCK = 512: three chunks per row, the last one masked
constexpr int kForwardBlock = 512;
constexpr int kBackwardBlock = 2048;     // the backward holds a whole row: the next power of two >= kCols
constexpr int64_t kRowsPerProgram = 4;   // 23 rows -> 6 backward programs, the last with 3 rows
constexpr float kEps = 1e-5f;

struct Reference {
  std::vector<double> y, mean, rstd, dx, dw, db;
};

// Plain C++ layer norm, forward and backward, in double precision.
Reference reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                    const std::vector<float>& dy) {
  Reference ref{std::vector<double>(kRows * kCols), std::vector<double>(kRows), std::vector<double>(kRows),
                std::vector<double>(kRows * kCols), std::vector<double>(kCols, 0.0), std::vector<double>(kCols, 0.0)};
  for (int64_t r = 0; r < kRows; ++r) {
    const float* xr = &x[r * kCols];
    const float* dyr = &dy[r * kCols];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < kCols; ++c) mean += xr[c];
    mean /= kCols;
    for (int64_t c = 0; c < kCols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    double rstd = 1.0 / std::sqrt(var / kCols + kEps);
    ref.mean[r] = mean;
    ref.rstd[r] = rstd;
    double sumGXhat = 0, sumG = 0;
    for (int64_t c = 0; c < kCols; ++c) {
      double xhat = (xr[c] - mean) * rstd;
      ref.y[r * kCols + c] = xhat * w[c] + b[c];
      sumGXhat += dyr[c] * w[c] * xhat;
      sumG += dyr[c] * w[c];
      ref.dw[c] += dyr[c] * xhat;
      ref.db[c] += dyr[c];
    }
    for (int64_t c = 0; c < kCols; ++c) {
      double xhat = (xr[c] - mean) * rstd;
      ref.dx[r * kCols + c] = rstd * (dyr[c] * w[c] - (xhat * sumGXhat + sumG) / kCols);
    }
  }
  return ref;
}

void launch(const tessera::KernelDef& k, int64_t programs, const std::vector<Arg>& args,
            const tessera::Constants& constants, Backend backend) {
  runOn(backend, k, {programs, 1, 1}, args, constants);
}

std::string modeName(Backend backend) { return backendName(backend); }

}  // namespace

int main(int argc, char** argv) {
  tutorials::configure(argc, argv);
  Report report{"03 layernorm"};
  std::vector<float> x = randomFloats(kRows * kCols, 4, -3.0f, 3.0f), w = randomFloats(kCols, 5),
                     b = randomFloats(kCols, 6), dy = randomFloats(kRows * kCols, 9);
  const Reference ref = reference(x, w, b, dy);
  const std::string size = " (" + std::to_string(kRows) + "x" + std::to_string(kCols) + ")";

  tessera::KernelDef fwd = layernorm_fwd_kernel();
  tessera::KernelDef bwdDx = layernorm_bwd_dx_kernel(), bwdDwDb = layernorm_bwd_dwdb_kernel(),
                     bwdAtomic = layernorm_bwd_atomic_kernel();
  const tessera::Constants fwdConstants{{"BLOCK", kForwardBlock}}, bwdConstants{{"BLOCK", kBackwardBlock}};
  const tessera::Constants dwdbConstants{{"BLOCK_M", 4}, {"BLOCK_N", 256}};
  report.check("forward: trace, verify, print, parse, print", checkRoundTrip(*fwd.trace(fwdConstants)));
  report.check("backward dx: round trip", checkRoundTrip(*bwdDx.trace(bwdConstants)));
  report.check("backward dw/db: round trip", checkRoundTrip(*bwdDwDb.trace(dwdbConstants)));
  report.check("backward (atomics): round trip", checkRoundTrip(*bwdAtomic.trace(bwdConstants)));

  const int64_t bwdPrograms = (kRows + kRowsPerProgram - 1) / kRowsPerProgram;
  for (Backend backend : availableBackends()) {
    // Forward; its mean and rstd are what the backward consumes.
    std::vector<float> y(kRows * kCols, NAN), mean(kRows, NAN), rstd(kRows, NAN);
    launch(fwd, kRows, {buffer(x), buffer(y), buffer(w), buffer(b), buffer(mean), buffer(rstd), kCols, kCols,
                        static_cast<double>(kEps)},
           fwdConstants, backend);
    double err = std::max({worstError(y, ref.y, 1e-5, 1e-4), worstError(mean, ref.mean, 1e-6, 1e-5),
                           worstError(rstd, ref.rstd, 1e-6, 1e-5)});
    report.check("forward, " + modeName(backend) + " matches C++" + size, err <= 1, fmtError(err));

    // Backward, two stages: per-program partial sums, then a column sum over them.
    std::vector<float> dx(kRows * kCols, NAN), partialDw(bwdPrograms * kCols, NAN),
        partialDb(bwdPrograms * kCols, NAN), dw(kCols, NAN), db(kCols, NAN);
    launch(bwdDx, bwdPrograms, {buffer(x), buffer(dy), buffer(dx), buffer(w), buffer(mean), buffer(rstd),
                                buffer(partialDw), buffer(partialDb), kCols, kRows, kCols, kRowsPerProgram},
           bwdConstants, backend);
    launch(bwdDwDb, (kCols + 255) / 256, {buffer(partialDw), buffer(partialDb), buffer(dw), buffer(db), bwdPrograms,
                                          kCols},
           dwdbConstants, backend);
    err = std::max({worstError(dx, ref.dx, 1e-5, 1e-4), worstError(dw, ref.dw, 1e-5, 1e-4),
                    worstError(db, ref.db, 1e-5, 1e-4)});
    report.check("backward two-stage, " + modeName(backend) + " matches", err <= 1, fmtError(err));

    // Backward with atomics straight into zeroed dw/db.
    std::fill(dx.begin(), dx.end(), NAN);
    std::fill(dw.begin(), dw.end(), 0.0f);
    std::fill(db.begin(), db.end(), 0.0f);
    launch(bwdAtomic, bwdPrograms, {buffer(x), buffer(dy), buffer(dx), buffer(w), buffer(mean), buffer(rstd),
                                    buffer(dw), buffer(db), kCols, kRows, kCols, kRowsPerProgram},
           bwdConstants, backend);
    err = std::max({worstError(dx, ref.dx, 1e-5, 1e-4), worstError(dw, ref.dw, 1e-5, 1e-4),
                    worstError(db, ref.db, 1e-5, 1e-4)});
    report.check("backward atomics, " + modeName(backend) + " matches", err <= 1, fmtError(err));
  }
  return report.finish();
}
