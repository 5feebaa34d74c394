// async-copy-dot-operands: a `load` whose only consumer is a dot operand (directly, or through single-use casts and
// layout conversions) becomes an asynchronous copy into a shared buffer and a `local_load` from it, when the target
// can read that operand from shared memory (LayoutPolicy::dotOperandSharedLayout, which also gives the buffer's
// swizzled layout). The operand then never passes through registers on its way to the dot (the target's dot lowering
// reads the buffer), and pipeline-loops can issue the copies of later loop iterations ahead.
//
//   %x = load %ptrs, %mask : tile<MxKxf16, #blocked>            %buf = local_alloc : smem<1xMxKxf16, #shared{...}>
//   %a = convert_layout %x : tile<MxKxf16, #L>           ->    %t = async_copy %ptrs, %buf, %c0, %mask
//   %d = dot %a, ...                                            %g = async_commit_group %t
//                                                               %w = async_wait %g {pending = 0}
//                                                               %a = local_load %buf, %c0, %w : tile<MxKxf16, #L>
//
// A load that several dots read (attention's Q, loaded once and used by the dots of both key loops), directly or
// through layout conversions only, is copied once when the target asks the same shared layout for every one of
// those operands: the copy stays where the load was, and each dot gets its own local_load of the buffer, right
// before it (a target that reads the operand straight from the buffer, by a matrix descriptor, reads nothing more).
//
// Masked-off elements of a copy are zero (cp.async's zero fill), so a load with an `other` operand qualifies only
// when `other` is the constant 0. Runs after the layout passes: the copy keeps the load's coalesced pointer layout,
// and local_load produces the operand directly in the layout the dot takes it in. An A operand the dot takes from
// registers (marked `a_in_registers` by assign-layouts) stays where it is.
//
// A `desc_load` still here is one expand-descriptor-loads kept for a TMA copy (LayoutPolicy::dotOperandTmaSwizzle):
// it becomes a copy of the descriptor's block that one thread issues and every thread waits for on an mbarrier:
//
//   %x = desc_load %d, %m, %k : tile<MxKxf16, #blocked>       %buf = local_alloc : smem<1xMxKxf16, #linear_shared...>
//   %a = convert_layout %x : tile<MxKxf16, #L>          ->    %bars = mbarrier_alloc : mbarriers<1>
//                                                             %t = async_tma_copy %d, %m, %k, %buf, %c0, %bars
//                                                             %w = mbarrier_wait %bars, %c0, %parity, %t
//                                                             %a = local_load %buf, %c0, %w : tile<MxKxf16, #L>
//
// The barrier completes one phase per copy, so the wait's parity is the number of copies before this one, mod 2:
// 0 outside loops, ((%iv - lb) / step) & 1 in a `for` in the function's body, and that plus the loop's iterations
// in earlier tiles in a `for` in a persistent kernel's tile loop, and the tile's iteration, mod 2, for a copy once
// per tile (analysis/ProgramIterations.h; the only places expand-descriptor-loads keeps a desc_load). The barriers
// are allocated in the function's body, once per program.
// Out-of-bounds elements of the block land as zeros (TMA's fill).
#include <vector>

#include "ir/Builder.h"
#include "ir/Layout.h"
#include "ir/TensorDescriptor.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
#include "transforms/analysis/ProgramIterations.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

bool isZeroConstant(const Value* v) {
  const Op* def = v->definingOp();
  if (!def || !def->is(OpKind::Constant) || !def->hasAttr("value")) return false;
  const ir::Attr& value = def->attr("value");
  return (value.isInt() && value.getInt() == 0) || (value.isFloat() && value.getFloat() == 0.0);
}

// The op of `block` that is `op` or holds it.
Op* outermostAncestorIn(const ir::Block& block, Op* op) {
  while (op->parentBlock() != &block) op = op->parentOp();
  return op;
}

// A load the rewrite can turn into an asynchronous copy: from global memory, not volatile, zero (or no) `other`.
bool isCopyableLoad(const Op& load) {
  if (!load.is(OpKind::Load) || !load.operand(0)->type().isTile()) return false;
  if (load.operand(0)->type().addrSpace() != ir::kGlobalAddrSpace) return false;
  if (load.hasAttr("volatile") && load.attr("volatile").isBool() && load.attr("volatile").getBool()) return false;
  return load.numOperands() < 3 || isZeroConstant(load.operand(2));
}

// The ops between a dot operand and the load it comes from (casts and layout conversions, each the only user of
// its operand), nearest the load first; empty with `load` null when the operand does not come from such a load.
// A desc_load's block may also reach the dot through views that keep its bytes where TMA lands them: reshapes
// that only drop or add unit dimensions (a [1, BN, d] block used as a [BN, d] tile) and a transpose of the 2-d
// result (attention's K^T, whose buffer is then the operand's shape, its contiguous dimension the block's
// innermost), with no cast.
struct OperandChain {
  Op* load = nullptr;
  std::vector<Op*> between;
  bool transposed = false;  // a trans between: the operand is the block transposed
};

OperandChain chainOf(Value* operand) {
  OperandChain chain;
  bool viewed = false, cast = false;
  Value* v = operand;
  while (Op* def = v->definingOp()) {
    if (v->uses().size() != 1) return {};
    if (def->is(OpKind::DescLoad)) {  // kept by expand-descriptor-loads for a TMA copy
      if (viewed && cast) return {};
      chain.load = def;
      return chain;
    }
    if (def->is(OpKind::Load)) {
      if (!isCopyableLoad(*def) || viewed) return {};
      chain.load = def;
      return chain;
    }
    if (isDescriptorBlockView(*def)) {
      viewed = true;
      if (def->is(OpKind::Trans)) chain.transposed = !chain.transposed;
    } else if (def->is(OpKind::Cast)) {
      cast = true;
    } else if (!def->is(OpKind::ConvertLayout)) {
      return {};
    }
    chain.between.insert(chain.between.begin(), def);
    v = def->operand(0);
  }
  return {};
}

// The dot operands a load reaches when every use of it, and of each layout conversion between, is a conversion or
// operand 0 or 1 of a dot: the loaded tile feeds those operands and nothing else. Empty otherwise.
struct SharedLoad {
  Op* load = nullptr;
  std::vector<std::pair<Op*, unsigned>> operands;  // (dot, index)
  std::vector<Op*> conversions;                    // between the load and the dots, the load's side first
};

SharedLoad sharedLoadOf(Value* operand) {
  Value* v = operand;
  while (Op* def = v->definingOp()) {
    if (def->is(OpKind::Load)) break;
    if (!def->is(OpKind::ConvertLayout)) return {};
    v = def->operand(0);
  }
  Op* load = v->definingOp();
  if (!load || !isCopyableLoad(*load)) return {};
  SharedLoad shared;
  shared.load = load;
  std::vector<Value*> work{load->result(0)};
  while (!work.empty()) {
    Value* value = work.back();
    work.pop_back();
    for (const ir::Use& use : value->uses()) {
      if (use.user->is(OpKind::ConvertLayout)) {
        shared.conversions.push_back(use.user);
        work.push_back(use.user->result(0));
      } else if (use.user->is(OpKind::Dot) && use.operandIndex < 2) {
        shared.operands.emplace_back(use.user, use.operandIndex);
      } else {
        return {};
      }
    }
  }
  return shared;
}

// A one-stage buffer for `load`'s tile and the stage index 0, right before the op of the program's body
// (ir::programBody: the function's, or a persistent kernel's tile loop's) that holds the load (the load itself, or
// its outermost loop or if): they run once per program (per tile), reach every use, and the buffer is live from
// there only, so that the buffers of consecutive loops (attention's unmasked and masked key blocks) may share
// bytes, and so may the buffers and the epilogue's exchange in a persistent kernel's tile.
struct LoadBuffer {
  Value* buffer;
  Value* stage;
};
LoadBuffer allocateBuffer(ir::Function& f, Op& load, const ir::Layout& layout, const ir::Type& loaded) {
  ir::Block& program = *ir::programBody(f);
  ir::Builder entry(&program, outermostAncestorIn(program, &load));
  entry.setLoc(load.loc());
  Value* buffer = entry.create1(OpKind::LocalAlloc, {},
                                ir::Type::sharedBuffer(1, loaded.shape(), loaded.element(),
                                                       std::make_shared<const ir::Attr>(layout.toAttr())));
  Value* stage = entry.constantInt(0, ir::Type::i32());
  return {buffer, stage};
}

// cp.async of `load`'s elements into `to`, its commit group and the wait for it, at `b`: the token of the landed
// copy.
Value* copyAndWait(ir::Builder& b, Op& load, const LoadBuffer& to) {
  std::vector<Value*> copyOperands = {load.operand(0), to.buffer, to.stage};
  if (load.numOperands() > 1) copyOperands.push_back(load.operand(1));
  Value* copy = b.create1(OpKind::AsyncCopy, copyOperands, ir::Type::asyncToken());
  Value* group = b.create1(OpKind::AsyncCommitGroup, {copy}, ir::Type::asyncToken());
  return b.create1(OpKind::AsyncWait, {group}, ir::Type::asyncToken(), {{"pending", ir::Attr::integer(0)}});
}

class AsyncCopyDotOperandsPass : public Pass {
 public:
  explicit AsyncCopyDotOperandsPass(const PassOptions& options) : options_(options) {}
  const char* name() const override { return "async-copy-dot-operands"; }

  void run(ir::Function& f) override {
    if (!options_.layoutPolicy) return;  // the target-independent default reads dot operands from registers
    std::vector<Op*> dots;
    f.walk([&](Op* op) {
      if (op->is(OpKind::Dot)) dots.push_back(op);
    });
    for (Op* dot : dots)
      for (unsigned index = 0; index < 2; ++index) {
        if (index == 0 && dotTakesAInRegisters(*dot)) continue;  // the lowering wants A in registers
        if (std::optional<ir::Layout> shared = options_.layoutPolicy->dotOperandSharedLayout(*dot, index)) {
          if (OperandChain chain = chainOf(dot->operand(index)); chain.load) {
            if (copiesInto(f, *dot, index, chain)) rewrite(f, *dot, index, chain, *shared);
          } else if (SharedLoad load = sharedLoadOf(dot->operand(index)); load.operands.size() > 1 && allWant(load, *shared)) {
            rewriteShared(f, load, *shared);
          }
        }
      }
  }

 private:
  // Whether the copy lands what the dot expects. A desc_load (expand-descriptor-loads keeps only those the target
  // copies with TMA; hand-written IR may hold others, which then stay as they are) must be one the target copies
  // with TMA into that layout, run once or once per iteration of a `for` in the function's body (phaseParity), and
  // agree with its descriptor's tensor map swizzle, which it sets if no copy did yet.
  bool copiesInto(ir::Function& f, const Op& dot, unsigned index, const OperandChain& chain) const {
    const Op& load = *chain.load;
    if (!load.is(OpKind::DescLoad)) return true;
    const std::optional<int64_t> swizzle = options_.layoutPolicy->dotOperandTmaSwizzle(dot, index);
    const Value* desc = load.operand(0);
    const Op* loop = load.parentOp();
    if (!swizzle || !desc->isBlockArg() || desc->ownerBlock() != f.body() ||
        (loop && !countsProgramIterations(*loop) && !isTileLoop(*loop)))
      return false;
    auto [it, added] = f.argAttrs(desc->index()).try_emplace(ir::kTensorMapSwizzleAttr, ir::Attr::integer(*swizzle));
    return it->second.isInt() && it->second.getInt() == *swizzle;
  }

  // Whether the target asks `shared` for every operand the load feeds.
  bool allWant(const SharedLoad& load, const ir::Layout& shared) const {
    for (const auto& [dot, index] : load.operands)
      if ((index == 0 && dotTakesAInRegisters(*dot)) || options_.layoutPolicy->dotOperandSharedLayout(*dot, index) != shared)
        return false;
    return true;
  }

  // One copy of a load that several dot operands read, and a local_load of it before each dot.
  void rewriteShared(ir::Function& f, SharedLoad& shared, const ir::Layout& layout) {
    Op* load = shared.load;
    const ir::Type loaded = load->result(0)->type();
    const LoadBuffer to = allocateBuffer(f, *load, layout, loaded);
    ir::Builder b(load->parentBlock(), load);
    b.setLoc(load->loc());
    Value* landed = copyAndWait(b, *load, to);
    for (auto& [dot, index] : shared.operands) {
      ir::Builder before(dot->parentBlock(), dot);
      before.setLoc(load->loc());
      Value* value = before.create1(OpKind::LocalLoad, {to.buffer, to.stage, landed},
                                    loaded.withEncoding(dot->operand(index)->type().encoding()));
      value->setNameHint(load->result(0)->nameHint());
      dot->setOperand(index, value);
    }
    // The conversions, now unused, from the dots' side, then the load.
    for (auto it = shared.conversions.rbegin(); it != shared.conversions.rend(); ++it) (*it)->parentBlock()->erase(*it);
    load->parentBlock()->erase(load);
  }

  // The parity of the barrier phase a TMA copy at `load` completes (see above), an i32 built at `b`: the copy's
  // iteration in the program (analysis/ProgramIterations.h), mod 2.
  static Value* phaseParity(ir::Builder& b, const Op& load) {
    Op* loop = load.parentOp();
    if (!loop) return b.constantInt(0, ir::Type::i32());
    if (isTileLoop(*loop))  // once per tile: the tile's iteration in the program
      return b.create1(OpKind::And, {tileOfProgram(b, *loop), b.constantInt(1, ir::Type::i32())}, ir::Type::i32());
    if (!countsProgramIterations(*loop))
      throw Error("internal error: async-copy-dot-operands: a TMA copy must run once, or once per iteration of a "
                  "'for' in the program's body", load.loc());
    return b.create1(OpKind::And, {programIteration(b, *loop), b.constantInt(1, ir::Type::i32())}, ir::Type::i32());
  }

  void rewrite(ir::Function& f, Op& dot, unsigned index, const OperandChain& chain, const ir::Layout& shared) {
    Op* load = chain.load;
    // The operand's shape: a desc_load's block seen through views lands in a buffer shaped as the dot reads it.
    const ir::Type loaded = load->result(0)->type().withShape(dot.operand(index)->type().shape());
    const auto operandLayout = dot.operand(index)->type().encoding();

    LoadBuffer to = allocateBuffer(f, *load, shared, loaded);
    Value* buffer = to.buffer;
    Value* stage = to.stage;

    ir::Builder b(load->parentBlock(), load);
    b.setLoc(load->loc());
    Value* landed = nullptr;
    if (load->is(OpKind::DescLoad)) {
      // The barriers live in the function's body (mbarrier_alloc initializes them once, for the whole program;
      // in a persistent kernel their phases go on from tile to tile).
      ir::Builder once(f.body(), outermostAncestorIn(*f.body(), load));
      once.setLoc(load->loc());
      Value* barriers = once.create1(OpKind::MbarrierAlloc, {}, ir::Type::mbarriers(1));
      std::vector<Value*> copyOperands(load->operands().begin(), load->operands().end());
      copyOperands.insert(copyOperands.end(), {buffer, stage, barriers});
      Value* copy = b.create1(OpKind::AsyncTmaCopy, copyOperands, ir::Type::asyncToken());
      // The wait goes right before the dot when it is in the load's block, so that the copies of both operands are
      // in flight together.
      if (dot.parentBlock() == load->parentBlock()) {
        b = ir::Builder(dot.parentBlock(), &dot);
        b.setLoc(load->loc());
      }
      landed = b.create1(OpKind::MbarrierWait, {barriers, stage, phaseParity(b, *load), copy}, ir::Type::asyncToken());
    } else {
      landed = copyAndWait(b, *load, to);
    }
    Value* value = b.create1(OpKind::LocalLoad, {buffer, stage, landed}, loaded.withEncoding(operandLayout));
    value->setNameHint(load->result(0)->nameHint());

    // Casts now run in the dot operand's layout; conversions and views (chainOf: reshapes and transposes are
    // views there) have nothing left to do.
    Value* current = value;
    load->result(0)->replaceAllUsesWith(current);
    load->parentBlock()->erase(load);
    for (Op* op : chain.between) {
      if (op->is(OpKind::ConvertLayout) || op->is(OpKind::Reshape) || op->is(OpKind::Trans)) {
        op->result(0)->replaceAllUsesWith(current);
        op->parentBlock()->erase(op);
      } else {
        op->result(0)->setType(op->result(0)->type().withEncoding(operandLayout));
        current = op->result(0);
      }
    }
  }

  PassOptions options_;
};

}  // namespace

bool dotOperandInSharedBuffer(const ir::Op& dot, unsigned index) {
  // chainOf and sharedLoadOf only read the IR.
  Value* operand = const_cast<Value*>(dot.operand(index));
  if (const Op* def = operand->definingOp(); def && def->is(OpKind::LocalLoad)) return true;
  const OperandChain chain = chainOf(operand);
  if (!chain.load) return sharedLoadOf(operand).operands.size() > 1;
  for (const Op* op : chain.between)
    if (op->is(OpKind::Cast)) return false;
  return true;
}

const Op* dotOperandSourceLoad(const ir::Op& dot, unsigned index) {
  return chainOf(const_cast<Value*>(dot.operand(index))).load;  // chainOf only reads the IR
}

bool dotOperandSourceTransposed(const ir::Op& dot, unsigned index) {
  return chainOf(const_cast<Value*>(dot.operand(index))).transposed;  // chainOf only reads the IR
}

bool isDescriptorBlockView(const ir::Op& op) {
  auto withoutUnitDims = [](const std::vector<int64_t>& shape) {
    std::vector<int64_t> kept;
    for (int64_t d : shape)
      if (d != 1) kept.push_back(d);
    return kept;
  };
  if (op.is(OpKind::Reshape))
    return withoutUnitDims(op.operand(0)->type().shape()) == withoutUnitDims(op.result(0)->type().shape());
  return op.is(OpKind::Trans) && op.result(0)->type().rank() == 2;
}

std::unique_ptr<Pass> createAsyncCopyDotOperandsPass(const PassOptions& options) {
  return std::make_unique<AsyncCopyDotOperandsPass>(options);
}

}  // namespace tessera::transforms
