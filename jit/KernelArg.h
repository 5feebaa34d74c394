// One runtime argument of a GPU launch: a device pointer, an integer, a floating-point number or a tensor
// descriptor (ir/TensorDescriptor.h: a global tensor's base, shape and strides, and the block its loads read).
//   kernel.launch(grid, {x, y, out, int64_t(n)}, constants);   // x, y, out: DeviceBuffers
//   kernel.launch(grid, {KernelArg::tensorDescriptor(a, {M, K}, {K, 1}, {64, 32}), ...}, constants);
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/TensorDescriptor.h"
#include "jit/CudaDriver.h"

namespace tessera::jit {

class KernelArg {
 public:
  enum class Kind { Pointer, Int, Float, TensorDescriptor };

  // A DeviceBuffer's size is known, so the launch may specialize on it (ArgFacts::offsets32).
  KernelArg(const DeviceBuffer& buffer)  // NOLINT: implicit on purpose
      : kind_(Kind::Pointer), ptr_(buffer.ptr()), pointerBytes_(buffer.bytes()) {}
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
  // A device address with the size in bytes of the memory the kernel may reach through it (from the address on):
  // as a DeviceBuffer, it lets the launch specialize on the size (ArgFacts::offsets32). A bare address keeps
  // 64-bit pointer arithmetic.
  static KernelArg pointer(cu::DevicePtr p, uint64_t bytes) {
    KernelArg a = pointer(p);
    a.pointerBytes_ = bytes;
    return a;
  }

  // A descriptor of the tensor at `base` (strides in elements, dimension 0 outermost); checked at launch.
  static KernelArg tensorDescriptor(cu::DevicePtr base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                                    std::vector<int64_t> block) {
    KernelArg a(int64_t(0));
    a.kind_ = Kind::TensorDescriptor;
    a.descriptor_ = {base, std::move(shape), std::move(strides), std::move(block)};
    return a;
  }
  static KernelArg tensorDescriptor(const DeviceBuffer& buffer, std::vector<int64_t> shape,
                                    std::vector<int64_t> strides, std::vector<int64_t> block) {
    return tensorDescriptor(buffer.ptr(), std::move(shape), std::move(strides), std::move(block));
  }

  Kind kind() const { return kind_; }
  cu::DevicePtr pointerValue() const { return ptr_; }
  // The bytes reachable through a pointer argument, where known (DeviceBuffer, pointer(addr, bytes)).
  std::optional<uint64_t> pointerBytes() const { return pointerBytes_; }
  int64_t intValue() const { return int_; }
  double floatValue() const { return float_; }
  const ir::TensorDescriptorFields& descriptor() const { return descriptor_; }

 private:
  Kind kind_;
  cu::DevicePtr ptr_ = 0;
  std::optional<uint64_t> pointerBytes_;
  int64_t int_ = 0;
  double float_ = 0;
  ir::TensorDescriptorFields descriptor_;
};

}  // namespace tessera::jit
