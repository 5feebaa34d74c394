// What a kernel launched on the host takes: a grid of programs, and one argument per runtime parameter. Both the
// reference interpreter (backends/interpreter) and the DSL's eager mode (frontend/tessera) run kernels over these,
// so they live below both. They keep the `interp` namespace that launch code has always spelled them with.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <variant>

namespace tessera::interp {

// Host memory a pointer argument may point into.
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
};

// One kernel argument: an integer (for int parameters), a double (for float parameters) or a Buffer (for
// pointer parameters: the pointer's value is the buffer's start address).
using Arg = std::variant<int64_t, double, Buffer>;

using Grid = std::array<int64_t, 3>;

}  // namespace tessera::interp
