// Loads and stores, vectorized up to 16 bytes where a thread's consecutive registers address consecutive,
// suitably aligned elements under one mask value; predicated accesses; stores only from the owner of each element.
#include "backends/common/KernelLowering.h"

#include <algorithm>
#include <bit>
#include <map>

namespace tessera::backends {

using ir::OpKind;

namespace {

int64_t pow2Floor(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace

KernelLowering::MemoryAccess KernelLowering::memoryAccess(const ir::Op& op) {
  const ir::Value* ptr = op.operand(0);
  ir::Type elem = ptr->type().element().pointee();
  const ThreadMap& map = mapOf(ptr->type(), op.name());
  return {ptr, map, anchoredPointers(ptr, map), elem, elem.storageBytes(), memType(elem)};
}

// A thread's register pointers as a few bases plus constants. Where the pointers are consecutive along their most
// contiguous dimension (in aligned blocks, AxisInfo), a register's pointer is that of the first register of its row
// and block plus the distance between their coordinates, so LLVM keeps one address per row (the others are
// immediates) where it would hoist one 64-bit pointer per register out of a loop (the 999-sized matmuls spilled).
// The distance is constant when neither register's coordinate shares a bit with what lanes and warps add (XOR is
// then addition, without carries into the block).
Regs KernelLowering::anchoredPointers(const ir::Value* ptr, const ThreadMap& map) {
  const Regs& ptrs = get(ptr);
  if (!ptr->type().isTile()) return ptrs;
  const int d = static_cast<int>(axis_.contiguityOrder(ptr)[0]);
  const int64_t contiguity = axis_.get(ptr).contiguity[d];
  if (contiguity < 2) return ptrs;
  int64_t threadBits = 0;
  for (const Coords& basis : map.laneBases) threadBits |= basis[d];
  for (const Coords& basis : map.warpBases) threadBits |= basis[d];
  llvm::Type* element = memType(ptr->type().pointee());
  Regs out = ptrs;
  std::map<std::pair<Coords, int64_t>, int64_t> firstOfRow;  // (coordinates but d, block along d) -> register
  for (int64_t r = 0; r < map.numRegs(); ++r) {
    const Coords& c = map.regCoords[r];
    if (c[d] & threadBits) continue;
    const auto [it, first] = firstOfRow.emplace(std::make_pair(dropDim(c, d), c[d] / contiguity), r);
    if (first) continue;
    const int64_t distance = c[d] - map.regCoords[it->second][d];
    out[r] = b_.CreateGEP(element, ptrs[it->second], b_.getInt64(static_cast<uint64_t>(distance)));
  }
  return out;
}

// Widest legal vector: consecutive registers, contiguous and aligned pointers, a uniform mask.
int64_t KernelLowering::vectorWidth(const ir::Value* ptr, const ThreadMap& map, const ir::Value* mask) {
  return vectorRun(ptr, map, mask).second;
}

std::pair<int, int64_t> KernelLowering::vectorRun(const ir::Value* ptr, const ThreadMap& map, const ir::Value* mask) {
  auto [dim, run] = map.registerRuns();
  if (run == 1 || !ptr->type().isTile()) return {dim, 1};
  const int64_t bytes = ptr->type().pointee().storageBytes();
  const int64_t widest = std::min(run, std::max<int64_t>(1, transforms::kMaxAccessBytes / bytes));
  return {dim, axis_.widestAccess(ptr, mask, dim, widest)};
}

// Consecutive registers whose pointers are consecutive too, however aligned and masked.
int64_t KernelLowering::contiguousRun(const ir::Value* ptr, const ThreadMap& map) {
  auto [dim, run] = map.registerRuns();
  if (run == 1 || !ptr->type().isTile()) return 1;
  return pow2Floor(std::max<int64_t>(1, std::min(run, axis_.get(ptr).contiguity[dim])));
}

// A load of `type` from `ptr` where `pred` holds, else `fallback`: one predicated instruction where the target has
// it (and the access is not volatile), else a branch around a plain load.
llvm::Value* KernelLowering::maskedGlobalLoad(llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                              llvm::Value* fallback, int64_t alignBytes, bool isVolatile) {
  if (!isVolatile && !llvm::isa<llvm::Constant>(pred))
    if (llvm::Value* loaded = hooks_.predicatedGlobalLoad(b_, type, ptr, pred, fallback)) return loaded;
  return predicated(pred, [&]() -> llvm::Value* {
    llvm::LoadInst* l = b_.CreateAlignedLoad(type, ptr, llvm::Align(static_cast<uint64_t>(alignBytes)));
    l->setVolatile(isVolatile);
    return l;
  }, fallback);
}

void KernelLowering::lowerLoad(const ir::Op& op) {
  const auto& [ptrValue, map, ptrs, elem, bytes, mt] = memoryAccess(op);
  const ir::Value* mask = op.numOperands() > 1 ? op.operand(1) : nullptr;
  const ir::Value* other = op.numOperands() > 2 ? op.operand(2) : nullptr;
  bool isVolatile = op.hasAttr("volatile") && op.attr("volatile").isBool() && op.attr("volatile").getBool();
  int64_t vec = vectorWidth(ptrValue, map, mask);
  Regs out(map.numRegs());
  for (int64_t r = 0; r < map.numRegs(); r += vec) {
    llvm::Type* accessTy = vec == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(vec));
    llvm::Value* fallback = llvm::Constant::getNullValue(accessTy);
    if (other) {
      for (int64_t j = 0; j < vec; ++j) {
        llvm::Value* o = toMemory(get(other)[r + j], elem);
        fallback = vec == 1 ? o : b_.CreateInsertElement(fallback, o, b_.getInt64(j));
      }
    }
    llvm::Value* pred = mask ? get(mask)[r] : b_.getTrue();
    llvm::Value* loaded = maskedGlobalLoad(accessTy, ptrs[r], pred, fallback, vec * bytes, isVolatile);
    for (int64_t j = 0; j < vec; ++j) {
      llvm::Value* e = vec == 1 ? loaded : b_.CreateExtractElement(loaded, b_.getInt64(j));
      out[r + j] = fromMemory(e, elem);
    }
  }
  set(op.result(0), std::move(out));
}

void KernelLowering::lowerStore(const ir::Op& op) {
  const auto& [ptrValue, map, ptrs, elem, bytes, mt] = memoryAccess(op);
  const ir::Value* mask = op.numOperands() > 2 ? op.operand(2) : nullptr;
  int64_t vec = vectorWidth(ptrValue, map, mask);
  const Regs& vals = get(op.operand(1));
  for (int64_t r = 0; r < map.numRegs(); r += vec) {
    bool uniformOwnership = true;
    for (int64_t j = 1; j < vec; ++j) uniformOwnership &= map.regOwner[r + j] == map.regOwner[r];
    int64_t width = uniformOwnership ? vec : 1;
    for (int64_t s = r; s < r + vec; s += width) {
      llvm::Value* pred = ownsRegister(map, s);
      if (mask) pred = b_.CreateAnd(pred, get(mask)[s]);
      std::vector<llvm::Value*> elements;
      for (int64_t j = 0; j < width; ++j) elements.push_back(toMemory(vals[s + j], elem));
      // A predicated store where the target has one: no branch, no block per register.
      if (!llvm::isa<llvm::Constant>(pred) && hooks_.predicatedGlobalStore(b_, elements, ptrs[s], pred)) continue;
      llvm::Type* accessTy = width == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(width));
      llvm::Value* v = width == 1 ? elements[0] : llvm::PoisonValue::get(accessTy);
      for (int64_t j = 0; width > 1 && j < width; ++j) v = b_.CreateInsertElement(v, elements[j], b_.getInt64(j));
      predicated(pred, [&]() -> llvm::Value* {
        b_.CreateAlignedStore(v, ptrs[s], llvm::Align(static_cast<uint64_t>(width * bytes)));
        return nullptr;
      }, nullptr);
    }
  }
}

}  // namespace tessera::backends
