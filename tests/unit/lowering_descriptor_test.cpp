// Tensor descriptor parameters in the lowering: their bytes (backends/common/DescriptorParameter.h), which the
// runtimes write and desc_field reads.
#include <gtest/gtest.h>

#include "backends/common/DescriptorParameter.h"
#include "ir/Types.h"

namespace tessera::backends {
namespace {

TEST(DescriptorParameter, Bytes) {
  // Fields only: base, then rank shapes, then rank strides.
  EXPECT_EQ(descriptorParamBytes(1, false), 24);
  EXPECT_EQ(descriptorParamBytes(5, false), 88);
  EXPECT_EQ(descriptorParamAlign(false), 8);
  EXPECT_EQ(descriptorShapeOffset(1), 16);
  EXPECT_EQ(descriptorStrideOffset(2, 0), 24);
  // With a tensor map after the fields of any rank.
  EXPECT_LE(descriptorParamBytes(ir::kMaxDescriptorRank, false), kDescriptorMapOffset);
  EXPECT_EQ(descriptorParamBytes(2, true), kDescriptorMapOffset + kTensorMapBytes);
  EXPECT_EQ(descriptorParamAlign(true), 64);
  EXPECT_EQ(kDescriptorMapOffset % kTensorMapAlign, 0);
}

}  // namespace
}  // namespace tessera::backends
