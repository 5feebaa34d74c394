// NVPTXHooks::lowerDot: `dot` on tensor cores with mma.sync (m16n8k16 f16/bf16, m16n8k32 s8, m16n8k8 tf32),
// operands staged through XOR-swizzled shared memory and loaded with ldmatrix, or A taken from registers where the
// dot is marked so (16-bit inputs). The index arithmetic is MmaFragments.h's, emitted as LLVM IR here.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <map>

#include "backends/common/KernelLowering.h"
#include "backends/common/TF32Rounding.h"
#include "backends/common/TensorCoreDot.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "backends/nvptx/NVPTXHooks.h"
#include "backends/nvptx/WgmmaPlan.h"
#include "transforms/analysis/ChainedDots.h"

namespace tessera::backends::nvptx {

namespace {

llvm::Value* i32(IRBuilder& b, int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }

// mmaSwizzledIndex on i32 values (row, col >= 0), zero-extended to i64: the index is never negative, and a GEP would
// sign-extend an i32 one, which some optimization pipelines can prove unnecessary and others cannot.
llvm::Value* swizzledIndex(IRBuilder& b, const MmaSwizzle& s, llvm::Value* row, llvm::Value* col) {
  llvm::Value* phase = b.CreateURem(b.CreateUDiv(row, i32(b, s.perPhase)), i32(b, s.maxPhase));
  llvm::Value* chunk = b.CreateXor(b.CreateUDiv(col, i32(b, s.chunkElements)), phase);
  llvm::Value* inChunk = b.CreateURem(col, i32(b, s.chunkElements));
  llvm::Value* index = b.CreateAdd(
      b.CreateAdd(b.CreateMul(row, i32(b, s.rowLength)), b.CreateMul(chunk, i32(b, s.chunkElements))), inChunk);
  return b.CreateZExt(index, b.getInt64Ty());
}

// The mma.sync of an input kind (kMmaTiles). Its operands are the i32 registers ldmatrix delivers, except f16's
// (<2 x half>).
llvm::Intrinsic::ID mmaIntrinsic(ir::ScalarKind in) {
  switch (in) {
    case ir::ScalarKind::F16: return llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
    case ir::ScalarKind::BF16: return llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16;
    case ir::ScalarKind::I8: return llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8;
    default: return llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32;
  }
}

llvm::Intrinsic::ID ldmatrixIntrinsic(int64_t tiles, bool trans) {
  if (tiles == 4)
    return trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                 : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
  return trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
               : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16;
}

// One operand's ldmatrix indices: lane l reads (rowVar + row, colVar + col) for constant offsets (row, col). Where
// mmaSplitSwizzledIndex allows, the index is a per-thread base shared by every offset with the same low chunk bits,
// plus a constant that folds into the ldmatrix's address: the loop then holds a few bases, not one 64-bit address
// per ldmatrix (which spilled attention's QK^T, 64 of them at head dim 128). Else the whole index is computed.
class SwizzledIndices {
 public:
  SwizzledIndices(IRBuilder& b, const MmaSwizzle& s, llvm::Value* rowVar, llvm::Value* colVar, int64_t colVarChunkBits)
      : b_(b), s_(s), rowVar_(rowVar), colVar_(colVar), colVarChunkBits_(colVarChunkBits) {}

  llvm::Value* at(int64_t row, int64_t col) {
    const std::optional<MmaSwizzleSplit> split = mmaSplitSwizzledIndex(s_, row, col, colVarChunkBits_);
    if (!split) return swizzledIndex(b_, s_, b_.CreateAdd(rowVar_, i32(b_, row)), b_.CreateAdd(colVar_, i32(b_, col)));
    llvm::Value*& base = bases_[split->baseCol];
    if (!base) base = swizzledIndex(b_, s_, rowVar_, b_.CreateAdd(colVar_, i32(b_, split->baseCol)));
    return b_.CreateAdd(base, b_.getInt64(static_cast<uint64_t>(split->offset)), "", /*HasNUW=*/true, /*HasNSW=*/true);
  }

 private:
  IRBuilder& b_;
  MmaSwizzle s_;
  llvm::Value* rowVar_;
  llvm::Value* colVar_;
  int64_t colVarChunkBits_;
  std::map<int64_t, llvm::Value*> bases_;  // by baseCol
};

// The chunk bits a warp coordinate part (warpCoordinatePart) may have: every base's, when all are whole chunks.
int64_t warpChunkBits(const std::vector<Coords>& bases, int dim, int64_t chunkElements) {
  int64_t bits = 0;
  for (const Coords& c : bases) {
    if (c[dim] % chunkElements != 0) return ~int64_t{0};
    bits |= c[dim] / chunkElements;
  }
  return bits;
}

// Why a dot that runs on mma.sync on sm_90a does not run on wgmma, for the dot report.
std::string whyNotWgmma(const ir::Op& op, const ThreadMap& cmap) {
  transforms::PassOptions options;
  options.numWarps = static_cast<int>(cmap.numWarps);
  options.warpSize = static_cast<int>(cmap.warpSize);
  options.arch = "sm_90a";
  std::string why;
  if (transforms::isChainedDot(op) ? wgmmaChainedDotPlan(op, options, &why) : wgmmaDotPlan(op, options, &why))
    why = "its operands' or accumulator's layouts are not the wgmma plan's";
  return "not wgmma: " + why;
}

}  // namespace

std::vector<llvm::Value*> packMmaOperandA(KernelLowering& L, const ir::Value* a, const std::vector<int64_t>& from,
                                          size_t fragment) {
  IRBuilder& b = L.builder();
  const Regs& regs = L.get(a);
  llvm::Type* pairTy = llvm::FixedVectorType::get(L.regType(a->type().element()), 2);
  std::vector<llvm::Value*> packed;
  for (size_t p = 0; p < 4; ++p) {
    llvm::Value* pair = llvm::PoisonValue::get(pairTy);
    for (unsigned h = 0; h < 2; ++h) pair = b.CreateInsertElement(pair, regs[from[fragment * 8 + 2 * p + h]], h);
    packed.push_back(b.CreateBitCast(pair, b.getInt32Ty()));
  }
  return packed;
}

bool NVPTXHooks::lowerDot(KernelLowering& L, const ir::Op& op) {
  if (lowerWgmmaDot(L, op)) return true;
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(op, kMmaTiles);
  if (!shape) {
    dotRefusal_ = tensorCoreRefusal(op, kMmaTiles, "mma.sync");
    return false;
  }
  // The fragments are read from the accumulator's layout and written back in it: the result must share it.
  if (op.result(0)->type() != op.operand(2)->type()) {
    dotRefusal_ = "the dot's result is not laid out as its accumulator";
    return false;
  }
  const ir::Value* a = op.operand(0);
  const ir::Value* acc = op.operand(2);
  ir::Type aTy = a->type(), accTy = acc->type();
  const ir::ScalarKind in = shape->tile.input;
  const int64_t K = shape->K, N = shape->N, stepK = shape->tile.k;
  const ThreadMap& cmap = L.mapOf(accTy, op.name());
  std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(cmap);
  if (!plan) {
    dotRefusal_ = "the accumulator's layout does not hold mma.sync's C fragments";
    return false;
  }

  IRBuilder& b = L.builder();
  llvm::Type* elemTy = L.memType(aTy.element());
  const int64_t elementBytes = aTy.element().storageBytes();
  // B transposed (N x K, read with ldmatrix): staged so for 8- and 32-bit inputs, or a K-contiguous buffer.
  const bool bTransposed =
      transforms::dotOperandBuffer(op, 1) ? dotBKContiguous(op) : mmaStagesBTransposed(elementBytes);
  const bool toTF32 = in == ir::ScalarKind::F32;
  // A straight from registers, where assign-layouts put it in a layout holding the A fragments.
  std::optional<std::vector<int64_t>> aFromRegisters;
  if (transforms::dotTakesAInRegisters(op)) {
    if (elementBytes == 2) aFromRegisters = planMmaOperandARegisters(L.mapOf(aTy, op.name()), cmap, *plan);
    if (!aFromRegisters)
      L.fail(op, "takes A in registers (a_in_registers), but A's layout does not hold the mma A fragments of the "
                 "accumulator's layout");
  }

  // 1. Where ldmatrix reads A and B: the shared buffer a local_load reads an operand from (transforms::
  // dotOperandBuffer; it must be swizzled as mmaOperandSharedLayout says, which async-copy-dot-operands asks for,
  // else the portable lowering reads it), or the dot's staging scratch, into which each thread writes the elements
  // it owns, A row-major and B row-major or transposed; the byte ranges are the portable lowering's
  // (transforms/analysis/SharedScratch.h's dot rule), each permuted in place.
  const MmaSwizzle aSwizzle = mmaSwizzleFor(K, elementBytes), bSwizzle = mmaSwizzleFor(bTransposed ? K : N, elementBytes);
  // The block rows A's lanes read: the accumulator's (permuted in the chained layout), unless A's buffer holds its
  // rows in that order itself (mmaChainedASharedLayout), when they are the buffer's own rows.
  MmaRowBases aRowBases = plan->rowBases;
  for (unsigned i = 0; i < 2; ++i)
    if (const ir::Op* load = transforms::dotOperandBuffer(op, i)) {
      std::optional<ir::Layout> wanted = mmaOperandSharedLayout(op, i, {.warpSize = static_cast<int>(kMmaWarpSize)});
      // A's layout follows the accumulator's rows, which say whether the policy chained the dot (the call above
      // does not know the warp count the policy decided with).
      if (wanted && i == 0) {
        wanted = mmaSharedLayout(aSwizzle);
        if (plan->rowBases == kChainedRows)
          if (std::optional<ir::Layout> chained = mmaChainedASharedLayout(shape->M, K, elementBytes)) {
            wanted = chained;
            aRowBases = kMmaIdentityRows;
          }
      }
      if (!wanted || ir::Layout::fromAttr(*load->operand(0)->type().encoding()) != *wanted) {
        dotRefusal_ = std::string("operand ") + (i ? "B" : "A") + "'s buffer is not laid out as ldmatrix reads it";
        return false;
      }
    }
  const auto [aStaging, bStaging] = L.dotStagingBuffers(op);
  bool staged = false;
  auto operandBuffer = [&](unsigned i, llvm::Value* staging, const MmaSwizzle& s, bool transposed) {
    if (const ir::Op* load = transforms::dotOperandBuffer(op, i)) return L.sharedStage(load->operand(0), load->operand(1));
    const ir::Value* v = op.operand(i);
    const ThreadMap& map = L.mapOf(v->type(), op.name());
    const Regs& regs = L.get(v);
    for (int64_t r = 0; r < map.numRegs(); ++r) {
      if (!map.regOwner[r]) continue;
      llvm::Value* row = L.coord(map, r, transposed ? 1 : 0);
      llvm::Value* col = L.coord(map, r, transposed ? 0 : 1);
      b.CreateStore(toTF32 ? roundToTF32(b, regs[r]) : regs[r],
                    L.smemElementPtr(staging, elemTy, swizzledIndex(b, s, row, col)));
    }
    staged = true;
    return staging;
  };
  llvm::Value* aBase = aFromRegisters ? nullptr : operandBuffer(0, aStaging, aSwizzle, false);
  llvm::Value* bBase = operandBuffer(1, bStaging, bSwizzle, bTransposed);
  if (staged) L.barrier();

  // 2. Per-thread address parts: the warp's accumulator block origin, and the rows this lane hands to ldmatrix.
  llvm::Value* lane = L.laneId();
  llvm::Value* warp = L.warpId();
  llvm::Value* warpRow = warpCoordinatePart(b, warp, cmap.warpBases, 0);
  llvm::Value* warpCol = warpCoordinatePart(b, warp, cmap.warpBases, 1);
  // mmaALaneOffset: (the block row of fragment row lane & 15, chunk * ((lane >> 4) & 1)).
  const int64_t chunk = aSwizzle.chunkElements;
  llvm::Value* laneLow = b.CreateAnd(lane, i32(b, 7));
  llvm::Value* aLaneRow = i32(b, 0);
  for (int i = 0; i < 4; ++i)
    aLaneRow = b.CreateXor(aLaneRow, b.CreateMul(b.CreateAnd(b.CreateLShr(lane, i32(b, i)), i32(b, 1)),
                                                 i32(b, aRowBases[i])));
  llvm::Value* aLaneCol = b.CreateMul(b.CreateAnd(b.CreateLShr(lane, i32(b, 4)), i32(b, 1)), i32(b, chunk));
  // B covers two K steps per ldmatrix.x4 or one per x2 (mmaBLoadTiles). Tile q = (lane >> 3) % tiles sits at K
  // rows 8q (mmaBLaneOffset, row-major B) or at K chunk q (mmaBTransposedLaneOffset).
  const int64_t bTiles = mmaBLoadTiles(*plan, K, stepK);
  llvm::Value* bTile = b.CreateAnd(b.CreateLShr(lane, i32(b, 3)), i32(b, bTiles - 1));
  llvm::Value* bLaneK = bTransposed ? b.CreateMul(bTile, i32(b, chunk)) : b.CreateAdd(laneLow, b.CreateShl(bTile, i32(b, 3)));

  // The lanes' variable rows and columns, and the chunk bits of the columns': A's lanes read chunk 0 or 1, B's
  // (transposed) lanes chunks 0 .. bTiles-1, row-major B's columns are the warp's.
  SwizzledIndices aIndex(b, aSwizzle, b.CreateAdd(warpRow, aLaneRow), aLaneCol, 1);
  SwizzledIndices bIndex = bTransposed
                               ? SwizzledIndices(b, bSwizzle, b.CreateAdd(warpCol, laneLow), bLaneK, bTiles - 1)
                               : SwizzledIndices(b, bSwizzle, bLaneK, warpCol,
                                                 warpChunkBits(cmap.warpBases, 1, bSwizzle.chunkElements));

  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Type* p3 = llvm::PointerType::get(L.context(), 3);
  auto ldmatrix = [&](llvm::Intrinsic::ID id, llvm::Value* buf, llvm::Value* index, int count) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(&m, id, {p3});
    llvm::Value* res = b.CreateCall(f, {L.smemElementPtr(buf, elemTy, index)});
    std::vector<llvm::Value*> regs;
    for (int i = 0; i < count; ++i) regs.push_back(b.CreateExtractValue(res, {static_cast<unsigned>(i)}));
    return regs;
  };
  auto loadA = [&](int64_t row, int64_t k0) {
    return ldmatrix(ldmatrixIntrinsic(4, false), aBase, aIndex.at(row, k0), 4);
  };
  auto loadB = [&](int64_t col, int64_t k0) {
    return bTransposed ? ldmatrix(ldmatrixIntrinsic(bTiles, false), bBase, bIndex.at(col, k0), static_cast<int>(bTiles))
                       : ldmatrix(ldmatrixIntrinsic(bTiles, true), bBase, bIndex.at(k0, col), static_cast<int>(bTiles));
  };

  // 3. The accumulator's fragments, updated by one mma per 16x8 block per K step.
  const Regs& accRegs = L.get(acc);
  std::vector<std::array<llvm::Value*, 4>> d(plan->fragments.size());
  for (size_t f = 0; f < plan->fragments.size(); ++f)
    for (int s = 0; s < 4; ++s) d[f][s] = accRegs[plan->fragments[f].regs[s]];
  llvm::Function* mma = llvm::Intrinsic::getDeclaration(&m, mmaIntrinsic(in));
  const bool f16 = in == ir::ScalarKind::F16;
  auto asOperand = [&](llvm::Value* v) {
    return f16 ? b.CreateBitCast(v, llvm::FixedVectorType::get(b.getHalfTy(), 2)) : v;
  };

  auto packedA = [&](size_t i, int64_t step) {
    return packMmaOperandA(L, a, *aFromRegisters, i * static_cast<size_t>(K / stepK) + static_cast<size_t>(step));
  };

  // d[f] += a · b, with a's four and b's two 32-bit registers.
  auto issueMma = [&](size_t f, const std::vector<llvm::Value*>& af, llvm::Value* b0, llvm::Value* b1) {
    std::vector<llvm::Value*> args;
    for (int i = 0; i < 4; ++i) args.push_back(asOperand(af[i]));
    args.push_back(asOperand(b0));
    args.push_back(asOperand(b1));
    for (int s = 0; s < 4; ++s) args.push_back(d[f][s]);
    llvm::Value* out = b.CreateCall(mma, args);
    for (int s = 0; s < 4; ++s) d[f][s] = b.CreateExtractValue(out, {static_cast<unsigned>(s)});
  };
  std::map<int64_t, size_t> rowIndex;  // fragment row -> its index in plan->fragmentRows
  for (size_t i = 0; i < plan->fragmentRows.size(); ++i) rowIndex[plan->fragmentRows[i]] = i;

  const int64_t stepsPerB = bTiles == 4 ? 2 : 1;  // the K steps one B load covers
  if (aFromRegisters) {
    // A costs nothing to reach, B a load: each B load serves all its K steps at once, so that only one column's B
    // registers are live at a time (with warps stacked along M a warp covers every column).
    for (int64_t k0 = 0; k0 < K; k0 += stepsPerB * stepK)
      for (int64_t col : plan->fragmentCols) {
        const std::vector<llvm::Value*> bf = loadB(col, k0);
        for (int64_t s = 0; s < stepsPerB; ++s)
          for (size_t f = 0; f < plan->fragments.size(); ++f)
            if (plan->fragments[f].col == col)
              issueMma(f, packedA(rowIndex.at(plan->fragments[f].row), k0 / stepK + s), bf[2 * s], bf[2 * s + 1]);
      }
  } else {
    // Per K step, the A fragments of every row, then every fragment; B is loaded every stepsPerB steps.
    std::map<int64_t, std::vector<llvm::Value*>> bRegs;  // per fragment column: b registers of the current K steps
    for (int64_t k0 = 0; k0 < K; k0 += stepK) {
      const int64_t step = k0 / stepK;
      std::map<int64_t, std::vector<llvm::Value*>> aRegs;
      for (int64_t row : plan->fragmentRows) aRegs[row] = loadA(row, k0);
      if (step % stepsPerB == 0)
        for (int64_t col : plan->fragmentCols) bRegs[col] = loadB(col, k0);
      const size_t bFirst = static_cast<size_t>(2 * (step % stepsPerB));
      for (size_t f = 0; f < plan->fragments.size(); ++f) {
        const std::vector<llvm::Value*>& bf = bRegs[plan->fragments[f].col];
        issueMma(f, aRegs[plan->fragments[f].row], bf[bFirst], bf[bFirst + 1]);
      }
    }
  }

  Regs result;
  for (const auto& [frag, slot] : plan->regSlot) result.push_back(d[frag][slot]);
  L.set(op.result(0), std::move(result));
  L.noteDot(op,
            "mma.sync m16n8k" + std::to_string(stepK) + " " + (toTF32 ? "tf32" : ir::scalarKindName(in)) +
                (aFromRegisters ? " (A from registers)" : ""),
            asyncDots_ ? whyNotWgmma(op, cmap) : "");
  return true;
}

}  // namespace tessera::backends::nvptx
