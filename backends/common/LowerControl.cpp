// Regions: structured control flow (for, if, while) to LLVM blocks with one phi per register of every carried
// value, reduce/scan combine regions on scalars, and the debugging ops (debug_print, device_assert).
#include "backends/common/KernelLowering.h"

namespace tessera::backends {

using ir::OpKind;

std::vector<Regs> KernelLowering::lowerRegion(const ir::Block& region) {
  const ir::Op* term = region.terminator();
  if (!term || !term->is(OpKind::Yield)) throw Error("lowering: a region must end with 'yield'");
  for (const auto& op : region.ops())
    if (op.get() != term) lowerOp(*op);
  std::vector<Regs> out;
  for (const ir::Value* v : term->operands()) out.push_back(get(v));
  return out;
}

Regs KernelLowering::lowerCombine(const ir::Block& region, const Regs& args) {
  if (region.numArguments() != args.size()) throw Error("combine region takes " + std::to_string(region.numArguments()) +
                                                        " arguments, expected " + std::to_string(args.size()));
  for (unsigned i = 0; i < args.size(); ++i) set(region.argument(i), {args[i]});
  std::vector<Regs> yielded = lowerRegion(region);
  Regs out;
  for (const Regs& r : yielded) out.push_back(r.at(0));
  return out;
}

namespace {

// One phi per register of each carried value.
std::vector<std::vector<llvm::PHINode*>> makePhis(IRBuilder& b, const std::vector<Regs>& initial,
                                                  llvm::BasicBlock* from) {
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (const Regs& regs : initial) {
    std::vector<llvm::PHINode*> ps;
    for (llvm::Value* v : regs) {
      llvm::PHINode* p = b.CreatePHI(v->getType(), 2);
      p->addIncoming(v, from);
      ps.push_back(p);
    }
    phis.push_back(std::move(ps));
  }
  return phis;
}

Regs asRegs(const std::vector<llvm::PHINode*>& phis) { return Regs(phis.begin(), phis.end()); }

}  // namespace

void KernelLowering::lowerControlFlow(const ir::Op& op) {
  switch (op.kind()) {
    case OpKind::For: {
      llvm::Value* lb = get(op.operand(0))[0];
      llvm::Value* ub = get(op.operand(1))[0];
      llvm::Value* step = get(op.operand(2))[0];
      std::vector<Regs> inits;
      for (unsigned i = 3; i < op.numOperands(); ++i) inits.push_back(get(op.operand(i)));
      const ir::Block& body = *op.region(0);
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "for.header", kernel_);
      llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(ctx_, "for.body", kernel_);
      llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "for.exit", kernel_);
      b_.CreateBr(header);
      b_.SetInsertPoint(header);
      llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "iv");
      iv->addIncoming(lb, pre);
      auto phis = makePhis(b_, inits, pre);
      bool isSigned = op.operand(0)->type().isSigned();
      b_.CreateCondBr(isSigned ? b_.CreateICmpSLT(iv, ub) : b_.CreateICmpULT(iv, ub), bodyBB, exit);
      b_.SetInsertPoint(bodyBB);
      set(body.argument(0), {iv});
      for (size_t i = 0; i < phis.size(); ++i) set(body.argument(static_cast<unsigned>(i + 1)), asRegs(phis[i]));
      std::vector<Regs> next = lowerRegion(body);
      llvm::Value* ivNext = b_.CreateAdd(iv, step);
      llvm::BasicBlock* latch = b_.GetInsertBlock();
      iv->addIncoming(ivNext, latch);
      for (size_t i = 0; i < phis.size(); ++i)
        for (size_t r = 0; r < phis[i].size(); ++r) phis[i][r]->addIncoming(next[i].at(r), latch);
      b_.CreateBr(header);
      b_.SetInsertPoint(exit);
      for (size_t i = 0; i < phis.size(); ++i) set(op.result(static_cast<unsigned>(i)), asRegs(phis[i]));
      return;
    }
    case OpKind::If: {
      llvm::Value* cond = get(op.operand(0))[0];
      llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(ctx_, "if.then", kernel_);
      llvm::BasicBlock* elseBB = llvm::BasicBlock::Create(ctx_, "if.else", kernel_);
      llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_, "if.join", kernel_);
      b_.CreateCondBr(cond, thenBB, elseBB);
      b_.SetInsertPoint(thenBB);
      std::vector<Regs> thenVals = lowerRegion(*op.region(0));
      llvm::BasicBlock* thenEnd = b_.GetInsertBlock();
      b_.CreateBr(join);
      b_.SetInsertPoint(elseBB);
      std::vector<Regs> elseVals = lowerRegion(*op.region(1));
      llvm::BasicBlock* elseEnd = b_.GetInsertBlock();
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      for (unsigned i = 0; i < op.numResults(); ++i) {
        Regs regs;
        for (size_t r = 0; r < thenVals[i].size(); ++r) {
          llvm::PHINode* p = b_.CreatePHI(thenVals[i][r]->getType(), 2);
          p->addIncoming(thenVals[i][r], thenEnd);
          p->addIncoming(elseVals[i].at(r), elseEnd);
          regs.push_back(p);
        }
        set(op.result(i), std::move(regs));
      }
      return;
    }
    case OpKind::While: {
      std::vector<Regs> inits;
      for (const ir::Value* v : op.operands()) inits.push_back(get(v));
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      llvm::BasicBlock* before = llvm::BasicBlock::Create(ctx_, "while.before", kernel_);
      llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx_, "while.after", kernel_);
      llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "while.exit", kernel_);
      b_.CreateBr(before);
      b_.SetInsertPoint(before);
      auto phis = makePhis(b_, inits, pre);
      const ir::Block& beforeRegion = *op.region(0);
      const ir::Block& afterRegion = *op.region(1);
      for (size_t i = 0; i < phis.size(); ++i) set(beforeRegion.argument(static_cast<unsigned>(i)), asRegs(phis[i]));
      std::vector<Regs> cond = lowerRegion(beforeRegion);
      if (cond.size() != 1 || cond[0].size() != 1) fail(op, "'before' must yield one i1 scalar");
      b_.CreateCondBr(cond[0][0], after, exit);
      b_.SetInsertPoint(after);
      for (size_t i = 0; i < phis.size(); ++i) set(afterRegion.argument(static_cast<unsigned>(i)), asRegs(phis[i]));
      std::vector<Regs> next = lowerRegion(afterRegion);
      llvm::BasicBlock* latch = b_.GetInsertBlock();
      for (size_t i = 0; i < phis.size(); ++i)
        for (size_t r = 0; r < phis[i].size(); ++r) phis[i][r]->addIncoming(next[i].at(r), latch);
      b_.CreateBr(before);
      b_.SetInsertPoint(exit);
      for (size_t i = 0; i < phis.size(); ++i) set(op.result(static_cast<unsigned>(i)), asRegs(phis[i]));
      return;
    }
    default:
      fail(op, "not a control-flow op");
  }
}

// The program ids debug_print tags its lines with: the program's, or in a persistent kernel (make-persistent) the
// coordinates of the tile `op` runs in, which are what the program ids were before the kernel looped over tiles
// (and what the interpreter prints).
std::vector<llvm::Value*> KernelLowering::printedProgramIds(const ir::Op& op) {
  const ir::Op* tiles = op.parentOp();
  while (tiles && !tiles->hasAttr(ir::kPersistentTilesAttr)) tiles = tiles->parentOp();
  if (!tiles) return {hooks_.programId(b_, 0), hooks_.programId(b_, 1), hooks_.programId(b_, 2)};
  const unsigned n = func_.numArguments();  // the grid is the last three arguments
  llvm::Value* gx = get(func_.argument(n - 3))[0];
  llvm::Value* gy = get(func_.argument(n - 2))[0];
  llvm::Value* tile = get(tiles->region(0)->argument(0))[0];
  llvm::Value* rows = b_.CreateUDiv(tile, gx);  // tile indices are non-negative and the grid's extents positive
  return {b_.CreateURem(tile, gx), b_.CreateURem(rows, gy), b_.CreateUDiv(rows, gy)};
}

void KernelLowering::lowerDebugOp(const ir::Op& op) {
  if (op.is(OpKind::DeviceAssert)) {
    llvm::Value* ok = b_.getTrue();
    for (llvm::Value* v : get(op.operand(0))) ok = b_.CreateAnd(ok, v);
    std::string msg = op.hasAttr("msg") ? op.stringAttr("msg") : "device_assert failed";
    predicated(b_.CreateNot(ok), [&]() -> llvm::Value* {
      hooks_.assertFail(b_, msg, op.loc().file.empty() ? "<unknown>" : op.loc().file, op.loc().line, func_.name());
      return nullptr;
    }, nullptr);
    return;
  }
  // debug_print: one line per element, from its owner: program id, element index, prefix, value.
  std::string prefix;
  for (char ch : op.hasAttr("prefix") ? op.stringAttr("prefix") : std::string()) prefix += ch == '%' ? "%%" : std::string(1, ch);
  std::vector<llvm::Value*> pid = printedProgramIds(op);
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    ir::Type elem = v->type().element();
    const ThreadMap& map = mapOf(v->type(), op.name());
    for (int64_t r = 0; r < map.numRegs(); ++r) {
      predicated(ownsRegister(map, r), [&]() -> llvm::Value* {
        std::string fmt = "pid (%d, %d, %d) idx (";
        std::vector<llvm::Value*> args = pid;
        for (int d = 0; d < map.rank(); ++d) {
          fmt += d ? ", %d" : "%d";
          args.push_back(coord(map, r, d));
        }
        fmt += ") " + prefix + (op.numOperands() > 1 ? " (operand " + std::to_string(i) + ")" : "") + ": ";
        llvm::Value* x = get(v)[r];
        if (elem.isPtr()) {
          fmt += "%p";
        } else if (elem.isFloat()) {
          fmt += "%f";
          x = castScalar(x, elem, ir::Type::scalar(ir::ScalarKind::F64));
        } else if (elem.bitWidth() == 64) {
          fmt += elem.isSigned() ? "%lld" : "%llu";
        } else {
          fmt += elem.isSigned() ? "%d" : "%u";
          x = b_.CreateIntCast(x, b_.getInt32Ty(), elem.isSigned());
        }
        args.push_back(x);
        hooks_.print(b_, fmt + "\n", args);
        return nullptr;
      }, nullptr);
    }
  }
}

}  // namespace tessera::backends
