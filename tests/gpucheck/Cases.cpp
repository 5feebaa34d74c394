#include "tests/gpucheck/Cases.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ir/FloatFormats.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/attention.h"
#include "tessera/kernels/attention_backward.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/dropout.h"
#include "tessera/kernels/vector_add.h"
#include "tessera/tessera.h"

namespace tessera::gpucheck {

namespace {

using ir::ScalarKind;

// ---- random host buffers (bytes in the element type's memory format)

HostBuffer randomBuffer(ScalarKind kind, size_t n, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(lo, hi);
  ir::Type t = ir::Type::scalar(kind);
  const size_t width = static_cast<size_t>(t.storageBytes());
  HostBuffer b{kind, std::vector<uint8_t>(n * width), {}};
  for (size_t i = 0; i < n; ++i) {
    double v = real(rng);
    // Floats in the element format; integers in [lo, hi).
    const uint64_t bits = t.isFloat() ? ir::encodeFloat(kind, v)
                                      : static_cast<uint64_t>(static_cast<int64_t>(std::floor(v)));
    std::memcpy(b.bytes.data() + i * width, &bits, width);
  }
  return b;
}
HostBuffer zeroBuffer(ScalarKind kind, size_t n) {
  return HostBuffer{kind, std::vector<uint8_t>(n * static_cast<size_t>(ir::Type::scalar(kind).storageBytes())), {}};
}
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- op kernels

enum BinaryOp { kAdd, kSub, kMul, kDiv, kRem, kMin, kMax, kAnd, kOr, kXor, kShl, kShr };
const char* binaryOpName(int op) {
  static const char* names[] = {"add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"};
  return names[op];
}
Tensor applyBinary(int op, const Tensor& x, const Tensor& y) {
  switch (op) {
    case kAdd: return x + y;
    case kSub: return x - y;
    case kMul: return x * y;
    case kDiv: return x / y;
    case kRem: return x % y;
    case kMin: return minimum(x, y);
    case kMax: return maximum(x, y);
    case kAnd: return x & y;
    case kOr: return x | y;
    case kXor: return x ^ y;
    case kShl: return x << y;
    default: return x >> y;
  }
}
template <class T>
void binary_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> out, Int n, Const<int> OP, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  store(out + offs, applyBinary(OP, load(a + offs, mask), load(b + offs, mask)), mask);
}

// Every program's ids and the grid's extents, at the program's place in the grid: what a persistent kernel's tiles
// must see (each tile its own coordinates, the grid the launch asked for).
void program_coordinates(Ptr<i32> out) {
  Tensor x = program_id(0), y = program_id(1), z = program_id(2);
  Tensor nx = num_programs(0), ny = num_programs(1), nz = num_programs(2);
  Tensor base = ((z * ny + y) * nx + x) * 6;
  store(out + base, x);
  store(out + base + 1, y);
  store(out + base + 2, z);
  store(out + base + 3, nx);
  store(out + base + 4, ny);
  store(out + base + 5, nz);
}

// The quotient and remainder of each program's id by a runtime divisor: the lowering guards such a division only
// against 0 (a program id is never negative, so never MIN), and these check 0, -1 and 3 against the interpreter.
void program_divide(Ptr<i32> out, Int d) {
  Tensor pid = program_id(0);
  store(out + 2 * pid, pid / d);
  store(out + 2 * pid + 1, pid % d);
}

enum UnaryOp { kExp, kExp2, kLog, kLog2, kSqrt, kRsqrt, kSin, kCos, kTanh, kErf, kFloor, kCeil, kAbs, kNeg, kSigmoid };
const char* unaryOpName(int op) {
  static const char* names[] = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos",
                                "tanh", "erf", "floor", "ceil", "abs", "neg", "sigmoid"};
  return names[op];
}
Tensor applyUnary(int op, const Tensor& x) {
  switch (op) {
    case kExp: return exp(x);
    case kExp2: return exp2(x);
    case kLog: return log(x);
    case kLog2: return log2(x);
    case kSqrt: return sqrt(x);
    case kRsqrt: return rsqrt(x);
    case kSin: return sin(x);
    case kCos: return cos(x);
    case kTanh: return tanh(x);
    case kErf: return erf(x);
    case kFloor: return floor(x);
    case kCeil: return ceil(x);
    case kAbs: return abs(x);
    case kNeg: return -x;
    default: return sigmoid(x);
  }
}
template <class T>
void unary_kernel(Ptr<T> a, Ptr<T> out, Int n, Const<int> OP, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  store(out + offs, applyUnary(OP, load(a + offs, mask)), mask);
}

template <class From, class To>
void cast_kernel(Ptr<From> a, Ptr<To> out, Int n, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  store(out + offs, cast<To>(load(a + offs, mask)), mask);
}

// Row-wise reductions and scans over an [R, C] row-major matrix, one BR x C block of rows per program.
enum RowOp { kRowSum, kRowMax, kRowMin, kRowArgmax, kColSum, kRowCumsum, kRowCumsumReverse };
const char* rowOpName(int op) {
  static const char* names[] = {"sum(axis=1)", "max(axis=1)", "min(axis=1)", "argmax(axis=1)",
                                "sum(axis=0)", "cumsum(axis=1)", "cumsum(axis=1, reverse)"};
  return names[op];
}
void rows_kernel(Ptr<f32> a, Ptr<f32> out, Ptr<i32> idx, Int R, Const<int> OP, Const<int> BR, Const<int> C) {
  Tensor rows = program_id(0) * BR + arange(0, BR);
  Tensor cols = arange(0, C);
  Tensor rmask = rows < R;
  Tensor x = load(a + expand_dims(rows, 1) * C + expand_dims(cols, 0), expand_dims(rmask, 1), 0.0f);
  if (OP == kColSum) {
    atomic_add(out + cols, sum(x, 0));
  } else if (OP == kRowCumsum || OP == kRowCumsumReverse) {
    store(out + expand_dims(rows, 1) * C + expand_dims(cols, 0), cumsum(x, 1, OP == kRowCumsumReverse),
          expand_dims(rmask, 1));
  } else if (OP == kRowArgmax) {
    store(idx + rows, argmax(x, 1), rmask);
  } else {
    store(out + rows, OP == kRowSum ? sum(x, 1) : OP == kRowMax ? max(x, 1) : min(x, 1), rmask);
  }
}

// C[M, N] = A[M, K] . B[K, N] for one BM x BN block per program, whole K in one dot (K = BK).
template <class In, class Acc, InputPrecision Precision = InputPrecision::IEEE>
void dot_kernel(Ptr<In> a, Ptr<In> b, Ptr<Acc> c, Const<int> BM, Const<int> BN, Const<int> BK) {
  Tensor rm = program_id(0) * BM + arange(0, BM);
  Tensor rn = program_id(1) * BN + arange(0, BN);
  Tensor rk = arange(0, BK);
  Tensor x = load(a + expand_dims(rm, 1) * BK + expand_dims(rk, 0));
  Tensor y = load(b + expand_dims(rk, 1) * (num_programs(1) * BN) + expand_dims(rn, 0));
  Tensor acc = dot(x, y, zeros<Acc>({BM, BN}), Precision);
  store(c + expand_dims(rm, 1) * (num_programs(1) * BN) + expand_dims(rn, 0), acc);
}

// out = transpose(in) for an [M, N] f32 matrix, one BM x BN block per program: loads coalesce along N, stores
// along M, so the layouts must change through shared memory.
void transpose_kernel(Ptr<f32> in, Ptr<f32> out, Int M, Int N, Const<int> BM, Const<int> BN) {
  Tensor rm = program_id(0) * BM + arange(0, BM);
  Tensor rn = program_id(1) * BN + arange(0, BN);
  Tensor mask = (expand_dims(rm, 1) < M) & (expand_dims(rn, 0) < N);
  Tensor x = load(in + expand_dims(rm, 1) * N + expand_dims(rn, 0), mask);
  store(out + expand_dims(rn, 1) * M + expand_dims(rm, 0), trans(x), trans(mask));
}

// Integer atomics: a histogram of values into BINS bins (exact), and a running max.
void histogram_kernel(Ptr<i32> values, Ptr<i32> bins, Ptr<i32> maxOut, Int n, Const<int> BINS, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  Tensor v = load(values + offs, mask, 0);
  atomic_add(bins + (v % BINS + BINS) % BINS, 1, mask);
  atomic_max(maxOut + offs * 0, v, mask);
}

// A loop with a loop-carried accumulator and a data-dependent select: out[i] = sum_k where(x>0, x, -x) * k.
void loop_kernel(Ptr<f32> a, Ptr<f32> out, Int n, Int steps, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  Tensor x = load(a + offs, mask);
  Tensor acc = zeros<f32>({BLOCK});
  for (Tensor k : range(0, steps, 1)) acc += where(x > 0, x, -x) * cast<f32>(k);
  store(out + offs, acc, mask);
}

// ---- the case lists

// The library matmul (kernels/matmul.h's parameters) on M x N x K with BM x BN x BK blocks; f16 inputs in [-1, 1),
// i8 ones in [-128, 128).
struct MatmulShape { int64_t M, N, K; int BM, BN, BK, warps; };
// B is [K, N] row-major, or with `bTransposed` [N, K] row-major (B^T, K contiguous: strides (1, K)).
CheckCase matmulCase(const std::string& name, KernelDef k, ScalarKind in, ScalarKind acc, MatmulShape s, double tol,
                     bool bTransposed = false) {
  CheckCase c{name + " " + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " blocks " +
                  std::to_string(s.BM) + "x" + std::to_string(s.BN) + "x" + std::to_string(s.BK) +
                  " warps=" + std::to_string(s.warps),
              std::move(k),
              {{"BM", int64_t(s.BM)}, {"BN", int64_t(s.BN)}, {"BK", int64_t(s.BK)}, {"GROUP_M", int64_t(4)}},
              {cdiv(s.M, s.BM) * cdiv(s.N, s.BN), 1, 1}, {}};
  const bool isInt = in == ScalarKind::I8;
  c.args = {randomBuffer(in, s.M * s.K, 7, isInt ? -128 : -1, isInt ? 128 : 1),
            randomBuffer(in, s.K * s.N, 8, isInt ? -128 : -1, isInt ? 128 : 1), zeroBuffer(acc, s.M * s.N),
            s.M, s.N, s.K, s.K, int64_t(1), bTransposed ? int64_t(1) : s.N, bTransposed ? s.K : int64_t(1), s.N,
            int64_t(1)};
  c.numWarps = s.warps;
  c.atol = c.rtol = tol;  // f32 accumulation in another order; i8 exact
  return c;
}

// A tile of A ([BM, BK], loaded once, before both loops) times B ([K, BN], row-major) in two loops over K, split
// at K_SPLIT (the shape of attention's Q read by the dots of both key loops): async-copy-dot-operands copies A once
// into one shared buffer that both loops' dots read (transforms/AsyncCopyDotOperands.cpp).
void two_loop_dot_kernel(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Int K, Int K_SPLIT, Const<int> BM, Const<int> BN,
                         Const<int> BK) {
  Tensor rm = arange(0, BM), rn = arange(0, BN), rk = arange(0, BK);
  Tensor x = load(a + expand_dims(rm, 1) * BK + expand_dims(rk, 0));
  Tensor acc = zeros<f32>({BM, BN});
  for (Tensor k : range(0, K_SPLIT, BK))
    acc = dot(x, load(b + expand_dims(k + rk, 1) * BN + expand_dims(rn, 0)), acc);
  for (Tensor k : range(K_SPLIT, K, BK))
    acc = dot(x, load(b + expand_dims(k + rk, 1) * BN + expand_dims(rn, 0)), acc);
  store(c + expand_dims(rm, 1) * BN + expand_dims(rn, 0), acc);
}

CheckCase twoLoopDotCase(int BM, int BN, int BK, int warps) {
  const int64_t K = 8 * BK, split = 3 * BK;
  CheckCase c{"dot of one A tile in two loops " + std::to_string(BM) + "x" + std::to_string(BN) + "x" +
                  std::to_string(BK) + " warps=" + std::to_string(warps),
              kernel("two_loop_dot", two_loop_dot_kernel, {"a", "b", "c", "K", "K_SPLIT", "BM", "BN", "BK"}),
              {{"BM", int64_t(BM)}, {"BN", int64_t(BN)}, {"BK", int64_t(BK)}}, {1, 1, 1}, {}};
  c.args = {randomBuffer(ScalarKind::F16, int64_t(BM) * BK, 12), randomBuffer(ScalarKind::F16, K * BN, 13),
            zeroBuffer(ScalarKind::F32, int64_t(BM) * BN), K, split};
  c.numWarps = warps;
  c.atol = c.rtol = 1e-4;  // f32 accumulation in another order
  return c;
}

// acc = dot(A_k, B_k, acc * 0.5): the accumulator the dot adds to is computed from the loop-carried value, as
// attention's rescaled O.
void halved_accumulator_kernel(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Int K, Const<int> BM, Const<int> BN,
                               Const<int> BK) {
  Tensor rm = arange(0, BM), rn = arange(0, BN), rk = arange(0, BK);
  Tensor acc = zeros<f32>({BM, BN});
  for (Tensor k : range(0, K, BK)) {
    Tensor x = load(a + expand_dims(rm, 1) * K + expand_dims(k + rk, 0));
    Tensor y = load(b + expand_dims(k + rk, 1) * BN + expand_dims(rn, 0));
    acc = dot(x, y, acc * 0.5f);
  }
  store(c + expand_dims(rm, 1) * BN + expand_dims(rn, 0), acc);
}

CheckCase halvedAccumulatorCase(int BM, int BN, int BK, int warps) {
  const int64_t K = 8 * BK;
  CheckCase c{"dot into a halved accumulator " + std::to_string(BM) + "x" + std::to_string(BN) + "x" +
                  std::to_string(BK) + " warps=" + std::to_string(warps),
              halvedAccumulatorDot(),
              {{"BM", int64_t(BM)}, {"BN", int64_t(BN)}, {"BK", int64_t(BK)}}, {1, 1, 1}, {}};
  c.args = {randomBuffer(ScalarKind::F16, int64_t(BM) * K, 14), randomBuffer(ScalarKind::F16, K * BN, 15),
            zeroBuffer(ScalarKind::F32, int64_t(BM) * BN), K};
  c.numWarps = warps;
  c.atol = c.rtol = 1e-4;  // f32 accumulation in another order
  return c;
}

// The library attention forward on `heads` heads of `seq` rows (one batch, contiguous), head dim `d`, inputs in
// [-1, 1); f16 or bf16 (P and out are rounded to it: the tolerance is a few of its ulps at 1).
struct AttentionShape { int64_t heads, seq, d; int BM, BN, warps; bool causal; };
CheckCase attentionCase(ScalarKind in, AttentionShape s) {
  const bool bf16 = in == ScalarKind::BF16;
  CheckCase c{std::string("tutorial attention ") + (bf16 ? "bf16 " : "f16 ") + (s.causal ? "causal " : "") +
                  std::to_string(s.heads) + "x" + std::to_string(s.seq) + "x" + std::to_string(s.d) + " blocks " +
                  std::to_string(s.BM) + "x" + std::to_string(s.BN) + " warps=" + std::to_string(s.warps),
              bf16 ? kernels::attention_fwd_bf16_kernel() : kernels::attention_fwd_kernel(),
              {{"BM", int64_t(s.BM)}, {"BN", int64_t(s.BN)}, {"HEAD_DIM", s.d}, {"CAUSAL", int64_t(s.causal)}},
              {cdiv(s.seq, s.BM), s.heads, 1}, {}};
  const int64_t n = s.heads * s.seq * s.d;
  c.args = {randomBuffer(in, n, 9), randomBuffer(in, n, 10), randomBuffer(in, n, 11), zeroBuffer(in, n),
            1 / std::sqrt(double(s.d)), s.heads, s.seq};
  for (int tensor = 0; tensor < 4; ++tensor)
    for (int64_t stride : {n, s.seq * s.d, s.d}) c.args.push_back(stride);
  c.numWarps = s.warps;
  c.atol = c.rtol = bf16 ? 1e-2 : 2e-3;  // exp2 and the summation order differ from the interpreter's
  return c;
}

// The attention backward's two main kernels (kernels/attention_backward.h), f16, on `heads` heads of `seq` rows:
// dK and dV over BN keys, or dQ over BM rows. The statistics are arbitrary (the GPU must compute what the
// interpreter does from them), within a few units of the scores so that P stays O(1).
CheckCase attentionBackwardCase(bool dkdv, AttentionShape s) {
  CheckCase c{std::string("attention backward ") + (dkdv ? "dkdv " : "dq ") + (s.causal ? "causal " : "") +
                  std::to_string(s.heads) + "x" + std::to_string(s.seq) + "x" + std::to_string(s.d) + " blocks " +
                  std::to_string(s.BM) + "x" + std::to_string(s.BN) + " warps=" + std::to_string(s.warps),
              dkdv ? kernels::attention_bwd_dkdv_kernel_of<f16>("") : kernels::attention_bwd_dq_kernel_of<f16>(""),
              {{"BM", int64_t(s.BM)}, {"BN", int64_t(s.BN)}, {"HEAD_DIM", s.d}, {"CAUSAL", int64_t(s.causal)}},
              {cdiv(s.seq, dkdv ? s.BN : s.BM), s.heads, 1}, {}};
  const int64_t n = s.heads * s.seq * s.d, rows = s.heads * s.seq;
  c.args = {randomBuffer(ScalarKind::F16, n, 30),           randomBuffer(ScalarKind::F16, n, 31),
            randomBuffer(ScalarKind::F16, n, 32),           randomBuffer(ScalarKind::F16, n, 33),
            randomBuffer(ScalarKind::F32, rows, 34, 2, 4), randomBuffer(ScalarKind::F32, rows, 35)};
  c.args.push_back(zeroBuffer(ScalarKind::F16, n));
  if (dkdv) c.args.push_back(zeroBuffer(ScalarKind::F16, n));
  const std::vector<CheckArg> scalars{1 / std::sqrt(double(s.d)), s.heads,     s.seq,
                                      s.seq * s.d * s.heads,       s.seq * s.d, s.d};
  c.args.insert(c.args.end(), scalars.begin(), scalars.end());
  c.numWarps = s.warps;
  c.atol = c.rtol = 4e-3;  // f16 results of f32 sums over the sequence, in another order than the interpreter's
  return c;
}

std::vector<CheckCase> tutorialCases() {
  std::vector<CheckCase> cases;
  for (int64_t n : {98432, 100003}) {
    CheckCase c{"tutorial vector_add n=" + std::to_string(n), kernels::vector_add_kernel(), {{"BLOCK", int64_t(1024)}},
                {cdiv(n, 1024), 1, 1}, {}};
    c.args = {randomBuffer(ScalarKind::F32, n, 1), randomBuffer(ScalarKind::F32, n, 2), zeroBuffer(ScalarKind::F32, n), n};
    c.atol = c.rtol = 0;  // one exact add per element
    cases.push_back(c);
  }
  {  // dropout: a keep mask from memory, then one drawn by rand(seed, offset): the GPU must draw the same numbers
    const int64_t n = 100003;
    CheckCase masked{"tutorial dropout n=100003 p=0.3", kernels::dropout_kernel(), {{"BLOCK", int64_t(1024)}},
                     {cdiv(n, 1024), 1, 1}, {}};
    masked.args = {randomBuffer(ScalarKind::F32, n, 16), randomBuffer(ScalarKind::I8, n, 17, -1, 2),
                   zeroBuffer(ScalarKind::F32, n), n, 0.3};
    masked.atol = 0;
    masked.rtol = 1e-6;  // one f32 division (approximate under fast math)
    cases.push_back(masked);
    CheckCase seeded{"tutorial seeded_dropout n=100003 p=0.3", kernels::seeded_dropout_kernel(),
                     {{"BLOCK", int64_t(1024)}}, {cdiv(n, 1024), 1, 1}, {}};
    seeded.args = {randomBuffer(ScalarKind::F32, n, 18), zeroBuffer(ScalarKind::F32, n), n, 0.3, int64_t(-12345)};
    seeded.atol = 0;
    seeded.rtol = 1e-6;  // and a wrongly kept or dropped element is off by all of it
    cases.push_back(seeded);
  }
  for (int warps : {4, 8}) {
    const int64_t rows = 37, cols = 781;
    CheckCase c{"tutorial softmax 37x781 warps=" + std::to_string(warps), kernels::softmax_kernel(),
                {{"BLOCK", int64_t(1024)}}, {rows, 1, 1}, {}};
    c.args = {zeroBuffer(ScalarKind::F32, rows * cols), randomBuffer(ScalarKind::F32, rows * cols, 3, -5, 5), cols, cols,
              cols};
    c.numWarps = warps;
    c.atol = 1e-7;
    c.rtol = 1e-5;
    cases.push_back(c);
  }
  {  // a row of 4096 in one block of 4096, 8 warps: 16 elements a thread
    const int64_t rows = 16, cols = 4096;
    CheckCase c{"tutorial softmax 16x4096 warps=8", kernels::softmax_kernel(), {{"BLOCK", cols}}, {rows, 1, 1}, {}};
    c.args = {zeroBuffer(ScalarKind::F32, rows * cols), randomBuffer(ScalarKind::F32, rows * cols, 14, -5, 5), cols, cols,
              cols};
    c.numWarps = 8;
    c.atol = 1e-7;
    c.rtol = 1e-5;
    cases.push_back(c);
  }
  // Rows of 1500, 4096 (four whole chunks of 1024) and 4093 (odd: the last chunk masked).
  for (auto [rows, cols, block] : {std::tuple<int64_t, int64_t, int64_t>{23, 1500, 512}, {16, 4096, 1024}, {9, 4093, 1024}}) {
    CheckCase c{"tutorial layernorm " + std::to_string(rows) + "x" + std::to_string(cols), kernels::layernorm_fwd_kernel(),
                {{"BLOCK", block}}, {rows, 1, 1}, {}};
    c.args = {randomBuffer(ScalarKind::F32, rows * cols, 4), zeroBuffer(ScalarKind::F32, rows * cols),
              randomBuffer(ScalarKind::F32, cols, 5), randomBuffer(ScalarKind::F32, cols, 6),
              zeroBuffer(ScalarKind::F32, rows), zeroBuffer(ScalarKind::F32, rows), cols, cols, 1e-5};
    c.atol = 1e-5;
    c.rtol = 1e-4;
    cases.push_back(c);
  }
  for (MatmulShape s : {MatmulShape{131, 75, 90, 32, 32, 32, 4}, MatmulShape{512, 256, 128, 64, 64, 32, 4},
                        MatmulShape{256, 256, 256, 128, 128, 32, 8}})
    cases.push_back(matmulCase("tutorial matmul", kernels::matmul_kernel(), ScalarKind::F16, ScalarKind::F32, s, 1e-4));
  // The matmul on the other tensor-core inputs (mma.sync s8 m16n8k32 and tf32 m16n8k8 on NVIDIA), ragged in M, N
  // and K (masked loads), on one block and on several.
  for (MatmulShape s : {MatmulShape{131, 75, 90, 32, 32, 32, 4}, MatmulShape{131, 75, 90, 64, 64, 64, 4},
                        MatmulShape{200, 136, 100, 128, 64, 64, 8}})
    cases.push_back(matmulCase("matmul i8", kernels::matmul_kernel_of<i8>("i8"), ScalarKind::I8, ScalarKind::I32, s, 0));
  for (MatmulShape s : {MatmulShape{131, 75, 90, 32, 32, 16, 4}, MatmulShape{131, 75, 90, 64, 64, 32, 4},
                        MatmulShape{200, 136, 100, 128, 64, 32, 8}})
    cases.push_back(matmulCase("matmul tf32", kernels::matmul_tf32_kernel(), ScalarKind::F32, ScalarKind::F32, s, 1e-5));
  // Software pipelining (transforms/PipelineLoops.cpp): the dot operands go through cp.async into num_stages shared
  // stages, ragged in M, N and K (masked copies, and loops of 5 and 3 iterations: fewer than the stages copied ahead
  // in the second shape), f16 and bf16, num_stages 1 (no pipelining) to 4.
  for (int stages : {1, 2, 3, 4})
    for (MatmulShape s : {MatmulShape{131, 75, 150, 64, 64, 32, 4}, MatmulShape{200, 136, 100, 128, 64, 64, 8}}) {
      const std::string suffix = " stages=" + std::to_string(stages);
      CheckCase halfCase =
          matmulCase("matmul f16" + suffix, kernels::matmul_kernel(), ScalarKind::F16, ScalarKind::F32, s, 1e-4);
      CheckCase bfloatCase = matmulCase("matmul bf16" + suffix, kernels::matmul_kernel_of<bf16>("bf16"),
                                        ScalarKind::BF16, ScalarKind::F32, s, 1e-4);
      halfCase.numStages = bfloatCase.numStages = stages;
      cases.push_back(std::move(halfCase));
      cases.push_back(std::move(bfloatCase));
    }
  // ISSUE 12's matmul configurations (BM, BN, BK, warps, stages), wgmma on sm_90a (mma.sync on sm_80), ragged in
  // M, N and K, f16 and bf16.
  struct Issue12Config { int BM, BN, BK, warps, stages; };
  for (Issue12Config t : {Issue12Config{128, 128, 64, 4, 3}, Issue12Config{128, 128, 64, 8, 3},
                          Issue12Config{128, 256, 64, 8, 3}, Issue12Config{64, 256, 32, 4, 4},
                          Issue12Config{128, 64, 64, 4, 4}, Issue12Config{64, 64, 32, 4, 4}}) {
    const MatmulShape s{200, 300, 100, t.BM, t.BN, t.BK, t.warps};
    const std::string suffix = " stages=" + std::to_string(t.stages);
    CheckCase halfCase =
        matmulCase("matmul f16" + suffix, kernels::matmul_kernel(), ScalarKind::F16, ScalarKind::F32, s, 1e-4);
    CheckCase bfloatCase = matmulCase("matmul bf16" + suffix, kernels::matmul_kernel_of<bf16>("bf16"),
                                      ScalarKind::BF16, ScalarKind::F32, s, 1e-4);
    halfCase.numStages = bfloatCase.numStages = t.stages;
    cases.push_back(std::move(halfCase));
    cases.push_back(std::move(bfloatCase));
    // Sizes that are multiples of 8 but not 16: the JIT specializes them as such (jit/Specialization.h), so rows
    // stay 16-byte aligned and the copies vectorized, while the last K block is masked in runs of 8.
    CheckCase eightCase = matmulCase("matmul f16 sizes 8 mod 16" + suffix, kernels::matmul_kernel(), ScalarKind::F16,
                                     ScalarKind::F32, MatmulShape{200, 264, 136, t.BM, t.BN, t.BK, t.warps}, 1e-4);
    eightCase.numStages = t.stages;
    cases.push_back(std::move(eightCase));
  }
  // The configurations whose N gives each wave whole 32-column blocks, on AMD's v_mfma_f32_32x32x8 (16 C/D
  // registers per lane and block, K steps of 8); ragged in M, N and K. NVIDIA ignores the option.
  for (Issue12Config t : {Issue12Config{128, 128, 64, 4, 3}, Issue12Config{64, 256, 32, 4, 4}})
    for (auto [name, kernel, kind] : {std::tuple{"f16", kernels::matmul_kernel(), ScalarKind::F16},
                                      std::tuple{"bf16", kernels::matmul_kernel_of<bf16>("bf16"), ScalarKind::BF16}}) {
      CheckCase c = matmulCase(std::string("matmul ") + name + " matrix_instr_nonkdim=32", kernel, kind,
                               ScalarKind::F32, {200, 300, 100, t.BM, t.BN, t.BK, t.warps}, 1e-4);
      c.numStages = t.stages;
      c.matrixInstrSize = 32;
      cases.push_back(std::move(c));
    }
  // fp8 (e4m3, e5m2) into f32: wgmma m64nNk32 on sm_90a, FMAs elsewhere. wgmma reads B only K-major: from a B^T
  // ([N, K]) tensor the copies are cp.async's, from a row-major B they go through registers (transposed). ISSUE 12's
  // configurations on e4m3 B^T, num_stages 1 to 4 on e5m2, and row-major B; ragged in M, N and K. Products are exact
  // and the sums f32 in another order than the interpreter's.
  const KernelDef e4m3 = kernels::matmul_kernel_of<f8e4m3>("f8e4m3"), e5m2 = kernels::matmul_kernel_of<f8e5m2>("f8e5m2");
  for (Issue12Config t : {Issue12Config{128, 128, 64, 4, 3}, Issue12Config{128, 128, 64, 8, 3},
                          Issue12Config{128, 256, 64, 8, 3}, Issue12Config{64, 256, 32, 4, 4},
                          Issue12Config{128, 64, 64, 4, 4}, Issue12Config{64, 64, 32, 4, 4}}) {
    CheckCase c = matmulCase("matmul e4m3 B^T stages=" + std::to_string(t.stages), e4m3, ScalarKind::F8E4M3,
                             ScalarKind::F32, {200, 300, 100, t.BM, t.BN, t.BK, t.warps}, 1e-4, true);
    c.numStages = t.stages;
    cases.push_back(std::move(c));
  }
  for (int stages : {1, 2, 3, 4}) {
    CheckCase c = matmulCase("matmul e5m2 B^T stages=" + std::to_string(stages), e5m2, ScalarKind::F8E5M2,
                             ScalarKind::F32, {131, 75, 150, 64, 64, 32, 4}, 1e-4, true);
    c.numStages = stages;
    cases.push_back(std::move(c));
  }
  for (auto [name, kernel, kind] :
       {std::tuple{"e4m3", e4m3, ScalarKind::F8E4M3}, std::tuple{"e5m2", e5m2, ScalarKind::F8E5M2}}) {
    CheckCase c = matmulCase(std::string("matmul ") + name + " stages=3", kernel, kind, ScalarKind::F32,
                             {200, 136, 100, 128, 64, 64, 8}, 1e-4);
    c.numStages = 3;
    cases.push_back(std::move(c));
  }
  // One fp8 format times the other (wgmma .e4m3.e5m2 and .e5m2.e4m3; the interpreter decodes each operand in its own).
  for (bool e4m3First : {true, false}) {
    const KernelDef mixed = e4m3First ? kernels::matmul_mixed_kernel<f8e4m3, f8e5m2>("e4m3_e5m2")
                                      : kernels::matmul_mixed_kernel<f8e5m2, f8e4m3>("e5m2_e4m3");
    const ScalarKind a = e4m3First ? ScalarKind::F8E4M3 : ScalarKind::F8E5M2;
    const ScalarKind b = e4m3First ? ScalarKind::F8E5M2 : ScalarKind::F8E4M3;
    const MatmulShape s{131, 75, 150, 64, 64, 32, 4};
    CheckCase c = matmulCase(std::string("matmul ") + (e4m3First ? "e4m3 x e5m2" : "e5m2 x e4m3") + " B^T stages=3",
                             mixed, a, ScalarKind::F32, s, 1e-4, true);
    c.args[1] = randomBuffer(b, s.K * s.N, 8);
    c.numStages = 3;
    cases.push_back(std::move(c));
  }
  // Attention at ISSUE 12's tiles, sequences a multiple of neither block: the causal diagonal and the ragged
  // last key block masked.
  cases.push_back(attentionCase(ScalarKind::F16, {2, 200, 64, 128, 64, 8, true}));
  cases.push_back(attentionCase(ScalarKind::BF16, {2, 150, 64, 64, 64, 4, false}));
  // On 4 warps: no spills on sm_90a, and on AMD three stages of their buffers fit 64 KiB of LDS (dK/dV's 64 x 64
  // blocks would ask 80 KiB there).
  cases.push_back(attentionBackwardCase(true, {2, 195, 64, 32, 64, 4, true}));
  cases.push_back(attentionBackwardCase(false, {2, 195, 64, 64, 64, 4, false}));
  cases.push_back(twoLoopDotCase(64, 64, 32, 4));
  cases.push_back(twoLoopDotCase(128, 64, 64, 8));
  cases.push_back(halvedAccumulatorCase(64, 64, 32, 4));
  cases.push_back(halvedAccumulatorCase(128, 128, 64, 8));
  // Persistent kernels (transforms/MakePersistent.cpp): the programs the GPU holds at once loop over the grid's
  // tiles. tessera-gpu-check --runtime=sim runs them on an emulated GPU of one multiprocessor
  // (--multiprocessors=1), so that every program runs several tiles: the ragged matmul's 8 x 5 tiles (and its K
  // loop pipelined inside the tile loop, wgmma's in flight on sm_90a), 2-D attention (Q copied once per tile) and
  // softmax's rows.
  for (auto [name, config] : {std::pair{"persistent matmul f16", Issue12Config{32, 64, 32, 4, 3}},
                              std::pair{"persistent matmul f16 wgmma", Issue12Config{64, 64, 32, 4, 4}}}) {
    CheckCase c = matmulCase(name, kernels::matmul_kernel(), ScalarKind::F16, ScalarKind::F32,
                             MatmulShape{250, 300, 100, config.BM, config.BN, config.BK, config.warps}, 1e-4);
    c.numStages = config.stages;
    c.persistent = true;
    cases.push_back(std::move(c));
  }
  for (AttentionShape s : {AttentionShape{3, 200, 64, 64, 64, 4, true}, AttentionShape{3, 150, 64, 64, 32, 4, false}}) {
    CheckCase c = attentionCase(ScalarKind::F16, s);
    c.name = "persistent " + c.name;
    c.persistent = true;
    cases.push_back(std::move(c));
  }
  {
    const int64_t rows = 70, cols = 1000;
    CheckCase c{"persistent softmax " + std::to_string(rows) + "x" + std::to_string(cols), kernels::softmax_kernel(),
                {{"BLOCK", int64_t(1024)}}, {rows, 1, 1}, {}};
    c.args = {zeroBuffer(ScalarKind::F32, rows * cols), randomBuffer(ScalarKind::F32, rows * cols, 12, -5, 5), cols,
              cols, cols};
    c.atol = 1e-7;
    c.rtol = 1e-5;
    c.persistent = true;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<CheckCase> opCases() {
  std::vector<CheckCase> cases;
  const int64_t n = 10007;  // not a multiple of the block: the last program is masked
  const Constants block{{"BLOCK", int64_t(1024)}};
  auto elementwise = [&](std::string name, KernelDef k, Constants constants, std::vector<CheckArg> args, double tol) {
    for (const auto& [key, v] : block) constants[key] = v;
    CheckCase c{std::move(name), std::move(k), std::move(constants), {cdiv(n, 1024), 1, 1}, std::move(args)};
    c.atol = c.rtol = tol;
    cases.push_back(std::move(c));
  };

  // Binary arithmetic on floats (exact: one IEEE operation each) and integers (exact, incl. division by zero).
  for (int op : {kAdd, kSub, kMul, kDiv, kRem, kMin, kMax}) {
    elementwise(std::string("binary ") + binaryOpName(op) + " f32", kernel("binary_f32", binary_kernel<f32>, {"a", "b", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::F32, n, 10 + op, -8, 8), randomBuffer(ScalarKind::F32, n, 30 + op, 0.5, 4),
                 zeroBuffer(ScalarKind::F32, n), n},
                0);
    elementwise(std::string("binary ") + binaryOpName(op) + " i32", kernel("binary_i32", binary_kernel<i32>, {"a", "b", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::I32, n, 50 + op, -1000, 1000), randomBuffer(ScalarKind::I32, n, 70 + op, -9, 9),
                 zeroBuffer(ScalarKind::I32, n), n},
                0);
  }
  {
    // 5 x 3 x 2 tiles, persistent: each of the programs the GPU holds takes a strided share of them.
    CheckCase c{"persistent program coordinates 5x3x2", kernel("program_coordinates", program_coordinates, {"out"}), {},
                {5, 3, 2}, {zeroBuffer(ScalarKind::I32, 5 * 3 * 2 * 6)}};
    c.atol = c.rtol = 0;
    c.persistent = true;
    cases.push_back(std::move(c));
  }
  for (int64_t d : {int64_t(0), int64_t(-1), int64_t(3)}) {
    CheckCase c{"program id div and rem by " + std::to_string(d), kernel("program_divide", program_divide, {"out", "d"}),
                {}, {7, 1, 1}, {zeroBuffer(ScalarKind::I32, 14), d}};
    c.atol = c.rtol = 0;
    cases.push_back(std::move(c));
  }
  for (int op : {kAdd, kMul, kDiv, kMax}) {
    elementwise(std::string("binary ") + binaryOpName(op) + " f16", kernel("binary_f16", binary_kernel<f16>, {"a", "b", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::F16, n, 90 + op, -8, 8), randomBuffer(ScalarKind::F16, n, 95 + op, 0.5, 4),
                 zeroBuffer(ScalarKind::F16, n), n},
                0);
    elementwise(std::string("binary ") + binaryOpName(op) + " bf16", kernel("binary_bf16", binary_kernel<bf16>, {"a", "b", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::BF16, n, 100 + op, -8, 8), randomBuffer(ScalarKind::BF16, n, 105 + op, 0.5, 4),
                 zeroBuffer(ScalarKind::BF16, n), n},
                0);
  }
  for (int op : {kAnd, kOr, kXor, kShl, kShr, kDiv, kRem})
    elementwise(std::string("binary ") + binaryOpName(op) + " i64", kernel("binary_i64", binary_kernel<i64>, {"a", "b", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::I64, n, 110 + op, -1e12, 1e12), randomBuffer(ScalarKind::I64, n, 120 + op, 0, 70),
                 zeroBuffer(ScalarKind::I64, n), n},
                0);
  for (int op : {kShr, kDiv})
    elementwise(std::string("binary ") + binaryOpName(op) + " u32", kernel("binary_u32", binary_kernel<u32>, {"a", "b", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::U32, n, 130 + op, 0, 4e9), randomBuffer(ScalarKind::U32, n, 140 + op, 0, 40),
                 zeroBuffer(ScalarKind::U32, n), n},
                0);

  // Unary math on f32: approximate instructions are allowed within a small relative error.
  for (int op = kExp; op <= kSigmoid; ++op) {
    bool positive = op == kLog || op == kLog2 || op == kSqrt || op == kRsqrt;
    bool exact = op == kFloor || op == kCeil || op == kAbs || op == kNeg;
    elementwise(std::string("unary ") + unaryOpName(op) + " f32", kernel("unary_f32", unary_kernel<f32>, {"a", "out", "n", "OP", "BLOCK"}),
                {{"OP", int64_t(op)}},
                {randomBuffer(ScalarKind::F32, n, 150 + op, positive ? 0.01 : -4, 4), zeroBuffer(ScalarKind::F32, n), n},
                exact ? 0 : 2e-6);
  }
  elementwise("unary exp f64 (libdevice)", kernel("unary_f64", unary_kernel<f64>, {"a", "out", "n", "OP", "BLOCK"}), {{"OP", int64_t(kExp)}},
              {randomBuffer(ScalarKind::F64, n, 170, -4, 4), zeroBuffer(ScalarKind::F64, n), n}, 1e-14);

  // Conversions.
  elementwise("cast f32->f16", kernel("cast_f32_f16", cast_kernel<f32, f16>, {"a", "out", "n", "BLOCK"}), {},
              {randomBuffer(ScalarKind::F32, n, 180, -70000, 70000), zeroBuffer(ScalarKind::F16, n), n}, 0);
  elementwise("cast f32->bf16", kernel("cast_f32_bf16", cast_kernel<f32, bf16>, {"a", "out", "n", "BLOCK"}), {},
              {randomBuffer(ScalarKind::F32, n, 181, -1e30, 1e30), zeroBuffer(ScalarKind::BF16, n), n}, 0);
  elementwise("cast f32->i32 (saturating)", kernel("cast_f32_i32", cast_kernel<f32, i32>, {"a", "out", "n", "BLOCK"}), {},
              {randomBuffer(ScalarKind::F32, n, 182, -4e9, 4e9), zeroBuffer(ScalarKind::I32, n), n}, 0);
  elementwise("cast i32->f32", kernel("cast_i32_f32", cast_kernel<i32, f32>, {"a", "out", "n", "BLOCK"}), {},
              {randomBuffer(ScalarKind::I32, n, 183, -2e9, 2e9), zeroBuffer(ScalarKind::F32, n), n}, 0);
  elementwise("cast f16->f32", kernel("cast_f16_f32", cast_kernel<f16, f32>, {"a", "out", "n", "BLOCK"}), {},
              {randomBuffer(ScalarKind::F16, n, 184, -100, 100), zeroBuffer(ScalarKind::F32, n), n}, 0);
  elementwise("cast i8->i64 (sign extension)", kernel("cast_i8_i64", cast_kernel<i8, i64>, {"a", "out", "n", "BLOCK"}), {},
              {randomBuffer(ScalarKind::I8, n, 185, -128, 128), zeroBuffer(ScalarKind::I64, n), n}, 0);

  // Reductions and scans over rows and columns (cross-warp when a row spans warps).
  for (int op = kRowSum; op <= kRowCumsumReverse; ++op) {
    for (int C : {64, 512}) {
      const int64_t R = 300, BR = C == 64 ? 16 : 2;
      CheckCase c{std::string("reduce/scan ") + rowOpName(op) + " 300x" + std::to_string(C),
                  kernel("rows", rows_kernel, {"a", "out", "idx", "R", "OP", "BR", "C"}),
                  {{"OP", int64_t(op)}, {"BR", BR}, {"C", int64_t(C)}}, {cdiv(R, BR), 1, 1}, {}};
      c.args = {randomBuffer(ScalarKind::F32, R * C, 200 + op), zeroBuffer(ScalarKind::F32, R * C),
                zeroBuffer(ScalarKind::I32, R), R};
      // Another summation order: a sum of C terms in [-1, 1], reordered, may move by up to C * 2^-24 (one
      // rounding of a partial sum <= C per term), which near a zero crossing is all absolute error.
      c.atol = std::max(1e-5, C * 0x1p-24);
      c.rtol = 1e-5;
      cases.push_back(c);
    }
  }

  // dot: on NVIDIA tensor cores for f16/bf16, f32 allowing tf32, and i8 with K % 32 == 0 (the 32x32x16 one runs
  // on FMAs); FMA for f32 (ieee) everywhere.
  struct DotShape { int M, N, K, BM, BN, warps; };
  for (DotShape s : {DotShape{64, 64, 32, 64, 64, 4}, DotShape{128, 128, 64, 128, 64, 8}, DotShape{32, 32, 16, 16, 16, 1}}) {
    std::string shape = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " warps=" +
                        std::to_string(s.warps);
    auto add = [&](std::string name, KernelDef k, ScalarKind in, ScalarKind acc, double tol) {
      CheckCase c{"dot " + name + " " + shape, std::move(k),
                  {{"BM", int64_t(s.BM)}, {"BN", int64_t(s.BN)}, {"BK", int64_t(s.K)}},
                  {s.M / s.BM, s.N / s.BN, 1}, {}};
      bool isInt = in == ScalarKind::I8;
      c.args = {randomBuffer(in, s.M * s.K, 300 + s.M, isInt ? -128 : -1, isInt ? 128 : 1),
                randomBuffer(in, s.K * s.N, 400 + s.N, isInt ? -128 : -1, isInt ? 128 : 1), zeroBuffer(acc, s.M * s.N)};
      c.numWarps = s.warps;
      c.atol = c.rtol = tol;
      cases.push_back(std::move(c));
    };
    add("f16->f32", kernel("dot_f16", dot_kernel<f16, f32>, {"a", "b", "c", "BM", "BN", "BK"}), ScalarKind::F16,
        ScalarKind::F32, 1e-5);
    add("bf16->f32", kernel("dot_bf16", dot_kernel<bf16, f32>, {"a", "b", "c", "BM", "BN", "BK"}),
        ScalarKind::BF16, ScalarKind::F32, 1e-5);
    add("f32->f32 ieee", kernel("dot_f32", dot_kernel<f32, f32>, {"a", "b", "c", "BM", "BN", "BK"}),
        ScalarKind::F32, ScalarKind::F32, 1e-5);
    add("f32->f32 tf32", kernel("dot_tf32", dot_kernel<f32, f32, InputPrecision::TF32>, {"a", "b", "c", "BM", "BN", "BK"}),
        ScalarKind::F32, ScalarKind::F32, 1e-5);
    add("i8->i32", kernel("dot_i8", dot_kernel<i8, i32>, {"a", "b", "c", "BM", "BN", "BK"}), ScalarKind::I8,
        ScalarKind::I32, 0);
  }

  // Layout conversion through shared memory; 128x128 f32 blocks need a 66048-byte buffer, which AMDGPU's 64 KiB of
  // LDS takes in two rounds.
  for (auto [M, N, BM, BN] : {std::array<int64_t, 4>{1000, 777, 32, 32}, std::array<int64_t, 4>{512, 512, 64, 128},
                              std::array<int64_t, 4>{256, 200, 128, 128}}) {
    CheckCase c{"transpose " + std::to_string(M) + "x" + std::to_string(N) + " blocks " + std::to_string(BM) + "x" +
                    std::to_string(BN),
                kernel("transpose", transpose_kernel, {"in", "out", "M", "N", "BM", "BN"}),
                {{"BM", BM}, {"BN", BN}}, {cdiv(M, BM), cdiv(N, BN), 1}, {}};
    c.args = {randomBuffer(ScalarKind::F32, M * N, 500), zeroBuffer(ScalarKind::F32, M * N), M, N};
    c.atol = c.rtol = 0;
    cases.push_back(c);
  }

  // Atomics (integers: the result does not depend on the order).
  {
    CheckCase c{"atomics add/max i32 histogram", kernel("histogram", histogram_kernel, {"v", "bins", "max", "n", "BINS", "BLOCK"}),
                {{"BINS", int64_t(64)}, {"BLOCK", int64_t(1024)}}, {cdiv(n, 1024), 1, 1}, {}};
    c.args = {randomBuffer(ScalarKind::I32, n, 600, -100000, 100000), zeroBuffer(ScalarKind::I32, 64),
              zeroBuffer(ScalarKind::I32, 1), n};
    cases.push_back(c);
  }
  // Loops with loop-carried tiles and selects.
  elementwise("for loop + select", kernel("loop", loop_kernel, {"a", "out", "n", "steps", "BLOCK"}), {},
              {randomBuffer(ScalarKind::F32, n, 700), zeroBuffer(ScalarKind::F32, n), n, int64_t(13)}, 1e-6);
  return cases;
}

}  // namespace

KernelDef halvedAccumulatorDot() {
  return kernel("halved_accumulator", halved_accumulator_kernel, {"a", "b", "c", "K", "BM", "BN", "BK"});
}

std::vector<CheckCase> allCases() {
  std::vector<CheckCase> all = tutorialCases();
  for (CheckCase& c : opCases()) all.push_back(std::move(c));
  return all;
}

}  // namespace tessera::gpucheck
