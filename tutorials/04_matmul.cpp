// Tutorial 4: tiled matmul with an f32 accumulator carried through the K loop and grouped program order.
// See 04_matmul.md.
#include "backends/interpreter/FloatFormats.h"
#include "tutorials/TutorialSupport.h"
#include "tutorials/kernels/matmul.h"

int main() {
  using namespace tutorials;
  Report report{"04 matmul"};
  const int64_t M = 131, N = 75, K = 90;  // none a multiple of its block: edge tiles are masked
  const int BM = 32, BN = 32, BK = 32, GROUP_M = 4;
  // f16 inputs: round random floats to f16 and keep their bit patterns for the kernel.
  std::vector<float> af = randomFloats(M * K, 7), bf = randomFloats(K * N, 8);
  std::vector<uint16_t> a(M * K), b(K * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = tessera::interp::encodeF16(af[i]);
  for (int64_t i = 0; i < K * N; ++i) b[i] = tessera::interp::encodeF16(bf[i]);
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        want[i * N + j] += tessera::interp::decodeF16(a[i * K + k]) * tessera::interp::decodeF16(b[k * N + j]);

  tessera::KernelDef kdef = matmul_kernel();
  tessera::Constants constants{{"BM", BM}, {"BN", BN}, {"BK", BK}, {"GROUP_M", GROUP_M}};
  report.check("trace, verify, print, parse, print", checkRoundTrip(*kdef.trace(constants)));
  int64_t programs = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
  for (bool eager : {false, true}) {
    std::vector<float> c(M * N, NAN);
    std::vector<tessera::interp::Arg> args{tessera::interp::Buffer{a.data(), a.size() * 2},
                                           tessera::interp::Buffer{b.data(), b.size() * 2},
                                           buffer(c), M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)};
    if (eager) kdef.runEager({programs, 1, 1}, args, constants);
    else kdef.runInterpreter({programs, 1, 1}, args, constants);
    double err = worstError(c, want, 1e-5, 1e-5);
    report.check(std::string(eager ? "eager mode" : "interpreter") + " matches C++ (" + std::to_string(M) + "x" +
                     std::to_string(N) + "x" + std::to_string(K) + ")",
                 err <= 1, fmtError(err));
  }
  return report.finish();
}
