// The consumer's own kernel: out = alpha * x + y, masked at the end.
#pragma once

#include "tessera/tessera.h"

namespace consumer {

using namespace tessera;

inline void scaled_sum(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, Float alpha, Const<int> BLOCK) {
  Tensor offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offsets < n;
  store(out + offsets, alpha * load(x + offsets, mask) + load(y + offsets, mask), mask);
}

inline KernelDef scaled_sum_kernel() {
  return kernel("scaled_sum", scaled_sum, {"x", "y", "out", "n", "alpha", "BLOCK"});
}

}  // namespace consumer
