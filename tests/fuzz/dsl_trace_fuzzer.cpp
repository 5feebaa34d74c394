// libFuzzer target: the DSL tracing API, driven by a byte code. Each input is a program: bytes pick DSL
// operations (arithmetic, math, shapes, casts, loads, stores, atomics, reductions, scans, dots, loops, branches,
// assignments, hints) over a small set of live tensors, and the operands, shapes, dtypes, axes and literals
// of each. The program is traced as a kernel with pointer and scalar parameters; the traced IR is verified.
//
// Findings, besides crashes, sanitizer reports, leaks and hangs: any exception other than tessera::Error, and a
// tessera::Error without a message or without the kernel author's source location (errors must point at the
// offending DSL call). Misuse is welcome: wrong dtypes, bad axes and shapes, tensors that escaped a loop body.
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "Findings.h"
#include "tessera/tessera.h"

namespace {

using namespace tessera;
using tessera::fuzz::finding;

// The input as a stream of choices; past the end every choice is 0.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }
  size_t pick(size_t n) { return next() % n; }
  template <class T> const T& pickFrom(const std::vector<T>& v) { return v[pick(v.size())]; }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

const std::vector<ir::ScalarKind> kDTypes = {
    ir::ScalarKind::I1,  ir::ScalarKind::I8,  ir::ScalarKind::I16,  ir::ScalarKind::I32,    ir::ScalarKind::I64,
    ir::ScalarKind::U8,  ir::ScalarKind::U16, ir::ScalarKind::U32,  ir::ScalarKind::U64,    ir::ScalarKind::F16,
    ir::ScalarKind::BF16, ir::ScalarKind::F32, ir::ScalarKind::F64, ir::ScalarKind::F8E4M3, ir::ScalarKind::F8E5M2};
// Mostly tile-friendly powers of two, plus sizes the DSL must reject.
const std::vector<int64_t> kDims = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 3, 0, -1, int64_t(1) << 21};
const std::vector<int64_t> kInts = {0, 1, 2, -1, 7, 16, 255, int64_t(1) << 31, std::numeric_limits<int64_t>::max()};
const std::vector<double> kFloats = {0.0, 0.5, -1.0, 3.25, 1e30, INFINITY, -INFINITY, NAN};
const std::vector<std::string> kAtomics = {"add", "max", "min", "and", "or", "xor", "xchg", "fadd", ""};

constexpr size_t kMaxLive = 12;
constexpr int kMaxDepth = 4;
constexpr int kMaxOps = 160;

class Program {
 public:
  Program(Bytes& in, std::vector<Tensor> params) : in_(in), params_(std::move(params)) {
    for (const Tensor& p : params_) live_.push_back(p);
  }

  // Runs operations until the input ends; `budget` ops at most at this nesting level.
  void run(int depth, int budget) {
    while (!in_.done() && budget-- > 0 && ops_++ < kMaxOps) step(depth);
  }

 private:
  Tensor& any() { return live_[in_.pick(live_.size())]; }
  ir::Type dtype() { return ir::Type::scalar(in_.pickFrom(kDTypes)); }
  int axis() { return static_cast<int>(in_.pick(6)) - 1; }  // -1 .. 4: some out of range
  Shape shape() {
    Shape s(in_.pick(4));  // rank 0..3
    for (int64_t& d : s) d = in_.pickFrom(kDims);
    return s;
  }
  TArg literal() {
    switch (in_.pick(3)) {
      case 0: return TArg(static_cast<long long>(in_.pickFrom(kInts)));
      case 1: return TArg(in_.pickFrom(kFloats));
      default: return TArg(in_.pick(2) == 1);
    }
  }
  // A tensor or, one time in four, a C++ literal.
  template <class F> Tensor withOperand(F f) {
    if (in_.pick(4) == 0) return f(literal());
    return f(TArg(any()));
  }

  void keep(Tensor t) {
    if (live_.size() < kMaxLive) live_.push_back(std::move(t));
    else live_[in_.pick(live_.size())] = t;  // an assignment: inside loops, a carried variable
  }

  // A body of `n` ops in a nested scope. Tensors made inside are usually dropped at the end like C++ locals;
  // sometimes they outlive it, which the DSL must reject cleanly when they are used.
  void body(int depth) {
    size_t before = live_.size();
    run(depth + 1, 1 + static_cast<int>(in_.pick(8)));
    if (in_.pick(8) != 0)
      while (live_.size() > before) live_.pop_back();
  }

  Tensor binary(const Tensor& a, const TArg& b) {
    switch (in_.pick(19)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * b;
      case 3: return a / b;
      case 4: return a % b;
      case 5: return a & b;
      case 6: return a | b;
      case 7: return a ^ b;
      case 8: return a << b;
      case 9: return a >> b;
      case 10: return a == b;
      case 11: return a != b;
      case 12: return a < b;
      case 13: return a <= b;
      case 14: return a > b;
      case 15: return a >= b;
      case 16: return minimum(a, b);
      case 17: return maximum(a, b);
      default: return umulhi(a, b);
    }
  }

  Tensor unary(const TArg& x) {
    switch (in_.pick(17)) {
      case 0: return -x;
      case 1: return ~x;
      case 2: return !x;
      case 3: return exp(x);
      case 4: return exp2(x);
      case 5: return log(x);
      case 6: return log2(x);
      case 7: return sqrt(x);
      case 8: return rsqrt(x);
      case 9: return sin(x);
      case 10: return cos(x);
      case 11: return tanh(x);
      case 12: return erf(x);
      case 13: return abs(x);
      case 14: return floor(x);
      case 15: return ceil(x);
      default: return sigmoid(x);
    }
  }

  Combine combine() {
    switch (in_.pick(5)) {
      case 0: return [](const Tensor& a, const Tensor& b) { return a + b; };
      case 1: return [](const Tensor& a, const Tensor& b) { return maximum(a, b); };
      case 2: return [](const Tensor& a, const Tensor&) { return a; };
      case 3: return [](const Tensor& a, const Tensor&) { return cast(a, ir::Type::scalar(ir::ScalarKind::F16)); };
      default: {
        Tensor outside = any();  // a value from the kernel body used inside the combine region
        return [outside](const Tensor& a, const Tensor&) { return a + outside; };
      }
    }
  }

  // A pointer tile: a pointer parameter plus offsets.
  Tensor pointer() {
    Tensor base = params_[in_.pick(3)];
    return in_.pick(4) == 0 ? base : base + any();
  }

  void step(int depth) {
    switch (in_.pick(24)) {
      case 0: case 1: keep(binary(any(), in_.pick(4) == 0 ? literal() : TArg(any()))); break;
      case 2: keep(withOperand([&](const TArg& x) { return unary(x); })); break;
      case 3: keep(where(any(), any(), in_.pick(2) ? TArg(any()) : literal())); break;
      case 4: keep(in_.pick(2) ? fma(any(), any(), any()) : cdiv(any(), literal())); break;
      case 5: keep(full(shape(), literal(), dtype())); break;
      case 6: {
        int64_t start = in_.pickFrom(kInts) % 64, end = start + in_.pickFrom(kDims);
        keep(arange(start, end));
        break;
      }
      case 7: keep(in_.pick(2) ? program_id(axis()) : num_programs(axis())); break;
      case 8: keep(in_.pick(2) ? expand_dims(any(), axis()) : broadcast_to(any(), shape())); break;
      case 9: keep(in_.pick(2) ? reshape(any(), shape()) : trans(any())); break;
      case 10: {
        std::vector<int64_t> perm(in_.pick(4));
        for (int64_t& p : perm) p = axis();
        keep(permute(any(), perm));
        break;
      }
      case 11:
        if (in_.pick(3) == 0) {
          auto [a, b] = split(any());
          keep(a);
          keep(b);
        } else {
          keep(in_.pick(2) ? cat(any(), any()) : join(any(), any()));
        }
        break;
      case 12: keep(in_.pick(2) ? cast(any(), dtype()) : bitcast(any(), dtype())); break;
      case 13: {
        Tensor p = pointer();
        switch (in_.pick(3)) {
          case 0: keep(load(p)); break;
          case 1: keep(load(p, any())); break;
          default: keep(load(p, any(), literal())); break;
        }
        break;
      }
      case 14:
        if (in_.pick(2)) store(pointer(), any());
        else store(pointer(), any(), any());
        break;
      case 15:
        if (in_.pick(4) == 0) keep(atomic_cas(pointer(), any(), any()));
        else keep(atomic_rmw(in_.pickFrom(kAtomics), pointer(), any(), in_.pick(2) ? any() : Tensor()));
        break;
      case 16:
        switch (in_.pick(6)) {
          case 0: keep(sum(any(), axis())); break;
          case 1: keep(max(any(), axis())); break;
          case 2: keep(min(any(), axis())); break;
          case 3: keep(argmax(any(), axis())); break;
          case 4: keep(argmin(any(), axis())); break;
          default: keep(reduce(any(), axis(), combine())); break;
        }
        break;
      case 17:
        if (in_.pick(2)) keep(cumsum(any(), axis(), in_.pick(2) == 1));
        else keep(scan(any(), axis(), combine(), in_.pick(2) == 1));
        break;
      case 18: keep(in_.pick(2) ? dot(any(), any()) : dot(any(), any(), any())); break;
      case 19:
        if (depth >= kMaxDepth) break;
        if (in_.pick(3) == 0) {
          for (auto iv : range(any(), any(), any())) {
            keep(iv);
            body(depth);
          }
        } else {
          for (auto iv : range(0, in_.pickFrom(kInts), 1 + static_cast<int>(in_.pick(4)))) {
            keep(iv);
            body(depth);
          }
        }
        break;
      case 20:
        if (depth >= kMaxDepth) break;
        if (in_.pick(2)) if_(any(), [&] { body(depth); });
        else if_(any(), [&] { body(depth); }, [&] { body(depth); });
        break;
      case 21: {
        if (depth >= kMaxDepth) break;
        Tensor& counter = any();
        while_([&] { return counter < any(); }, [&] { body(depth); });
        break;
      }
      case 22: {
        Tensor& target = any();
        switch (in_.pick(4)) {
          case 0: target = any(); break;
          case 1: target += any(); break;
          case 2: target *= literal(); break;
          default: target <<= any(); break;
        }
        break;
      }
      default:
        switch (in_.pick(4)) {
          case 0: keep(multiple_of(any(), in_.pickFrom(kInts))); break;
          case 1: keep(max_contiguous(any(), in_.pickFrom(kInts))); break;
          case 2: debug_print("v", {any(), any()}); break;
          default: device_assert(any(), "fuzz"); break;
        }
        break;
    }
  }

  Bytes& in_;
  std::vector<Tensor> params_;
  std::deque<Tensor> live_;
  int ops_ = 0;
};

KernelDef fuzzKernel(Bytes& in) {
  std::vector<ParamInfo> params = {
      {"pf", ParamKind::Pointer, ir::Type::ptr(dtype<f32>())},
      {"pi", ParamKind::Pointer, ir::Type::ptr(dtype<i32>())},
      {"ph", ParamKind::Pointer, ir::Type::ptr(dtype<f16>())},
      {"n", ParamKind::Scalar, dtype<i32>()},
      {"alpha", ParamKind::Scalar, dtype<f32>()},
      {"big", ParamKind::Scalar, dtype<i64>()},
  };
  return KernelDef("fuzz", params, [&in](detail::ParamSource& source) {
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < 6; ++i) tensors.push_back(source.tensor(i));
    Program program(in, tensors);
    program.run(0, kMaxOps);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  try {
    fuzzKernel(in).trace({});
  } catch (const Error& e) {
    if (e.message().empty()) finding("a tessera::Error without a message", e.what());
    if (!e.location().known()) finding("a tessera::Error without the author's source location", e.what());
  } catch (const std::exception& e) {
    finding("an exception that is not a tessera::Error", e.what());
  }
  return 0;
}
