// Shared helpers for the per-op semantics tests (tests/unit/op_semantics_*_test.cpp).
//
// The tests build tiny kernels with ir::Builder, run them on host buffers with interp::run, and compare against
// references computed here in plain C++. The references deliberately share no code with the interpreter: floats
// are encoded/decoded by a generic IEEE-style codec over `long double` (64-bit mantissa, so every int64/uint64
// and double is held exactly and each conversion rounds only once).
#pragma once

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Verifier.h"

namespace optest {

using tessera::ir::Builder;
using tessera::ir::Function;
using tessera::ir::OpKind;
using tessera::ir::ScalarKind;
using tessera::ir::Type;
using tessera::ir::Value;
namespace interp = tessera::interp;

static_assert(LDBL_MANT_DIG >= 64, "the reference codec needs an x87-style long double to hold every int64 exactly");

// ---------------------------------------------------------------------------------------------------------------
// Scalar kinds

inline Type scalarType(ScalarKind k) { return Type::scalar(k); }
inline Type ptrTo(ScalarKind k) { return Type::ptr(Type::scalar(k)); }
inline const char* kindName(ScalarKind k) { return tessera::ir::scalarKindName(k); }

inline int kindBits(ScalarKind k) {
  switch (k) {
    case ScalarKind::I1: return 1;
    case ScalarKind::I8: case ScalarKind::U8: case ScalarKind::F8E4M3: case ScalarKind::F8E5M2: return 8;
    case ScalarKind::I16: case ScalarKind::U16: case ScalarKind::F16: case ScalarKind::BF16: return 16;
    case ScalarKind::I32: case ScalarKind::U32: case ScalarKind::F32: return 32;
    case ScalarKind::I64: case ScalarKind::U64: case ScalarKind::F64: return 64;
  }
  return 0;
}
// Bytes one element occupies in memory (i1 is stored as a byte).
inline size_t kindBytes(ScalarKind k) { return k == ScalarKind::I1 ? 1 : static_cast<size_t>(kindBits(k) / 8); }
inline bool isFloatKind(ScalarKind k) {
  return k == ScalarKind::F16 || k == ScalarKind::BF16 || k == ScalarKind::F32 || k == ScalarKind::F64 ||
         k == ScalarKind::F8E4M3 || k == ScalarKind::F8E5M2;
}
inline bool isSignedKind(ScalarKind k) {
  return k == ScalarKind::I8 || k == ScalarKind::I16 || k == ScalarKind::I32 || k == ScalarKind::I64;
}
inline bool isIntKind(ScalarKind k) { return !isFloatKind(k); }

inline const std::vector<ScalarKind>& signedKinds() {
  static const std::vector<ScalarKind> v{ScalarKind::I8, ScalarKind::I16, ScalarKind::I32, ScalarKind::I64};
  return v;
}
inline const std::vector<ScalarKind>& intKinds() {
  static const std::vector<ScalarKind> v{ScalarKind::I8,  ScalarKind::I16, ScalarKind::I32, ScalarKind::I64,
                                         ScalarKind::U8,  ScalarKind::U16, ScalarKind::U32, ScalarKind::U64};
  return v;
}
inline const std::vector<ScalarKind>& arithFloatKinds() {
  static const std::vector<ScalarKind> v{ScalarKind::F16, ScalarKind::BF16, ScalarKind::F32, ScalarKind::F64};
  return v;
}
inline const std::vector<ScalarKind>& numericKinds() {
  static const std::vector<ScalarKind> v = [] {
    std::vector<ScalarKind> all = intKinds();
    for (ScalarKind k : arithFloatKinds()) all.push_back(k);
    return all;
  }();
  return v;
}

inline uint64_t widthMask(int bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

// Canonical int form (as interp::Tile keeps it): signed kinds sign-extended, unsigned zero-extended, u64 as bits.
inline int64_t wrapInt(ScalarKind k, uint64_t v) {
  int w = kindBits(k);
  v &= widthMask(w);
  if (isSignedKind(k) && w < 64 && (v >> (w - 1)) & 1) v |= ~widthMask(w);
  return static_cast<int64_t>(v);
}
// The value's bits as an unsigned number of the kind's width.
inline uint64_t unsignedBits(ScalarKind k, int64_t canonical) {
  return static_cast<uint64_t>(canonical) & widthMask(kindBits(k));
}
inline int64_t intMin(ScalarKind k) { return isSignedKind(k) ? wrapInt(k, uint64_t(1) << (kindBits(k) - 1)) : 0; }
inline int64_t intMax(ScalarKind k) {
  return isSignedKind(k) ? static_cast<int64_t>(widthMask(kindBits(k) - 1)) : wrapInt(k, widthMask(kindBits(k)));
}

// ---------------------------------------------------------------------------------------------------------------
// Float codec: binary formats with `expBits` exponent bits and `mantBits` stored mantissa bits.
// `ieee`: the all-ones exponent encodes inf/NaN. Otherwise (OCP e4m3 "fn") it is an ordinary binade whose
// all-ones mantissa is the only NaN, and there are no infinities.

struct FloatFormat {
  int expBits;
  int mantBits;
  bool ieee;
};

inline FloatFormat formatOf(ScalarKind k) {
  switch (k) {
    case ScalarKind::F16: return {5, 10, true};
    case ScalarKind::BF16: return {8, 7, true};
    case ScalarKind::F32: return {8, 23, true};
    case ScalarKind::F64: return {11, 52, true};
    case ScalarKind::F8E4M3: return {4, 3, false};
    case ScalarKind::F8E5M2: return {5, 2, true};
    default: ADD_FAILURE() << "formatOf: not a float kind"; return {8, 23, true};
  }
}

inline int formatBias(FloatFormat f) { return (1 << (f.expBits - 1)) - 1; }
inline uint64_t formatMaxExpField(FloatFormat f) { return widthMask(f.expBits) - (f.ieee ? 1 : 0); }
inline uint64_t formatMaxFiniteBits(FloatFormat f) {
  uint64_t mant = f.ieee ? widthMask(f.mantBits) : widthMask(f.mantBits) - 1;  // e4m3fn: all-ones mantissa is NaN
  return (formatMaxExpField(f) << f.mantBits) | mant;
}
inline uint64_t formatInfBits(FloatFormat f) { return widthMask(f.expBits) << f.mantBits; }
inline uint64_t formatNaNBits(FloatFormat f) {
  return f.ieee ? formatInfBits(f) | (uint64_t(1) << (f.mantBits - 1)) : widthMask(f.expBits + f.mantBits);
}
inline uint64_t formatSignBit(FloatFormat f) { return uint64_t(1) << (f.expBits + f.mantBits); }

// Rounds v to the format (round to nearest, ties to even) and returns its bits. Overflow gives infinity unless
// `saturate` (or the format has no infinity), in which case it gives the largest finite value of v's sign.
inline uint64_t encodeFloat(long double v, FloatFormat f, bool saturate) {
  if (std::isnan(v)) return formatNaNBits(f);
  uint64_t sign = std::signbit(v) ? formatSignBit(f) : 0;
  long double a = std::fabs(v);
  bool saturating = saturate || !f.ieee;
  if (std::isinf(a)) return sign | (saturating ? formatMaxFiniteBits(f) : formatInfBits(f));
  if (a == 0) return sign;
  int k = 0;
  std::frexp(a, &k);
  int e = k - 1;  // a = 1.xxx * 2^e
  int emin = 1 - formatBias(f);
  if (e < emin) e = emin;  // subnormal range: fixed quantum
  long double scaled = std::ldexp(a, f.mantBits - e);
  uint64_t n = static_cast<uint64_t>(std::nearbyint(scaled));  // default rounding mode: ties to even
  if (n == (uint64_t(1) << (f.mantBits + 1))) {
    ++e;
    n >>= 1;
  }
  if (n == 0) return sign;
  uint64_t expField, mant;
  if (n < (uint64_t(1) << f.mantBits)) {
    expField = 0;
    mant = n;
  } else {
    expField = static_cast<uint64_t>(e + formatBias(f));
    mant = n - (uint64_t(1) << f.mantBits);
  }
  uint64_t bits = (expField << f.mantBits) | mant;
  bool overflow = expField > formatMaxExpField(f) || (!f.ieee && bits > formatMaxFiniteBits(f));
  if (overflow) return sign | (saturating ? formatMaxFiniteBits(f) : formatInfBits(f));
  return sign | bits;
}

inline long double decodeFloat(uint64_t bits, FloatFormat f) {
  bool neg = (bits & formatSignBit(f)) != 0;
  uint64_t expField = (bits >> f.mantBits) & widthMask(f.expBits);
  uint64_t mant = bits & widthMask(f.mantBits);
  long double v;
  if (f.ieee && expField == widthMask(f.expBits)) {
    v = mant == 0 ? HUGE_VALL : NAN;
  } else if (!f.ieee && expField == widthMask(f.expBits) && mant == widthMask(f.mantBits)) {
    v = NAN;
  } else if (expField == 0) {
    v = std::ldexp(static_cast<long double>(mant), 1 - formatBias(f) - f.mantBits);
  } else {
    v = std::ldexp(static_cast<long double>(mant | (uint64_t(1) << f.mantBits)),
                   static_cast<int>(expField) - formatBias(f) - f.mantBits);
  }
  return neg ? -v : v;
}

// Nearest value of kind k (ties to even; fp8 saturates, other formats overflow to infinity).
inline double roundTo(ScalarKind k, long double v) {
  FloatFormat f = formatOf(k);
  bool fp8 = k == ScalarKind::F8E4M3 || k == ScalarKind::F8E5M2;
  return static_cast<double>(decodeFloat(encodeFloat(v, f, fp8), f));
}
// Bits of v in kind k. Meant for values of k (so an f8e5m2 infinity stays infinity); inexact values round to
// nearest even, and overflow goes to infinity where the format has one.
inline uint64_t floatBits(ScalarKind k, double v) { return encodeFloat(v, formatOf(k), false); }

// Distance in units in the last place of kind k, or a huge number when one is NaN and the other is not, or the
// signs differ on non-zero values.
inline uint64_t ulpDistance(ScalarKind k, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  FloatFormat f = formatOf(k);
  auto ordered = [&](double x) -> int64_t {  // monotonic integer image of the format's values
    uint64_t bits = encodeFloat(x, f, false);
    int64_t mag = static_cast<int64_t>(bits & ~formatSignBit(f));
    return (bits & formatSignBit(f)) ? -mag : mag;
  };
  int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

// Bit-exact float equality, except that any NaN equals any NaN.
inline bool sameFloat(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

inline std::string fmtDouble(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// ---------------------------------------------------------------------------------------------------------------
// Host buffers holding elements of one kind in their memory representation.

class HostBuf {
 public:
  HostBuf() = default;
  HostBuf(ScalarKind k, size_t count) : kind_(k), count_(count), words_((count * kindBytes(k) + 7) / 8 + 1, 0) {}

  ScalarKind kind() const { return kind_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * kindBytes(kind_); }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words_.data()); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(words_.data()); }
  interp::Buffer buffer() { return interp::Buffer{data(), bytes()}; }
  interp::Arg arg() { return buffer(); }

  uint64_t bitsAt(size_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, data() + i * kindBytes(kind_), kindBytes(kind_));  // little-endian host
    return v;
  }
  void setBits(size_t i, uint64_t v) { std::memcpy(data() + i * kindBytes(kind_), &v, kindBytes(kind_)); }

  int64_t intAt(size_t i) const { return wrapInt(kind_, bitsAt(i)); }
  void setInt(size_t i, int64_t v) { setBits(i, static_cast<uint64_t>(v)); }
  double floatAt(size_t i) const { return static_cast<double>(decodeFloat(bitsAt(i), formatOf(kind_))); }
  void setFloat(size_t i, double v) { setBits(i, floatBits(kind_, v)); }
  // Either representation, for kinds chosen at run time.
  double asDouble(size_t i) const { return isFloatKind(kind_) ? floatAt(i) : static_cast<double>(intAt(i)); }
  void setFromDouble(size_t i, double v) {
    if (isFloatKind(kind_))
      setFloat(i, v);
    else
      setInt(i, static_cast<int64_t>(v));
  }

  void fill(uint8_t byte) { std::memset(data(), byte, bytes()); }
  // True when bytes [fromElement, size) all equal `byte`.
  bool untouchedFrom(size_t fromElement, uint8_t byte) const {
    for (size_t b = fromElement * kindBytes(kind_); b < bytes(); ++b)
      if (data()[b] != byte) return false;
    return true;
  }

 private:
  ScalarKind kind_ = ScalarKind::I32;
  size_t count_ = 0;
  std::vector<uint64_t> words_;  // 8-byte aligned storage
};

constexpr uint8_t kPoison = 0xA5;

// ---------------------------------------------------------------------------------------------------------------
// Random values (fixed seeds: every test is reproducible).

using Rng = std::mt19937_64;

inline int64_t randomInt(ScalarKind k, Rng& rng) {
  if (k == ScalarKind::I1) return static_cast<int64_t>(rng() & 1);
  std::uniform_int_distribution<int> pick(0, 9);
  int c = pick(rng);
  if (c <= 4) return wrapInt(k, rng());                                            // any bit pattern
  if (c <= 7) return wrapInt(k, static_cast<uint64_t>(static_cast<int64_t>(rng() % 19) - 9));  // small
  const int64_t edges[] = {intMin(k), intMax(k), 0, 1, wrapInt(k, ~uint64_t(0)), intMin(k) + 1, intMax(k) - 1};
  return edges[rng() % 7];
}

// A value exactly representable in k: mostly moderate normals, sometimes integers, specials when asked.
inline double randomFloat(ScalarKind k, Rng& rng, bool specials) {
  std::uniform_int_distribution<int> pick(0, 9);
  int c = pick(rng);
  if (specials && c == 0) {
    const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0};
    double v = sp[rng() % 7];
    if (k == ScalarKind::F8E4M3 && std::isinf(v)) v = 448.0;
    return v;
  }
  if (specials && c == 1) {  // a subnormal of k (flush-to-zero would be a bug)
    FloatFormat f = formatOf(k);
    uint64_t mant = 1 + rng() % widthMask(f.mantBits);
    double v = static_cast<double>(decodeFloat(mant, f));
    return rng() & 1 ? -v : v;
  }
  if (c <= 2) return roundTo(k, static_cast<double>(static_cast<int64_t>(rng() % 41) - 20));
  std::uniform_real_distribution<double> mant(-2.0, 2.0);
  std::uniform_int_distribution<int> ex(-6, 6);
  return roundTo(k, std::ldexp(mant(rng), ex(rng)));
}

// ---------------------------------------------------------------------------------------------------------------
// Kernel construction

inline int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

class Kernel {
 public:
  explicit Kernel(const std::vector<Type>& argTypes, const std::string& name = "kernel")
      : fn_(std::make_unique<Function>(name, argTypes)), b(fn_->body()) {}

  Value* arg(unsigned i) const { return fn_->argument(i); }
  Function& fn() { return *fn_; }

  Value* i32(int64_t v) { return b.constantInt(v, Type::i32()); }
  Value* tileI32(int64_t v, const std::vector<int64_t>& shape) {
    return b.constantInt(v, Type::tile(shape, Type::i32()));
  }

  // i32 tile of `shape` whose element at multi-index j is its row-major linear index.
  Value* linearIndex(const std::vector<int64_t>& shape) {
    int rank = static_cast<int>(shape.size());
    Value* sum = nullptr;
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      Value* r = b.arange(0, shape[d]);
      for (int j = d + 1; j < rank; ++j) r = b.expandDims(r, r->type().rank());  // trailing unit dims
      for (int j = 0; j < d; ++j) r = b.expandDims(r, 0);         // leading unit dims
      if (rank > 1) r = b.broadcast(r, shape);
      if (stride != 1) r = b.binary(OpKind::Mul, r, tileI32(stride, shape));
      sum = sum ? b.binary(OpKind::Add, sum, r) : r;
      stride *= shape[d];
    }
    return sum;
  }

  // Tile of pointers base + offsets (offsets: an integer tile).
  Value* ptrs(Value* base, Value* offsets) { return b.addptr(b.splat(base, offsets->type().shape()), offsets); }

  // Per-program block of `shape`: offsets pid*numel + linear index, mask offsets < n (n: an i32 scalar).
  struct Block {
    Value* offsets;
    Value* mask;
  };
  Block block(const std::vector<int64_t>& shape, Value* n) {
    Value* start = b.binary(OpKind::Mul, b.programId(0), i32(numel(shape)));
    Value* offs = b.binary(OpKind::Add, b.splat(start, shape), linearIndex(shape));
    Value* mask = b.cmp("lt", offs, b.splat(n, shape));
    return {offs, mask};
  }

  void run(const std::vector<interp::Arg>& args, interp::Grid grid, std::ostream* out = nullptr) {
    if (!finished_) {
      b.ret();
      finished_ = true;
      // A malformed test kernel must fail loudly here, not be blamed on the interpreter (and not satisfy an
      // EXPECT_THROW(..., tessera::Error) meant for a runtime failure).
      try {
        tessera::ir::verify(*fn_);
      } catch (const tessera::Error& e) {
        throw std::logic_error(std::string("test kernel failed verification: ") + e.what());
      }
    }
    interp::run(*fn_, args, grid, out);
  }

 private:
  std::unique_ptr<Function> fn_;
  bool finished_ = false;

 public:
  Builder b;
};

// Runs out[i] = build(in_0[i], ...)[i] for i < n with blocks of `shape` over ceil(n / numel) programs, where the
// loads are masked, and checks that the output past n (the masked-off tail of the last block) stays poisoned.
using ElementwiseBuild = std::function<Value*(Kernel&, const std::vector<Value*>&)>;

inline HostBuf runElementwise(std::vector<HostBuf*> inputs, ScalarKind outKind, const std::vector<int64_t>& shape,
                              int64_t n, const ElementwiseBuild& build) {
  std::vector<Type> argTypes;
  for (HostBuf* in : inputs) argTypes.push_back(ptrTo(in->kind()));
  argTypes.push_back(ptrTo(outKind));
  argTypes.push_back(Type::i32());
  Kernel k(argTypes, "elementwise");
  Value* nArg = k.arg(static_cast<unsigned>(inputs.size() + 1));
  Kernel::Block blk = k.block(shape, nArg);
  std::vector<Value*> loaded;
  for (unsigned i = 0; i < inputs.size(); ++i) loaded.push_back(k.b.load(k.ptrs(k.arg(i), blk.offsets), blk.mask));
  Value* result = build(k, loaded);
  k.b.store(k.ptrs(k.arg(static_cast<unsigned>(inputs.size())), blk.offsets), result, blk.mask);

  int64_t per = numel(shape);
  int64_t programs = (n + per - 1) / per;
  HostBuf out(outKind, static_cast<size_t>(programs * per));
  out.fill(kPoison);
  std::vector<interp::Arg> args;
  for (HostBuf* in : inputs) args.push_back(in->arg());
  args.push_back(out.arg());
  args.push_back(n);
  k.run(args, {programs, 1, 1});
  EXPECT_TRUE(out.untouchedFrom(static_cast<size_t>(n), kPoison)) << "masked-off tail of the output was written";
  return out;
}

// Shapes of rank 1, 2 and 3 used by the element-wise tests, and an element count that is not a multiple of any.
inline const std::vector<std::vector<int64_t>>& elementwiseShapes() {
  static const std::vector<std::vector<int64_t>> s{{64}, {8, 16}, {2, 4, 8}};
  return s;
}
constexpr int64_t kElementwiseCount = 3 * 64 + 37;

}  // namespace optest
