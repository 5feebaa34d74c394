// reduce: within each thread over its registers, then across lanes with an XOR butterfly of warp shuffles over
// the lane bits that move along the axis, then across warps through shared memory. scan: through shared
// memory, one thread per line along the axis (simple and exact in the combine order; not yet the fast
// warp-parallel scan).
#include "backends/common/KernelLowering.h"

#include <map>

namespace tessera::backends {

namespace {

// Exchanges any scalar (<= 64 bits, or a pointer) with lane ^ mask, as 32-bit pieces.
llvm::Value* shuffleXor(IRBuilder& b, LoweringHooks& hooks, llvm::Value* v, int laneMask) {
  llvm::Type* t = v->getType();
  llvm::Value* bits = v;
  if (t->isPointerTy()) bits = b.CreatePtrToInt(v, b.getInt64Ty());
  unsigned width = bits->getType()->getPrimitiveSizeInBits();
  if (!bits->getType()->isIntegerTy()) bits = b.CreateBitCast(bits, b.getIntNTy(width));
  llvm::Value* result;
  if (width <= 32) {
    llvm::Value* w = hooks.shuffleXorI32(b, b.CreateZExt(bits, b.getInt32Ty()), laneMask);
    result = b.CreateTrunc(w, b.getIntNTy(width));
  } else {
    llvm::Value* lo = b.CreateTrunc(bits, b.getInt32Ty());
    llvm::Value* hi = b.CreateTrunc(b.CreateLShr(bits, b.getInt64(32)), b.getInt32Ty());
    lo = b.CreateZExt(hooks.shuffleXorI32(b, lo, laneMask), b.getInt64Ty());
    hi = b.CreateZExt(hooks.shuffleXorI32(b, hi, laneMask), b.getInt64Ty());
    result = b.CreateOr(lo, b.CreateShl(hi, b.getInt64(32)));
  }
  if (t->isPointerTy()) return b.CreateIntToPtr(result, t);
  return b.CreateBitCast(result, t);
}

Coords dropDim(const Coords& c, int axis) {
  Coords r = c;
  r.erase(r.begin() + axis);
  return r;
}

}  // namespace

Regs KernelLowering::lowerCombine(const ir::Block& region, const Regs& args) {
  if (region.numArguments() != args.size()) throw Error("combine region takes " + std::to_string(region.numArguments()) +
                                                        " arguments, expected " + std::to_string(args.size()));
  for (unsigned i = 0; i < args.size(); ++i) set(region.argument(i), {args[i]});
  std::vector<Regs> yielded = lowerRegion(region);
  Regs out;
  for (const Regs& r : yielded) out.push_back(r.at(0));
  return out;
}

void KernelLowering::lowerReduce(const ir::Op& op) {
  const int axis = static_cast<int>(op.intAttr("axis"));
  const unsigned n = op.numOperands();
  const ThreadMap& in = mapOf(op.operand(0)->type(), op.name());
  const ThreadMap& out = mapOf(op.result(0)->type(), op.name());
  const ir::Block& region = *op.region(0);
  auto combine = [&](const Regs& acc, const Regs& x) {
    Regs args = acc;
    args.insert(args.end(), x.begin(), x.end());
    return lowerCombine(region, args);
  };

  // The result layout must be the input's with the axis removed, so each thread keeps what it reduced.
  auto movesAlongAxisOnly = [&](const Coords& base) {
    Coords other = base;
    other[axis] = 0;
    return base[axis] == 0 || isZero(other);
  };
  for (size_t i = 0; i < in.laneBases.size(); ++i)
    if (!movesAlongAxisOnly(in.laneBases[i]) || dropDim(in.laneBases[i], axis) != out.laneBases[i])
      fail(op, "the result layout is not the slice of the input layout along the axis");
  for (size_t i = 0; i < in.warpBases.size(); ++i)
    if (!movesAlongAxisOnly(in.warpBases[i]) || dropDim(in.warpBases[i], axis) != out.warpBases[i])
      fail(op, "the result layout is not the slice of the input layout along the axis");

  // 1. Within the thread: fold registers that differ only along the axis.
  std::map<Coords, size_t> groupOf;
  std::vector<Regs> acc;  // per group: one value per input
  std::vector<Coords> groupCoords;
  for (int64_t r = 0; r < in.numRegs(); ++r) {
    if (!in.regOwner[r]) continue;  // the same element as an earlier register: fold it once
    Coords key = dropDim(in.regCoords[r], axis);
    Regs x;
    for (unsigned i = 0; i < n; ++i) x.push_back(get(op.operand(i))[r]);
    auto [it, fresh] = groupOf.emplace(key, acc.size());
    if (fresh) {
      acc.push_back(x);
      groupCoords.push_back(key);
    } else {
      acc[it->second] = combine(acc[it->second], x);
    }
  }

  // 2. Across lanes: butterfly over the lane bits along the axis.
  for (size_t i = 0; i < in.laneBases.size(); ++i) {
    if (in.laneBases[i][axis] == 0) continue;
    for (Regs& g : acc) {
      Regs other;
      for (llvm::Value* v : g) other.push_back(shuffleXor(b, hooks, v, 1 << i));
      g = combine(g, other);
    }
  }

  // 3. Across warps: partials through shared memory, indexed [output element][warp position along the axis].
  std::vector<int> axisWarpBits;
  for (size_t i = 0; i < in.warpBases.size(); ++i)
    if (in.warpBases[i][axis] != 0) axisWarpBits.push_back(static_cast<int>(i));
  if (!axisWarpBits.empty()) {
    const int64_t parts = int64_t(1) << axisWarpBits.size();
    const int64_t outElems = std::max<int64_t>(1, op.result(0)->type().numElements());
    std::vector<int64_t> offsets;
    int64_t need = 0;
    for (unsigned i = 0; i < n; ++i) {
      offsets.push_back(need);
      need = alignTo(need + outElems * parts * memBytes(op.operand(i)->type()), 16);
    }
    llvm::Value* base = scratch(op, need);
    llvm::Value* warpPos = b.getInt32(0);
    for (size_t k = 0; k < axisWarpBits.size(); ++k)
      warpPos = b.CreateOr(warpPos, b.CreateShl(b.CreateAnd(b.CreateLShr(warpId(), b.getInt32(axisWarpBits[k])),
                                                            b.getInt32(1)),
                                                b.getInt32(static_cast<uint32_t>(k))));
    // The output element of each group: its coordinates without the axis, row-major in the result shape.
    std::vector<llvm::Value*> slot;
    for (size_t g = 0; g < acc.size(); ++g) {
      llvm::Value* idx = b.getInt32(0);
      for (int d = 0; d < out.rank(); ++d) {
        llvm::Value* c = b.CreateXor(threadPart(out)[d], b.getInt32(static_cast<uint32_t>(groupCoords[g][d])));
        idx = b.CreateAdd(b.CreateMul(idx, b.getInt32(static_cast<uint32_t>(out.shape[d]))), c);
      }
      slot.push_back(b.CreateMul(idx, b.getInt32(static_cast<uint32_t>(parts))));
    }
    auto elementPtr = [&](unsigned i, llvm::Value* index) {
      llvm::Value* p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, static_cast<uint64_t>(offsets[i]));
      return smemElementPtr(p, memType(op.operand(i)->type()), index);
    };
    for (size_t g = 0; g < acc.size(); ++g)
      for (unsigned i = 0; i < n; ++i)
        b.CreateStore(toMemory(acc[g][i], op.operand(i)->type()), elementPtr(i, b.CreateAdd(slot[g], warpPos)));
    hooks.barrier(b);
    for (size_t g = 0; g < acc.size(); ++g) {
      Regs total;
      for (int64_t k = 0; k < parts; ++k) {
        Regs x;
        for (unsigned i = 0; i < n; ++i) {
          ir::Type t = op.operand(i)->type();
          llvm::Value* v = b.CreateLoad(memType(t), elementPtr(i, b.CreateAdd(slot[g], b.getInt32(static_cast<uint32_t>(k)))));
          x.push_back(fromMemory(v, t));
        }
        total = k == 0 ? x : combine(total, x);
      }
      acc[g] = total;
    }
  }

  // 4. Results: each result register is the group with its coordinates.
  for (unsigned i = 0; i < n; ++i) {
    Regs regs;
    for (int64_t r = 0; r < out.numRegs(); ++r) {
      auto it = groupOf.find(out.regCoords[r]);
      if (it == groupOf.end()) fail(op, "result register has no reduced group (layout mismatch)");
      regs.push_back(acc[it->second][i]);
    }
    set(op.result(i), std::move(regs));
  }
}

void KernelLowering::lowerScan(const ir::Op& op) {
  const int axis = static_cast<int>(op.intAttr("axis"));
  const bool reverse = op.hasAttr("reverse") && op.attr("reverse").isBool() && op.attr("reverse").getBool();
  const unsigned n = op.numOperands();
  const ThreadMap& map = mapOf(op.operand(0)->type(), op.name());
  const std::vector<int64_t>& shape = map.shape;
  const int64_t elements = op.operand(0)->type().numElements();
  const int64_t len = shape[axis];
  int64_t stride = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) stride *= shape[d];
  const int64_t lines = elements / len;

  std::vector<int64_t> offsets;
  int64_t need = 0;
  for (unsigned i = 0; i < n; ++i) {
    offsets.push_back(need);
    need = alignTo(need + elements * memBytes(op.operand(i)->type()), 16);
  }
  llvm::Value* base = scratch(op, need);
  auto elementPtr = [&](unsigned i, llvm::Value* index) {
    llvm::Value* p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, static_cast<uint64_t>(offsets[i]));
    return smemElementPtr(p, memType(op.operand(i)->type()), index);
  };
  auto linear = [&](int64_t r) {
    llvm::Value* idx = b.getInt32(0);
    for (int d = 0; d < map.rank(); ++d)
      idx = b.CreateAdd(b.CreateMul(idx, b.getInt32(static_cast<uint32_t>(shape[d]))), coord(map, r, d));
    return idx;
  };
  auto loadElem = [&](unsigned i, llvm::Value* idx) {
    ir::Type t = op.operand(i)->type();
    return fromMemory(b.CreateLoad(memType(t), elementPtr(i, idx)), t);
  };

  for (int64_t r = 0; r < map.numRegs(); ++r) {
    if (!map.regOwner[r]) continue;
    llvm::Value* idx = linear(r);
    for (unsigned i = 0; i < n; ++i)
      b.CreateStore(toMemory(get(op.operand(i))[r], op.operand(i)->type()), elementPtr(i, idx));
  }
  hooks.barrier(b);

  // for (line = tid; line < lines; line += threads): scan the line in place.
  const int64_t threads = static_cast<int64_t>(opts.numWarps) * warpSize;
  llvm::Value* tid = b.CreateAdd(b.CreateMul(warpId(), b.getInt32(warpSize)), laneId());
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, "scan.lines", kernel);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx, "scan.line", kernel);
  llvm::BasicBlock* inner = llvm::BasicBlock::Create(ctx, "scan.step", kernel);
  llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx, "scan.next", kernel);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "scan.done", kernel);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode* line = b.CreatePHI(b.getInt32Ty(), 2, "line");
  line->addIncoming(tid, pre);
  b.CreateCondBr(b.CreateICmpSLT(line, b.getInt32(static_cast<uint32_t>(lines))), body, exit);

  b.SetInsertPoint(body);
  llvm::Value* outer = b.CreateUDiv(line, b.getInt32(static_cast<uint32_t>(stride)));
  llvm::Value* innerIdx = b.CreateURem(line, b.getInt32(static_cast<uint32_t>(stride)));
  llvm::Value* lineBase = b.CreateAdd(b.CreateMul(outer, b.getInt32(static_cast<uint32_t>(len * stride))), innerIdx);
  auto position = [&](llvm::Value* j) {  // element index of step j along the line
    llvm::Value* k = reverse ? b.CreateSub(b.getInt32(static_cast<uint32_t>(len - 1)), j) : j;
    return b.CreateAdd(lineBase, b.CreateMul(k, b.getInt32(static_cast<uint32_t>(stride))));
  };
  Regs first;
  {
    llvm::Value* idx = position(b.getInt32(0));
    for (unsigned i = 0; i < n; ++i) first.push_back(loadElem(i, idx));
  }
  if (len == 1) {
    b.CreateBr(latch);
  } else {
    b.CreateBr(inner);
    b.SetInsertPoint(inner);
    llvm::PHINode* j = b.CreatePHI(b.getInt32Ty(), 2, "j");
    j->addIncoming(b.getInt32(1), body);
    Regs acc;
    std::vector<llvm::PHINode*> accPhis;
    for (unsigned i = 0; i < n; ++i) {
      llvm::PHINode* p = b.CreatePHI(first[i]->getType(), 2);
      p->addIncoming(first[i], body);
      accPhis.push_back(p);
      acc.push_back(p);
    }
    llvm::Value* idx = position(j);
    Regs x;
    for (unsigned i = 0; i < n; ++i) x.push_back(loadElem(i, idx));
    Regs args = acc;
    args.insert(args.end(), x.begin(), x.end());
    Regs next = lowerCombine(*op.region(0), args);
    for (unsigned i = 0; i < n; ++i) b.CreateStore(toMemory(next[i], op.operand(i)->type()), elementPtr(i, idx));
    llvm::Value* jNext = b.CreateAdd(j, b.getInt32(1));
    llvm::BasicBlock* stepEnd = b.GetInsertBlock();
    j->addIncoming(jNext, stepEnd);
    for (unsigned i = 0; i < n; ++i) accPhis[i]->addIncoming(next[i], stepEnd);
    b.CreateCondBr(b.CreateICmpSLT(jNext, b.getInt32(static_cast<uint32_t>(len))), inner, latch);
  }
  b.SetInsertPoint(latch);
  line->addIncoming(b.CreateAdd(line, b.getInt32(static_cast<uint32_t>(threads))), latch);
  b.CreateBr(head);

  b.SetInsertPoint(exit);
  hooks.barrier(b);
  for (unsigned i = 0; i < n; ++i) {
    Regs regs;
    for (int64_t r = 0; r < map.numRegs(); ++r) regs.push_back(loadElem(i, linear(r)));
    set(op.result(i), std::move(regs));
  }
}

}  // namespace tessera::backends
