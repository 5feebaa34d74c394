// The DSL's value type. A Tensor is a tile or scalar *variable* in a kernel:
//   - while tracing, it names an IR value, and assignments to it (x = ..., x += ...) inside traced loops and
//     branches become loop-carried values and branch results (SSA construction keyed on the variable);
//   - in eager mode, it holds a concrete tile computed op by op by the reference interpreter's semantics.
// Kernel authors never create the IR directly; they write ordinary C++ over Tensors (see tessera.h).
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "tessera/DType.h"

namespace tessera {

namespace interp { struct Tile; }
namespace detail {
class Context;
struct Def {
  uint64_t frameId;      // the scope (function body, loop body, branch) this definition belongs to
  ir::Value* value;
  bool written;          // assigned in that scope (vs. only read, via a loop-carried argument)
};
}  // namespace detail

using SourceLoc = std::source_location;
class TArg;

// A compile-time constant kernel parameter: specializes the kernel; tile shapes come from these.
template <class T> struct Const {
  T value{};
  constexpr operator T() const { return value; }
};

class Tensor {
 public:
  Tensor() = default;  // undefined until assigned
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) : Tensor(static_cast<const Tensor&>(other)) {}
  Tensor& operator=(const Tensor& other);  // assigns this variable
  Tensor& operator=(Tensor&& other) { return *this = static_cast<const Tensor&>(other); }
  ~Tensor();

  bool defined() const;
  ir::Type type() const;   // the full type (tile or scalar)
  ir::Type dtype() const { return type().element(); }
  const std::vector<int64_t>& shape() const { return type().shape(); }
  int rank() const { return type().rank(); }

  // Compound assignment: x += y is x = x + y (promotion and broadcasting included).
  Tensor& operator+=(const TArg& o);
  Tensor& operator-=(const TArg& o);
  Tensor& operator*=(const TArg& o);
  Tensor& operator/=(const TArg& o);
  Tensor& operator%=(const TArg& o);
  Tensor& operator&=(const TArg& o);
  Tensor& operator|=(const TArg& o);
  Tensor& operator^=(const TArg& o);
  Tensor& operator<<=(const TArg& o);
  Tensor& operator>>=(const TArg& o);

  template <class T> Tensor to(SourceLoc loc = SourceLoc::current()) const;

  // Eager mode only: the concrete value (throws when tracing). Reading the tile needs its definition,
  // backends/interpreter/Tile.h; str() does not.
  const interp::Tile& value(SourceLoc loc = SourceLoc::current()) const;
  // Eager: the tile's elements as text. Tracing: the IR value's type.
  std::string str() const;

  // ---- internal (used by the DSL implementation)
  ir::Value* traced(const SourceLoc& loc) const;  // the variable's SSA value in the current scope
  static Tensor fromTraced(ir::Value* v);
  static Tensor fromTile(interp::Tile t);
  const std::shared_ptr<const interp::Tile>& tile() const { return tile_; }

 private:
  friend class detail::Context;
  void assignFrom(const Tensor& other, const SourceLoc& loc);
  mutable std::vector<detail::Def> defs_;   // tracing: innermost scope last
  std::shared_ptr<const interp::Tile> tile_;  // eager
  bool registered_ = false;                 // tracing: listed in some scope's touched set
};

// Typed views used in kernel signatures. They are Tensors; the template argument fixes the parameter type.
template <class E> class Ptr : public Tensor {
 public:
  Ptr() = default;
  Ptr(const Tensor& t) : Tensor(t) {}
};
template <class E> class Scalar : public Tensor {
 public:
  Scalar() = default;
  Scalar(const Tensor& t) : Tensor(t) {}
};
// A tensor descriptor parameter: a global tensor of E with its shape and strides, read block by block
// (load(desc, {offsets...})). The block shape comes with the launch's argument; the kernel specializes on it.
// It holds the descriptor's value rather than being a Tensor, so that no Tensor operation applies to it and
// load(desc, {m, k}) cannot be mistaken for load(pointers, mask).
class TensorDescBase {
 public:
  TensorDescBase() = default;
  explicit TensorDescBase(const Tensor& value) : value_(value) {}
  const Tensor& value() const { return value_; }

 private:
  Tensor value_;
};
template <class E> class TensorDesc : public TensorDescBase {
 public:
  TensorDesc() = default;
  explicit TensorDesc(const Tensor& value) : TensorDescBase(value) {}
};
using Int = Scalar<i32>;
using Long = Scalar<i64>;
using Float = Scalar<f32>;

// An operand of a DSL operation: a Tensor or a C++ number (a "weak" literal that takes the other operand's
// type, see docs/IR.md). It also captures the source location of the DSL call for error messages.
class TArg {
 public:
  TArg(const Tensor& t, SourceLoc loc = SourceLoc::current()) : tensor_(&t), loc_(loc) {}
  TArg(int v, SourceLoc loc = SourceLoc::current()) : i_(v), kind_(Kind::Int), loc_(loc) {}
  TArg(long v, SourceLoc loc = SourceLoc::current()) : i_(v), kind_(Kind::Int), loc_(loc) {}
  TArg(long long v, SourceLoc loc = SourceLoc::current()) : i_(v), kind_(Kind::Int), loc_(loc) {}
  TArg(unsigned v, SourceLoc loc = SourceLoc::current()) : i_(v), kind_(Kind::Int), loc_(loc) {}
  TArg(unsigned long v, SourceLoc loc = SourceLoc::current()) : i_(static_cast<int64_t>(v)), kind_(Kind::Int), loc_(loc) {}
  TArg(double v, SourceLoc loc = SourceLoc::current()) : f_(v), kind_(Kind::Float), loc_(loc) {}
  TArg(float v, SourceLoc loc = SourceLoc::current()) : f_(v), kind_(Kind::Float), loc_(loc) {}
  TArg(bool v, SourceLoc loc = SourceLoc::current()) : i_(v), kind_(Kind::Bool), loc_(loc) {}
  template <class T> TArg(Const<T> c, SourceLoc loc = SourceLoc::current()) : TArg(c.value, loc) {}

  enum class Kind { Tensor, Int, Float, Bool };
  Kind kind() const { return tensor_ ? Kind::Tensor : kind_; }
  const Tensor* tensor() const { return tensor_; }
  int64_t intValue() const { return i_; }
  double floatValue() const { return f_; }
  const SourceLoc& loc() const { return loc_; }

 private:
  const Tensor* tensor_ = nullptr;
  int64_t i_ = 0;
  double f_ = 0;
  Kind kind_ = Kind::Int;
  SourceLoc loc_;
};

// A shape argument: {BM, BN} with ints or Const<int>s.
using Shape = std::vector<int64_t>;

// ---- operators (promotion and broadcasting as in docs/IR.md)
Tensor operator+(const TArg& a, const TArg& b);
Tensor operator-(const TArg& a, const TArg& b);
Tensor operator*(const TArg& a, const TArg& b);
Tensor operator/(const TArg& a, const TArg& b);
Tensor operator%(const TArg& a, const TArg& b);
Tensor operator&(const TArg& a, const TArg& b);
Tensor operator|(const TArg& a, const TArg& b);
Tensor operator^(const TArg& a, const TArg& b);
Tensor operator<<(const TArg& a, const TArg& b);
Tensor operator>>(const TArg& a, const TArg& b);
Tensor operator==(const TArg& a, const TArg& b);
Tensor operator!=(const TArg& a, const TArg& b);
Tensor operator<(const TArg& a, const TArg& b);
Tensor operator<=(const TArg& a, const TArg& b);
Tensor operator>(const TArg& a, const TArg& b);
Tensor operator>=(const TArg& a, const TArg& b);
Tensor operator-(const TArg& a);
Tensor operator~(const TArg& a);
Tensor operator!(const TArg& a);  // logical not: x == 0

}  // namespace tessera
