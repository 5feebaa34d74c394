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
#include "backends/common/DescriptorParameter.h"
#include "backends/common/KernelLowering.h"
#include "ir/TensorDescriptor.h"

namespace tessera::backends {

using ir::OpKind;

namespace {

constexpr int64_t kMbarrierBytes = 8;

}  // namespace

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
      const ir::AttrDict& attrs = func_.argAttrs(desc->index());
      auto it = attrs.find(ir::kTensorMapSwizzleAttr);
      const int64_t swizzle = it != attrs.end() && it->second.isInt() ? it->second.getInt() : 0;
      const int64_t elementBytes = descType.element().storageBytes();
      const int64_t innerBox = tensorMapInnerBox(block.back(), elementBytes, swizzle);
      const int64_t boxes = block.back() / innerBox;
      int64_t blockBytes = elementBytes;
      for (int64_t d : block) blockBytes *= d;
      const int64_t boxBytes = blockBytes / boxes;

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
