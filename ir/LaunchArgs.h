// What a kernel launched on the host takes: a grid of programs, and one argument per runtime parameter. Both the
// reference interpreter (backends/interpreter) and the DSL's eager mode (frontend/tessera) run kernels over these,
// so they live below both. They keep the `interp` namespace that launch code has always spelled them with.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

namespace tessera::interp {

// Host memory a pointer argument may point into.
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
};

// A tensor descriptor over a buffer (ir/TensorDescriptor.h): the tensor starts at the buffer's start address;
// shape, strides (in elements, dimension 0 outermost) and the block its loads read.
struct TensorDesc {
  Buffer buffer;
  std::vector<int64_t> shape, strides, block;
};

// One kernel argument: an integer (for int parameters), a double (for float parameters), a Buffer (for pointer
// parameters: the pointer's value is the buffer's start address) or a TensorDesc (for descriptor parameters).
using Arg = std::variant<int64_t, double, Buffer, TensorDesc>;

using Grid = std::array<int64_t, 3>;

}  // namespace tessera::interp
