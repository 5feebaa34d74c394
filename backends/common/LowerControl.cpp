// Structured control flow (for, if, while) to LLVM blocks with one phi per register of every carried value,
// and the debugging ops (debug_print, device_assert).
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
      llvm::BasicBlock* pre = b.GetInsertBlock();
      llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, "for.header", kernel);
      llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(ctx, "for.body", kernel);
      llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "for.exit", kernel);
      b.CreateBr(header);
      b.SetInsertPoint(header);
      llvm::PHINode* iv = b.CreatePHI(lb->getType(), 2, "iv");
      iv->addIncoming(lb, pre);
      auto phis = makePhis(b, inits, pre);
      bool isSigned = op.operand(0)->type().isSigned();
      b.CreateCondBr(isSigned ? b.CreateICmpSLT(iv, ub) : b.CreateICmpULT(iv, ub), bodyBB, exit);
      b.SetInsertPoint(bodyBB);
      set(body.argument(0), {iv});
      for (size_t i = 0; i < phis.size(); ++i) set(body.argument(static_cast<unsigned>(i + 1)), asRegs(phis[i]));
      std::vector<Regs> next = lowerRegion(body);
      llvm::Value* ivNext = b.CreateAdd(iv, step);
      llvm::BasicBlock* latch = b.GetInsertBlock();
      iv->addIncoming(ivNext, latch);
      for (size_t i = 0; i < phis.size(); ++i)
        for (size_t r = 0; r < phis[i].size(); ++r) phis[i][r]->addIncoming(next[i].at(r), latch);
      b.CreateBr(header);
      b.SetInsertPoint(exit);
      for (size_t i = 0; i < phis.size(); ++i) set(op.result(static_cast<unsigned>(i)), asRegs(phis[i]));
      return;
    }
    case OpKind::If: {
      llvm::Value* cond = get(op.operand(0))[0];
      llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(ctx, "if.then", kernel);
      llvm::BasicBlock* elseBB = llvm::BasicBlock::Create(ctx, "if.else", kernel);
      llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx, "if.join", kernel);
      b.CreateCondBr(cond, thenBB, elseBB);
      b.SetInsertPoint(thenBB);
      std::vector<Regs> thenVals = lowerRegion(*op.region(0));
      llvm::BasicBlock* thenEnd = b.GetInsertBlock();
      b.CreateBr(join);
      b.SetInsertPoint(elseBB);
      std::vector<Regs> elseVals = lowerRegion(*op.region(1));
      llvm::BasicBlock* elseEnd = b.GetInsertBlock();
      b.CreateBr(join);
      b.SetInsertPoint(join);
      for (unsigned i = 0; i < op.numResults(); ++i) {
        Regs regs;
        for (size_t r = 0; r < thenVals[i].size(); ++r) {
          llvm::PHINode* p = b.CreatePHI(thenVals[i][r]->getType(), 2);
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
      llvm::BasicBlock* pre = b.GetInsertBlock();
      llvm::BasicBlock* before = llvm::BasicBlock::Create(ctx, "while.before", kernel);
      llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx, "while.after", kernel);
      llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "while.exit", kernel);
      b.CreateBr(before);
      b.SetInsertPoint(before);
      auto phis = makePhis(b, inits, pre);
      const ir::Block& beforeRegion = *op.region(0);
      const ir::Block& afterRegion = *op.region(1);
      for (size_t i = 0; i < phis.size(); ++i) set(beforeRegion.argument(static_cast<unsigned>(i)), asRegs(phis[i]));
      std::vector<Regs> cond = lowerRegion(beforeRegion);
      if (cond.size() != 1 || cond[0].size() != 1) fail(op, "'before' must yield one i1 scalar");
      b.CreateCondBr(cond[0][0], after, exit);
      b.SetInsertPoint(after);
      for (size_t i = 0; i < phis.size(); ++i) set(afterRegion.argument(static_cast<unsigned>(i)), asRegs(phis[i]));
      std::vector<Regs> next = lowerRegion(afterRegion);
      llvm::BasicBlock* latch = b.GetInsertBlock();
      for (size_t i = 0; i < phis.size(); ++i)
        for (size_t r = 0; r < phis[i].size(); ++r) phis[i][r]->addIncoming(next[i].at(r), latch);
      b.CreateBr(before);
      b.SetInsertPoint(exit);
      for (size_t i = 0; i < phis.size(); ++i) set(op.result(static_cast<unsigned>(i)), asRegs(phis[i]));
      return;
    }
    default:
      fail(op, "not a control-flow op");
  }
}

void KernelLowering::lowerDebugOp(const ir::Op& op) {
  if (op.is(OpKind::DeviceAssert)) {
    llvm::Value* ok = b.getTrue();
    for (llvm::Value* v : get(op.operand(0))) ok = b.CreateAnd(ok, v);
    std::string msg = op.hasAttr("msg") ? op.stringAttr("msg") : "device_assert failed";
    predicated(b.CreateNot(ok), [&]() -> llvm::Value* {
      hooks.assertFail(b, msg, op.loc().file.empty() ? "<unknown>" : op.loc().file, op.loc().line, func.name());
      return nullptr;
    }, nullptr);
    return;
  }
  // debug_print: one line per element, from its owner: program id, element index, prefix, value.
  std::string prefix;
  for (char ch : op.hasAttr("prefix") ? op.stringAttr("prefix") : std::string()) prefix += ch == '%' ? "%%" : std::string(1, ch);
  std::vector<llvm::Value*> pid = {hooks.programId(b, 0), hooks.programId(b, 1), hooks.programId(b, 2)};
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
          x = b.CreateIntCast(x, b.getInt32Ty(), elem.isSigned());
        }
        args.push_back(x);
        hooks.print(b, fmt + "\n", args);
        return nullptr;
      }, nullptr);
    }
  }
}

}  // namespace tessera::backends
