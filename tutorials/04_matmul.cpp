// Tutorial 4: tiled matmul with an f32 accumulator carried through the K loop and grouped program order, then
// the same kernel with a fused activation epilogue, storing f32 or f16, the plain kernel autotuned over tile
// sizes, an fp8 (e4m3) variant taking B transposed, and A and B read through tensor descriptors (TMA copies on
// sm_90a). See 04_matmul.md.
#include "ir/FloatFormats.h"
#include "jit/AutotunedKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"
#include "tutorials/TutorialSupport.h"

namespace {

using namespace tutorials;
using namespace tessera::kernels;
using tessera::interp::Arg;
using tessera::interp::Buffer;

constexpr int64_t M = 131, N = 75, K = 90;  // none a multiple of its block: edge tiles are masked
constexpr int BM = 32, BN = 32, BK = 32, GROUP_M = 4;

// The activations the epilogue kernels offer, in plain C++ (double precision).
double activate(double x, int activation) {
  switch (activation) {
    case kActivationRelu: return x > 0 ? x : 0.0;
    case kActivationLeakyRelu: return x > 0 ? x : x * static_cast<double>(kLeakyReluSlope);
    case kActivationGeluTanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    default: return x;
  }
}

const char* activationName(int activation) {
  switch (activation) {
    case kActivationRelu: return "relu";
    case kActivationLeakyRelu: return "leaky relu";
    case kActivationGeluTanh: return "gelu-tanh";
    default: return "none";
  }
}

void launch(const tessera::KernelDef& k, const std::vector<Arg>& args, const tessera::Constants& constants,
            Backend backend) {
  const tessera::interp::Grid grid{((M + BM - 1) / BM) * ((N + BN - 1) / BN), 1, 1};
  runOn(backend, k, grid, args, constants);
}

std::string modeName(Backend backend) { return backendName(backend); }

// The plain kernel autotuned over tile sizes and warps, keyed by the problem size. On a CUDA GPU the first launch
// of a size compiles every config in parallel, prunes those that do not fit or spill, times the rest and keeps
// the winner on disk. Without one there is no clock: the launch runs on the emulator with config 0, as
// TESSERA_AUTOTUNE_CONFIG=0 asks everywhere (tests and CI stay deterministic).
void autotunedMatmul(Report& report, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                     const std::vector<double>& want) {
  namespace jit = tessera::jit;
  using jit::TuneConfig;
  const std::vector<TuneConfig> configs{{{{"BM", 64}, {"BN", 64}, {"BK", 32}}, 4, {}},
                                        {{{"BM", 32}, {"BN", 32}, {"BK", 32}}, 4, {}},
                                        {{{"BM", 128}, {"BN", 128}, {"BK", 32}}, 8, {}}};
  const bool gpu = jit::CudaDriver::instance().available();
  jit::DeviceRuntime& runtime = jit::selectRuntime(gpu ? "nvptx" : "sim");
  jit::AutotuneOptions options;
  if (!gpu) options.fixedConfig = 0;
  jit::AutotunedKernel matmul(matmul_kernel(), configs, {"M", "N", "K"}, options);

  const size_t cBytes = M * N * sizeof(float);
  jit::DeviceAddress da = runtime.allocate(a.size() * 2), db = runtime.allocate(b.size() * 2),
                     dc = runtime.allocate(cBytes);
  runtime.copyToDevice(da, a.data(), a.size() * 2);
  runtime.copyToDevice(db, b.data(), b.size() * 2);
  jit::LaunchOptions launch;
  launch.runtime = &runtime;
  auto grid = [](const TuneConfig& c) {
    const int64_t bm = std::get<int64_t>(c.constants.at("BM")), bn = std::get<int64_t>(c.constants.at("BN"));
    return jit::LaunchGrid{((M + bm - 1) / bm) * ((N + bn - 1) / bn), 1, 1};
  };
  matmul.launch(grid,
                {jit::KernelArg::pointer(da, a.size() * 2), jit::KernelArg::pointer(db, b.size() * 2),
                 jit::KernelArg::pointer(dc, cBytes), M, N, K, K,
                 int64_t(1), N, int64_t(1), N, int64_t(1)},
                {{"GROUP_M", GROUP_M}}, launch);
  runtime.synchronize(nullptr, "matmul");
  std::vector<float> c(M * N);
  runtime.copyToHost(c.data(), dc, cBytes);
  for (jit::DeviceAddress p : {da, db, dc}) runtime.release(p);
  const double err = worstError(c, want, 1e-5, 1e-5);
  report.check(std::string("autotuned, ") + (gpu ? "tuned on the GPU" : "fixed config, emulator"), err <= 1,
               "{" + matmul.bestConfig()->str() + "} " + fmtError(err));
}

// fp8: e4m3 A [M, K] and B passed as B^T ([N, K] row-major: stride_bk = 1, stride_bn = K), so that both operands
// are K-major, the only order Hopper's fp8 wgmma reads; f32 accumulator and C. The tiles are wgmma's smallest
// (64 rows, 32 bytes of K). e4m3 products are exact in f32: only the sums round.
void fp8Matmul(Report& report, const std::vector<float>& af, const std::vector<float>& bf) {
  namespace ir = tessera::ir;
  std::vector<uint8_t> a(M * K), bt(N * K);
  for (int64_t i = 0; i < M * K; ++i) a[i] = ir::encodeF8E4M3(af[i]);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bt[j * K + k] = ir::encodeF8E4M3(bf[k * N + j]);
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) want[i * N + j] += ir::decodeF8E4M3(a[i * K + k]) * ir::decodeF8E4M3(bt[j * K + k]);
  const tessera::KernelDef kernel = matmul_kernel_of<tessera::f8e4m3>("f8e4m3");
  const int tileM = 64, tileN = 64, tileK = 32;
  const tessera::Constants constants{{"BM", tileM}, {"BN", tileN}, {"BK", tileK}, {"GROUP_M", GROUP_M}};
  report.check("fp8: trace, verify, print, parse, print", checkRoundTrip(*kernel.trace(constants)));
  for (Backend backend : availableBackends()) {
    std::vector<float> c(M * N, NAN);
    runOn(backend, kernel, {((M + tileM - 1) / tileM) * ((N + tileN - 1) / tileN), 1, 1},
          {Buffer{a.data(), a.size()}, Buffer{bt.data(), bt.size()}, buffer(c), M, N, K, K, int64_t(1), int64_t(1), K,
           N, int64_t(1)},
          constants);
    const double err = worstError(c, want, 1e-5, 1e-5);
    report.check("fp8 e4m3, B^T, " + modeName(backend), err <= 1, fmtError(err));
  }
}

// A and B through tensor descriptors (kernels::matmul_desc_of): the kernel loads blocks, and what reaches past M, N
// or K reads as zero, with no masks of its own. On sm_90a with 64x64x32 blocks (wgmma's operands) each block is one
// TMA copy into the swizzled shared layout wgmma reads, waited for on an mbarrier; elsewhere the loads are
// expanded into masked pointer loads. A descriptor's rows must start 16 bytes apart: A's and B's are padded to a
// multiple of 8 f16 elements (the padding holds NaNs, which no load may read).
void descriptorMatmul(Report& report, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                      const std::vector<double>& want) {
  const int64_t lda = (K + 7) / 8 * 8, ldb = (N + 7) / 8 * 8;
  std::vector<uint16_t> ap(M * lda, 0x7e00), bp(K * ldb, 0x7e00);  // f16 NaN in the padding
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) ap[i * lda + k] = a[i * K + k];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bp[k * ldb + j] = b[k * N + j];
  const int64_t tileM = 64, tileN = 64, tileK = 32;
  const tessera::KernelDef kernel = matmul_desc_kernel();
  const tessera::Constants constants{{"BM", tileM}, {"BN", tileN}, {"BK", tileK}, {"GROUP_M", GROUP_M}};
  namespace ir = tessera::ir;
  const tessera::DescriptorTypes blocks{{"a", ir::Type::tensorDesc({tileM, tileK}, ir::Type::f16())},
                                         {"b", ir::Type::tensorDesc({tileK, tileN}, ir::Type::f16())}};
  report.check("descriptors: trace, verify, print, parse, print", checkRoundTrip(*kernel.trace(constants, blocks)));
  for (Backend backend : availableBackends()) {
    std::vector<float> c(M * N, NAN);
    runOn(backend, kernel, {((M + tileM - 1) / tileM) * ((N + tileN - 1) / tileN), 1, 1},
          {tessera::interp::TensorDesc{Buffer{ap.data(), ap.size() * 2}, {M, K}, {lda, 1}, {tileM, tileK}},
           tessera::interp::TensorDesc{Buffer{bp.data(), bp.size() * 2}, {K, N}, {ldb, 1}, {tileK, tileN}}, buffer(c),
           M, N, K, N, int64_t(1)},
          constants);
    const double err = worstError(c, want, 1e-5, 1e-5);
    report.check("descriptors (TMA on sm_90a), " + modeName(backend), err <= 1, fmtError(err));
  }
}

}  // namespace

int main(int argc, char** argv) {
  tutorials::configure(argc, argv);
  Report report{"04 matmul"};
  // f16 inputs: round random floats to f16 and keep their bit patterns for the kernel.
  std::vector<float> af = randomFloats(M * K, 7), bf = randomFloats(K * N, 8);
  std::vector<uint16_t> a(M * K), b(K * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = tessera::ir::encodeF16(af[i]);
  for (int64_t i = 0; i < K * N; ++i) b[i] = tessera::ir::encodeF16(bf[i]);
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        want[i * N + j] += tessera::ir::decodeF16(a[i * K + k]) * tessera::ir::decodeF16(b[k * N + j]);
  const Buffer aBuf{a.data(), a.size() * 2}, bBuf{b.data(), b.size() * 2};
  const std::string size = " (" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + ")";

  tessera::KernelDef plain = matmul_kernel();
  tessera::Constants constants{{"BM", BM}, {"BN", BN}, {"BK", BK}, {"GROUP_M", GROUP_M}};
  report.check("trace, verify, print, parse, print", checkRoundTrip(*plain.trace(constants)));
  for (Backend backend : availableBackends()) {
    std::vector<float> c(M * N, NAN);
    launch(plain, {aBuf, bBuf, buffer(c), M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)}, constants, backend);
    double err = worstError(c, want, 1e-5, 1e-5);
    report.check(modeName(backend) + " matches C++" + size, err <= 1, fmtError(err));
  }

  autotunedMatmul(report, a, b, want);
  fp8Matmul(report, af, bf);
  descriptorMatmul(report, a, b, want);

  // Fused epilogue: f32 output (tolerance of f32 accumulation) and f16 output (half an f16 ulp, 2^-11 relative,
  // plus the same accumulation error).
  tessera::KernelDef epilogue = matmul_epilogue_kernel(), epilogueF16 = matmul_epilogue_f16_kernel();
  for (int activation : {kActivationNone, kActivationRelu, kActivationLeakyRelu, kActivationGeluTanh}) {
    tessera::Constants withActivation = constants;
    withActivation["ACTIVATION"] = activation;
    const std::string name = std::string("epilogue ") + activationName(activation);
    bool roundTrips = checkRoundTrip(*epilogue.trace(withActivation)) &&
                      checkRoundTrip(*epilogueF16.trace(withActivation));
    report.check(name + ": round trip (f32, f16 C)", roundTrips);
    std::vector<double> activated(M * N);
    for (int64_t i = 0; i < M * N; ++i) activated[i] = activate(want[i], activation);
    for (Backend backend : availableBackends()) {
      std::vector<float> c(M * N, NAN);
      launch(epilogue, {aBuf, bBuf, buffer(c), M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
             withActivation, backend);
      double err = worstError(c, activated, 1e-5, 1e-5);

      std::vector<uint16_t> c16(M * N, 0x7e00);  // f16 NaN until written
      launch(epilogueF16,
             {aBuf, bBuf, Buffer{c16.data(), c16.size() * 2}, M, N, K, K, int64_t(1), N, int64_t(1), N, int64_t(1)},
             withActivation, backend);
      std::vector<float> c16AsFloat(M * N);
      for (int64_t i = 0; i < M * N; ++i) c16AsFloat[i] = tessera::ir::decodeF16(c16[i]);
      double err16 = worstError(c16AsFloat, activated, 1e-4, 1e-3);
      report.check(name + ", " + modeName(backend) + " f32/f16 C", err <= 1 && err16 <= 1,
                   fmtError(err) + " / f16 " + fmtError(err16));
    }
  }
  return report.finish();
}
