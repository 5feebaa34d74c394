// Dropout (tutorials/06_dropout.md): out = x * 1 / (1 - p) where an element is kept, 0 where it is dropped, each
// element dropped with probability p. `dropout` reads which elements to keep from a mask in memory; `seeded_dropout`
// draws them, rand(seed, offset) > p, so that no mask is stored: a backward pass calls it again with the same
// seed on the gradient and drops the same elements.
#pragma once

#include "tessera/tessera.h"

namespace tessera::kernels {

inline void dropout(Ptr<f32> x, Ptr<i8> keep, Ptr<f32> out, Int n, Float p, Const<int> BLOCK) {
  Tensor offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offsets < n;
  Tensor kept = load(keep + offsets, mask) != 0;
  Tensor scale = 1.0f / (1.0f - p);  // one division per program, not one per element
  store(out + offsets, where(kept, load(x + offsets, mask) * scale, 0.0f), mask);
}

inline void seeded_dropout(Ptr<f32> x, Ptr<f32> out, Int n, Float p, Int seed, Const<int> BLOCK) {
  Tensor offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offsets < n;
  Tensor kept = rand(seed, offsets) > p;  // each element's number depends only on (seed, its offset)
  Tensor scale = 1.0f / (1.0f - p);
  store(out + offsets, where(kept, load(x + offsets, mask) * scale, 0.0f), mask);
}

inline KernelDef dropout_kernel() { return kernel("dropout", dropout, {"x", "keep", "out", "n", "p", "BLOCK"}); }
inline KernelDef seeded_dropout_kernel() {
  return kernel("seeded_dropout", seeded_dropout, {"x", "out", "n", "p", "seed", "BLOCK"});
}

}  // namespace tessera::kernels
