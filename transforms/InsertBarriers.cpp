// insert-barriers: a barrier between every pair of conflicting shared-memory accesses (the membar analysis of
// analysis/Membar.h), and no more: every barrier it leaves is needed on some path. Barriers already in the IR are
// kept, so running the pass twice adds nothing.
#include <algorithm>
#include <iterator>
#include <memory>

#include "transforms/PassManager.h"
#include "transforms/analysis/Membar.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;

class InsertBarriersPass : public Pass {
 public:
  const char* name() const override { return "insert-barriers"; }

  void run(ir::Function& f) override {
    // Barriers were placed against states accumulated over the loop iterations of the analysis; one placed early
    // may have become redundant once a later iteration added another. Drop every inserted barrier the program
    // stays correct without (the check is exact for a fixed set of barriers), so each one left is needed.
    for (Op* barrier : insertConflictBarriers(f)) {
      Block* block = barrier->parentBlock();
      Op* next = std::next(std::find_if(block->ops().begin(), block->ops().end(),
                                        [&](const std::unique_ptr<Op>& o) { return o.get() == barrier; }))->get();
      std::unique_ptr<Op> detached = block->remove(barrier);
      if (hasSharedMemoryConflict(f)) block->insertBefore(next, std::move(detached));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createInsertBarriersPass() { return std::make_unique<InsertBarriersPass>(); }

}  // namespace tessera::transforms
