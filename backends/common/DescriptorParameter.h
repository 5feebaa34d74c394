// How a tensor descriptor travels as a kernel parameter, on every target: its fields as 64-bit integers from
// byte 0 (base, then shape, then strides: ir/TensorDescriptor.h), and where the compiled kernel copies with TMA,
// the 128-byte tensor map the runtime encodes at byte kDescriptorMapOffset (the parameter is then 64-byte
// aligned, as cp.async.bulk.tensor needs its map to be). The lowering reads the fields at these offsets and the
// runtimes (jit/) write them there.
#pragma once

#include <algorithm>
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

// The box of a descriptor's tensor map along its innermost dimension, in elements: the block's row, but no wider
// than the swizzle span (TMA's rule for swizzled boxes). A block row wider than that lands as consecutive boxes of
// swizzleBytes-wide lines, one copy each, which is how the NVMMA shared layouts split a long contiguous extent.
inline int64_t tensorMapInnerBox(int64_t blockInner, int64_t elementBytes, int64_t swizzleBytes) {
  return swizzleBytes == 0 ? blockInner : std::min(blockInner, swizzleBytes / elementBytes);
}

}  // namespace tessera::backends
