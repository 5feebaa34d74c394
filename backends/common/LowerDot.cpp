// dot: acc + a·b. The target gets the first say (LoweringHooks::lowerDot: tensor cores, NVPTX's mma.sync with
// ldmatrix and AMDGPU's MFMA), with the same operand staging contract (the op's scratch at smem_offset). The
// portable strategy stages both operands through shared memory (row-major), except an operand a local_load reads
// from a shared buffer, which it reads there (through the buffer's layout); a dot marked `a_in_registers` has no
// A staging and is an error here. Then every thread accumulates its own
// accumulator registers with FMAs over K, in f32 for float inputs (exact products for f16/bf16/fp8) and i32 for i8.
// a and b have one element type, except fp8, whose two formats may meet (e4m3 x e5m2).
#include "backends/common/KernelLowering.h"
#include "backends/common/TF32Rounding.h"
#include "ir/Layout.h"

#include <map>

namespace tessera::backends {

void KernelLowering::lowerDot(const ir::Op& op) {
  const ir::Value* a = op.operand(0);
  const ir::Value* bv = op.operand(1);
  const ir::Value* acc = op.operand(2);
  const ir::Type inElems[2] = {a->type().element(), bv->type().element()};
  const ir::Type inElem = inElems[0], accElem = acc->type().element();
  if (a->type().rank() != 2 || bv->type().rank() != 2 || acc->type().rank() != 2)
    fail(op, "operands must be 2-D tiles");
  const int64_t K = a->type().shape()[1];
  const std::string precision = op.hasAttr("input_precision") ? op.stringAttr("input_precision") : "ieee";
  const bool toTF32 = precision == "tf32" && inElem.scalarKind() == ir::ScalarKind::F32;
  const bool isInt = inElem.isInt();
  if (isInt != accElem.isInt()) fail(op, "integer inputs need an integer accumulator and floats a float one");
  if (hooks_.lowerDot(*this, op)) return;  // the target's tensor cores took it (and noted which instruction)
  noteDot(op, "fma", hooks_.whyNoTensorCores(op));
  if (transforms::dotTakesAInRegisters(op))
    fail(op, "takes A in registers (a_in_registers), which only a tensor-core lowering does, and none took this dot");

  // Stage a and b row-major in shared memory (transforms/analysis/SharedScratch.h's dot staging), unless a
  // local_load's buffer holds them already.
  const auto [aBase, bBase] = dotStagingBuffers(op);
  llvm::Type* const memTypes[2] = {memType(inElems[0]), memType(inElems[1])};
  auto element = [&](unsigned operand, llvm::Value* staging, llvm::Value* row, llvm::Value* col) {
    llvm::Type* mt = memTypes[operand];
    if (const ir::Op* load = transforms::dotOperandBuffer(op, operand)) {
      const ir::Type buffer = load->operand(0)->type();
      return smemElementPtr(sharedStage(load->operand(0), load->operand(1)), mt,
                            sharedElementIndex(*load, ir::Layout::fromAttr(*buffer.encoding()), buffer.stageShape(),
                                               {row, col}));
    }
    const int64_t rowLength = op.operand(operand)->type().shape()[1];
    return smemElementPtr(staging, mt, b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(rowLength))), col));
  };
  auto stage = [&](unsigned operand, llvm::Value* buf) {
    if (!buf) return;
    const ir::Value* v = op.operand(operand);
    const ThreadMap& map = mapOf(v->type(), op.name());
    const Regs& regs = get(v);
    for (int64_t r = 0; r < map.numRegs(); ++r) {
      if (!map.regOwner[r]) continue;
      llvm::Value* idx = b_.CreateAdd(b_.CreateMul(coord(map, r, 0), b_.getInt32(static_cast<uint32_t>(map.shape[1]))),
                                     coord(map, r, 1));
      b_.CreateStore(toMemory(regs[r], inElems[operand]), smemElementPtr(buf, memTypes[operand], idx));
    }
  };
  stage(0, aBase);
  stage(1, bBase);
  if (aBase || bBase) barrier();

  // Accumulate: for (k = 0; k < K; ++k) acc[r] += a[m_r, k] * b[k, n_r].
  const ThreadMap& cmap = mapOf(acc->type(), op.name());
  llvm::Type* computeTy = isInt ? b_.getInt32Ty() : b_.getFloatTy();
  ir::Type computeElem = isInt ? ir::Type::i32() : ir::Type::f32();
  auto toCompute = [&](llvm::Value* v, unsigned operand) {
    v = castScalar(v, inElems[operand], computeElem);
    return toTF32 ? roundToTF32(b_, v) : v;
  };
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "dot.k", kernel_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "dot.done", kernel_);
  Regs init;
  for (llvm::Value* v : get(acc)) init.push_back(castScalar(v, accElem, computeElem));
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* k = b_.CreatePHI(b_.getInt32Ty(), 2, "k");
  k->addIncoming(b_.getInt32(0), pre);
  std::vector<llvm::PHINode*> sums;
  for (llvm::Value* v : init) {
    llvm::PHINode* p = b_.CreatePHI(computeTy, 2);
    p->addIncoming(v, pre);
    sums.push_back(p);
  }
  std::map<int64_t, llvm::Value*> aVals, bVals;  // by the register part of m (resp. n)
  Regs next;
  for (int64_t r = 0; r < cmap.numRegs(); ++r) {
    int64_t mReg = cmap.regCoords[r][0], nReg = cmap.regCoords[r][1];
    if (!aVals.count(mReg))
      aVals[mReg] = toCompute(
          fromMemory(b_.CreateLoad(memTypes[0], element(0, aBase, coord(cmap, r, 0), k)), inElems[0]), 0);
    if (!bVals.count(nReg))
      bVals[nReg] = toCompute(
          fromMemory(b_.CreateLoad(memTypes[1], element(1, bBase, k, coord(cmap, r, 1))), inElems[1]), 1);
    llvm::Value* x = aVals[mReg];
    llvm::Value* y = bVals[nReg];
    next.push_back(isInt ? b_.CreateAdd(sums[r], b_.CreateMul(x, y))
                         : b_.CreateIntrinsic(llvm::Intrinsic::fma, {computeTy}, {x, y, sums[r]}));
  }
  llvm::Value* kNext = b_.CreateAdd(k, b_.getInt32(1));
  k->addIncoming(kNext, loop);
  for (size_t r = 0; r < sums.size(); ++r) sums[r]->addIncoming(next[r], loop);
  b_.CreateCondBr(b_.CreateICmpSLT(kNext, b_.getInt32(static_cast<uint32_t>(K))), loop, exit);
  b_.SetInsertPoint(exit);
  // The sums after the last k (the phis hold the sums before it).
  Regs out;
  for (llvm::Value* sum : next) out.push_back(castScalar(sum, computeElem, accElem));
  set(op.result(0), std::move(out));
}

}  // namespace tessera::backends
