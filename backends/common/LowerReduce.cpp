// reduce: within each thread over its registers, then across lanes with an XOR butterfly of warp shuffles over
// the lane bits that move along the axis, then across warps through shared memory.
#include "backends/common/KernelLowering.h"

#include <algorithm>
#include <map>

namespace tessera::backends {

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
      for (llvm::Value* v : g) other.push_back(shuffleXor(v, 1 << i));
      g = combine(g, other);
    }
  }

  // 3. Across warps: partials through shared memory, indexed [output element][warp position along the axis].
  std::vector<int> axisWarpBits;
  for (size_t i = 0; i < in.warpBases.size(); ++i)
    if (in.warpBases[i][axis] != 0) axisWarpBits.push_back(static_cast<int>(i));
  if (!axisWarpBits.empty()) {
    const int64_t parts = int64_t(1) << axisWarpBits.size();
    const transforms::OperandAreas areas = transforms::reduceScratch(op, parts);
    llvm::Value* base = scratch(op, areas.bytes);
    llvm::Value* warpPos = b_.getInt32(0);
    for (size_t k = 0; k < axisWarpBits.size(); ++k)
      warpPos = b_.CreateOr(warpPos, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(warpId(), b_.getInt32(axisWarpBits[k])),
                                                            b_.getInt32(1)),
                                                b_.getInt32(static_cast<uint32_t>(k))));
    // The output element of each group: its coordinates without the axis, row-major in the result shape.
    std::vector<llvm::Value*> slot;
    for (size_t g = 0; g < acc.size(); ++g) {
      llvm::Value* idx = b_.getInt32(0);
      for (int d = 0; d < out.rank(); ++d) {
        llvm::Value* c = b_.CreateXor(threadPart(out)[d], b_.getInt32(static_cast<uint32_t>(groupCoords[g][d])));
        idx = b_.CreateAdd(b_.CreateMul(idx, b_.getInt32(static_cast<uint32_t>(out.shape[d]))), c);
      }
      slot.push_back(b_.CreateMul(idx, b_.getInt32(static_cast<uint32_t>(parts))));
    }
    auto elementPtr = [&](unsigned i, llvm::Value* index) {
      llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, static_cast<uint64_t>(areas.offsets[i]));
      return smemElementPtr(p, memType(op.operand(i)->type()), index);
    };
    for (size_t g = 0; g < acc.size(); ++g)
      for (unsigned i = 0; i < n; ++i)
        b_.CreateStore(toMemory(acc[g][i], op.operand(i)->type()), elementPtr(i, b_.CreateAdd(slot[g], warpPos)));
    barrier();
    for (size_t g = 0; g < acc.size(); ++g) {
      Regs total;
      for (int64_t k = 0; k < parts; ++k) {
        Regs x;
        for (unsigned i = 0; i < n; ++i) {
          ir::Type t = op.operand(i)->type();
          llvm::Value* v = b_.CreateLoad(memType(t), elementPtr(i, b_.CreateAdd(slot[g], b_.getInt32(static_cast<uint32_t>(k)))));
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

}  // namespace tessera::backends
