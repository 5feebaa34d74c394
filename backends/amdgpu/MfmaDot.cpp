// AMDGPUHooks::lowerDot: `dot` on matrix cores (wave64) with v_mfma_f32_16x16x16{f16,bf16_1k}, or for i8
// v_mfma_i32_16x16x32_i8 (gfx942) / v_mfma_i32_16x16x16i8 (gfx90a); an accumulator laid out in 32x32 blocks
// (PassOptions::matrixInstrSize 32; transposed too, chained dots with P from registers) runs
// v_mfma_f32_32x32x8{f16,bf16_1k}.
// Each lane reads its operand vectors (4 16-bit elements, or 8 / 4 bytes of i8) with one LDS load from A's rows and
// B's columns, K-contiguous and swizzled as mfmaOperandLdsLayout says: from the shared buffer a local_load names
// (async copies filled it, in that layout), or from the dot's LDS scratch, where the dot stages the operand itself;
// or, for a dot marked a_in_registers (the second of chained dots), A's vectors are its own registers. An
// accumulator in the transposed fragments' layout is computed as D^T = B^T A^T: the instruction gets B's vector as
// its A operand and A's as its B. The index arithmetic is MfmaFragments.h's, emitted as LLVM IR here.
#include <llvm/IR/IntrinsicsAMDGPU.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>

#include "backends/common/TensorCoreDot.h"
#include "backends/amdgpu/AMDGPUHooks.h"
#include "backends/amdgpu/MfmaFragments.h"
#include "backends/amdgpu/MfmaLayoutPolicy.h"
#include "backends/common/KernelLowering.h"

namespace tessera::backends::amdgpu {

namespace {

llvm::Value* i32(IRBuilder& b, int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }

}  // namespace

bool AMDGPUHooks::lowerDot(KernelLowering& L, const ir::Op& op) {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(op, mfmaTiles(arch_));
  // The fragments are read from the accumulator's layout and written back in it: the result must share it.
  if (!shape) {
    dotRefusal_ = tensorCoreRefusal(op, mfmaTiles(arch_), "MFMA (" + arch_ + ")");
    return false;
  }
  if (op.result(0)->type() != op.operand(2)->type()) {
    dotRefusal_ = "the dot's result is not laid out as its accumulator";
    return false;
  }
  const ir::Value* a = op.operand(0);
  const ir::Value* acc = op.operand(2);
  ir::Type aTy = a->type(), accTy = acc->type();
  const ir::ScalarKind in = shape->tile.input;
  const int64_t elementBytes = aTy.element().storageBytes();
  const ThreadMap& cmap = L.mapOf(accTy, op.name());
  std::optional<MfmaAccumulatorPlan> plan = planMfmaAccumulator(cmap);
  if (!plan) {
    dotRefusal_ = "the accumulator's layout does not hold MFMA's output fragments";
    return false;
  }
  // The accumulator's layout says which instruction: 32x32 blocks run v_mfma_f32_32x32x8 (16-bit inputs only).
  const int64_t block = plan->block;
  if (block == kMfmaLargeBlock && in == ir::ScalarKind::I8) {
    dotRefusal_ = "i8 dots have no 32x32 MFMA";
    return false;
  }
  const int64_t K = shape->K, stepK = block == kMfmaLargeBlock ? 8 : shape->tile.k;
  const int64_t elements = mfmaOperandElements(stepK, block);  // per lane and operand vector
  const int64_t groupBits = block == kMfmaLargeBlock ? 1 : 2;   // the lane bits above lane % block: K groups
  // A straight from registers, where assign-layouts put it in the accumulator's transposed layout: the fragments of
  // A's plan hold its MFMA operand vectors, keyed by (row, K origin of the block): a 16x16 block is one K step's
  // vector (4 registers), a 32x32 block four K steps' (registers 4 j .. 4 j + 3 are K step j of 8).
  std::map<std::pair<int64_t, int64_t>, const MfmaFragment*> aRegisterVectors;
  const bool aFromRegisters = transforms::dotTakesAInRegisters(op);
  std::optional<MfmaAccumulatorPlan> aPlan;
  if (aFromRegisters) {
    const ThreadMap& amap = L.mapOf(aTy, op.name());
    aPlan = planMfmaAccumulator(amap);
    if (elements != 4 || !plan->transposed || !aPlan || !aPlan->transposed || aPlan->block != block ||
        amap.warpBases != cmap.warpBases)
      L.fail(op, "takes A in registers (a_in_registers), but A's layout does not hold the MFMA A fragments of the "
                 "accumulator's transposed layout");
    for (const MfmaFragment& f : aPlan->fragments) aRegisterVectors[{f.row, f.col}] = &f;
  }

  // An operand in a shared buffer must be laid out as MFMA reads it (async-copy-dot-operands asks the policy for
  // that layout); in another one the portable lowering reads it.
  const ir::Layout lds[2] = {mfmaOperandLdsLayout(K, elementBytes, 0, shape->M),
                             mfmaOperandLdsLayout(K, elementBytes, 1, shape->N)};
  for (unsigned i = 0; i < 2; ++i)
    if (const ir::Op* load = transforms::dotOperandBuffer(op, i))
      if (ir::Layout::fromAttr(*load->operand(0)->type().encoding()) != lds[i]) {
        dotRefusal_ = std::string("operand ") + (i ? "B" : "A") + "'s LDS buffer is not laid out as the MFMA reads it";
        return false;
      }
  IRBuilder& b = L.builder();
  llvm::Type* elemTy = L.memType(aTy.element());
  const std::vector<int64_t> shapes[2] = {{shape->M, K}, {K, shape->N}};
  // The element index of A[outer][k] (operand 0) or B[k][outer] (operand 1) in its LDS layout.
  auto ldsIndex = [&](unsigned i, llvm::Value* outer, llvm::Value* k) {
    return L.sharedElementIndex(op, lds[i], shapes[i], i == 0 ? std::vector{outer, k} : std::vector{k, outer});
  };

  // 1. Where the operands are: their shared buffer's stage, or the dot's staging ranges (transforms/analysis/
  // SharedScratch.h's dot rule), into which each thread writes the elements it owns (the swizzle permutes elements
  // within rows, so each layout fits its range).
  const auto [aStaging, bStaging] = L.dotStagingBuffers(op);
  bool staged = false;
  auto operandBase = [&](unsigned i, llvm::Value* staging) -> llvm::Value* {
    if (const ir::Op* load = transforms::dotOperandBuffer(op, i))
      return L.sharedStage(load->operand(0), load->operand(1));
    const ir::Value* v = op.operand(i);
    L.storeToShared(op, L.get(v), L.mapOf(v->type(), op.name()), v->type().element(), lds[i], shapes[i], staging);
    staged = true;
    return staging;
  };
  llvm::Value* aBase = aFromRegisters ? nullptr : operandBase(0, aStaging);
  llvm::Value* bBase = operandBase(1, bStaging);
  if (staged) barrier(b);

  // 2. Per-thread parts: the warp's accumulator block origin, and
  // mfmaOperandOrigin(lane, elements, block) = (lane % block, elements * (lane / block)).
  llvm::Value* lane = L.laneId();
  llvm::Value* warp = L.warpId();
  llvm::Value* warpRow = warpCoordinatePart(b, warp, cmap.warpBases, 0);
  llvm::Value* warpCol = warpCoordinatePart(b, warp, cmap.warpBases, 1);
  llvm::Value* laneOuter = b.CreateAnd(lane, i32(b, block - 1));
  llvm::Value* laneK = b.CreateMul(b.CreateLShr(lane, i32(b, block == kMfmaLargeBlock ? 5 : 4)), i32(b, elements));

  // The intrinsic's operand vectors: <4 x half> for f16, <4 x i16> (bf16 bit patterns) for the bf16 "1k" form, and
  // the i8 bytes packed into an i64 (gfx942) or i32 (gfx90a), element v in bits 8v .. 8v + 7.
  llvm::Type* operandTy =
      in == ir::ScalarKind::I8
          ? static_cast<llvm::Type*>(b.getIntNTy(static_cast<unsigned>(8 * elements)))
          : llvm::FixedVectorType::get(in == ir::ScalarKind::BF16 ? b.getInt16Ty() : b.getHalfTy(), elements);
  // A lane reads operand i at (outer, k) = (warp origin + lane % block + a fragment's offset,
  // elements * (lane / block) + k0): a per-thread part and a constant (k0 is a multiple of the instruction's K). Where their bits are disjoint,
  // each read's index is the thread part's, computed once, XOR a constant on the few bits the swizzle shares with it,
  // plus a constant that folds into the LDS instruction's offset: a handful of base VGPRs instead of one address per
  // fragment and K step, which LICM hoisted out of attention's key loop (128x128 d 128 on gfx942 spilled 149 VGPRs).
  int64_t threadOuterBits[2] = {0, 0};  // the bits of the warp origin, per operand
  for (const Coords& w : cmap.warpBases) {
    threadOuterBits[0] |= w[0];
    threadOuterBits[1] |= w[1];
  }
  std::function<llvm::Value*(const Coords&)> indexers[2];
  for (unsigned i = aFromRegisters ? 1 : 0; i < 2; ++i) {
    if (threadOuterBits[i] & (block - 1)) continue;  // warps split a fragment's rows: index each read whole
    threadOuterBits[i] |= block - 1;                 // lane % block
    const int outerDim = i == 0 ? 0 : 1, kDim = 1 - outerDim;
    auto basis = [](int dim, int64_t value) {
      Coords c(2, 0);
      c[dim] = value;
      return c;
    };
    std::vector<Coords> threadBases;  // elements * (lane / block)
    for (int bit = 0; bit < groupBits; ++bit) threadBases.push_back(basis(kDim, elements << bit));
    for (int64_t bit = 1; bit <= threadOuterBits[i]; bit <<= 1)
      if (threadOuterBits[i] & bit) threadBases.push_back(basis(outerDim, bit));
    std::vector<llvm::Value*> thread(2);
    thread[outerDim] = b.CreateOr(i == 0 ? warpRow : warpCol, laneOuter);
    thread[kDim] = laneK;
    indexers[i] = L.sharedIndexer(lds[i], shapes[i], thread, threadBases);
  }
  auto loadOperand = [&](unsigned i, int64_t outerOffset, int64_t k0) -> llvm::Value* {
    llvm::Value* index;
    if (indexers[i] && (outerOffset & threadOuterBits[i]) == 0) {
      index = indexers[i](i == 0 ? Coords{outerOffset, k0} : Coords{k0, outerOffset});
    } else {
      llvm::Value* outer = b.CreateAdd(b.CreateAdd(i == 0 ? warpRow : warpCol, i32(b, outerOffset)), laneOuter);
      index = ldsIndex(i, outer, b.CreateAdd(laneK, i32(b, k0)));
    }
    return b.CreateAlignedLoad(operandTy, L.smemElementPtr(i == 0 ? aBase : bBase, elemTy, index),
                               llvm::Align(static_cast<uint64_t>(elements * elementBytes)));
  };

  // A's vector at (row, k0) from its registers.
  const Regs* aRegs = aFromRegisters ? &L.get(a) : nullptr;
  auto registerOperandA = [&](int64_t row, int64_t k0) -> llvm::Value* {
    auto it = aRegisterVectors.find({row, k0 & ~(block - 1)});
    if (it == aRegisterVectors.end()) L.fail(op, "A's registers hold no MFMA vector at row " + std::to_string(row) +
                                                     ", K " + std::to_string(k0));
    const int64_t first = (k0 % block) / stepK * 4;  // the K step's registers within the block
    llvm::Value* v = llvm::PoisonValue::get(operandTy);
    for (int s = 0; s < 4; ++s)
      v = b.CreateInsertElement(
          v, b.CreateBitCast((*aRegs)[it->second->regs[static_cast<size_t>(first + s)]], operandTy->getScalarType()),
          uint64_t(s));
    return v;
  };

  // 3. The accumulator's fragments as <4 x float> (<4 x i32> for i8; <16 x float> for 32x32 blocks), updated by
  // one MFMA per block per K step.
  const Regs& accRegs = L.get(acc);
  const int64_t slots = mfmaAccumulatorRegisters(block);
  llvm::Type* accVecTy = llvm::FixedVectorType::get(accRegs.at(0)->getType(), static_cast<unsigned>(slots));
  std::vector<llvm::Value*> d(plan->fragments.size());
  for (size_t f = 0; f < plan->fragments.size(); ++f) {
    llvm::Value* v = llvm::PoisonValue::get(accVecTy);
    for (int64_t s = 0; s < slots; ++s)
      v = b.CreateInsertElement(v, accRegs[plan->fragments[f].regs[s]], uint64_t(s));
    d[f] = v;
  }
  const bool bf16 = in == ir::ScalarKind::BF16;
  const llvm::Intrinsic::ID mfma =
      block == kMfmaLargeBlock ? (bf16 ? llvm::Intrinsic::amdgcn_mfma_f32_32x32x8bf16_1k
                                       : llvm::Intrinsic::amdgcn_mfma_f32_32x32x8f16)
      : in == ir::ScalarKind::I8 ? (stepK == 32 ? llvm::Intrinsic::amdgcn_mfma_i32_16x16x32_i8
                                                : llvm::Intrinsic::amdgcn_mfma_i32_16x16x16i8)
      : bf16                     ? llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k
                                 : llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16;
  for (int64_t k0 = 0; k0 < K; k0 += stepK) {
    std::map<int64_t, llvm::Value*> aVec, bVec;
    for (int64_t row : plan->fragmentRows)
      aVec[row] = aFromRegisters ? registerOperandA(row, k0) : loadOperand(0, row, k0);
    for (int64_t col : plan->fragmentCols) bVec[col] = loadOperand(1, col, k0);
    for (size_t f = 0; f < plan->fragments.size(); ++f) {
      llvm::Value* x = aVec[plan->fragments[f].row];
      llvm::Value* y = bVec[plan->fragments[f].col];
      if (plan->transposed) std::swap(x, y);  // D^T = B^T A^T
      // cbsz, abid, blgp = 0: no broadcast between blocks, plain B lane pattern.
      d[f] = b.CreateIntrinsic(mfma, {}, {x, y, d[f], i32(b, 0), i32(b, 0), i32(b, 0)});
    }
  }

  Regs result;
  for (const auto& [frag, slot] : plan->regSlot) result.push_back(b.CreateExtractElement(d[frag], uint64_t(slot)));
  L.set(op.result(0), std::move(result));
  // The ISA's name: llvm.amdgcn.mfma.f32.32x32x8f16 is v_mfma_f32_32x32x8f16.
  std::string name = llvm::Intrinsic::getBaseName(mfma).str().substr(std::string("llvm.amdgcn.").size());
  std::replace(name.begin(), name.end(), '.', '_');
  L.noteDot(op, "v_" + name + (aFromRegisters ? " (A from registers)" : ""));
  return true;
}

}  // namespace tessera::backends::amdgpu
