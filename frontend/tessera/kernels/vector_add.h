// Vector addition (tutorials/01_vector_add.md): out[i] = x[i] + y[i]. Each program handles BLOCK consecutive
// elements; the mask keeps the last program from touching memory past n.
#pragma once

#include "tessera/tessera.h"

namespace tessera::kernels {

inline void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, Const<int> BLOCK) {
  Tensor offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offsets < n;
  store(out + offsets, load(x + offsets, mask) + load(y + offsets, mask), mask);
}

inline KernelDef vector_add_kernel() { return kernel("vector_add", vector_add, {"x", "y", "out", "n", "BLOCK"}); }

}  // namespace tessera::kernels
