// Recomputing a tile in another layout from the cheap ops that compute it (constant, arange, splat, the element-wise
// ops, and broadcast, expand_dims and hint over those) instead of converting it, which can cost a shared-memory
// exchange. The layout may be a linear one: a broadcast's operand then takes it over its own shape. The copies go right after their originals, so nothing moves into a loop. remove-layout-conversions
// recomputes what conversions read; stage-copies-in-registers recomputes pointers in the layout it loads in.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "ir/IR.h"
#include "ir/Layout.h"

namespace tessera::transforms {

class Rematerializer {
 public:
  static constexpr int kBudget = 32;  // ops copied for one value at most

  // Whether `v` can be recomputed in `layout` with at most `budget` ops copied (counted down).
  static bool possible(const ir::Value* v, const ir::Layout& layout, int& budget);
  // `v` recomputed in `layout` (`v` itself where it has that layout already); `possible` must hold. Memoized per
  // value and layout. Each original that gets a copy goes into `copied` (it may be dead now).
  ir::Value* recompute(ir::Value* v, const ir::Layout& layout, std::set<ir::Op*>& copied);
  // Drops the memoized copies that involve `erased`'s results; call it before erasing an op.
  void forget(const ir::Op* erased);

 private:
  std::map<std::pair<ir::Value*, std::string>, ir::Value*> copies_;  // (value, layout) -> its copy in that layout
};

}  // namespace tessera::transforms
