// stage-copies-in-registers: on a target whose async_copy is not asynchronous (LayoutPolicy::copiesAsynchronously
// false: AMDGPU lowers it as a global load and an LDS store), the copies pipeline-loops issues ahead in a loop are
// split so that the loads' latency hides behind the iteration's work, as Triton's AMD stream pipeliner does:
//
//   for k { async_wait; %t = async_copy %p(i+S-1), %buf, %w, %m; %g = async_commit_group %t
//           %a = local_load %buf, %r; ...dot...; yield }
//
// becomes
//
//   for k { async_wait; %v = load %p(i+S-1), %m                (issued before the work, in flight during it)
//           %a = local_load %buf, %r; ...dot...
//           %t = local_store %v, %buf, %w; %g = async_commit_group %t; yield }
//
// The loaded tile waits in registers (the pointers' layout) until the end of the iteration. A copy is ahead when
// its group is waited for by no op of this iteration (its commit group's token is unused: a later iteration's
// async_wait counts it), so nothing in the iteration reads the stage it fills (pipeline-loops: stage (i+S-1) % S,
// while the iteration reads stage i % S) and the store may move to the end. Masked-off elements load as zero, what
// the copy filled them with. insert-barriers then orders the store after the previous iteration's reads of its
// stage and before the next iteration's reads (analysis/Membar.h: one barrier per iteration, as before).
#include <algorithm>

#include "ir/Builder.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;

bool containsWait(Op& op) {
  bool found = false;
  op.walk([&](Op* inner) { found = found || inner->is(OpKind::AsyncWait); });
  return found;
}

// The commit group of `copy` when the copy is ahead (see above): its only user is a group no op uses, and no
// async_wait follows it in the iteration, not even inside a later op (the prologue copies of an inner pipelined
// loop, in the body of an outer loop, are waited for in the inner loop).
Op* aheadGroup(Op& copy) {
  const std::vector<ir::Use>& uses = copy.result(0)->uses();
  if (uses.size() != 1 || !uses[0].user->is(OpKind::AsyncCommitGroup)) return nullptr;
  Op* group = uses[0].user;
  if (group->result(0)->hasUses() || group->parentBlock() != copy.parentBlock()) return nullptr;
  Block& body = *copy.parentBlock();
  auto it = std::find_if(body.ops().begin(), body.ops().end(), [&](const auto& o) { return o.get() == &copy; });
  for (; it != body.ops().end(); ++it)
    if (containsWait(**it)) return nullptr;
  return group;
}

void stageCopies(Block& body) {
  Op* end = body.terminator();
  std::vector<std::pair<Op*, Op*>> copies;  // (copy, its group)
  for (auto& owned : body.ops())
    if (owned->is(OpKind::AsyncCopy))
      if (Op* group = aheadGroup(*owned)) copies.push_back({owned.get(), group});
  std::vector<Op*> groups;  // in body order, each moved once
  for (auto [copy, group] : copies) {
    // async_copy %ptrs, %buffer, %stage[, %mask]
    ir::Value* ptrs = copy->operand(0);
    std::vector<ir::Value*> loadOperands{ptrs};
    if (copy->numOperands() > 3) loadOperands.push_back(copy->operand(3));
    ir::Value* loaded = ir::Builder(&body, copy).create1(OpKind::Load, loadOperands,
                                                         ptrs->type().withElement(ptrs->type().pointee()));
    loaded->definingOp()->setLoc(copy->loc());
    Op* store = ir::Builder(&body, end).create(OpKind::LocalStore, {loaded, copy->operand(1), copy->operand(2)},
                                               {copy->result(0)->type()});
    store->setLoc(copy->loc());
    copy->result(0)->replaceAllUsesWith(store->result(0));
    body.erase(copy);
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
  }
  // Each group after the stores it commits.
  for (Op* group : groups) body.insertBefore(end, body.remove(group));
}

class StageCopiesInRegistersPass : public Pass {
 public:
  explicit StageCopiesInRegistersPass(const PassOptions& options) : policy_(options.layoutPolicy) {}
  const char* name() const override { return "stage-copies-in-registers"; }

  void run(ir::Function& f) override {
    if (!policy_ || policy_->copiesAsynchronously()) return;
    std::vector<Block*> bodies;
    f.walk([&](Op* op) {
      if (op->is(OpKind::For)) bodies.push_back(op->region(0));
    });
    for (Block* body : bodies) stageCopies(*body);
  }

 private:
  std::shared_ptr<const LayoutPolicy> policy_;
};

}  // namespace

std::unique_ptr<Pass> createStageCopiesInRegistersPass(const PassOptions& options) {
  return std::make_unique<StageCopiesInRegistersPass>(options);
}

}  // namespace tessera::transforms
