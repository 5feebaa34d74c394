// ping-pong-consumers: a persistent, warp-specialized kernel's consumers become two groups of num_warps warps, each
// running its own tiles, as CUTLASS's "ping-pong" kernels do. One group's epilogue (the accumulator's conversion,
// the stores) then runs beside the other group's main loop, so the tensor cores are not idle while a tile is
// written. The groups take turns twice per tile: with their main loops (sequence 0), so that the tensor cores work
// on one tile at a time and each tile is done as early as possible, and with their epilogues (sequence 1), which
// share their shared-memory scratch (an exchange, a TMA store's staging: room for two would not fit beside the
// operand stages).
//
// The producer still runs every tile of the program in order, so the stages of tile i are filled after those of
// tile i - 1: a group's iterations count on from the other group's tiles, which it skips but whose iteration
// counts (the tile loop's carried values, pure: analysis/ProgramIterations.h) it recomputes:
//
//   warp_specialize {...} {producer}          warp_specialize {..., consumer_groups = 2} {producer} {
//   {                                           %g = consumer_group
//     for %t = %p to %tiles step %P             turn_pass {groups = 2, only_group = 1}               (group 0 starts)
//         iter(%base = 0) {persistent_tiles} {  turn_pass {groups = 2, only_group = 1, sequence = 1}
//       ... tile setup ...                      for %t ... iter(%base = 0) {
//       for %k ... { main loop }       ->         %mine = ((%t - %p) / %P) % 2 == %g
//       ... epilogue ...                          %next = if %mine {
//       yield %base + trips                         ... tile setup ...; turn_wait {groups = 2}
//     }                                             for %k ... { main loop }
//   }                                               turn_pass {groups = 2}; turn_wait {groups = 2, sequence = 1}
//                                                   ... epilogue ...; turn_pass {groups = 2, sequence = 1}
//                                                   yield %base + trips
//                                                 } else { yield %base + trips (recomputed) }
//                                                 yield %next
//                                               }
//                                               if (tiles of this program) % 2 == %g { turn_wait; turn_wait {sequence = 1} }
//                                             }
//
// The group that would run the program's next tile takes back the turns the last one passed, so every turn
// barrier completes. num_warps stays the warps every layout is planned for, one group's; the program runs
// 2 * num_warps consumer warps and the target's producers, whose registers the target splits again
// (LayoutPolicy::warpRoles of all the consumer warps). Shared memory the tile uses before its epilogue (beside the
// operand stages) would be the other group's epilogue's too: that is refused.
#include <algorithm>

#include "ir/Builder.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
#include "transforms/analysis/ProgramIterations.h"
#include "transforms/analysis/PureSlice.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {
namespace {

using ir::Attr;
using ir::Op;
using ir::OpKind;
using ir::Value;

constexpr int64_t kGroups = 2;
constexpr int64_t kMainLoopTurns = 0;
constexpr int64_t kEpilogueTurns = 1;

class PingPongConsumersPass : public Pass {
 public:
  explicit PingPongConsumersPass(const PassOptions& options) : options_(options) {}
  const char* name() const override { return "ping-pong-consumers"; }

  void run(ir::Function& f) override {
    if (!options_.pingPong) return;
    Op* ws = nullptr;
    for (auto& op : f.body()->ops())
      if (op->is(OpKind::WarpSpecialize)) ws = op.get();
    if (!ws)
      throw Error("ping_pong needs @" + f.name() +
                      " warp-specialized (warp_specialize: a loop whose dot operands all arrive by TMA)",
                  f.loc());
    if (ws->hasAttr("consumer_groups")) return;  // done already
    Op* tiles = nullptr;
    for (auto& op : ws->region(1)->ops())
      if (op->is(OpKind::For) && op->hasAttr(ir::kPersistentTilesAttr)) tiles = op.get();
    if (!tiles) throw Error("ping_pong needs a persistent kernel (persistent): the groups take turns over tiles", f.loc());
    splitRegisters(*ws, f);
    alternateTiles(*ws, *tiles);
  }

 private:
  // The program now runs kGroups times num_warps consumer warps: the target splits the registers again.
  void splitRegisters(Op& ws, const ir::Function& f) const {
    const std::optional<LayoutPolicy::WarpRoles> roles =
        options_.layoutPolicy ? options_.layoutPolicy->warpRoles(int64_t{options_.numWarps} * kGroups) : std::nullopt;
    if (!roles) throw Error("ping_pong: the target does not reallocate registers between warps", f.loc());
    // One warpgroup per group, as CUTLASS's ping-pong kernels: with two groups of two, every consumer thread would
    // keep about 100 registers, too few for a wgmma of a 128x256 tile (ptxas refuses it).
    if (roles->groupWarps > 0 && options_.numWarps != roles->groupWarps)
      throw Error("ping_pong runs two groups of num_warps consumer warps, one warpgroup each: num_warps must be " +
                      std::to_string(roles->groupWarps) + ", got " + std::to_string(options_.numWarps),
                  f.loc());
    ws.setAttr("consumer_groups", Attr::integer(kGroups));
    ws.setAttr("producer_warps", Attr::integer(roles->producerWarps));
    ws.setAttr("producer_registers", Attr::integer(roles->producerRegisters));
    ws.setAttr("consumer_registers", Attr::integer(roles->consumerRegisters));
  }

  // Shared memory `op` or an op nested in it uses besides the operand stages the producer fills: its scratch, or a
  // shared buffer it copies or stores into (one buffer for both groups: attention's Q), which would be in use
  // beside the other group's tile.
  const Op* scratchUser(Op& op) const {
    const Op* found = nullptr;
    op.walk([&](Op* inner) {
      if (!found && (scratchBytes(*inner, options_) > 0 || inner->is(OpKind::AsyncCopy) ||
                     inner->is(OpKind::LocalStore)))
        found = inner;
    });
    return found;
  }

  static ir::AttrDict turn(int64_t sequence, std::optional<int64_t> onlyGroup = std::nullopt) {
    ir::AttrDict attrs{{"groups", Attr::integer(kGroups)}};
    if (onlyGroup) attrs.emplace("only_group", Attr::integer(*onlyGroup));
    if (sequence) attrs.emplace("sequence", Attr::integer(sequence));
    return attrs;
  }

  void alternateTiles(Op& ws, Op& tiles) const {
    ir::Block& tileBody = *tiles.region(0);
    Op* yield = tileBody.terminator();
    std::vector<Op*> ops;  // the tile's work: everything but the yield
    for (auto& op : tileBody.ops())
      if (op.get() != yield) ops.push_back(op.get());
    auto isLoop = [](const Op* op) { return op->is(OpKind::For); };
    auto firstLoop = std::find_if(ops.begin(), ops.end(), isLoop);
    auto lastLoop = std::find_if(ops.rbegin(), ops.rend(), isLoop);
    if (firstLoop == ops.end()) throw Error("ping_pong: the tile has no main loop", tiles.loc());
    for (auto it = ops.begin(); it != lastLoop.base(); ++it)
      if (const Op* user = scratchUser(**it))
        throw Error("ping_pong: '" + std::string(user->name()) + "'" +
                        " uses shared memory before the tile's epilogue (beside the operand stages), which the other "
                        "consumer group may be using at the same time",
                    user->loc());
    // What the tile yields (the iteration counts so far) is recomputed for the other group's tiles.
    std::vector<Value*> carried(yield->operands().begin(), yield->operands().end());
    std::vector<Op*> slice;
    if (!pureSliceOf(tileBody, carried, slice))
      throw Error("ping_pong: the tile loop carries a value that the other group cannot recompute (not pure)",
                  tiles.loc());

    ir::Block& consumers = *ws.region(1);
    ir::Builder outside(&consumers, &tiles);
    outside.setLoc(tiles.loc());
    Value* group = outside.create1(OpKind::ConsumerGroup, {}, ir::Type::i32());
    group->setNameHint("group");
    outside.create(OpKind::TurnPass, {}, {}, turn(kMainLoopTurns, kGroups - 1));
    outside.create(OpKind::TurnPass, {}, {}, turn(kEpilogueTurns, kGroups - 1));

    // Tile i of the program is group i % 2's.
    ir::Builder top(&tileBody, tileBody.front());
    top.setLoc(tiles.loc());
    Value* index = top.binary(OpKind::Div, top.binary(OpKind::Sub, tileBody.argument(0), tiles.operand(0)),
                              tiles.operand(2));
    Value* parity = top.binary(OpKind::Rem, index, top.constantInt(kGroups, ir::Type::i32()));
    Value* mine = top.cmp("eq", parity, group);
    mine->setNameHint("mine");
    std::vector<ir::Type> carriedTypes;
    for (Value* v : carried) carriedTypes.push_back(v->type());
    Op* branch = top.ifOp(mine, carriedTypes);

    ir::Block& own = *branch->region(0);
    for (Op* op : ops) own.append(tileBody.remove(op));
    ir::Builder(&own, nullptr).yield(carried);
    ir::Builder mainLoopStart(&own, *firstLoop);
    mainLoopStart.setLoc((*firstLoop)->loc());
    mainLoopStart.create(OpKind::TurnWait, {}, {}, turn(kMainLoopTurns));
    // The main loop's turn passes once its dots are issued; the epilogue's is waited for where the first op that
    // needs shared memory starts (after the loop's tail hands its last stage back to the producer).
    Op* afterMainLoop = lastLoop.base() == ops.end() ? own.terminator() : *lastLoop.base();
    ir::Builder mainLoopEnd(&own, afterMainLoop);
    mainLoopEnd.setLoc((*lastLoop)->loc());
    mainLoopEnd.create(OpKind::TurnPass, {}, {}, turn(kMainLoopTurns));
    auto firstScratch = std::find_if(lastLoop.base(), ops.end(), [&](Op* op) { return scratchUser(*op) != nullptr; });
    ir::Builder epilogueStart(&own, firstScratch == ops.end() ? own.terminator() : *firstScratch);
    epilogueStart.setLoc(firstScratch == ops.end() ? tiles.loc() : (*firstScratch)->loc());
    epilogueStart.create(OpKind::TurnWait, {}, {}, turn(kEpilogueTurns));
    ir::Builder epilogueEnd(&own, own.terminator());
    epilogueEnd.setLoc(tiles.loc());
    epilogueEnd.create(OpKind::TurnPass, {}, {}, turn(kEpilogueTurns));

    ir::Builder skipped(branch->region(1), nullptr);
    skipped.setLoc(tiles.loc());
    std::unordered_map<const Value*, Value*> mapping;
    cloneSlice(skipped, slice, mapping);
    std::vector<Value*> recomputed;
    for (Value* v : carried) recomputed.push_back(mapping.count(v) ? mapping.at(v) : v);
    skipped.yield(recomputed);
    for (unsigned i = 0; i < yield->numOperands(); ++i) yield->setOperand(i, branch->result(i));

    // The group that would run the next tile takes back the last turns passed.
    ir::Builder after(&consumers, nextOp(tiles));
    after.setLoc(tiles.loc());
    Value* count = tripCount(after, tiles.operand(0), tiles.operand(1), tiles.operand(2));
    Value* nextGroup = after.binary(OpKind::Rem, count, after.constantInt(kGroups, ir::Type::i32()));
    Op* takeBack = after.ifOp(after.cmp("eq", nextGroup, group), {});
    ir::Builder last(takeBack->region(0), nullptr);
    last.setLoc(tiles.loc());
    last.create(OpKind::TurnWait, {}, {}, turn(kMainLoopTurns));
    last.create(OpKind::TurnWait, {}, {}, turn(kEpilogueTurns));
    last.yield({});
    ir::Builder(takeBack->region(1), nullptr).yield({});
  }

  static Op* nextOp(Op& op) {
    ir::Block* block = op.parentBlock();
    auto it = std::find_if(block->ops().begin(), block->ops().end(),
                           [&](const std::unique_ptr<Op>& o) { return o.get() == &op; });
    return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
  }

  PassOptions options_;
};

}  // namespace

std::unique_ptr<Pass> createPingPongConsumersPass(const PassOptions& options) {
  return std::make_unique<PingPongConsumersPass>(options);
}

}  // namespace tessera::transforms
