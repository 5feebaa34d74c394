// One runtime argument of a GPU launch: a device pointer, an integer or a floating-point number.
//   kernel.launch(grid, {x, y, out, int64_t(n)}, constants);   // x, y, out: DeviceBuffers
#pragma once

#include <concepts>
#include <cstdint>

#include "jit/CudaDriver.h"

namespace tessera::jit {

class KernelArg {
 public:
  enum class Kind { Pointer, Int, Float };

  KernelArg(const DeviceBuffer& buffer) : kind_(Kind::Pointer), ptr_(buffer.ptr()) {}  // NOLINT: implicit on purpose
  template <std::integral T>
  KernelArg(T v) : kind_(Kind::Int), int_(static_cast<int64_t>(v)) {}  // NOLINT
  template <std::floating_point T>
  KernelArg(T v) : kind_(Kind::Float), float_(static_cast<double>(v)) {}  // NOLINT
  // A raw device address (memory not owned by a DeviceBuffer, or a fake address for compileOnly).
  static KernelArg pointer(cu::DevicePtr p) {
    KernelArg a(int64_t(0));
    a.kind_ = Kind::Pointer;
    a.ptr_ = p;
    return a;
  }

  Kind kind() const { return kind_; }
  cu::DevicePtr pointerValue() const { return ptr_; }
  int64_t intValue() const { return int_; }
  double floatValue() const { return float_; }

 private:
  Kind kind_;
  cu::DevicePtr ptr_ = 0;
  int64_t int_ = 0;
  double float_ = 0;
};

}  // namespace tessera::jit
