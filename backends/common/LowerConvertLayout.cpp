// convert_layout, as ir::planConversion decides from the two layouts' linear forms: a register permutation, one
// indexed warp shuffle per destination register, or the shared-memory exchange (the one op for which
// transforms::exchangeNeedsSharedMemory reserves scratch).
#include "backends/common/KernelLowering.h"
#include "backends/common/WarpShuffle.h"
#include "ir/LayoutConversion.h"

namespace tessera::backends {

void KernelLowering::lowerConvertLayout(const ir::Op& op) {
  const ir::Value* in = op.operand(0);
  const ThreadMap& src = mapOf(in->type(), op.name());
  const ThreadMap& dst = mapOf(op.result(0)->type(), op.name());
  const Regs& srcRegs = get(in);
  ir::ConversionPlan plan;
  try {
    plan = ir::planConversion(src.linear, dst.linear);
  } catch (const Error& e) {
    fail(op, e.message());
  }
  Regs out;
  switch (plan.kind) {
    case ir::ConversionKind::RegisterPermutation:
      for (int64_t r : plan.sourceRegister) out.push_back(srcRegs[r]);
      break;
    case ir::ConversionKind::WarpShuffle: {
      // The reading lane's part of the source lane: the XOR of laneMap[i] over its set bits i.
      llvm::Value* lanePart = b_.getInt32(0);
      for (size_t i = 0; i < plan.laneMap.size(); ++i) {
        llvm::Value* bit = b_.CreateAnd(b_.CreateLShr(laneId(), b_.getInt32(static_cast<uint32_t>(i))), b_.getInt32(1));
        lanePart = b_.CreateXor(lanePart, b_.CreateMul(bit, b_.getInt32(static_cast<uint32_t>(plan.laneMap[i]))));
      }
      for (size_t r = 0; r < plan.sourceRegister.size(); ++r) {
        llvm::Value* from = b_.CreateXor(lanePart, b_.getInt32(static_cast<uint32_t>(plan.sourceLane[r])));
        out.push_back(shuffleIdx(b_, hooks_, srcRegs[plan.sourceRegister[r]], from));
      }
      break;
    }
    case ir::ConversionKind::SharedMemory: {
      const CoordFn identity = [](const Coords& c) { return c; };
      out = exchange(op, op.result(0)->type().element(), in->type().shape(), {{&src, &srcRegs, identity}},
                     {{&dst, identity}})[0];
      break;
    }
  }
  set(op.result(0), std::move(out));
}

}  // namespace tessera::backends
