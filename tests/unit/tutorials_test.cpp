// Every tutorial kernel at small sizes: trace -> verify -> print -> parse -> print, the reference interpreter
// and eager mode against plain C++ references, the layout and shared-memory pipeline (interpreter results
// bit-identical afterwards), and the NVPTX backend (PTX accepted by ptxas -arch=sm_90a when ptxas is installed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numbers>
#include <random>
#include <tuple>

#include <unistd.h>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/Target.h"
#include "backends/interpreter/Interpreter.h"
#include "ir/FloatFormats.h"
#include "ir/Layout.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/Pipeline.h"
#include "PhiloxReference.h"
#include "tessera/kernels/attention.h"
#include "tessera/kernels/dropout.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"

namespace {

using namespace tessera;

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";
const std::vector<std::string> kLayoutPipeline = {"coalesce", "assign-layouts", "remove-layout-conversions",
                                                  "allocate-shared-memory", "insert-barriers"};

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The launch arguments of one kernel run, owning the buffers they point into (addresses stay put).
class Workspace {
 public:
  size_t addF32(const std::vector<float>& values) {
    return addBytes(values.data(), values.size() * sizeof(float));
  }
  // Rounded to f16, or to bf16.
  size_t addF16(const std::vector<float>& values, ir::ScalarKind kind = ir::ScalarKind::F16) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      bits[i] = kind == ir::ScalarKind::BF16 ? ir::encodeBF16(values[i]) : ir::encodeF16(values[i]);
    return addBytes(bits.data(), bits.size() * sizeof(uint16_t));
  }
  size_t addI8(const std::vector<int8_t>& values) { return addBytes(values.data(), values.size()); }
  void addInt(int64_t v) { args_.push_back(v); }
  void addFloat(double v) { args_.push_back(v); }

  std::vector<float> f32(size_t buffer) const {
    std::vector<float> out(buffers_[buffer]->size() / sizeof(float));
    std::memcpy(out.data(), buffers_[buffer]->data(), buffers_[buffer]->size());
    return out;
  }
  std::vector<float> f16AsFloat(size_t buffer, ir::ScalarKind kind = ir::ScalarKind::F16) const {
    std::vector<uint16_t> bits(buffers_[buffer]->size() / sizeof(uint16_t));
    std::memcpy(bits.data(), buffers_[buffer]->data(), buffers_[buffer]->size());
    std::vector<float> out(bits.size());
    for (size_t i = 0; i < bits.size(); ++i)
      out[i] = static_cast<float>(kind == ir::ScalarKind::BF16 ? ir::decodeBF16(bits[i]) : ir::decodeF16(bits[i]));
    return out;
  }
  const std::vector<uint8_t>& bytes(size_t buffer) const { return *buffers_[buffer]; }
  size_t numBuffers() const { return buffers_.size(); }
  const std::vector<interp::Arg>& args() const { return args_; }

 private:
  size_t addBytes(const void* data, size_t n) {
    auto storage = std::make_unique<std::vector<uint8_t>>(n);
    std::memcpy(storage->data(), data, n);
    args_.push_back(interp::Buffer{storage->data(), n});
    buffers_.push_back(std::move(storage));
    return buffers_.size() - 1;
  }
  std::vector<std::unique_ptr<std::vector<uint8_t>>> buffers_;
  std::vector<interp::Arg> args_;
};

// Expects every element within atol + rtol * |want|; reports the first few misses.
void expectClose(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int misses = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok = std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok && ++misses <= 5) ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
  }
  EXPECT_EQ(misses, 0) << what;
}

// One tutorial kernel at a small size: how to build its arguments and how to check its outputs.
struct TutorialCase {
  std::string name;  // test-name friendly
  std::function<KernelDef()> kernel;
  Constants constants;
  interp::Grid grid;
  std::function<Workspace()> makeWorkspace;         // deterministic inputs, outputs filled with NaN
  std::function<void(const Workspace&)> checkResult;  // against a plain C++ reference
};

// ---- vector add
TutorialCase vectorAddCase() {
  const int64_t n = 1000;  // 4 programs of 256, the last partly masked
  auto make = [n] {
    Workspace ws;
    ws.addF32(randomFloats(n, 1));
    ws.addF32(randomFloats(n, 2));
    ws.addF32(std::vector<float>(n, NAN));
    ws.addInt(n);
    return ws;
  };
  auto check = [n](const Workspace& ws) {
    std::vector<float> x = ws.f32(0), y = ws.f32(1);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = static_cast<double>(x[i]) + y[i];
    expectClose(ws.f32(2), want, 1e-6, 1e-6, "out");
  };
  return {"vector_add", kernels::vector_add_kernel, {{"BLOCK", 256}}, {4, 1, 1}, make, check};
}

// ---- softmax
TutorialCase softmaxCase() {
  const int64_t rows = 5, cols = 100;  // BLOCK = 128 > cols: the tail of each row is masked
  auto make = [=] {
    Workspace ws;
    ws.addF32(std::vector<float>(rows * cols, NAN));
    ws.addF32(randomFloats(rows * cols, 3, -50.0f, 50.0f));  // exp() of these would overflow without the max
    ws.addInt(cols);
    ws.addInt(cols);
    ws.addInt(cols);
    return ws;
  };
  auto check = [=](const Workspace& ws) {
    std::vector<float> in = ws.f32(1);
    std::vector<double> want(rows * cols);
    for (int64_t r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(in[r * cols + c]));
      for (int64_t c = 0; c < cols; ++c) s += std::exp(in[r * cols + c] - m);
      for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = std::exp(in[r * cols + c] - m) / s;
    }
    expectClose(ws.f32(0), want, 1e-7, 1e-5, "softmax");
  };
  return {"softmax", kernels::softmax_kernel, {{"BLOCK", 128}}, {rows, 1, 1}, make, check};
}

// ---- layer norm: shared inputs and a double-precision reference
constexpr int64_t kLnRows = 7, kLnCols = 100;
constexpr float kLnEps = 1e-5f;

struct LayerNormData {
  std::vector<float> x, w, b, dy, mean, rstd;  // mean/rstd: what the forward saves (rounded to f32)
};

LayerNormData layerNormData() {
  LayerNormData d{randomFloats(kLnRows * kLnCols, 4, -3.0f, 3.0f), randomFloats(kLnCols, 5), randomFloats(kLnCols, 6),
                  randomFloats(kLnRows * kLnCols, 7), std::vector<float>(kLnRows), std::vector<float>(kLnRows)};
  for (int64_t r = 0; r < kLnRows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < kLnCols; ++c) mean += d.x[r * kLnCols + c];
    mean /= kLnCols;
    for (int64_t c = 0; c < kLnCols; ++c) var += std::pow(d.x[r * kLnCols + c] - mean, 2);
    d.mean[r] = static_cast<float>(mean);
    d.rstd[r] = static_cast<float>(1.0 / std::sqrt(var / kLnCols + kLnEps));
  }
  return d;
}

struct LayerNormGrads {
  std::vector<double> dx, dw, db;
  std::vector<double> partialDw, partialDb;  // per program of rowsPerProgram rows
};

LayerNormGrads layerNormGrads(const LayerNormData& d, int64_t rowsPerProgram) {
  int64_t programs = (kLnRows + rowsPerProgram - 1) / rowsPerProgram;
  LayerNormGrads g{std::vector<double>(kLnRows * kLnCols), std::vector<double>(kLnCols, 0.0),
                   std::vector<double>(kLnCols, 0.0), std::vector<double>(programs * kLnCols, 0.0),
                   std::vector<double>(programs * kLnCols, 0.0)};
  for (int64_t r = 0; r < kLnRows; ++r) {
    double sumGXhat = 0, sumG = 0;
    auto xhat = [&](int64_t c) { return (d.x[r * kLnCols + c] - static_cast<double>(d.mean[r])) * d.rstd[r]; };
    for (int64_t c = 0; c < kLnCols; ++c) {
      double dy = d.dy[r * kLnCols + c];
      sumGXhat += dy * d.w[c] * xhat(c);
      sumG += dy * d.w[c];
      g.dw[c] += dy * xhat(c);
      g.db[c] += dy;
      g.partialDw[(r / rowsPerProgram) * kLnCols + c] += dy * xhat(c);
      g.partialDb[(r / rowsPerProgram) * kLnCols + c] += dy;
    }
    for (int64_t c = 0; c < kLnCols; ++c)
      g.dx[r * kLnCols + c] = d.rstd[r] * (d.dy[r * kLnCols + c] * d.w[c] - (xhat(c) * sumGXhat + sumG) / kLnCols);
  }
  return g;
}

TutorialCase layerNormForwardCase() {
  auto make = [] {
    LayerNormData d = layerNormData();
    Workspace ws;
    ws.addF32(d.x);
    ws.addF32(std::vector<float>(kLnRows * kLnCols, NAN));
    ws.addF32(d.w);
    ws.addF32(d.b);
    ws.addF32(std::vector<float>(kLnRows, NAN));
    ws.addF32(std::vector<float>(kLnRows, NAN));
    ws.addInt(kLnCols);
    ws.addInt(kLnCols);
    ws.addFloat(kLnEps);
    return ws;
  };
  auto check = [](const Workspace& ws) {
    LayerNormData d = layerNormData();
    std::vector<double> y(kLnRows * kLnCols), mean(d.mean.begin(), d.mean.end()), rstd(d.rstd.begin(), d.rstd.end());
    for (int64_t r = 0; r < kLnRows; ++r)
      for (int64_t c = 0; c < kLnCols; ++c)
        y[r * kLnCols + c] = (d.x[r * kLnCols + c] - static_cast<double>(d.mean[r])) * d.rstd[r] * d.w[c] + d.b[c];
    expectClose(ws.f32(1), y, 1e-5, 1e-4, "y");
    expectClose(ws.f32(4), mean, 1e-6, 1e-5, "mean");
    expectClose(ws.f32(5), rstd, 1e-6, 1e-5, "rstd");
  };
  // BLOCK = 32: four chunks per row, the last one masked.
  return {"layernorm_fwd", kernels::layernorm_fwd_kernel, {{"BLOCK", 32}}, {kLnRows, 1, 1}, make, check};
}

constexpr int64_t kRowsPerProgram = 2;  // 7 rows -> 4 programs, the last with one row
constexpr int64_t kLnPrograms = (kLnRows + kRowsPerProgram - 1) / kRowsPerProgram;

// x, dy, dx, weight, mean, rstd, then two buffers given by the variant, then the ints.
Workspace layerNormBackwardWorkspace(std::vector<float> extra0, std::vector<float> extra1) {
  LayerNormData d = layerNormData();
  Workspace ws;
  ws.addF32(d.x);
  ws.addF32(d.dy);
  ws.addF32(std::vector<float>(kLnRows * kLnCols, NAN));
  ws.addF32(d.w);
  ws.addF32(d.mean);
  ws.addF32(d.rstd);
  ws.addF32(extra0);
  ws.addF32(extra1);
  ws.addInt(kLnCols);
  ws.addInt(kLnRows);
  ws.addInt(kLnCols);
  ws.addInt(kRowsPerProgram);
  return ws;
}

TutorialCase layerNormBackwardDxCase() {
  auto make = [] {
    return layerNormBackwardWorkspace(std::vector<float>(kLnPrograms * kLnCols, NAN),
                                      std::vector<float>(kLnPrograms * kLnCols, NAN));
  };
  auto check = [](const Workspace& ws) {
    LayerNormGrads g = layerNormGrads(layerNormData(), kRowsPerProgram);
    expectClose(ws.f32(2), g.dx, 1e-5, 1e-4, "dx");
    expectClose(ws.f32(6), g.partialDw, 1e-5, 1e-4, "partial_dw");
    expectClose(ws.f32(7), g.partialDb, 1e-5, 1e-4, "partial_db");
  };
  return {"layernorm_bwd_dx", kernels::layernorm_bwd_dx_kernel, {{"BLOCK", 128}}, {kLnPrograms, 1, 1}, make, check};
}

TutorialCase layerNormBackwardAtomicCase() {
  auto make = [] {
    return layerNormBackwardWorkspace(std::vector<float>(kLnCols, 0.0f), std::vector<float>(kLnCols, 0.0f));
  };
  auto check = [](const Workspace& ws) {
    LayerNormGrads g = layerNormGrads(layerNormData(), kRowsPerProgram);
    expectClose(ws.f32(2), g.dx, 1e-5, 1e-4, "dx");
    expectClose(ws.f32(6), g.dw, 1e-5, 1e-4, "dw");
    expectClose(ws.f32(7), g.db, 1e-5, 1e-4, "db");
  };
  return {"layernorm_bwd_atomic", kernels::layernorm_bwd_atomic_kernel, {{"BLOCK", 128}}, {kLnPrograms, 1, 1},
          make, check};
}

TutorialCase layerNormBackwardDwDbCase() {
  const int64_t partials = 5, cols = 100;  // BLOCK_M = 2: three steps, the last masked; BLOCK_N = 32: 4 programs
  auto make = [=] {
    Workspace ws;
    ws.addF32(randomFloats(partials * cols, 8));
    ws.addF32(randomFloats(partials * cols, 9));
    ws.addF32(std::vector<float>(cols, NAN));
    ws.addF32(std::vector<float>(cols, NAN));
    ws.addInt(partials);
    ws.addInt(cols);
    return ws;
  };
  auto check = [=](const Workspace& ws) {
    for (int which : {0, 1}) {
      std::vector<float> in = ws.f32(which);
      std::vector<double> want(cols, 0.0);
      for (int64_t p = 0; p < partials; ++p)
        for (int64_t c = 0; c < cols; ++c) want[c] += in[p * cols + c];
      expectClose(ws.f32(2 + which), want, 1e-6, 1e-5, which ? "db" : "dw");
    }
  };
  return {"layernorm_bwd_dwdb", kernels::layernorm_bwd_dwdb_kernel, {{"BLOCK_M", 2}, {"BLOCK_N", 32}},
          {4, 1, 1}, make, check};
}

// ---- matmul
constexpr int64_t kM = 40, kN = 24, kK = 40;  // 16x16 tiles: 3 x 2 programs, edges masked, 3 K steps
const Constants kMatmulBlocks{{"BM", 16}, {"BN", 16}, {"BK", 16}, {"GROUP_M", 2}};

Workspace matmulWorkspace(bool f16Output) {
  Workspace ws;
  ws.addF16(randomFloats(kM * kK, 10));
  ws.addF16(randomFloats(kK * kN, 11));
  if (f16Output) ws.addF16(std::vector<float>(kM * kN, NAN));
  else ws.addF32(std::vector<float>(kM * kN, NAN));
  for (int64_t v : {kM, kN, kK, kK, int64_t(1), kN, int64_t(1), kN, int64_t(1)}) ws.addInt(v);
  return ws;
}

double referenceActivation(double x, int activation) {
  switch (activation) {
    case kernels::kActivationRelu: return std::max(x, 0.0);
    case kernels::kActivationLeakyRelu: return x > 0 ? x : 0.01 * x;
    case kernels::kActivationGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    default: return x;
  }
}

void checkMatmul(const Workspace& ws, bool f16Output, int activation) {
  std::vector<float> a = ws.f16AsFloat(0), b = ws.f16AsFloat(1);
  std::vector<double> want(kM * kN, 0.0);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      for (int64_t k = 0; k < kK; ++k) want[i * kN + j] += static_cast<double>(a[i * kK + k]) * b[k * kN + j];
      want[i * kN + j] = referenceActivation(want[i * kN + j], activation);
    }
  if (f16Output) expectClose(ws.f16AsFloat(2), want, 1e-4, 1e-3, "c (f16)");
  else expectClose(ws.f32(2), want, 1e-5, 1e-5, "c");
}

TutorialCase matmulCase() {
  return {"matmul", kernels::matmul_kernel, kMatmulBlocks, {6, 1, 1}, [] { return matmulWorkspace(false); },
          [](const Workspace& ws) { checkMatmul(ws, false, kernels::kActivationNone); }};
}

TutorialCase matmulEpilogueCase(int activation, bool f16Output) {
  static const char* names[] = {"none", "relu", "leaky_relu", "gelu_tanh"};
  Constants constants = kMatmulBlocks;
  constants["ACTIVATION"] = activation;
  return {std::string(f16Output ? "matmul_epilogue_f16_" : "matmul_epilogue_") + names[activation],
          f16Output ? kernels::matmul_epilogue_f16_kernel : kernels::matmul_epilogue_kernel,
          constants,
          {6, 1, 1},
          [f16Output] { return matmulWorkspace(f16Output); },
          [f16Output, activation](const Workspace& ws) { checkMatmul(ws, f16Output, activation); }};
}

// ---- attention: 2 heads of 40 rows, head dim 32, 16 x 16 blocks (3 query blocks, the last ragged)
constexpr int64_t kHeads = 2, kSeq = 40, kHeadDim = 32;

// softmax(Q K^T / sqrt(d)) V in double precision.
std::vector<double> referenceAttention(const std::vector<float>& q, const std::vector<float>& k,
                                       const std::vector<float>& v, bool causal) {
  std::vector<double> out(q.size(), 0.0), p(kSeq);
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < kSeq; ++i) {
      const int64_t row = (h * kSeq + i) * kHeadDim, keys = causal ? i + 1 : kSeq;
      double rowMax = -INFINITY, rowSum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        p[j] = 0;
        for (int64_t d = 0; d < kHeadDim; ++d) p[j] += double(q[row + d]) * k[(h * kSeq + j) * kHeadDim + d];
        p[j] /= std::sqrt(double(kHeadDim));
        rowMax = std::max(rowMax, p[j]);
      }
      for (int64_t j = 0; j < keys; ++j) rowSum += p[j] = std::exp(p[j] - rowMax);
      for (int64_t j = 0; j < keys; ++j)
        for (int64_t d = 0; d < kHeadDim; ++d) out[row + d] += p[j] / rowSum * v[(h * kSeq + j) * kHeadDim + d];
    }
  return out;
}

TutorialCase attentionCase(ir::ScalarKind input, bool causal) {
  const bool bf16 = input == ir::ScalarKind::BF16;
  auto make = [input] {
    Workspace ws;
    for (uint32_t seed : {20, 21, 22}) ws.addF16(randomFloats(kHeads * kSeq * kHeadDim, seed), input);
    ws.addF16(std::vector<float>(kHeads * kSeq * kHeadDim, NAN), input);
    ws.addFloat(1 / std::sqrt(double(kHeadDim)));
    for (int64_t v : {kHeads, kSeq}) ws.addInt(v);
    for (int tensor = 0; tensor < 4; ++tensor)
      for (int64_t stride : {kHeads * kSeq * kHeadDim, kSeq * kHeadDim, kHeadDim}) ws.addInt(stride);
    return ws;
  };
  auto check = [input, bf16, causal](const Workspace& ws) {
    const double tol = bf16 ? 4e-3 : 5e-4;  // P and out are rounded to the input type
    expectClose(ws.f16AsFloat(3, input),
                referenceAttention(ws.f16AsFloat(0, input), ws.f16AsFloat(1, input), ws.f16AsFloat(2, input), causal),
                tol, tol, "out");
  };
  return {std::string(bf16 ? "attention_fwd_bf16" : "attention_fwd") + (causal ? "_causal" : ""),
          bf16 ? kernels::attention_fwd_bf16_kernel : kernels::attention_fwd_kernel,
          {{"BM", 16}, {"BN", 16}, {"HEAD_DIM", kHeadDim}, {"CAUSAL", causal ? 1 : 0}},
          {3, kHeads, 1},
          make,
          check};
}

// ---- dropout: p = 0.25 (exact in f32), kept elements times 1 / (1 - p) = 4 / 3
constexpr int64_t kDropoutN = 1000;  // 4 programs of 256, the last partly masked
constexpr double kDropoutP = 0.25;

std::vector<double> droppedOut(const std::vector<float>& x, const std::function<bool(int64_t)>& kept) {
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = kept(static_cast<int64_t>(i)) ? x[i] / (1 - kDropoutP) : 0.0;
  return want;
}

TutorialCase dropoutCase() {
  auto make = [] {
    Workspace ws;
    ws.addF32(randomFloats(kDropoutN, 20));
    std::vector<int8_t> keep(kDropoutN);
    for (int64_t i = 0; i < kDropoutN; ++i) keep[i] = static_cast<int8_t>(i % 3 != 0);
    ws.addI8(keep);
    ws.addF32(std::vector<float>(kDropoutN, NAN));
    ws.addInt(kDropoutN);
    ws.addFloat(kDropoutP);
    return ws;
  };
  auto check = [](const Workspace& ws) {
    expectClose(ws.f32(2), droppedOut(ws.f32(0), [](int64_t i) { return i % 3 != 0; }), 0, 1e-6, "dropout");
  };
  return {"dropout", kernels::dropout_kernel, {{"BLOCK", 256}}, {4, 1, 1}, make, check};
}

// Seeded: the elements whose rand(seed, i) (the host reference's) exceeds p are kept.
TutorialCase seededDropoutCase() {
  constexpr int64_t seed = 20250;
  auto make = [] {
    Workspace ws;
    ws.addF32(randomFloats(kDropoutN, 21));
    ws.addF32(std::vector<float>(kDropoutN, NAN));
    ws.addInt(kDropoutN);
    ws.addFloat(kDropoutP);
    ws.addInt(seed);
    return ws;
  };
  auto check = [](const Workspace& ws) {
    auto kept = [](int64_t i) {
      using namespace random_reference;
      return uniformReference(randint4xReference(seed, static_cast<uint32_t>(i))[0]) > static_cast<float>(kDropoutP);
    };
    expectClose(ws.f32(1), droppedOut(ws.f32(0), kept), 0, 1e-6, "seeded_dropout");
  };
  return {"seeded_dropout", kernels::seeded_dropout_kernel, {{"BLOCK", 256}}, {4, 1, 1}, make, check};
}

std::vector<TutorialCase> allCases() {
  std::vector<TutorialCase> cases = {vectorAddCase(),          softmaxCase(),
                                     layerNormForwardCase(),   layerNormBackwardDxCase(),
                                     layerNormBackwardDwDbCase(), layerNormBackwardAtomicCase(),
                                     matmulCase()};
  for (int activation = 0; activation < 4; ++activation)
    for (bool f16Output : {false, true}) cases.push_back(matmulEpilogueCase(activation, f16Output));
  for (ir::ScalarKind input : {ir::ScalarKind::F16, ir::ScalarKind::BF16})
    for (bool causal : {false, true}) cases.push_back(attentionCase(input, causal));
  cases.push_back(dropoutCase());
  cases.push_back(seededDropoutCase());
  return cases;
}

// ---- helpers over traced modules
void runLayoutPipeline(ir::Module& m) {
  transforms::PassOptions options;
  options.numWarps = 4;
  transforms::PassManager pm;
  pm.setVerifyEach(true);
  for (const std::string& name : kLayoutPipeline) {
    std::unique_ptr<transforms::Pass> pass = transforms::createPass(name, options);
    ASSERT_NE(pass, nullptr) << "pass '" << name << "' is not registered";
    pm.add(std::move(pass));
  }
  pm.run(m);
}

// What the JIT's specialization will know about 16-byte aligned pointer arguments.
void markPointersAligned(ir::Function& f) {
  for (unsigned i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->type().isPtr()) f.argAttrs(i)["divisibility"] = ir::Attr::integer(16);
}

void expectEveryTileHasLayout(ir::Function& f) {
  auto check = [](const ir::Value* v) {
    if (!v->type().isTile()) return;
    auto layout = ir::Layout::ofType(v->type());
    ASSERT_TRUE(layout.has_value()) << v->type().str();
    EXPECT_TRUE(layout->isDistributed()) << v->type().str();
  };
  f.walk([&](ir::Op* op) {
    for (ir::Value* r : op->results()) check(r);
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (ir::Value* a : op->region(r)->arguments()) check(a);
  });
}

Workspace runOn(const ir::Module& m, const TutorialCase& c) {
  Workspace ws = c.makeWorkspace();
  interp::run(*m.functions().at(0), ws.args(), c.grid);
  return ws;
}

void expectSameOutputs(const Workspace& got, const Workspace& want) {
  ASSERT_EQ(got.numBuffers(), want.numBuffers());
  for (size_t i = 0; i < got.numBuffers(); ++i)
    EXPECT_TRUE(got.bytes(i) == want.bytes(i)) << "buffer " << i << " differs after the layout pipeline";
}

std::string ptxFor(const ir::Module& laidOut, const std::string& arch = "sm_90a") {
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  backends::TargetOptions opts;
  opts.arch = arch;
  opts.numWarps = 4;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = target->lowerToLLVM(*laidOut.functions().at(0), ctx, opts);
  target->optimize(*lm, opts);
  return target->emit(*lm, opts);
}

// ptxas's exit status and output for the PTX.
std::pair<int, std::string> assemble(const std::string& ptx, const std::string& arch) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("tessera_tutorial_" + std::to_string(::getpid()) + ".ptx");
  {
    std::ofstream out(path);
    out << ptx;
  }
  std::string cmd = std::string(kPtxas) + " -arch=" + arch + " " + path.string() + " -o /dev/null 2>&1";
  std::string log;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) log += buf;
  int status = p ? pclose(p) : -1;
  std::filesystem::remove(path);
  return {status, log};
}

class TutorialKernel : public ::testing::TestWithParam<TutorialCase> {};

TEST_P(TutorialKernel, TraceVerifyPrintParsePrint) {
  const TutorialCase& c = GetParam();
  std::unique_ptr<ir::Module> m = c.kernel().trace(c.constants);
  ASSERT_EQ(m->functions().size(), 1u);
  EXPECT_EQ(m->functions()[0]->name(), c.kernel().name());
  ir::verify(*m);
  std::string text = ir::print(*m);
  std::unique_ptr<ir::Module> reparsed = ir::parseModule(text, "<traced>");
  ir::verify(*reparsed);
  EXPECT_EQ(ir::print(*reparsed), text);
}

TEST_P(TutorialKernel, InterpreterMatchesReference) {
  const TutorialCase& c = GetParam();
  Workspace ws = c.makeWorkspace();
  c.kernel().runInterpreter(c.grid, ws.args(), c.constants);
  c.checkResult(ws);
}

TEST_P(TutorialKernel, EagerMatchesReference) {
  const TutorialCase& c = GetParam();
  Workspace ws = c.makeWorkspace();
  c.kernel().runEager(c.grid, ws.args(), c.constants);
  c.checkResult(ws);
}

// The reparsed text runs like the traced module: the printed IR is the whole kernel.
TEST_P(TutorialKernel, ReparsedIRRunsIdentically) {
  const TutorialCase& c = GetParam();
  std::unique_ptr<ir::Module> m = c.kernel().trace(c.constants);
  std::unique_ptr<ir::Module> reparsed = ir::parseModule(ir::print(*m), "<traced>");
  expectSameOutputs(runOn(*reparsed, c), runOn(*m, c));
}

TEST_P(TutorialKernel, LayoutPipelineKeepsInterpreterResults) {
  const TutorialCase& c = GetParam();
  for (bool aligned : {false, true}) {
    SCOPED_TRACE(aligned ? "pointers marked divisibility = 16" : "as traced");
    std::unique_ptr<ir::Module> m = c.kernel().trace(c.constants);
    if (aligned) markPointersAligned(*m->functions()[0]);
    Workspace before = runOn(*m, c);
    runLayoutPipeline(*m);
    ir::verify(*m);
    expectEveryTileHasLayout(*m->functions()[0]);
    Workspace after = runOn(*m, c);
    expectSameOutputs(after, before);
    c.checkResult(after);
  }
}

TEST_P(TutorialKernel, NVPTXCompilesAndPtxasAccepts) {
  const TutorialCase& c = GetParam();
  std::unique_ptr<ir::Module> m = c.kernel().trace(c.constants);
  markPointersAligned(*m->functions()[0]);
  runLayoutPipeline(*m);
  std::string ptx = ptxFor(*m);
  EXPECT_NE(ptx.find(".entry " + c.kernel().name()), std::string::npos) << ptx.substr(0, 2000);
  if (!std::filesystem::exists(kPtxas)) GTEST_SKIP() << "ptxas not installed at " << kPtxas;
  auto [status, log] = assemble(ptx, "sm_90a");
  EXPECT_EQ(status, 0) << "ptxas -arch=sm_90a rejected the PTX of " << c.name << ":\n" << log;
}

INSTANTIATE_TEST_SUITE_P(Tutorials, TutorialKernel, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<TutorialCase>& info) { return info.param.name; });

// ---- whole tutorials, several kernels chained

// Layer norm as tutorial 3 runs it: the forward's saved mean/rstd feed the backward; the two-stage and the
// atomic reductions of dw/db agree with each other and with the reference.
TEST(TutorialLayerNorm, ForwardStatisticsFeedBothBackwardVariants) {
  LayerNormData d = layerNormData();
  Workspace fwd = layerNormForwardCase().makeWorkspace();
  kernels::layernorm_fwd_kernel().runInterpreter({kLnRows, 1, 1}, fwd.args(), {{"BLOCK", 32}});
  std::vector<float> mean = fwd.f32(4), rstd = fwd.f32(5);

  LayerNormData fromForward = d;
  fromForward.mean = mean;
  fromForward.rstd = rstd;
  LayerNormGrads g = layerNormGrads(fromForward, kRowsPerProgram);

  Workspace stage1 = layerNormBackwardWorkspace(std::vector<float>(kLnPrograms * kLnCols, NAN),
                                                std::vector<float>(kLnPrograms * kLnCols, NAN));
  // Replace the reference statistics by the forward's.
  std::vector<interp::Arg> args = stage1.args();
  args[4] = interp::Buffer{mean.data(), mean.size() * sizeof(float)};
  args[5] = interp::Buffer{rstd.data(), rstd.size() * sizeof(float)};
  kernels::layernorm_bwd_dx_kernel().runInterpreter({kLnPrograms, 1, 1}, args, {{"BLOCK", 128}});
  std::vector<float> partialDw = stage1.f32(6), partialDb = stage1.f32(7);
  std::vector<float> dw(kLnCols, NAN), db(kLnCols, NAN);
  kernels::layernorm_bwd_dwdb_kernel().runInterpreter(
      {4, 1, 1},
      {interp::Buffer{partialDw.data(), partialDw.size() * 4}, interp::Buffer{partialDb.data(), partialDb.size() * 4},
       interp::Buffer{dw.data(), dw.size() * 4}, interp::Buffer{db.data(), db.size() * 4}, kLnPrograms, kLnCols},
      {{"BLOCK_M", 2}, {"BLOCK_N", 32}});
  expectClose(stage1.f32(2), g.dx, 1e-5, 1e-4, "dx (two-stage)");
  expectClose(dw, g.dw, 1e-5, 1e-4, "dw (two-stage)");
  expectClose(db, g.db, 1e-5, 1e-4, "db (two-stage)");

  Workspace atomic = layerNormBackwardWorkspace(std::vector<float>(kLnCols, 0.0f), std::vector<float>(kLnCols, 0.0f));
  args = atomic.args();
  args[4] = interp::Buffer{mean.data(), mean.size() * sizeof(float)};
  args[5] = interp::Buffer{rstd.data(), rstd.size() * sizeof(float)};
  kernels::layernorm_bwd_atomic_kernel().runInterpreter({kLnPrograms, 1, 1}, args, {{"BLOCK", 128}});
  expectClose(atomic.f32(2), g.dx, 1e-5, 1e-4, "dx (atomics)");
  expectClose(atomic.f32(6), g.dw, 1e-5, 1e-4, "dw (atomics)");
  expectClose(atomic.f32(7), g.db, 1e-5, 1e-4, "db (atomics)");
}

// The atomics variant must start from zeroed dw/db: it adds into them (so a second launch doubles them).
TEST(TutorialLayerNorm, AtomicVariantAccumulatesIntoDwDb) {
  Workspace ws = layerNormBackwardAtomicCase().makeWorkspace();
  KernelDef k = kernels::layernorm_bwd_atomic_kernel();
  k.runInterpreter({kLnPrograms, 1, 1}, ws.args(), {{"BLOCK", 128}});
  std::vector<float> once = ws.f32(6);
  k.runInterpreter({kLnPrograms, 1, 1}, ws.args(), {{"BLOCK", 128}});
  std::vector<double> doubled(once.begin(), once.end());
  for (double& v : doubled) v *= 2;
  expectClose(ws.f32(6), doubled, 1e-6, 1e-6, "dw after two launches");
}

// ACTIVATION is a trace-time choice: each specialization holds only its own activation's ops, and an unknown
// value is a clear error.
TEST(TutorialMatmul, ActivationIsSpecializedAtTraceTime) {
  KernelDef k = kernels::matmul_epilogue_kernel();
  auto opsOf = [&](int activation) {
    Constants c = kMatmulBlocks;
    c["ACTIVATION"] = activation;
    std::string text = ir::print(*k.trace(c));
    return std::make_tuple(text.find(" tanh ") != std::string::npos, text.find(" max ") != std::string::npos,
                           text.find(" select ") != std::string::npos, text.find(" if ") != std::string::npos);
  };
  EXPECT_EQ(opsOf(kernels::kActivationNone), std::make_tuple(false, false, false, false));
  EXPECT_EQ(opsOf(kernels::kActivationRelu), std::make_tuple(false, true, false, false));
  EXPECT_EQ(opsOf(kernels::kActivationLeakyRelu), std::make_tuple(false, false, true, false));
  EXPECT_EQ(opsOf(kernels::kActivationGeluTanh), std::make_tuple(true, false, false, false));

  Constants bad = kMatmulBlocks;
  bad["ACTIVATION"] = 7;
  try {
    k.trace(bad);
    FAIL() << "ACTIVATION = 7 traced";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ACTIVATION must be"), std::string::npos) << e.what();
  }
}

// The f16 variant stores f16 (half the bytes), converting the f32 accumulator only at the store.
TEST(TutorialMatmul, F16VariantConvertsOnlyAtTheStore) {
  Constants c = kMatmulBlocks;
  c["ACTIVATION"] = kernels::kActivationRelu;
  std::unique_ptr<ir::Module> m = kernels::matmul_epilogue_f16_kernel().trace(c);
  int castsToF16 = 0;
  m->functions()[0]->walk([&](ir::Op* op) {
    if (op->is(ir::OpKind::Dot)) {
      EXPECT_EQ(op->result()->type().element(), ir::Type::f32());
    }
    if (op->is(ir::OpKind::Cast) && op->result()->type().element() == ir::Type::scalar(ir::ScalarKind::F16))
      ++castsToF16;
  });
  EXPECT_EQ(castsToF16, 1);
}

// Two key loops (unmasked blocks, then the masked ones), each with the two dots; through the JIT's passes with the
// NVPTX layout policy, both dots run on tensor cores and exp2 is ex2.approx. Causal tracing with BM not a multiple
// of BN is refused, naming both.
TEST(TutorialAttention, DotsOnTensorCoresExp2AndBlockCheck) {
  for (int causal : {0, 1}) {
    std::unique_ptr<ir::Module> m =
        kernels::attention_fwd_kernel().trace({{"BM", 32}, {"BN", 16}, {"HEAD_DIM", 64}, {"CAUSAL", causal}});
    int loops = 0, dots = 0;
    m->functions()[0]->walk([&](ir::Op* op) {
      loops += op->is(ir::OpKind::For);
      dots += op->is(ir::OpKind::Dot);
    });
    EXPECT_EQ(loops, 2);
    EXPECT_EQ(dots, 4);
    markPointersAligned(*m->functions()[0]);
    transforms::PassManager passes;
    transforms::addDefaultPipeline(passes, backends::createTarget("nvptx")->passOptions(4));
    passes.run(*m->functions()[0]);
    const std::string ptx = ptxFor(*m);
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
    EXPECT_NE(ptx.find("ex2.approx"), std::string::npos);
  }
  try {
    kernels::attention_fwd_kernel().trace({{"BM", 16}, {"BN", 32}, {"HEAD_DIM", 64}, {"CAUSAL", 1}});
    FAIL() << "causal BM = 16, BN = 32 traced";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BM to be a multiple of BN (the diagonal is whole key blocks), got BM = 16, BN = 32"), std::string::npos)
        << e.what();
  }
}

}  // namespace
