// Tutorial 6: low-memory dropout. Runs dropout with a keep mask in memory, then seeded dropout, which draws its
// mask (rand(seed, offset) > p) instead of storing it, on each backend, and checks what dropout promises: kept
// elements scaled by 1 / (1 - p), about p of them dropped, the same ones for the same seed on every backend and in
// the backward pass, others for another seed. See 06_dropout.md.
#include "tessera/kernels/dropout.h"
#include "tutorials/TutorialSupport.h"

namespace {

// Which elements a dropout output dropped (its inputs are never 0).
std::vector<bool> droppedOf(const std::vector<float>& out) {
  std::vector<bool> dropped(out.size());
  for (size_t i = 0; i < out.size(); ++i) dropped[i] = out[i] == 0.0f;
  return dropped;
}

}  // namespace

int main(int argc, char** argv) {
  tutorials::configure(argc, argv);
  using namespace tutorials;
  using namespace tessera::kernels;
  Report report{"06 dropout"};
  const int64_t n = 100'000 + 3;  // the last program is partly masked
  const int block = 1024;
  const double p = 0.3;
  const int64_t seed = 123;
  std::vector<float> x = randomFloats(n, 1, 0.5f, 1.5f), dy = randomFloats(n, 2, 0.5f, 1.5f);  // never 0
  std::vector<int8_t> keep(n);
  std::mt19937 rng(3);
  std::bernoulli_distribution kept(1 - p);
  for (int8_t& k : keep) k = kept(rng);

  tessera::KernelDef masked = dropout_kernel(), seeded = seeded_dropout_kernel();
  tessera::Constants constants{{"BLOCK", block}};
  report.check("trace, verify, print, parse, print (dropout)", checkRoundTrip(*masked.trace(constants)));
  report.check("trace, verify, print, parse, print (seeded)", checkRoundTrip(*seeded.trace(constants)));
  tessera::interp::Grid grid{(n + block - 1) / block, 1, 1};

  // The seeded mask as the interpreter draws it: every backend must draw the same one.
  std::vector<float> reference(n, NAN);
  seeded.runInterpreter(grid, {buffer(x), buffer(reference), n, p, seed}, constants);
  const std::vector<bool> referenceDropped = droppedOf(reference);

  for (Backend backend : availableBackends()) {
    const std::string on = backendName(backend);
    // 1. The mask from memory: out = x / (1 - p) where kept, else 0.
    std::vector<float> out(n, NAN);
    runOn(backend, masked, grid, {buffer(x), buffer(keep), buffer(out), n, p}, constants);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = keep[i] ? x[i] / (1 - p) : 0.0;
    double err = worstError(out, want, 0, 1e-6);  // one f32 division
    report.check(on + " matches C++ (dropout, n=" + std::to_string(n) + ")", err <= 1, fmtError(err));

    // 2. Seeded: no mask in memory.
    std::vector<float> forward(n, NAN), backward(n, NAN), otherSeed(n, NAN);
    runOn(backend, seeded, grid, {buffer(x), buffer(forward), n, p, seed}, constants);
    runOn(backend, seeded, grid, {buffer(dy), buffer(backward), n, p, seed}, constants);  // dx, from dy
    runOn(backend, seeded, grid, {buffer(x), buffer(otherSeed), n, p, seed + 1}, constants);
    const std::vector<bool> dropped = droppedOf(forward);
    for (int64_t i = 0; i < n; ++i) want[i] = dropped[i] ? 0.0 : x[i] / (1 - p);
    err = worstError(forward, want, 0, 1e-6);
    report.check(on + " keeps x / (1 - p) (seeded)", err <= 1, fmtError(err));
    report.check(on + " drops the interpreter's elements (seed " + std::to_string(seed) + ")",
                 dropped == referenceDropped);
    const double fraction = static_cast<double>(std::count(dropped.begin(), dropped.end(), true)) / n;
    const double sigma = std::sqrt(p * (1 - p) / n);  // binomial
    char detail[64];
    std::snprintf(detail, sizeof detail, "(%.4f of them)", fraction);
    report.check(on + " drops about p = " + std::to_string(p).substr(0, 3) + " of the elements",
                 std::fabs(fraction - p) < 5 * sigma, detail);
    report.check(on + " backward drops the forward's elements", droppedOf(backward) == dropped);
    const std::vector<bool> other = droppedOf(otherSeed);
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) differ += other[i] != dropped[i];
    // Independent masks differ at 2 p (1 - p) = 42% of the elements.
    report.check(on + " another seed drops other elements", differ > n / 3);
  }
  return report.finish();
}
