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
// Masked-off elements of a copy are zero (cp.async's zero fill), so a load with an `other` operand qualifies only
// when `other` is the constant 0. Runs after the layout passes: the copy keeps the load's coalesced pointer layout,
// and local_load produces the operand directly in the layout the dot takes it in. An A operand the dot takes from
// registers (marked `a_in_registers` by assign-layouts) stays where it is.
#include <vector>

#include "ir/Builder.h"
#include "ir/Layout.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
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

// A load the rewrite can turn into an asynchronous copy: from global memory, not volatile, zero (or no) `other`.
bool isCopyableLoad(const Op& load) {
  if (!load.is(OpKind::Load) || !load.operand(0)->type().isTile()) return false;
  if (load.operand(0)->type().addrSpace() != ir::kGlobalAddrSpace) return false;
  if (load.hasAttr("volatile") && load.attr("volatile").isBool() && load.attr("volatile").getBool()) return false;
  return load.numOperands() < 3 || isZeroConstant(load.operand(2));
}

// The ops between a dot operand and the load it comes from (casts and layout conversions, each the only user of
// its operand), nearest the load first; empty with `load` null when the operand does not come from such a load.
struct OperandChain {
  Op* load = nullptr;
  std::vector<Op*> between;
};

OperandChain chainOf(Value* operand) {
  OperandChain chain;
  Value* v = operand;
  while (Op* def = v->definingOp()) {
    if (v->uses().size() != 1) return {};
    if (def->is(OpKind::Load)) {
      if (!isCopyableLoad(*def)) return {};
      chain.load = def;
      return chain;
    }
    if (!def->is(OpKind::Cast) && !def->is(OpKind::ConvertLayout)) return {};
    chain.between.insert(chain.between.begin(), def);
    v = def->operand(0);
  }
  return {};
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
        if (std::optional<ir::Layout> shared = options_.layoutPolicy->dotOperandSharedLayout(*dot, index))
          if (OperandChain chain = chainOf(dot->operand(index)); chain.load) rewrite(f, *dot, index, chain, *shared);
      }
  }

 private:
  void rewrite(ir::Function& f, Op& dot, unsigned index, const OperandChain& chain, const ir::Layout& shared) {
    Op* load = chain.load;
    const ir::Type loaded = load->result(0)->type();
    const auto operandLayout = dot.operand(index)->type().encoding();

    // The buffer and the stage index live at the function's entry, so that every loop can reuse them.
    ir::Builder entry(f.body(), f.body()->front());
    entry.setLoc(load->loc());
    Value* buffer = entry.create1(OpKind::LocalAlloc, {},
                                  ir::Type::sharedBuffer(1, loaded.shape(), loaded.element(),
                                                         std::make_shared<const ir::Attr>(shared.toAttr())));
    Value* stage = entry.constantInt(0, ir::Type::i32());

    ir::Builder b(load->parentBlock(), load);
    b.setLoc(load->loc());
    std::vector<Value*> copyOperands = {load->operand(0), buffer, stage};
    if (load->numOperands() > 1) copyOperands.push_back(load->operand(1));
    Value* copy = b.create1(OpKind::AsyncCopy, copyOperands, ir::Type::asyncToken());
    Value* group = b.create1(OpKind::AsyncCommitGroup, {copy}, ir::Type::asyncToken());
    Value* landed =
        b.create1(OpKind::AsyncWait, {group}, ir::Type::asyncToken(), {{"pending", ir::Attr::integer(0)}});
    Value* value = b.create1(OpKind::LocalLoad, {buffer, stage, landed}, loaded.withEncoding(operandLayout));
    value->setNameHint(load->result(0)->nameHint());

    // Casts now run in the dot operand's layout; conversions have nothing left to do.
    Value* current = value;
    load->result(0)->replaceAllUsesWith(current);
    load->parentBlock()->erase(load);
    for (Op* op : chain.between) {
      if (op->is(OpKind::ConvertLayout)) {
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
  // chainOf only reads the IR.
  Value* operand = const_cast<Value*>(dot.operand(index));
  if (const Op* def = operand->definingOp(); def && def->is(OpKind::LocalLoad)) return true;
  const OperandChain chain = chainOf(operand);
  if (!chain.load) return false;
  for (const Op* op : chain.between)
    if (op->is(OpKind::Cast)) return false;
  return true;
}

std::unique_ptr<Pass> createAsyncCopyDotOperandsPass(const PassOptions& options) {
  return std::make_unique<AsyncCopyDotOperandsPass>(options);
}

}  // namespace tessera::transforms
