// The DSL's operations. Every function takes the kernel author's source location as its last (defaulted)
// argument, so that misuse throws tessera::Error pointing at the author's line.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tessera/Tensor.h"

namespace tessera {

// ---- program ids and ranges
Tensor program_id(int axis, SourceLoc loc = SourceLoc::current());
Tensor num_programs(int axis, SourceLoc loc = SourceLoc::current());
// [start, end) as tile<(end-start)xi32>; the bounds must be compile-time constants.
Tensor arange(int64_t start, int64_t end, SourceLoc loc = SourceLoc::current());
Tensor arange(const Tensor& start, const TArg& end, SourceLoc loc = SourceLoc::current());  // always throws

// ---- creation
Tensor full(const Shape& shape, const TArg& value, ir::Type dtype, SourceLoc loc = SourceLoc::current());
template <class T> Tensor full(const Shape& shape, const TArg& value, SourceLoc loc = SourceLoc::current()) {
  return full(shape, value, dtype<T>(), loc);
}
template <class T> Tensor zeros(const Shape& shape, SourceLoc loc = SourceLoc::current()) {
  return full(shape, TArg(0, loc), dtype<T>(), loc);
}
// A scalar of the given type from a C++ number.
template <class T> Tensor scalar(const TArg& value, SourceLoc loc = SourceLoc::current()) {
  return full({}, value, dtype<T>(), loc);
}

// ---- shapes
Tensor expand_dims(const TArg& x, int axis, SourceLoc loc = SourceLoc::current());
Tensor broadcast_to(const TArg& x, const Shape& shape, SourceLoc loc = SourceLoc::current());
Tensor reshape(const TArg& x, const Shape& shape, SourceLoc loc = SourceLoc::current());
Tensor trans(const TArg& x, SourceLoc loc = SourceLoc::current());  // reverses the dimensions
Tensor permute(const TArg& x, const std::vector<int64_t>& perm, SourceLoc loc = SourceLoc::current());
Tensor cat(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
Tensor join(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
std::pair<Tensor, Tensor> split(const TArg& x, SourceLoc loc = SourceLoc::current());

// ---- element-wise math
Tensor minimum(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
Tensor maximum(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
Tensor where(const TArg& cond, const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
Tensor fma(const TArg& a, const TArg& b, const TArg& c, SourceLoc loc = SourceLoc::current());
Tensor umulhi(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
Tensor exp(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor exp2(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor log(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor log2(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor sqrt(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor rsqrt(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor sin(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor cos(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor tanh(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor erf(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor abs(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor floor(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor ceil(const TArg& x, SourceLoc loc = SourceLoc::current());
Tensor sigmoid(const TArg& x, SourceLoc loc = SourceLoc::current());  // 1 / (1 + exp(-x))
Tensor cdiv(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());  // (a + b - 1) / b

// ---- conversions
Tensor cast(const TArg& x, ir::Type dtype, SourceLoc loc = SourceLoc::current());
template <class T> Tensor cast(const TArg& x, SourceLoc loc = SourceLoc::current()) { return cast(x, dtype<T>(), loc); }
Tensor bitcast(const TArg& x, ir::Type dtype, SourceLoc loc = SourceLoc::current());
template <class T> Tensor bitcast(const TArg& x, SourceLoc loc = SourceLoc::current()) {
  return bitcast(x, dtype<T>(), loc);
}
template <class T> Tensor Tensor::to(SourceLoc loc) const { return cast(*this, dtype<T>(), loc); }

// ---- memory. `mask` is an i1 tile (or scalar) broadcastable to the pointer's shape; an undefined Tensor
// means "no mask". `other` is what masked-off lanes read (default: zero).
Tensor load(const Tensor& ptr, SourceLoc loc = SourceLoc::current());
Tensor load(const Tensor& ptr, const Tensor& mask, SourceLoc loc = SourceLoc::current());
Tensor load(const Tensor& ptr, const Tensor& mask, const TArg& other, SourceLoc loc = SourceLoc::current());
// The block of `desc` (its type's block shape) whose first element is at `offsets`, one per dimension (ints or
// integer scalars, in elements); elements outside the tensor, [0, shape) in every dimension, read as zero.
Tensor load(const TensorDescBase& desc, std::initializer_list<TArg> offsets, SourceLoc loc = SourceLoc::current());
// Writes `value` (broadcast to the block shape, in the descriptor's element type) as the block of `desc` at
// `offsets`; the elements that fall outside the tensor are not written.
void store(const TensorDescBase& desc, std::initializer_list<TArg> offsets, const TArg& value,
           SourceLoc loc = SourceLoc::current());
void store(const Tensor& ptr, const TArg& value, SourceLoc loc = SourceLoc::current());
void store(const Tensor& ptr, const TArg& value, const Tensor& mask, SourceLoc loc = SourceLoc::current());

// Atomics return the previous values. kind: add max min and or xor xchg.
Tensor atomic_rmw(const std::string& kind, const Tensor& ptr, const TArg& value, const Tensor& mask = Tensor(),
                  SourceLoc loc = SourceLoc::current());
Tensor atomic_add(const Tensor& ptr, const TArg& value, const Tensor& mask = Tensor(), SourceLoc loc = SourceLoc::current());
Tensor atomic_max(const Tensor& ptr, const TArg& value, const Tensor& mask = Tensor(), SourceLoc loc = SourceLoc::current());
Tensor atomic_min(const Tensor& ptr, const TArg& value, const Tensor& mask = Tensor(), SourceLoc loc = SourceLoc::current());
Tensor atomic_xchg(const Tensor& ptr, const TArg& value, const Tensor& mask = Tensor(), SourceLoc loc = SourceLoc::current());
Tensor atomic_cas(const Tensor& ptr, const TArg& cmp, const TArg& value, SourceLoc loc = SourceLoc::current());

// ---- reductions and scans
using Combine = std::function<Tensor(const Tensor&, const Tensor&)>;
using MultiCombine = std::function<std::vector<Tensor>(const std::vector<Tensor>&, const std::vector<Tensor>&)>;
Tensor reduce(const TArg& x, int axis, const Combine& combine, SourceLoc loc = SourceLoc::current());
std::vector<Tensor> reduce(const std::vector<Tensor>& xs, int axis, const MultiCombine& combine,
                           SourceLoc loc = SourceLoc::current());
Tensor sum(const TArg& x, int axis = 0, SourceLoc loc = SourceLoc::current());
Tensor max(const TArg& x, int axis = 0, SourceLoc loc = SourceLoc::current());
Tensor min(const TArg& x, int axis = 0, SourceLoc loc = SourceLoc::current());
Tensor argmax(const TArg& x, int axis = 0, SourceLoc loc = SourceLoc::current());  // i32 index, first of ties
Tensor argmin(const TArg& x, int axis = 0, SourceLoc loc = SourceLoc::current());
Tensor scan(const TArg& x, int axis, const Combine& combine, bool reverse = false, SourceLoc loc = SourceLoc::current());
Tensor cumsum(const TArg& x, int axis = 0, bool reverse = false, SourceLoc loc = SourceLoc::current());

// a [M,K] times b [K,N], plus acc [M,N] (default: f32 zeros, i32 for i8 inputs).
Tensor dot(const TArg& a, const TArg& b, SourceLoc loc = SourceLoc::current());
Tensor dot(const TArg& a, const TArg& b, const TArg& acc, SourceLoc loc = SourceLoc::current());
// How a dot of f32 inputs multiplies: exactly (IEEE, the default), or with both inputs first rounded to tf32 (10
// mantissa bits), which NVIDIA tensor cores can run (input_precision = "tf32" in the IR). Other inputs ignore it.
enum class InputPrecision { IEEE, TF32 };
Tensor dot(const TArg& a, const TArg& b, const TArg& acc, InputPrecision precision,
           SourceLoc loc = SourceLoc::current());

// ---- debugging and hints
void debug_print(const std::string& prefix, const std::vector<Tensor>& values, SourceLoc loc = SourceLoc::current());
void device_assert(const TArg& cond, const std::string& message, SourceLoc loc = SourceLoc::current());
Tensor multiple_of(const TArg& x, int64_t n, SourceLoc loc = SourceLoc::current());
Tensor max_contiguous(const TArg& x, int64_t n, SourceLoc loc = SourceLoc::current());

}  // namespace tessera
