// Global memory: loads and stores vectorized up to 16 bytes where a thread's consecutive registers address
// consecutive, suitably aligned elements under one mask value; predicated accesses; stores and atomics only
// from the owner of each element; atomics with their memory order and scope, their results broadcast to the
// replicas through shared memory when needed.
#include "backends/common/KernelLowering.h"

#include <algorithm>

namespace tessera::backends {

using ir::OpKind;

namespace {

int64_t pow2Floor(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

// The dimension along which register r+1 follows register r, and the longest power-of-two run of registers
// that are consecutive along it (aligned, and not broken by the thread part). 1 when there is none.
std::pair<int, int64_t> registerRuns(const ThreadMap& m) {
  if (m.numRegs() < 2 || m.rank() == 0) return {0, 1};
  int dim = -1;
  for (int d = 0; d < m.rank(); ++d) {
    Coords expect = m.regCoords[0];
    expect[d] += 1;
    if (m.regCoords[1] == expect) dim = d;
  }
  if (dim < 0) return {0, 1};
  int64_t run = pow2Floor(m.numRegs());
  auto ok = [&](int64_t len) {
    for (int64_t r = 0; r < m.numRegs(); r += len)
      for (int64_t j = 0; j < len; ++j) {
        Coords expect = m.regCoords[r];
        expect[dim] += j;
        if (m.regCoords[r][dim] % len != 0 || m.regCoords[r + j] != expect) return false;
      }
    for (const auto* bases : {&m.laneBases, &m.warpBases})
      for (const Coords& c : *bases)
        if (c[dim] % len != 0) return false;
    return true;
  };
  while (run > 1 && !ok(run)) run /= 2;
  return {dim, run};
}

llvm::AtomicOrdering ordering(const ir::Op& op, const std::string& sem) {
  if (sem == "relaxed") return llvm::AtomicOrdering::Monotonic;
  if (sem == "acquire") return llvm::AtomicOrdering::Acquire;
  if (sem == "release") return llvm::AtomicOrdering::Release;
  if (sem == "acq_rel") return llvm::AtomicOrdering::AcquireRelease;
  throw Error("cannot lower '" + std::string(op.name()) + "': unknown sem '" + sem + "'", op.loc());
}

}  // namespace

void KernelLowering::lowerMemoryOp(const ir::Op& op) {
  const ir::Value* ptrValue = op.operand(0);
  ir::Type ptrType = ptrValue->type();
  ir::Type elem = ptrType.element().pointee();
  const ThreadMap& map = mapOf(ptrType, op.name());
  const Regs& ptrs = get(ptrValue);
  const int64_t bytes = elem.storageBytes();
  llvm::Type* mt = memType(elem);

  // Widest legal vector: consecutive registers, contiguous and aligned pointers, a uniform mask.
  auto vectorWidth = [&](const ir::Value* mask) -> int64_t {
    auto [dim, run] = registerRuns(map);
    if (run == 1 || !ptrType.isTile()) return 1;
    const transforms::AxisInfo pf = axis.get(ptrValue);
    int64_t vec = std::min({run, pf.contiguity[dim], std::max<int64_t>(1, 16 / bytes)});
    if (mask) vec = std::min(vec, axis.get(mask).constancy[dim]);
    vec = pow2Floor(std::max<int64_t>(vec, 1));
    while (vec > 1 && pf.divisibilityAt(dim, vec) % (vec * bytes) != 0) vec /= 2;
    return vec;
  };

  switch (op.kind()) {
    case OpKind::Load: {
      const ir::Value* mask = op.numOperands() > 1 ? op.operand(1) : nullptr;
      const ir::Value* other = op.numOperands() > 2 ? op.operand(2) : nullptr;
      bool isVolatile = op.hasAttr("volatile") && op.attr("volatile").isBool() && op.attr("volatile").getBool();
      int64_t vec = vectorWidth(mask);
      Regs out(map.numRegs());
      for (int64_t r = 0; r < map.numRegs(); r += vec) {
        llvm::Type* accessTy = vec == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(vec));
        llvm::Value* fallback = llvm::Constant::getNullValue(accessTy);
        if (other) {
          for (int64_t j = 0; j < vec; ++j) {
            llvm::Value* o = toMemory(get(other)[r + j], elem);
            fallback = vec == 1 ? o : b.CreateInsertElement(fallback, o, b.getInt64(j));
          }
        }
        llvm::Value* pred = mask ? get(mask)[r] : b.getTrue();
        llvm::Value* loaded = predicated(pred, [&]() -> llvm::Value* {
          llvm::LoadInst* l = b.CreateAlignedLoad(accessTy, ptrs[r], llvm::Align(static_cast<uint64_t>(vec * bytes)));
          l->setVolatile(isVolatile);
          return l;
        }, fallback);
        for (int64_t j = 0; j < vec; ++j) {
          llvm::Value* e = vec == 1 ? loaded : b.CreateExtractElement(loaded, b.getInt64(j));
          out[r + j] = fromMemory(e, elem);
        }
      }
      set(op.result(0), std::move(out));
      return;
    }
    case OpKind::Store: {
      const ir::Value* mask = op.numOperands() > 2 ? op.operand(2) : nullptr;
      int64_t vec = vectorWidth(mask);
      const Regs& vals = get(op.operand(1));
      for (int64_t r = 0; r < map.numRegs(); r += vec) {
        bool uniformOwnership = true;
        for (int64_t j = 1; j < vec; ++j) uniformOwnership &= map.regOwner[r + j] == map.regOwner[r];
        int64_t width = uniformOwnership ? vec : 1;
        for (int64_t s = r; s < r + vec; s += width) {
          llvm::Value* pred = ownsRegister(map, s);
          if (mask) pred = b.CreateAnd(pred, get(mask)[s]);
          predicated(pred, [&]() -> llvm::Value* {
            llvm::Type* accessTy = width == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(width));
            llvm::Value* v = llvm::PoisonValue::get(accessTy);
            for (int64_t j = 0; j < width; ++j) {
              llvm::Value* e = toMemory(vals[s + j], elem);
              v = width == 1 ? e : b.CreateInsertElement(v, e, b.getInt64(j));
            }
            b.CreateAlignedStore(v, ptrs[s], llvm::Align(static_cast<uint64_t>(width * bytes)));
            return nullptr;
          }, nullptr);
        }
      }
      return;
    }
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: {
      const bool isCas = op.is(OpKind::AtomicCAS);
      const ir::Value* mask = !isCas && op.numOperands() > 2 ? op.operand(2) : nullptr;
      const std::string sem = op.hasAttr("sem") ? op.stringAttr("sem") : "acq_rel";
      const std::string scope = op.hasAttr("scope") ? op.stringAttr("scope") : "gpu";
      llvm::AtomicOrdering order = ordering(op, sem);
      llvm::SyncScope::ID ssid = hooks.atomicScope(ctx, scope);
      if (elem.isBool() || elem.isFP8() || (elem.bitWidth() != 16 && elem.bitWidth() != 32 && elem.bitWidth() != 64))
        fail(op, "atomics need a 16-, 32- or 64-bit element type, got " + elem.str());
      const Regs& vals = get(op.operand(isCas ? 2 : 1));
      Regs old(map.numRegs());
      llvm::Type* rt = regType(elem);
      for (int64_t r = 0; r < map.numRegs(); ++r) {
        llvm::Value* pred = ownsRegister(map, r);
        if (mask) pred = b.CreateAnd(pred, get(mask)[r]);
        old[r] = predicated(pred, [&]() -> llvm::Value* {
          if (isCas) {
            // Compare bitwise: floats go through integers of their width.
            llvm::Type* it = b.getIntNTy(elem.bitWidth());
            llvm::Value* cmp = b.CreateBitCast(get(op.operand(1))[r], it);
            llvm::Value* nv = b.CreateBitCast(vals[r], it);
            llvm::AtomicOrdering failure = order == llvm::AtomicOrdering::AcquireRelease ||
                                                   order == llvm::AtomicOrdering::Acquire
                                               ? llvm::AtomicOrdering::Acquire
                                               : llvm::AtomicOrdering::Monotonic;
            auto* x = b.CreateAtomicCmpXchg(ptrs[r], cmp, nv, llvm::MaybeAlign(bytes), order, failure, ssid);
            return b.CreateBitCast(b.CreateExtractValue(x, 0), rt);
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
          return b.CreateAtomicRMW(binop, ptrs[r], vals[r], llvm::MaybeAlign(bytes), order, ssid);
        }, llvm::Constant::getNullValue(rt));
      }
      // Replicas (threads or registers that did not perform the atomic) read the owner's result.
      bool replicated = map.replicatedLaneMask() || map.replicatedWarpMask() ||
                        std::find(map.regOwner.begin(), map.regOwner.end(), false) != map.regOwner.end();
      if (replicated && op.result(0)->hasUses()) {
        llvm::Value* base = scratch(op, transforms::atomicBroadcastBytes(op));
        auto index = [&](int64_t r) {
          llvm::Value* idx = b.getInt32(0);
          for (int d = 0; d < map.rank(); ++d)
            idx = b.CreateAdd(b.CreateMul(idx, b.getInt32(static_cast<uint32_t>(map.shape[d]))), coord(map, r, d));
          return idx;
        };
        // The barrier before the write keeps an earlier use of this scratch from racing with it.
        hooks.barrier(b);
        for (int64_t r = 0; r < map.numRegs(); ++r)
          predicated(ownsRegister(map, r), [&]() -> llvm::Value* {
            b.CreateStore(old[r], smemElementPtr(base, rt, index(r)));
            return nullptr;
          }, nullptr);
        hooks.barrier(b);
        for (int64_t r = 0; r < map.numRegs(); ++r) old[r] = b.CreateLoad(rt, smemElementPtr(base, rt, index(r)));
      }
      set(op.result(0), std::move(old));
      return;
    }
    default:
      fail(op, "not a memory op");
  }
}

}  // namespace tessera::backends
