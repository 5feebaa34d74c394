// order-consumer-groups: the consumers of a warp_specialize that form several groups (wgmma's warpgroups:
// LayoutPolicy::WarpRoles::groupWarps) take turns issuing the first of chained dots, as FlashAttention-3's
// "ping-pong" schedule does. Attention's consumer loop alternates tensor-core work (S = Q K^T, then P V) with a
// softmax on the FMA and MUFU units; groups left to themselves run in step, all waiting for their dots at once and
// leaving the tensor cores idle during the softmax. Handing the turn around puts group g + 1's Q K^T behind group
// g's, so that one group's softmax runs while the next one's dot does:
//
//   for ... {                                    turn_pass {groups = G, only_group = G - 1}
//     %s = dot %q, %k, %z                        for ... {
//     ... softmax, P V ...              ->           turn_wait {groups = G}              (this group's turn)
//   }                                              %s.0 = dot %q, %k, %z {pending = 1}  (issued, in flight)
//                                                  turn_pass {groups = G}              (the next group's turn)
//                                                  %s = dot_wait %s.0 {pending = 0}
//                                                  ... softmax, P V ...
//                                                }
//                                                turn_wait {groups = G, only_group = 0}
//
// The turn passes as soon as the dot is issued (the dot leaves its group in flight, pending = 1, which completes
// the older groups: the previous iteration's P V), so the next group's dot queues right behind it. Group G - 1
// hands group 0 its first turn before the loop, and group 0 takes back the last pass after it: every turn barrier
// completes, also in a persistent kernel's next tile. Only dots the target runs asynchronously are ordered (the
// turn would otherwise pass only once the dot is complete), and only where the consumers form 2 groups or more.
// A dot pipeline-loops left in flight already (attention_fwd_desc_overlap's Q K^T of the next key block, carried
// to the iteration that waits for it) takes turns alike, with no wait added after the pass.
#include <algorithm>

#include "ir/Builder.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
#include "transforms/analysis/ChainedDots.h"

namespace tessera::transforms {
namespace {

using ir::Attr;
using ir::Op;
using ir::OpKind;

class OrderConsumerGroupsPass : public Pass {
 public:
  explicit OrderConsumerGroupsPass(const PassOptions& options)
      : policy_(options.layoutPolicy), numWarps_(options.numWarps), enabled_(options.consumerTurns) {}
  const char* name() const override { return "order-consumer-groups"; }

  void run(ir::Function& f) override {
    Op* specialized = nullptr;
    f.walk([&](Op* op) {
      if (op->is(OpKind::WarpSpecialize)) specialized = op;
    });
    if (!specialized || !policy_ || !enabled_) return;
    const std::optional<LayoutPolicy::WarpRoles> roles = policy_->warpRoles(numWarps_);
    if (!roles || roles->groupWarps <= 0 || numWarps_ % roles->groupWarps) return;
    groups_ = numWarps_ / roles->groupWarps;
    if (groups_ < 2) return;
    // The main loops; not a persistent kernel's tile loop (whose body's first dot, attention_fwd_desc_overlap's
    // scores of a key loop's first block, is not one the turns order: they go around the key loops in it).
    std::vector<Op*> loops;
    for (auto& op : specialized->region(1)->ops())
      op->walk([&](Op* inner) {
        if (inner->is(OpKind::For) && !inner->hasAttr(ir::kPersistentTilesAttr)) loops.push_back(inner);
      });
    for (Op* loop : loops)
      if (Op* dot = firstChainedDot(*loop)) takeTurns(*loop, *dot);
  }

 private:
  // The first dot of the loop's body that starts a chain (attention's Q K^T) and that the target runs
  // asynchronously; null where there is none. It may be in flight already: pipeline-loops leaves a fresh product
  // that the next iteration reads pending (attention_fwd_desc_overlap's Q K^T of the next key block).
  Op* firstChainedDot(Op& loop) const {
    for (auto& op : loop.region(0)->ops())
      if (op->is(OpKind::Dot))
        return feedsDotOperandA(*op) && policy_->dotIsAsynchronous(*op) ? op.get() : nullptr;
    return nullptr;
  }

  ir::AttrDict turn(std::optional<int64_t> onlyGroup = std::nullopt) const {
    ir::AttrDict attrs{{"groups", Attr::integer(groups_)}};
    if (onlyGroup) attrs.emplace("only_group", Attr::integer(*onlyGroup));
    return attrs;
  }

  void takeTurns(Op& loop, Op& dot) {
    ir::Block& body = *dot.parentBlock();
    ir::Builder before(&body, &dot);
    before.setLoc(dot.loc());
    before.create(OpKind::TurnWait, {}, {}, turn());
    // A dot already in flight is waited for where pipeline-loops put its wait (the next iteration).
    const bool inFlightAlready = dot.hasAttr("pending") && dot.intAttr("pending") > 0;
    dot.setAttr("pending", Attr::integer(1));
    Op* next = nextOp(dot);
    ir::Builder after(&body, next);
    after.setLoc(dot.loc());
    after.create(OpKind::TurnPass, {}, {}, turn());
    if (!inFlightAlready) {
      ir::Value* inFlight = dot.result(0);
      Op* wait = after.create(OpKind::DotWait, {inFlight}, {inFlight->type()}, {{"pending", Attr::integer(0)}});
      std::vector<ir::Use> uses = inFlight->uses();
      for (const ir::Use& use : uses)
        if (use.user != wait) use.user->setOperand(use.operandIndex, wait->result(0));
    }

    ir::Builder outside(loop.parentBlock(), &loop);
    outside.setLoc(loop.loc());
    outside.create(OpKind::TurnPass, {}, {}, turn(groups_ - 1));
    ir::Builder afterLoop(loop.parentBlock(), nextOp(loop));
    afterLoop.setLoc(loop.loc());
    afterLoop.create(OpKind::TurnWait, {}, {}, turn(0));
  }

  static Op* nextOp(Op& op) {
    ir::Block* block = op.parentBlock();
    auto it = std::find_if(block->ops().begin(), block->ops().end(),
                           [&](const std::unique_ptr<Op>& o) { return o.get() == &op; });
    return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
  }

  std::shared_ptr<const LayoutPolicy> policy_;
  int64_t numWarps_ = 0;
  bool enabled_ = true;
  int64_t groups_ = 0;
};

}  // namespace

std::unique_ptr<Pass> createOrderConsumerGroupsPass(const PassOptions& options) {
  return std::make_unique<OrderConsumerGroupsPass>(options);
}

}  // namespace tessera::transforms
