#include "ir/TensorDescriptor.h"

namespace tessera::ir {

namespace {
std::string at(const char* field, size_t d) { return std::string(field) + "[" + std::to_string(d) + "]"; }
}  // namespace

std::optional<std::string> descriptorError(const TensorDescriptorFields& d, Type element) {
  const size_t rank = d.shape.size();
  if (rank < 1 || rank > static_cast<size_t>(kMaxDescriptorRank))
    return "rank " + std::to_string(rank) + "; a tensor descriptor has 1 to " + std::to_string(kMaxDescriptorRank) +
           " dimensions";
  if (d.strides.size() != rank || d.block.size() != rank)
    return "shape, strides and block must have the same rank; they have " + std::to_string(rank) + ", " +
           std::to_string(d.strides.size()) + " and " + std::to_string(d.block.size()) + " dimensions";
  const int64_t bytes = element.storageBytes();
  for (size_t i = rank; i-- > 0;) {  // innermost first, so that the extent check below reads checked fields
    if (d.shape[i] < 1 || d.shape[i] > (int64_t{1} << 32))
      return at("shape", i) + " is " + std::to_string(d.shape[i]) + "; 1 to 2^32";
    if (auto err = Type::checkDescriptorBlock({d.block[i]})) return at("block", i) + ": " + *err;
    if (i + 1 == rank) {
      if (d.strides[i] != 1)
        return "the innermost dimension must be contiguous: " + at("strides", i) + " is " +
               std::to_string(d.strides[i]) + ", not 1";
    } else if (d.strides[i] < 1 || (d.strides[i] * bytes) % 16 || d.strides[i] * bytes >= (int64_t{1} << 40)) {
      return at("strides", i) + " is " + std::to_string(d.strides[i]) + " elements (" +
             std::to_string(d.strides[i] * bytes) + " bytes); a positive multiple of 16 bytes below 2^40";
    } else if (d.strides[i] < d.shape[i + 1] * d.strides[i + 1]) {
      return at("strides", i) + " is " + std::to_string(d.strides[i]) + " elements, less than the " +
             std::to_string(d.shape[i + 1] * d.strides[i + 1]) + " of the dimensions inside it";
    }
  }
  if ((d.block.back() * bytes) % 16)
    return "the block's innermost dimension is " + std::to_string(d.block.back() * bytes) +
           " bytes; a multiple of 16";
  if (d.base % 16) return "the base address " + std::to_string(d.base) + " is not 16-byte aligned";
  return std::nullopt;
}

Type descriptorType(const TensorDescriptorFields& d, Type element) { return Type::tensorDesc(d.block, element); }

}  // namespace tessera::ir
