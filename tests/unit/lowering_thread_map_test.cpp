// The thread maps of the shared lowering (backends/common/ThreadMap.h). The NVPTX backend's kernels (vector add,
// reductions, layout conversions, loops) are lit tests in tests/lit/nvptx.
#include <gtest/gtest.h>

#include "backends/common/ThreadMap.h"
#include "ir/Layout.h"

namespace tessera::testing {
namespace {

// The linear form the lowering derives from ir::Layout must reproduce coords() and isOwner() exactly.
TEST(LoweringThreadMap, MatchesLayoutCoordinatesAndOwnership) {
  using backends::ThreadMap;
  ir::Layout blocked = ir::Layout::blocked({1, 4}, {2, 16}, {4, 1}, {1, 0});
  ir::Layout wide = ir::Layout::blocked({2, 2}, {4, 8}, {2, 2}, {0, 1});
  std::vector<std::pair<ir::Layout, std::vector<int64_t>>> cases = {
      {blocked, {64, 64}}, {blocked, {4, 16}}, {blocked, {2, 2}}, {wide, {32, 8}}, {wide, {1, 1}},
      {ir::Layout::slice(1, blocked), {64}}, {ir::Layout::slice(0, blocked), {16}}, {ir::Layout::slice(0, wide), {4}}};
  for (const auto& [layout, shape] : cases) {
    ThreadMap m = ThreadMap::build(layout, shape, "test");
    ASSERT_EQ(m.numRegs(), layout.registersPerThread(shape));
    for (int64_t w = 0; w < layout.numWarps(); ++w)
      for (int64_t l = 0; l < layout.warpSize(); ++l)
        for (int64_t r = 0; r < m.numRegs(); ++r) {
          ASSERT_EQ(m.coordsOf(r, w, l), layout.coords(shape, w, l, r)) << layout.str();
          bool owner = m.regOwner[r] && (l & m.replicatedLaneMask()) == 0 && (w & m.replicatedWarpMask()) == 0;
          ASSERT_EQ(owner, layout.isOwner(shape, w, l, r)) << layout.str() << " w=" << w << " l=" << l << " r=" << r;
        }
  }
}

}  // namespace
}  // namespace tessera::testing
