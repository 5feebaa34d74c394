// NVPTXHooks::lowerDot: `dot` on tensor cores with mma.sync m16n8k16, operands staged through XOR-swizzled
// shared memory and loaded with ldmatrix. The index arithmetic is MmaFragments.h's, emitted as LLVM IR here.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <map>

#include "backends/common/TensorCoreDot.h"
#include "backends/common/KernelLowering.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/NVPTXHooks.h"

namespace tessera::backends::nvptx {

namespace {

llvm::Value* i32(IRBuilder& b, int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }

// mmaSwizzledIndex on i32 values (row, col >= 0).
llvm::Value* swizzledIndex(IRBuilder& b, const MmaSwizzle& s, llvm::Value* row, llvm::Value* col) {
  llvm::Value* phase = b.CreateURem(b.CreateUDiv(row, i32(b, s.perPhase)), i32(b, s.maxPhase));
  llvm::Value* chunk = b.CreateXor(b.CreateUDiv(col, i32(b, kMmaChunkElements)), phase);
  llvm::Value* inChunk = b.CreateURem(col, i32(b, kMmaChunkElements));
  return b.CreateAdd(b.CreateAdd(b.CreateMul(row, i32(b, s.rowLength)), b.CreateMul(chunk, i32(b, kMmaChunkElements))),
                     inChunk);
}


}  // namespace

bool NVPTXHooks::lowerDot(KernelLowering& L, const ir::Op& op) {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(op, kMmaM, kMmaN, kMmaK);
  // The fragments are read from the accumulator's layout and written back in it: the result must share it.
  if (!shape || op.result(0)->type() != op.operand(2)->type()) return false;
  const ir::Value* a = op.operand(0);
  const ir::Value* bv = op.operand(1);
  const ir::Value* acc = op.operand(2);
  ir::Type aTy = a->type(), accTy = acc->type();
  const ir::ScalarKind in = shape->input;
  const int64_t K = shape->K, N = shape->N;
  const ThreadMap& cmap = L.mapOf(accTy, op.name());
  std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(cmap);
  if (!plan) return false;

  IRBuilder& b = L.builder();
  const bool bf16 = in == ir::ScalarKind::BF16;
  llvm::Type* elemTy = L.memType(aTy.element());

  // 1. Stage A and B (each thread writes the elements it owns) at their swizzled places; the byte ranges are the
  // portable lowering's (transforms/analysis/SharedScratch.h's dot rule), permuted within each row.
  const auto [aBase, bBase] = L.dotStagingBuffers(op);
  const MmaSwizzle aSwizzle = mmaSwizzleFor(K), bSwizzle = mmaSwizzleFor(N);
  auto stage = [&](const ir::Value* v, llvm::Value* buf, const MmaSwizzle& s) {
    const ThreadMap& map = L.mapOf(v->type(), op.name());
    const Regs& regs = L.get(v);
    for (int64_t r = 0; r < map.numRegs(); ++r) {
      if (!map.regOwner[r]) continue;
      llvm::Value* idx = swizzledIndex(b, s, L.coord(map, r, 0), L.coord(map, r, 1));
      b.CreateStore(regs[r], L.smemElementPtr(buf, elemTy, idx));
    }
  };
  stage(a, aBase, aSwizzle);
  stage(bv, bBase, bSwizzle);
  L.hooks().barrier(b);

  // 2. Per-thread address parts: the warp's accumulator block origin, and the rows this lane hands to ldmatrix.
  llvm::Value* lane = L.laneId();
  llvm::Value* warp = L.warpId();
  llvm::Value* warpRow = warpCoordinatePart(b, warp, cmap.warpBases, 0);
  llvm::Value* warpCol = warpCoordinatePart(b, warp, cmap.warpBases, 1);
  // mmaALaneOffset: ((lane & 7) + 8 * ((lane >> 3) & 1), 8 * ((lane >> 4) & 1)).
  llvm::Value* laneLow = b.CreateAnd(lane, i32(b, 7));
  llvm::Value* aLaneRow = b.CreateAdd(laneLow, b.CreateShl(b.CreateAnd(b.CreateLShr(lane, i32(b, 3)), i32(b, 1)), i32(b, 3)));
  llvm::Value* aLaneCol = b.CreateShl(b.CreateAnd(b.CreateLShr(lane, i32(b, 4)), i32(b, 1)), i32(b, 3));
  // mmaBLaneOffset: ((lane & 7) + 8 * ((lane >> 3) % tiles), 0), tiles = 4 (two K steps) or 2.
  const int64_t bTiles = K % (2 * kMmaK) == 0 ? 4 : 2;
  llvm::Value* bLaneRow =
      b.CreateAdd(laneLow, b.CreateShl(b.CreateAnd(b.CreateLShr(lane, i32(b, 3)), i32(b, bTiles - 1)), i32(b, 3)));

  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Type* p3 = llvm::PointerType::get(L.context(), 3);
  auto ldmatrix = [&](llvm::Intrinsic::ID id, llvm::Value* buf, const MmaSwizzle& s, llvm::Value* row,
                      llvm::Value* col, int count) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(&m, id, {p3});
    llvm::Value* res = b.CreateCall(f, {L.smemElementPtr(buf, elemTy, swizzledIndex(b, s, row, col))});
    std::vector<llvm::Value*> regs;
    for (int i = 0; i < count; ++i) regs.push_back(b.CreateExtractValue(res, {static_cast<unsigned>(i)}));
    return regs;
  };

  // 3. The accumulator's fragments, updated by one mma per 16x8 block per K step.
  const Regs& accRegs = L.get(acc);
  std::vector<std::array<llvm::Value*, 4>> d(plan->fragments.size());
  for (size_t f = 0; f < plan->fragments.size(); ++f)
    for (int s = 0; s < 4; ++s) d[f][s] = accRegs[plan->fragments[f].regs[s]];
  llvm::Function* mma = llvm::Intrinsic::getDeclaration(
      &m, bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16 : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32);
  llvm::Type* operandTy = bf16 ? static_cast<llvm::Type*>(b.getInt32Ty()) : llvm::FixedVectorType::get(b.getHalfTy(), 2);
  auto asOperand = [&](llvm::Value* v) { return bf16 ? v : b.CreateBitCast(v, operandTy); };

  std::map<int64_t, std::vector<llvm::Value*>> bRegs;  // per fragment column: b registers of the current K steps
  for (int64_t k0 = 0; k0 < K; k0 += kMmaK) {
    const int64_t step = k0 / kMmaK;
    std::map<int64_t, std::vector<llvm::Value*>> aRegs;
    for (int64_t row : plan->fragmentRows)
      aRegs[row] = ldmatrix(llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16, aBase, aSwizzle,
                            b.CreateAdd(b.CreateAdd(warpRow, i32(b, row)), aLaneRow), b.CreateAdd(aLaneCol, i32(b, k0)), 4);
    if (bTiles == 2 || step % 2 == 0)
      for (int64_t col : plan->fragmentCols)
        bRegs[col] = ldmatrix(bTiles == 4 ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                          : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16,
                              bBase, bSwizzle, b.CreateAdd(bLaneRow, i32(b, k0)),
                              b.CreateAdd(warpCol, i32(b, col)), static_cast<int>(bTiles));
    const size_t bFirst = bTiles == 4 ? static_cast<size_t>(2 * (step % 2)) : 0;
    for (size_t f = 0; f < plan->fragments.size(); ++f) {
      const std::vector<llvm::Value*>& af = aRegs[plan->fragments[f].row];
      const std::vector<llvm::Value*>& bf = bRegs[plan->fragments[f].col];
      std::vector<llvm::Value*> args;
      for (int i = 0; i < 4; ++i) args.push_back(asOperand(af[i]));
      args.push_back(asOperand(bf[bFirst]));
      args.push_back(asOperand(bf[bFirst + 1]));
      for (int s = 0; s < 4; ++s) args.push_back(d[f][s]);
      llvm::Value* out = b.CreateCall(mma, args);
      for (int s = 0; s < 4; ++s) d[f][s] = b.CreateExtractValue(out, {static_cast<unsigned>(s)});
    }
  }

  Regs result;
  for (const auto& [frag, slot] : plan->regSlot) result.push_back(d[frag][slot]);
  L.set(op.result(0), std::move(result));
  return true;
}

}  // namespace tessera::backends::nvptx
