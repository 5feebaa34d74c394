// Where the emulator's TMA copies land a descriptor block, element by element, against the NVMMA shared layout wgmma
// reads (backends/nvptx/MmaLinearLayouts.h), when the block is copied as the lowering copies it
// (backends/common/LowerTmaCopies.cpp): boxes no wider than the swizzle span (tensorMapInnerBox), box j landing j
// box-sizes into the stage, each swizzled by the tensor map's swizzle. A difference here would make every TMA-fed
// wgmma read wrong operands.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/common/DescriptorParameter.h"
#include "backends/nvptx/MmaLinearLayouts.h"
#include "jit/sim/runtime/TensorMap.h"

namespace tessera {
namespace {

TEST(SimTmaPlacement, BoxesLandInTheNvmmaLayoutOfEverySwizzle) {
  constexpr uint64_t kBase = 1 << 20, kRowPitch = 4096;  // bytes; every row of the tensor far apart
  for (uint32_t swizzle : {32u, 64u, 128u})
    for (uint32_t elementBytes : {1u, 2u, 4u})
      for (int64_t spans : {1, 2, 4})
        for (int64_t lines : {8, 64}) {
          const int64_t inner = spans * swizzle / elementBytes;
          SCOPED_TRACE(std::to_string(lines) + "x" + std::to_string(inner) + " block of " +
                       std::to_string(elementBytes) + "-byte elements, " + std::to_string(swizzle) + "B swizzle");
          const int64_t innerBox = backends::tensorMapInnerBox(inner, elementBytes, swizzle);
          ASSERT_EQ(innerBox * elementBytes, swizzle);
          sim::TensorMapFields map;
          map.rank = 2;
          map.elementBytes = elementBytes;
          map.globalAddress = kBase;
          map.dims = {static_cast<uint64_t>(inner), static_cast<uint64_t>(lines)};
          map.strides = {0, kRowPitch};
          map.box = {static_cast<uint32_t>(innerBox), static_cast<uint32_t>(lines)};
          map.swizzleBytes = swizzle;
          ASSERT_EQ(sim::tensorMapError(map), "");
          const ir::LinearLayout offsetOf =
              backends::nvptx::nvmmaSharedLayout({lines, inner}, 1, elementBytes, swizzle).invert();
          const uint64_t boxBytes = map.boxBytes();
          int64_t landed = 0;
          for (int64_t box = 0; box < inner / innerBox; ++box) {
            const int32_t coordinates[2] = {static_cast<int32_t>(box * innerBox), 0};
            sim::forEachBoxElement(map, coordinates, [&](uint64_t boxByte, uint64_t address, bool inBounds) {
              ASSERT_TRUE(inBounds);
              const int64_t row = static_cast<int64_t>((address - kBase) / kRowPitch);
              const int64_t column = static_cast<int64_t>((address - kBase) % kRowPitch / elementBytes);
              const uint32_t at = sim::swizzledSharedAddress(static_cast<uint32_t>(box * boxBytes + boxByte), swizzle);
              ASSERT_EQ(at % elementBytes, 0u);
              ASSERT_EQ(at / elementBytes, offsetOf.apply({row, column})[0])
                  << "element (" << row << ", " << column << ")";
              ++landed;
            });
          }
          EXPECT_EQ(landed, lines * inner);
        }
}

}  // namespace
}  // namespace tessera
