#include "transforms/analysis/PureSlice.h"

#include <unordered_set>

namespace tessera::transforms {

bool pureSliceOf(ir::Block& body, const std::vector<ir::Value*>& roots, std::vector<ir::Op*>& slice) {
  std::unordered_set<const ir::Op*> needed;
  std::vector<const ir::Value*> work(roots.begin(), roots.end());
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    ir::Op* def = v->definingOp();
    if (!def || def->parentBlock() != &body || !needed.insert(def).second) continue;
    if (!def->info().has(ir::kPure) || def->numRegions() != 0) return false;
    for (const ir::Value* operand : def->operands()) work.push_back(operand);
  }
  for (auto& owned : body.ops())
    if (needed.count(owned.get())) slice.push_back(owned.get());
  return true;
}

void cloneSlice(ir::Builder& b, const std::vector<ir::Op*>& slice,
                std::unordered_map<const ir::Value*, ir::Value*>& mapping) {
  for (ir::Op* op : slice) b.block()->insertBefore(b.insertionPoint(), op->clone(mapping));
}

}  // namespace tessera::transforms
