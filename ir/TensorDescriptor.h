// What a tensor descriptor argument holds on the host: a global tensor's base address, shape and strides, and the
// block its loads read, as the caller of a launch gives them (dimension 0 outermost, as tiles index; strides in
// elements). Every runtime checks it with descriptorError before encoding it: the rules are those of a TMA tensor
// map (cuTensorMapEncodeTiled), so that a descriptor that runs on the interpreter also runs on an H100.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/Types.h"

namespace tessera::ir {

struct TensorDescriptorFields {
  uint64_t base = 0;              // address of element (0, ..., 0)
  std::vector<int64_t> shape;     // elements per dimension
  std::vector<int64_t> strides;   // elements between neighbours along each dimension; the last must be 1
  std::vector<int64_t> block;     // the block (tile) one load reads
  bool operator==(const TensorDescriptorFields&) const = default;
};

// The fields `desc_field` reads (its `field` attribute): the base pointer, and shape[dim] or strides[dim] as i64.
inline constexpr const char* kDescFieldBase = "base";
inline constexpr const char* kDescFieldShape = "shape";
inline constexpr const char* kDescFieldStride = "stride";

// The descriptor argument attribute (int: 0, 32, 64 or 128) giving the swizzle of the tensor map its launches
// encode, which expand-descriptor-loads sets where a TMA copy lands the blocks in a swizzled shared layout
// (backends/common/DescriptorParameter.h: tensorMapInnerBox), and the lowering reports in tessera.tensor_maps.
inline constexpr const char* kTensorMapSwizzleAttr = "tensor_map_swizzle";

// Why `d`, describing elements of `element`, cannot be encoded as a tensor map, else nullopt: its rank (1 to 5,
// the same for shape, strides and block), a positive shape, a contiguous innermost dimension, outer strides that
// are multiples of 16 bytes and span the dimensions inside them, block dimensions that are powers of two up to 256, an innermost block row that is a
// multiple of 16 bytes, and a 16-byte-aligned base. The message names the offending field.
std::optional<std::string> descriptorError(const TensorDescriptorFields& d, Type element);

// The descriptor parameter type a kernel specializes on for `d`: tensordesc<block x element>.
Type descriptorType(const TensorDescriptorFields& d, Type element);

}  // namespace tessera::ir
