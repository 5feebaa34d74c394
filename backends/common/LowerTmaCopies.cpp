// TMA copies of descriptor blocks into shared buffers, completed on mbarriers (the target's hooks emit the
// instructions: LoweringHooks.h).
//
// * mbarrier_alloc: its scratch holds the barriers, 8 bytes each. Thread 0 initializes each for `arrivals` arrivals
//   per phase (1 without the attribute) and fences the initialization for the copies; then every thread
//   synchronizes (the op is in the function's body, which every thread runs).
// * async_tma_copy: thread 0 alone (in a warp_specialize producer region, its one thread), where the predicate
//   holds, posts the block's bytes on barrier `stage`
//   (arrive.expect_tx: the one arrival of the phase) and copies the block into stage `stage` of the buffer, as
//   boxes no wider than the tensor map's swizzle span (DescriptorParameter.h: tensorMapInnerBox), box j landing
//   j box-sizes into the stage: the NVMMA layouts' column blocks. The map is at byte kDescriptorMapOffset of the
//   descriptor parameter, whose address is generic (the parameter is grid_constant); its dimensions run
//   innermost first, so the coordinates are the offsets reversed.
// * mbarrier_wait: every thread waits for the phase of the given parity of barrier `index`.
// * mbarrier_arrive: every thread, where the predicate holds, arrives once on barrier `index`.
// * desc_store (lowerTmaStore): every thread writes the elements it owns into the op's scratch where the map's
//   boxes lie in shared memory (box j of the inner dimension j box-sizes in, row-major, swizzled as the map says)
//   and fences its writes for the async proxy; after a barrier thread 0 stores each box (cp.async.bulk.tensor;
//   elements outside the tensor are not written), commits them as a bulk group and waits until they have read the
//   scratch. The next writer of those bytes waits at the barrier insert-barriers puts before it (for that analysis
//   the op reads all of its scratch).
#include "backends/common/DescriptorParameter.h"
#include "backends/common/KernelLowering.h"
#include "ir/TensorDescriptor.h"

namespace tessera::backends {

using ir::OpKind;

namespace {

constexpr int64_t kMbarrierBytes = 8;

// How a descriptor parameter's block lies in shared memory for TMA: the map's swizzle (its argument attribute), and
// the boxes no wider than its span that the block's inner dimension splits into, each boxBytes, one after another.
struct TmaBoxes {
  int64_t swizzle, elementBytes, innerBox, boxes, blockBytes, boxBytes;
};
TmaBoxes tmaBoxes(const ir::Function& f, const ir::Value* desc) {
  const ir::AttrDict& attrs = f.argAttrs(desc->index());
  auto it = attrs.find(ir::kTensorMapSwizzleAttr);
  const int64_t swizzle = it != attrs.end() && it->second.isInt() ? it->second.getInt() : 0;
  const std::vector<int64_t>& block = desc->type().blockShape();
  const int64_t elementBytes = desc->type().element().storageBytes();
  const int64_t innerBox = tensorMapInnerBox(block.back(), elementBytes, swizzle);
  const int64_t boxes = block.back() / innerBox;
  int64_t blockBytes = elementBytes;
  for (int64_t d : block) blockBytes *= d;
  return {swizzle, elementBytes, innerBox, boxes, blockBytes, blockBytes / boxes};
}

}  // namespace

void KernelLowering::lowerTmaStore(const ir::Op& op) {
  const ir::Value* desc = op.operand(0);
  const ir::Type descType = desc->type();
  const std::vector<int64_t>& block = descType.blockShape();
  const size_t rank = block.size();
  const ir::Value* value = op.operand(static_cast<unsigned>(rank + 1));
  if (!desc->isBlockArg() || desc->ownerBlock() != func_.body())
    fail(op, "stores through a descriptor that is not a kernel parameter");
  const ir::Type elem = descType.element();
  const auto [swizzle, elementBytes, innerBox, boxes, blockBytes, boxBytes] = tmaBoxes(func_, desc);
  llvm::Value* staging = scratch(op, blockBytes);

  // 1. Each owned element to its byte in the boxes: box c / innerBox, then row-major over the block with rows of
  // innerBox elements; the swizzle XORs 16-byte chunk bits 4.. with row bits 7.. of the offset (the scratch starts
  // on a 1024-byte boundary, so offsets and shared addresses agree in those bits). Registers that run along the
  // inner dimension are written `vec` at a time (at most 16 bytes, inside one chunk of one box: the swizzle moves
  // whole chunks).
  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  const ThreadMap& map = mapOf(value->type(), op.name());
  const Regs& regs = get(value);
  const int last = static_cast<int>(rank) - 1;
  const auto [runDim, run] = map.registerRuns();
  int64_t vec = runDim == last ? std::min<int64_t>(run, std::max<int64_t>(1, 16 / elementBytes)) : 1;
  while (vec > 1 && innerBox % vec != 0) vec /= 2;
  for (int64_t r = 0; r < map.numRegs() && vec > 1; ++r)
    if (map.regOwner[r] != map.regOwner[r - r % vec]) vec = 1;  // a run's registers must all be written or not
  llvm::Type* mt = memType(elem);
  for (int64_t r = 0; r < map.numRegs(); r += vec) {
    if (!map.regOwner[r]) continue;  // a replicated element: its owner writes it (ownsRegister below)
    llvm::Value* col = coord(map, r, last);
    llvm::Value* row = i32(0);
    for (int d = 0; d < last; ++d) row = b_.CreateAdd(b_.CreateMul(row, i32(block[d])), coord(map, r, d));
    llvm::Value* box = b_.CreateUDiv(col, i32(innerBox));
    llvm::Value* inBox = b_.CreateAdd(b_.CreateMul(row, i32(innerBox)), b_.CreateURem(col, i32(innerBox)));
    llvm::Value* offset = b_.CreateAdd(b_.CreateMul(box, i32(boxBytes)), b_.CreateMul(inBox, i32(elementBytes)));
    if (swizzle)
      offset = b_.CreateXor(offset,
                            b_.CreateShl(b_.CreateAnd(b_.CreateLShr(offset, i32(7)), i32(swizzle / 16 - 1)), i32(4)));
    llvm::Value* at = b_.CreateInBoundsGEP(b_.getInt8Ty(), staging, b_.CreateZExt(offset, b_.getInt64Ty()));
    llvm::Value* words = toMemory(regs[r], elem);
    if (vec > 1) {
      words = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(vec)));
      for (int64_t j = 0; j < vec; ++j) words = b_.CreateInsertElement(words, toMemory(regs[r + j], elem), b_.getInt64(j));
    }
    predicated(ownsRegister(map, r), [&]() -> llvm::Value* {
      b_.CreateAlignedStore(words, at, llvm::Align(static_cast<uint64_t>(vec * elementBytes)));
      return nullptr;
    }, nullptr);
  }
  hooks_.fenceSharedForAsyncProxy(b_);
  barrier();

  // 2. Thread 0 stores the boxes and waits until they have read the staging.
  llvm::Value* mapAt = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), get(desc)[0], kDescriptorMapOffset);
  llvm::Value* tensorMap = b_.CreatePtrToInt(mapAt, b_.getInt64Ty());
  std::vector<llvm::Value*> coordinates;  // the map's dimension 0 (the block's last) first
  for (size_t d = rank; d-- > 0;) coordinates.push_back(get(op.operand(static_cast<unsigned>(1 + d)))[0]);
  predicated(issuingThread(), [&]() -> llvm::Value* {
    for (int64_t j = 0; j < boxes; ++j) {
      std::vector<llvm::Value*> at = coordinates;
      if (j) at[0] = b_.CreateAdd(at[0], i32(j * innerBox));
      hooks_.tensorStoreFromShared(
          b_, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), staging, static_cast<uint64_t>(j * boxBytes)), tensorMap, at);
    }
    hooks_.waitBulkStoresRead(b_);
    return nullptr;
  }, nullptr);
}

void KernelLowering::lowerTmaOp(const ir::Op& op) {
  auto barrierAt = [&](const ir::Value* barriers, llvm::Value* index) {
    llvm::Value* offset = b_.CreateZExt(b_.CreateMul(index, b_.getInt32(kMbarrierBytes)), b_.getInt64Ty());
    return b_.CreateInBoundsGEP(b_.getInt8Ty(), get(barriers)[0], offset);
  };
  switch (op.kind()) {
    case OpKind::MbarrierAlloc: {
      const int64_t count = op.result(0)->type().stages();
      const int64_t arrivals = op.hasAttr("arrivals") ? op.intAttr("arrivals") : 1;
      llvm::Value* base = scratch(op, count * kMbarrierBytes);
      predicated(issuingThread(), [&]() -> llvm::Value* {
        for (int64_t i = 0; i < count; ++i)
          hooks_.mbarrierInit(
              b_, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, static_cast<uint64_t>(i * kMbarrierBytes)),
              arrivals);
        hooks_.fenceMbarrierInit(b_);
        return nullptr;
      }, nullptr);
      barrier();
      set(op.result(0), {base});
      return;
    }
    case OpKind::AsyncTmaCopy: {
      const ir::Value* desc = op.operand(0);
      const ir::Type descType = desc->type();
      const std::vector<int64_t>& block = descType.blockShape();
      const size_t rank = block.size();
      const ir::Value* buffer = op.operand(static_cast<unsigned>(rank + 1));
      const ir::Value* stage = op.operand(static_cast<unsigned>(rank + 2));
      const ir::Value* barriers = op.operand(static_cast<unsigned>(rank + 3));
      if (!hooks_.descriptorsCarryTensorMaps())
        fail(op, "the target's descriptor parameters carry no tensor map (TMA needs sm_90 or later)");
      if (!desc->isBlockArg() || desc->ownerBlock() != func_.body())
        fail(op, "copies through a descriptor that is not a kernel parameter");
      const auto [swizzle, elementBytes, innerBox, boxes, blockBytes, boxBytes] = tmaBoxes(func_, desc);

      llvm::Value* destination = sharedStage(buffer, stage);
      llvm::Value* barrier = barrierAt(barriers, get(stage)[0]);
      llvm::Value* mapAt = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), get(desc)[0], kDescriptorMapOffset);
      llvm::Value* map = b_.CreatePtrToInt(mapAt, b_.getInt64Ty());
      std::vector<llvm::Value*> coordinates;
      for (size_t d = rank; d-- > 0;) coordinates.push_back(get(op.operand(static_cast<unsigned>(1 + d)))[0]);
      llvm::Value* issues = issuingThread();
      if (op.numOperands() == rank + 5)
        issues = b_.CreateAnd(issues, get(op.operand(static_cast<unsigned>(rank + 4)))[0]);
      predicated(issues, [&]() -> llvm::Value* {
        hooks_.mbarrierArriveExpectTx(b_, barrier, blockBytes);
        for (int64_t j = 0; j < boxes; ++j) {
          std::vector<llvm::Value*> at = coordinates;
          if (j) at[0] = b_.CreateAdd(at[0], b_.getInt32(static_cast<uint32_t>(j * innerBox)));
          llvm::Value* dst =
              b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), destination, static_cast<uint64_t>(j * boxBytes));
          hooks_.tensorCopyToShared(b_, dst, map, at, barrier);
        }
        return nullptr;
      }, nullptr);
      set(op.result(0), {});
      return;
    }
    case OpKind::MbarrierWait:
      hooks_.mbarrierWaitParity(b_, barrierAt(op.operand(0), get(op.operand(1))[0]), get(op.operand(2))[0]);
      set(op.result(0), {});
      return;
    case OpKind::MbarrierArrive: {
      llvm::Value* barrier = barrierAt(op.operand(0), get(op.operand(1))[0]);
      llvm::Value* arrives = op.numOperands() == 3 ? get(op.operand(2))[0] : b_.getTrue();
      predicated(arrives, [&]() -> llvm::Value* {
        hooks_.mbarrierArrive(b_, barrier);
        return nullptr;
      }, nullptr);
      return;
    }
    default:
      fail(op, "is not a TMA op");
  }
}

}  // namespace tessera::backends
