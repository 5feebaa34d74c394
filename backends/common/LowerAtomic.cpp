// Atomics: performed by the owner of each element with their memory order and scope; their results broadcast to
// the replicas through the op's shared-memory scratch when needed.
#include "backends/common/KernelLowering.h"

#include <algorithm>

namespace tessera::backends {

using ir::OpKind;

namespace {

llvm::AtomicOrdering ordering(const ir::Op& op, const std::string& sem) {
  if (sem == "relaxed") return llvm::AtomicOrdering::Monotonic;
  if (sem == "acquire") return llvm::AtomicOrdering::Acquire;
  if (sem == "release") return llvm::AtomicOrdering::Release;
  if (sem == "acq_rel") return llvm::AtomicOrdering::AcquireRelease;
  throw Error("cannot lower '" + std::string(op.name()) + "': unknown sem '" + sem + "'", op.loc());
}

}  // namespace

void KernelLowering::lowerAtomic(const ir::Op& op) {
  const auto& [ptrValue, map, ptrs, elem, bytes, mt] = memoryAccess(op);
  const bool isCas = op.is(OpKind::AtomicCAS);
  const ir::Value* mask = !isCas && op.numOperands() > 2 ? op.operand(2) : nullptr;
  const std::string sem = op.hasAttr("sem") ? op.stringAttr("sem") : "acq_rel";
  const std::string scope = op.hasAttr("scope") ? op.stringAttr("scope") : "gpu";
  llvm::AtomicOrdering order = ordering(op, sem);
  llvm::SyncScope::ID ssid = hooks_.atomicScope(ctx_, scope);
  if (elem.isBool() || elem.isFP8() || (elem.bitWidth() != 16 && elem.bitWidth() != 32 && elem.bitWidth() != 64))
    fail(op, "atomics need a 16-, 32- or 64-bit element type, got " + elem.str());
  const Regs& vals = get(op.operand(isCas ? 2 : 1));
  Regs old(map.numRegs());
  llvm::Type* rt = regType(elem);
  for (int64_t r = 0; r < map.numRegs(); ++r) {
    llvm::Value* pred = ownsRegister(map, r);
    if (mask) pred = b_.CreateAnd(pred, get(mask)[r]);
    old[r] = predicated(pred, [&]() -> llvm::Value* {
      if (isCas) {
        // Compare bitwise: floats go through integers of their width.
        llvm::Type* it = b_.getIntNTy(elem.bitWidth());
        llvm::Value* cmp = b_.CreateBitCast(get(op.operand(1))[r], it);
        llvm::Value* nv = b_.CreateBitCast(vals[r], it);
        llvm::AtomicOrdering failure = order == llvm::AtomicOrdering::AcquireRelease ||
                                               order == llvm::AtomicOrdering::Acquire
                                           ? llvm::AtomicOrdering::Acquire
                                           : llvm::AtomicOrdering::Monotonic;
        auto* x = b_.CreateAtomicCmpXchg(ptrs[r], cmp, nv, llvm::MaybeAlign(bytes), order, failure, ssid);
        return b_.CreateBitCast(b_.CreateExtractValue(x, 0), rt);
      }
      const std::string& kind = op.stringAttr("kind");
      const bool isFloat = elem.isFloat(), isSigned = elem.isSigned();
      llvm::AtomicRMWInst::BinOp binop;
      if (kind == "add") binop = isFloat ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
      else if (kind == "max") binop = isFloat ? llvm::AtomicRMWInst::FMax : isSigned ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax;
      else if (kind == "min") binop = isFloat ? llvm::AtomicRMWInst::FMin : isSigned ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin;
      else if (kind == "and" && !isFloat) binop = llvm::AtomicRMWInst::And;
      else if (kind == "or" && !isFloat) binop = llvm::AtomicRMWInst::Or;
      else if (kind == "xor" && !isFloat) binop = llvm::AtomicRMWInst::Xor;
      else if (kind == "xchg") binop = llvm::AtomicRMWInst::Xchg;
      else fail(op, "atomic kind '" + kind + "' is not defined on " + elem.str());
      return b_.CreateAtomicRMW(binop, ptrs[r], vals[r], llvm::MaybeAlign(bytes), order, ssid);
    }, llvm::Constant::getNullValue(rt));
  }
  // Replicas (threads or registers that did not perform the atomic) read the owner's result.
  bool replicated = map.replicatedLaneMask() || map.replicatedWarpMask() ||
                    std::find(map.regOwner.begin(), map.regOwner.end(), false) != map.regOwner.end();
  if (replicated && op.result(0)->hasUses()) {
    llvm::Value* base = scratch(op, transforms::atomicBroadcastBytes(op));
    auto index = [&](int64_t r) {
      llvm::Value* idx = b_.getInt32(0);
      for (int d = 0; d < map.rank(); ++d)
        idx = b_.CreateAdd(b_.CreateMul(idx, b_.getInt32(static_cast<uint32_t>(map.shape[d]))), coord(map, r, d));
      return idx;
    };
    // The barrier before the write keeps an earlier use of this scratch from racing with it.
    barrier();
    for (int64_t r = 0; r < map.numRegs(); ++r)
      predicated(ownsRegister(map, r), [&]() -> llvm::Value* {
        b_.CreateStore(old[r], smemElementPtr(base, rt, index(r)));
        return nullptr;
      }, nullptr);
    barrier();
    for (int64_t r = 0; r < map.numRegs(); ++r) old[r] = b_.CreateLoad(rt, smemElementPtr(base, rt, index(r)));
  }
  set(op.result(0), std::move(old));
}

}  // namespace tessera::backends
