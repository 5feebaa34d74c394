// How a tensor descriptor travels as a kernel parameter, on every target: its fields as 64-bit integers from
// byte 0 (base, then shape, then strides: ir/TensorDescriptor.h), and where the compiled kernel copies with TMA,
// the 128-byte tensor map the runtime encodes at byte kDescriptorMapOffset (the parameter is then 64-byte
// aligned, as cp.async.bulk.tensor needs its map to be). The lowering reads the fields at these offsets and the
// runtimes (jit/) write them there.
#pragma once

#include <cstdint>

namespace tessera::backends {

inline constexpr int64_t kTensorMapBytes = 128;
inline constexpr int64_t kDescriptorMapOffset = 128;  // past the fields of any rank (at most 88 bytes)
inline constexpr int64_t kTensorMapAlign = 64;
inline constexpr int64_t kDescriptorBaseOffset = 0;
inline int64_t descriptorShapeOffset(int dim) { return 8 + 8 * int64_t{dim}; }
inline int64_t descriptorStrideOffset(int rank, int dim) { return 8 + 8 * int64_t{rank} + 8 * int64_t{dim}; }
inline int64_t descriptorParamBytes(int rank, bool withTensorMap) {
  return withTensorMap ? kDescriptorMapOffset + kTensorMapBytes : descriptorStrideOffset(rank, rank);
}
inline int64_t descriptorParamAlign(bool withTensorMap) { return withTensorMap ? kTensorMapAlign : 8; }

}  // namespace tessera::backends
