// Tensor descriptors on the host (ir/TensorDescriptor.h): the type a kernel specializes on, the rules every
// runtime checks at launch (those of a TMA tensor map), and the bytes of the kernel parameter.
#include <gtest/gtest.h>

#include "ir/Error.h"
#include "ir/TensorDescriptor.h"

namespace tessera::ir {
namespace {

// A 100 x 72 f16 matrix, row-major, read in 64 x 32 blocks.
TensorDescriptorFields matrix() { return {4096, {100, 72}, {72, 1}, {64, 32}}; }

std::string errorOf(const TensorDescriptorFields& d, Type element = Type::f16()) {
  return descriptorError(d, element).value_or("");
}

TEST(TensorDescriptor, TypeHoldsTheBlockAndTheElement) {
  Type t = descriptorType(matrix(), Type::f16());
  EXPECT_TRUE(t.isTensorDesc());
  EXPECT_FALSE(t.isScalar() || t.isTile() || t.isFloat() || t.isInt() || t.isPtr());
  EXPECT_EQ(t.str(), "tensordesc<64x32xf16>");
  EXPECT_EQ(t.blockShape(), (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(t.element(), Type::f16());
  EXPECT_EQ(t, Type::tensorDesc({64, 32}, Type::f16()));  // interned
  EXPECT_THROW(Type::tensorDesc({}, Type::f16()), Error);
  EXPECT_THROW(Type::tensorDesc({1, 1, 1, 1, 1, 1}, Type::f16()), Error);
  EXPECT_THROW(Type::tensorDesc({512}, Type::f16()), Error);
  EXPECT_THROW(Type::tensorDesc({48}, Type::f16()), Error);
  EXPECT_THROW(Type::tensorDesc({16}, Type::ptr(Type::f16())), Error);
  EXPECT_NO_THROW(Type::tensorDesc({1, 2, 4, 8, 256}, Type::scalar(ScalarKind::F8E4M3)));
}

TEST(TensorDescriptor, AValidDescriptorHasNoError) {
  EXPECT_EQ(descriptorError(matrix(), Type::f16()), std::nullopt);
  EXPECT_EQ(descriptorError({16, {7}, {1}, {4}}, Type::f32()), std::nullopt);
  EXPECT_EQ(descriptorError({16, {2, 3, 4, 5, 8}, {960, 320, 80, 16, 1}, {1, 1, 2, 4, 8}}, Type::scalar(ScalarKind::I16)),
            std::nullopt);
}

TEST(TensorDescriptor, EachRuleNamesTheOffendingField) {
  auto with = [](auto change) {
    TensorDescriptorFields d = matrix();
    change(d);
    return d;
  };
  EXPECT_EQ(errorOf({16, {}, {}, {}}), "rank 0; a tensor descriptor has 1 to 5 dimensions");
  EXPECT_EQ(errorOf({16, {1, 1, 1, 1, 1, 8}, {8, 8, 8, 8, 8, 1}, {1, 1, 1, 1, 1, 8}}),
            "rank 6; a tensor descriptor has 1 to 5 dimensions");
  EXPECT_EQ(errorOf(with([](auto& d) { d.block = {64}; })),
            "shape, strides and block must have the same rank; they have 2, 2 and 1 dimensions");
  EXPECT_EQ(errorOf(with([](auto& d) { d.shape[0] = 0; })), "shape[0] is 0; 1 to 2^32");
  EXPECT_EQ(errorOf(with([](auto& d) { d.block[0] = 512; })),
            "block[0]: block dimension 512 is not a power of two between 1 and 256");
  EXPECT_EQ(errorOf(with([](auto& d) { d.strides = {1, 72}; })),
            "the innermost dimension must be contiguous: strides[1] is 72, not 1");
  EXPECT_EQ(errorOf(with([](auto& d) { d.strides[0] = 76; })),
            "strides[0] is 76 elements (152 bytes); a positive multiple of 16 bytes below 2^40");
  EXPECT_EQ(errorOf(with([](auto& d) { d.strides[0] = 64; })),
            "strides[0] is 64 elements, less than the 72 of the dimensions inside it");
  EXPECT_EQ(errorOf(with([](auto& d) { d.block[1] = 4; })),
            "the block's innermost dimension is 8 bytes; a multiple of 16");
  EXPECT_EQ(errorOf(with([](auto& d) { d.base = 4104; })), "the base address 4104 is not 16-byte aligned");
  // The byte rules scale with the element: 4 f32 are 16 bytes, 4 f16 are not.
  EXPECT_EQ(errorOf({16, {8, 4}, {4, 1}, {8, 4}}, Type::f32()), "");
  EXPECT_EQ(errorOf({16, {8, 4}, {4, 1}, {8, 4}}, Type::f16()),
            "strides[0] is 4 elements (8 bytes); a positive multiple of 16 bytes below 2^40");
}
}  // namespace
}  // namespace tessera::ir
