// The driver of the lowering: kernel signature, value bookkeeping, per-layout thread coordinates, shared
// memory scratch, the generic data exchange, and dispatch to the per-family files.
#include "backends/common/KernelLowering.h"
#include "backends/common/WarpShuffle.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/MathExtras.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/common/DebugLocations.h"
#include "backends/common/DescriptorParameter.h"
#include "backends/common/MatrixTransfers.h"
#include "ir/Printer.h"
#include "ir/TensorDescriptor.h"

namespace tessera::backends {

using ir::OpKind;

KernelLowering::KernelLowering(const ir::Function& f, llvm::LLVMContext& c, LoweringHooks& h,
                               const LoweringOptions& o)
    : ctx_(c), hooks_(h), opts_(o), func_(f), b_(c), warpSize_(h.warpSize()), axis_(f) {}

[[noreturn]] void KernelLowering::fail(const ir::Op& op, const std::string& why) {
  throw Error("cannot lower '" + std::string(op.name()) + "': " + why, op.loc());
}

// ------------------------------------------------------------------------------------------------ types

llvm::Type* KernelLowering::regType(ir::Type element) {
  element = element.element();
  if (element.isPtr()) return llvm::PointerType::get(ctx_, element.addrSpace());
  switch (element.scalarKind()) {
    case ir::ScalarKind::I1: return b_.getInt1Ty();
    case ir::ScalarKind::I8: case ir::ScalarKind::U8: return b_.getInt8Ty();
    case ir::ScalarKind::I16: case ir::ScalarKind::U16: return b_.getInt16Ty();
    case ir::ScalarKind::I32: case ir::ScalarKind::U32: return b_.getInt32Ty();
    case ir::ScalarKind::I64: case ir::ScalarKind::U64: return b_.getInt64Ty();
    case ir::ScalarKind::F16: return b_.getHalfTy();
    case ir::ScalarKind::BF16: return b_.getBFloatTy();
    case ir::ScalarKind::F32: return b_.getFloatTy();
    case ir::ScalarKind::F64: return b_.getDoubleTy();
    case ir::ScalarKind::F8E4M3: case ir::ScalarKind::F8E5M2: return b_.getInt8Ty();  // storage only
  }
  throw Error("unknown scalar kind");
}

llvm::Type* KernelLowering::memType(ir::Type element) {
  element = element.element();
  if (element.isPtr()) return b_.getInt64Ty();
  if (element.isBool()) return b_.getInt8Ty();
  return regType(element);
}

llvm::Value* KernelLowering::toMemory(llvm::Value* v, ir::Type element) {
  element = element.element();
  if (element.isPtr()) return b_.CreatePtrToInt(v, b_.getInt64Ty());
  if (element.isBool()) return b_.CreateZExt(v, b_.getInt8Ty());
  return v;
}

llvm::Value* KernelLowering::fromMemory(llvm::Value* v, ir::Type element) {
  element = element.element();
  if (element.isPtr()) return b_.CreateIntToPtr(v, regType(element));
  if (element.isBool()) return b_.CreateICmpNE(v, b_.getInt8(0));
  return v;
}

// ------------------------------------------------------------------------------------------------ values

Regs& KernelLowering::get(const ir::Value* v) {
  auto it = values_.find(v);
  if (it == values_.end()) {
    std::string where = v->definingOp() ? std::string(" (result of '") + v->definingOp()->name() + "')" : "";
    throw Error("lowering: value" + where + " used before it was lowered");
  }
  return it->second;
}

void KernelLowering::set(const ir::Value* v, Regs regs) { values_[v] = std::move(regs); }

const ThreadMap& KernelLowering::mapOf(ir::Type t, const std::string& what) {
  auto it = maps_.find(t);
  if (it != maps_.end()) return it->second;
  return maps_.emplace(t, ThreadMap::of(t, opts_.numWarps, warpSize_, what)).first->second;
}

template <class F>
auto KernelLowering::inPrologue(F fn) {
  IRBuilder::InsertPointGuard guard(b_);
  b_.SetInsertPoint(prologue_);
  return fn();
}

llvm::Value* KernelLowering::laneId() { return laneId_; }
llvm::Value* KernelLowering::warpId() { return warpId_; }

llvm::Value* KernelLowering::shuffleXor(llvm::Value* v, int laneMask) {
  return backends::shuffleXor(b_, hooks_, v, laneMask);
}

// Builds XOR over bits of `id` of the per-bit constants `bases[i]`; runs of consecutive bits whose bases are
// consecutive powers of two become one shift-and-mask.
static llvm::Value* linearCombination(IRBuilder& b, llvm::Value* id, const std::vector<int64_t>& bases) {
  llvm::Value* acc = b.getInt32(0);
  size_t i = 0;
  while (i < bases.size()) {
    if (bases[i] == 0) { ++i; continue; }
    size_t j = i + 1;
    while (j < bases.size() && bases[j] == bases[j - 1] * 2) ++j;
    int64_t runBits = static_cast<int64_t>(j - i);
    llvm::Value* field = b.CreateAnd(b.CreateLShr(id, b.getInt32(static_cast<uint32_t>(i))),
                                     b.getInt32(static_cast<uint32_t>((int64_t(1) << runBits) - 1)));
    if ((bases[i] & (bases[i] - 1)) == 0) {
      int shift = 0;
      while ((int64_t(1) << shift) < bases[i]) ++shift;
      acc = b.CreateXor(acc, b.CreateShl(field, b.getInt32(shift)));
    } else {
      acc = b.CreateXor(acc, b.CreateMul(field, b.getInt32(static_cast<uint32_t>(bases[i]))));
    }
    i = j;
  }
  return acc;
}

const std::vector<llvm::Value*>& KernelLowering::threadPart(const ThreadMap& map) {
  std::vector<Coords> key = map.laneBases;
  key.insert(key.end(), map.warpBases.begin(), map.warpBases.end());
  key.push_back(Coords{static_cast<int64_t>(map.rank())});
  auto it = threadParts_.find(key);
  if (it != threadParts_.end()) return it->second;
  std::vector<llvm::Value*> parts = inPrologue([&] {
    std::vector<llvm::Value*> r;
    for (int d = 0; d < map.rank(); ++d) {
      std::vector<int64_t> lane, warp;
      for (const Coords& c : map.laneBases) lane.push_back(c[d]);
      for (const Coords& c : map.warpBases) warp.push_back(c[d]);
      r.push_back(b_.CreateXor(linearCombination(b_, laneId_, lane), linearCombination(b_, warpId_, warp)));
    }
    return r;
  });
  return threadParts_.emplace(key, std::move(parts)).first->second;
}

llvm::Value* KernelLowering::coord(const ThreadMap& map, int64_t reg, int dim) {
  // When the register bits and the thread bits of this dimension are disjoint (always, for blocked layouts), the
  // XOR is an addition, which address arithmetic downstream understands better.
  int64_t threadBits = 0;
  for (const Coords& c : map.laneBases) threadBits |= c[dim];
  for (const Coords& c : map.warpBases) threadBits |= c[dim];
  const int64_t regPart = map.regCoords[reg][dim];
  llvm::Value* t = threadPart(map)[dim];
  if (regPart == 0) return t;
  if ((regPart & threadBits) == 0) return b_.CreateAdd(t, b_.getInt32(static_cast<uint32_t>(regPart)), "", true, true);
  return b_.CreateXor(t, b_.getInt32(static_cast<uint32_t>(regPart)));
}

llvm::Value* KernelLowering::ownsRegister(const ThreadMap& map, int64_t reg) {
  if (!map.regOwner[reg]) return b_.getFalse();
  uint64_t laneMask = map.replicatedLaneMask(), warpMask = map.replicatedWarpMask();
  if (laneMask == 0 && warpMask == 0) return b_.getTrue();
  return inPrologue([&] {
    llvm::Value* bits = b_.CreateOr(b_.CreateAnd(laneId_, b_.getInt32(static_cast<uint32_t>(laneMask))),
                                   b_.CreateAnd(warpId_, b_.getInt32(static_cast<uint32_t>(warpMask))));
    return b_.CreateICmpEQ(bits, b_.getInt32(0), "owner");
  });
}

llvm::Value* KernelLowering::predicated(llvm::Value* pred, const std::function<llvm::Value*()>& then,
                                        llvm::Value* otherwise) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(pred)) {
    if (c->isOne()) return then();
    return otherwise;
  }
  llvm::BasicBlock* from = b_.GetInsertBlock();
  llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(ctx_, "pred.then", kernel_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_, "pred.join", kernel_);
  b_.CreateCondBr(pred, thenBB, join);
  b_.SetInsertPoint(thenBB);
  llvm::Value* v = then();
  llvm::BasicBlock* thenEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  if (!v || !otherwise) return nullptr;
  llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, thenEnd);
  phi->addIncoming(otherwise, from);
  return phi;
}

int64_t KernelLowering::constIntOf(const ir::Value* v, bool* known) {
  const ir::Op* def = v->definingOp();
  *known = def && def->is(OpKind::Constant) && def->attr("value").isInt();
  return *known ? def->attr("value").getInt() : 0;
}

// ------------------------------------------------------------------------------------------------ shared memory

llvm::Value* KernelLowering::scratch(const ir::Op& op, int64_t need) {
  const std::optional<transforms::SharedRange> range = transforms::scratchRangeOf(op);
  if (!range)
    fail(op, "needs " + std::to_string(need) +
                 " bytes of shared-memory scratch but has no 'smem_offset' (run allocate-shared-memory)");
  if (range->bytes < need)
    fail(op, "needs " + std::to_string(need) + " bytes of shared-memory scratch but 'smem_bytes' is only " +
                 std::to_string(range->bytes));
  int64_t total = func_.attrs().count("smem_bytes") ? func_.attrs().at("smem_bytes").getInt() : -1;
  if (total >= 0 && range->offset + need > total)
    fail(op, "scratch [" + std::to_string(range->offset) + ", " + std::to_string(range->offset + need) +
                 ") exceeds the function's smem_bytes = " + std::to_string(total));
  if (!smemBase_) smemBase_ = inPrologue([&] { return hooks_.sharedMemoryBase(b_); });
  return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), smemBase_, static_cast<uint64_t>(range->offset));
}

KernelLowering::DotStagingBuffers KernelLowering::dotStagingBuffers(const ir::Op& dot) {
  const transforms::DotStaging staging = transforms::dotStaging(dot);
  if (staging.bytes == 0) return {nullptr, nullptr};
  llvm::Value* a = scratch(dot, staging.bytes);
  llvm::Value* b = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), a, static_cast<uint64_t>(staging.bOffset));
  return {staging.stagesA ? a : nullptr, staging.stagesB ? b : nullptr};
}

llvm::Value* KernelLowering::smemElementPtr(llvm::Value* base, llvm::Type* elemTy, llvm::Value* index) {
  return b_.CreateInBoundsGEP(elemTy, base, index);
}

// ------------------------------------------------------------------------------------------------ exchange

namespace {

// The affine map `f` applied to a thread basis vector: its linear part.
Coords linearPart(const CoordFn& f, const Coords& basis, const Coords& origin) {
  return xorCoords(f(basis), f(origin));
}

bool sameThreadBases(const ThreadMap& src, const CoordFn& srcFn, const ThreadMap& dst, const CoordFn& dstFn) {
  Coords srcZero(src.rank(), 0), dstZero(dst.rank(), 0);
  for (size_t i = 0; i < src.laneBases.size(); ++i)
    if (linearPart(srcFn, src.laneBases[i], srcZero) != linearPart(dstFn, dst.laneBases[i], dstZero)) return false;
  for (size_t i = 0; i < src.warpBases.size(); ++i)
    if (linearPart(srcFn, src.warpBases[i], srcZero) != linearPart(dstFn, dst.warpBases[i], dstZero)) return false;
  return true;
}

// For each destination register: the (source, register) holding the same buffer element in the same thread.
std::optional<std::vector<std::vector<std::pair<int, int64_t>>>> registerRemap(
    const std::vector<ExchangeSource>& sources, const std::vector<ExchangeDest>& dests) {
  std::map<Coords, std::pair<int, int64_t>> where;
  std::vector<std::vector<std::pair<int, int64_t>>> result;
  for (const ExchangeDest& d : dests) {
    where.clear();
    for (size_t s = 0; s < sources.size(); ++s) {
      if (!sameThreadBases(*sources[s].map, sources[s].toBuffer, *d.map, d.fromBuffer)) continue;
      for (int64_t r = 0; r < sources[s].map->numRegs(); ++r)
        where.emplace(sources[s].toBuffer(sources[s].map->regCoords[r]), std::make_pair(static_cast<int>(s), r));
    }
    std::vector<std::pair<int, int64_t>> regs;
    for (int64_t r = 0; r < d.map->numRegs(); ++r) {
      auto it = where.find(d.fromBuffer(d.map->regCoords[r]));
      if (it == where.end()) return std::nullopt;
      regs.push_back(it->second);
    }
    result.push_back(std::move(regs));
  }
  return result;
}

}  // namespace

std::vector<Regs> KernelLowering::exchange(const ir::Op& op, ir::Type element, const std::vector<int64_t>& bufferShape,
                                           const std::vector<ExchangeSource>& sources,
                                           const std::vector<ExchangeDest>& dests) {
  if (auto remap = registerRemap(sources, dests)) {
    std::vector<Regs> out;
    for (const auto& regs : *remap) {
      Regs r;
      for (auto [s, reg] : regs) r.push_back((*sources[s].regs)[reg]);
      out.push_back(std::move(r));
    }
    return out;
  }
  // Through shared memory: the row-padded (or swizzled) exchange buffer of transforms/analysis/SharedScratch.h,
  // indexed in elements (row * pitch + swizzledColumn(row, column)), in rounds of rowsPerRound buffer rows when the op's scratch holds fewer
  // than all of them.
  transforms::ExchangeBuffer buffer = transforms::exchangeBufferOf(op);  // the pad the scratch was sized with
  if (buffer.shape != bufferShape || buffer.elementBytes != element.storageBytes())
    buffer = {bufferShape, element.storageBytes(), std::nullopt};
  const std::optional<transforms::SharedRange> range = transforms::scratchRangeOf(op);
  // Not even one row in the scratch: one round, for which scratch() reports the shortfall.
  const int64_t fitting = range ? buffer.rowsPerRound(range->bytes) : 0;
  const int64_t rowsPerRound = fitting > 0 ? fitting : buffer.rows();
  // A round holds whole swizzle blocks; where it cannot, the rows go unswizzled (both sides of the exchange agree;
  // only bank conflicts differ).
  if (rowsPerRound % buffer.swizzleBlockRows() != 0) buffer.swizzle = {};
  const int64_t rounds = (buffer.rows() + rowsPerRound - 1) / rowsPerRound;
  const int64_t pitch = buffer.pitchElements();
  llvm::Value* base = scratch(op, rounds == 1 ? buffer.bytes() : buffer.roundBytes(rowsPerRound));
  llvm::Type* mt = memType(element);
  // The row-major row index of buffer coordinates without their last one.
  auto rowOf = [&](const Coords& c) {
    int64_t row = 0;
    for (size_t d = 0; d + 1 < bufferShape.size(); ++d) row = row * bufferShape[d] + c[d];
    return row;
  };
  // With power-of-two dimensions, row(a XOR b) = row(a) XOR row(b): a register's round is known at compile time
  // when no thread basis reaches the row bits above rowsPerRound (the usual case: threads tile rows within a
  // round). Otherwise it is computed per thread.
  auto powerOfTwo = [](int64_t n) { return (n & (n - 1)) == 0; };
  const bool powerOfTwoRows = std::all_of(bufferShape.begin(), bufferShape.end(), powerOfTwo) && powerOfTwo(rowsPerRound);
  // One side of the exchange (a source or a destination) as the buffer sees it: the images of its thread bases,
  // the thread's buffer coordinates and the bits they reach per dimension, and the thread's own row, column and
  // (per round) element pointer. Built before any store or load, so every predicated block may use its values.
  struct Side {
    ThreadMap image;
    const std::vector<llvm::Value*>* thread = nullptr;
    std::vector<int64_t> threadBits;
    llvm::Value* row = nullptr;              // the thread's row (buffer dimensions but the last, row-major)
    llvm::Value* col = nullptr;              // the thread's column
    llvm::Value* swizzled = nullptr;         // swizzled buffers: the thread's swizzled offset in the unpadded rows
    std::vector<llvm::Value*> roundPointer;  // base + the thread's element index within round k
  };
  // Where one register's element goes, from compile-time facts alone (no instruction is emitted for it).
  struct Slot {
    bool threadOnly = false;        // at the side's roundPointer plus `constant` elements
    std::optional<int64_t> round;   // known at compile time
    int64_t constant = 0;           // threadOnly: rowConstant * pitch + columnConstant
    int64_t rowConstant = 0;
    int64_t alignBytes = 1;         // of the element's address in every thread (alignmentOf)
    Coords regPart;                 // the register's buffer coordinates at thread (0, 0)
  };
  // The alignment every thread's address of one register's element has: the offset is a sum over dimensions of a
  // coordinate (an XOR of the register's and the thread bases' coordinates, so no lower bit than theirs) times
  // the dimension's stride in elements, plus a round's start. A swizzle moves whole 16-byte chunks, so up to 16
  // bytes it keeps the alignment; the scratch starts 16-byte aligned. LLVM cannot always see this (a swizzled or
  // PRE'd address loses its known bits), and its vectorizer only widens accesses as far as it knows them aligned.
  auto alignmentOf = [&](const ThreadMap& image, const Coords& regPart) {
    auto lowBit = [](int64_t v) { return v & -v; };
    int64_t align = 16 / buffer.elementBytes;  // in elements
    int64_t stride = 1;
    for (size_t d = bufferShape.size(); d-- > 0;) {
      int64_t bits = regPart[d];
      for (const auto* bases : {&image.laneBases, &image.warpBases})
        for (const Coords& c : *bases) bits |= c[d];
      if (bits != 0) align = std::min(align, lowBit(bits) * lowBit(stride));
      stride *= d + 1 == bufferShape.size() ? pitch : bufferShape[d];
    }
    if (rounds > 1) align = std::min(align, lowBit(rowsPerRound * pitch));
    return std::max<int64_t>(1, align) * buffer.elementBytes;
  };
  auto offsetOf = [&](const Coords& c) {
    return rowOf(c) << llvm::Log2_64(bufferShape.back()) | c.back();
  };
  auto sideOf = [&](const ThreadMap& map, const CoordFn& fn) {
    // Buffer coordinates = fn(register part) XOR linear(fn)(thread part); the thread part is expressed through a
    // virtual map whose bases are the images of the thread bases.
    Side side;
    side.image.shape = bufferShape;
    Coords zero(map.rank(), 0);
    for (const Coords& c : map.laneBases) side.image.laneBases.push_back(linearPart(fn, c, zero));
    for (const Coords& c : map.warpBases) side.image.warpBases.push_back(linearPart(fn, c, zero));
    side.thread = &threadPart(side.image);
    side.threadBits.assign(bufferShape.size(), 0);
    for (const auto* bases : {&side.image.laneBases, &side.image.warpBases})
      for (const Coords& c : *bases)
        for (size_t d = 0; d < bufferShape.size(); ++d) side.threadBits[d] |= c[d];
    const std::vector<llvm::Value*>& thread = *side.thread;
    side.row = b_.getInt32(0);
    for (size_t d = 0; d + 1 < bufferShape.size(); ++d)
      side.row = b_.CreateAdd(b_.CreateMul(side.row, b_.getInt32(static_cast<uint32_t>(bufferShape[d]))), thread[d]);
    side.col = thread.back();
    for (int64_t k = 0; k < rounds; ++k) {
      llvm::Value* row = b_.CreateSub(side.row, b_.getInt32(static_cast<uint32_t>(k * rowsPerRound)));
      side.roundPointer.push_back(smemElementPtr(
          base, mt, b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(pitch))), side.col)));
    }
    if (buffer.swizzle.phases > 1) {
      // The swizzle is linear over F2 in the unpadded offset's bits (power-of-two dimensions: the row of c XOR c'
      // is row(c) XOR row(c')): the thread's part and the register's constant part are swizzled apart and XORed.
      // Offsets here are in elements, row-major over the unpadded rows.
      const transforms::ExchangeSwizzle& z = buffer.swizzle;
      const uint64_t strideShift = llvm::Log2_64(z.strideBytes / buffer.elementBytes);
      const uint64_t chunkShift = llvm::Log2_64(buffer.chunkElements());
      llvm::Value* threadRow = b_.getInt32(0);
      for (size_t d = 0; d + 1 < bufferShape.size(); ++d)
        threadRow = b_.CreateOr(b_.CreateShl(threadRow, static_cast<uint64_t>(llvm::Log2_64(bufferShape[d]))),
                                thread[d]);
      llvm::Value* threadOffset =
          b_.CreateOr(b_.CreateShl(threadRow, static_cast<uint64_t>(llvm::Log2_64(bufferShape.back()))), thread.back());
      side.swizzled = b_.CreateXor(
          threadOffset,
          b_.CreateShl(b_.CreateAnd(b_.CreateLShr(threadOffset, strideShift), static_cast<uint64_t>(z.phases - 1)),
                       chunkShift));
    }
    return side;
  };
  auto slotOf = [&](const Side& side, const ThreadMap& map, const CoordFn& fn, int64_t reg) {
    Slot slot;
    slot.regPart = fn(map.regCoords[reg]);
    // Each coordinate is the thread part XOR the register's constant part. Where no thread basis moves a bit of
    // the register's part, in any dimension, the XOR is an add and the register's part becomes the slot's
    // constant, added last (a register's column ORed into a masked thread part lets InstCombine drop the mask,
    // and the vectorizer no longer sees that `x | 249` follows `x | 248`).
    slot.threadOnly = buffer.swizzle.phases == 1;
    for (size_t d = 0; d < bufferShape.size(); ++d)
      slot.threadOnly = slot.threadOnly && (slot.regPart[d] & side.threadBits[d]) == 0;
    if (slot.threadOnly) {
      slot.rowConstant = rowOf(slot.regPart);
      slot.constant = slot.rowConstant * pitch + slot.regPart.back();
    }
    // With power-of-two dimensions, row(a XOR b) = row(a) XOR row(b): a register's round is known at compile time
    // when no thread basis reaches the row bits above rowsPerRound (the usual case: threads tile rows within a
    // round). Otherwise it is computed per thread.
    if (rounds == 1) {
      slot.round = 0;
    } else if (powerOfTwoRows) {
      bool threadsStayInRound = true;
      for (const auto* bases : {&side.image.laneBases, &side.image.warpBases})
        for (const Coords& c : *bases) threadsStayInRound = threadsStayInRound && rowOf(c) < rowsPerRound;
      if (threadsStayInRound) slot.round = rowOf(slot.regPart) / rowsPerRound;
    }
    slot.alignBytes = alignmentOf(side.image, slot.regPart);
    return slot;
  };
  // The row and column of a register whose slot is not the thread's plus a constant (emitted per register).
  auto rowAndColumn = [&](const Side& side, const Slot& slot) -> std::pair<llvm::Value*, llvm::Value*> {
    if (slot.threadOnly) return {side.row, side.col};
    const std::vector<llvm::Value*>& thread = *side.thread;
    const Coords& regPart = slot.regPart;
    llvm::Value* row = b_.getInt32(0);
    llvm::Value* col = b_.getInt32(0);
    // The register's bits below every thread basis's are added last (no carry: the thread part's are 0), so
    // that registers of one vector share the XORed base.
    for (size_t d = 0; d < bufferShape.size(); ++d) {
      const int64_t lowMask = side.threadBits[d] == 0 ? -1 : (side.threadBits[d] & -side.threadBits[d]) - 1;
      const int64_t low = regPart[d] & lowMask;
      const int64_t xored = regPart[d] - low;
      llvm::Value* c = b_.CreateAdd(b_.CreateXor(thread[d], b_.getInt32(static_cast<uint32_t>(xored))),
                                    b_.getInt32(static_cast<uint32_t>(low)));
      if (d + 1 == bufferShape.size()) col = c;
      else row = b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(bufferShape[d]))), c);
    }
    if (buffer.swizzle.phases > 1) {
      const int64_t registerSwizzled =
          buffer.swizzle.apply(offsetOf(regPart) * buffer.elementBytes) / buffer.elementBytes;
      // The register's offset bits below every thread basis's (and below the chunk) are added (no carry: the
      // base's are 0), so that registers of one vector share the XORed base and the vectorizer sees base + 1, ...
      int64_t threadLowBit = buffer.chunkElements();
      for (const auto* bases : {&side.image.laneBases, &side.image.warpBases})
        for (const Coords& c : *bases)
          if (const int64_t o = offsetOf(c); o != 0) threadLowBit = std::min(threadLowBit, o & -o);
      const int64_t low = registerSwizzled & (threadLowBit - 1);
      // The swizzle keeps every element within its block of blockRows rows: the slot is the block's first row
      // and the offset within the block.
      const int64_t blockRows = buffer.swizzleBlockRows();
      const uint64_t blockMask = static_cast<uint64_t>(blockRows * bufferShape.back() - 1);
      col = b_.CreateAdd(
          b_.CreateAnd(b_.CreateXor(side.swizzled, b_.getInt32(static_cast<uint32_t>(registerSwizzled - low))),
                       blockMask),
          b_.getInt32(static_cast<uint32_t>(low)));
      if (blockRows > 1) row = b_.CreateAnd(row, ~static_cast<uint64_t>(blockRows - 1));
    }
    return {row, col};
  };
  auto inRound = [&](const Side& side, const Slot& s, int64_t k) -> llvm::Value* {
    if (s.round) return b_.getInt1(*s.round == k);
    llvm::Value* row = b_.CreateAdd(rowAndColumn(side, s).first, b_.getInt32(static_cast<uint32_t>(s.rowConstant)));
    return b_.CreateICmpEQ(b_.CreateUDiv(row, b_.getInt32(static_cast<uint32_t>(rowsPerRound))),
                           b_.getInt32(static_cast<uint32_t>(k)));
  };
  auto pointerInRound = [&](const Side& side, const Slot& s, int64_t k) -> llvm::Value* {
    if (s.threadOnly)
      return s.constant == 0 ? side.roundPointer[k]
                             : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), side.roundPointer[k],
                                                             static_cast<uint64_t>(s.constant * buffer.elementBytes));
    auto [row, col] = rowAndColumn(side, s);
    row = b_.CreateSub(row, b_.getInt32(static_cast<uint32_t>(k * rowsPerRound)));
    return smemElementPtr(base, mt, b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(pitch))), col));
  };
  // How many registers from `r` on are one access: consecutive elements at a constant distance from the thread's
  // pointer, in the same round, as many as the first one's alignment and 16 bytes allow (the accesses LLVM's
  // vectorizer would form, made here directly). `usable(j)` says whether register j takes part (an owner).
  auto runLength = [&](const std::vector<Slot>& slots, int64_t r, const std::function<bool(int64_t)>& usable) {
    const Slot& first = slots[r];
    if (!first.threadOnly || !first.round) return int64_t(1);
    const int64_t limit = std::min<int64_t>(16, first.alignBytes) / buffer.elementBytes;
    int64_t n = 1;
    while (n < limit && r + n < static_cast<int64_t>(slots.size())) {
      const Slot& next = slots[r + n];
      if (!usable(r + n) || !next.threadOnly || next.round != first.round || next.constant != first.constant + n) break;
      ++n;
    }
    return static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(n)));
  };
  std::vector<Side> sourceSides, destSides;
  std::vector<std::vector<Slot>> sourceSlots, destSlots;
  for (const ExchangeSource& s : sources) {
    sourceSides.push_back(sideOf(*s.map, s.toBuffer));
    sourceSlots.emplace_back();
    for (int64_t r = 0; r < s.map->numRegs(); ++r) sourceSlots.back().push_back(slotOf(sourceSides.back(), *s.map, s.toBuffer, r));
  }
  for (const ExchangeDest& d : dests) {
    destSides.push_back(sideOf(*d.map, d.fromBuffer));
    destSlots.emplace_back();
    for (int64_t r = 0; r < d.map->numRegs(); ++r) destSlots.back().push_back(slotOf(destSides.back(), *d.map, d.fromBuffer, r));
  }
  // A side made of 8 x 8 matrices of 16-bit elements moves them with ldmatrix / stmatrix (MatrixTransfers.h): one
  // instruction for up to 4 words per lane. Its row addresses come from a side whose lanes are those of the rows.
  struct MatrixSide {
    MatrixTransferPlan plan;
    Side rows;                     // the threads whose elements are the lanes' row addresses
    std::vector<Slot> firstSlots;  // per instruction: its first register's slot, seen from `rows`
  };
  auto matrixSideOf = [&](const Side& side, const ThreadMap& map, const CoordFn& fn, const std::vector<Slot>& slots,
                          bool writing) -> std::optional<MatrixSide> {
    if (!(writing ? hooks_.hasMatrixStores() : hooks_.hasMatrixLoads())) return std::nullopt;
    MatrixTransferSide m{bufferShape, pitch, buffer.elementBytes, side.image.laneBases, side.image.warpBases, {}, {}, {}};
    for (const Slot& slot : slots) {
      m.regParts.push_back(slot.regPart);
      m.rounds.push_back(slot.round);
    }
    if (writing) m.owners = map.regOwner;
    std::optional<MatrixTransferPlan> plan = planMatrixTransfers(m);
    if (!plan) return std::nullopt;
    ThreadMap rows;
    rows.shape = bufferShape;
    rows.laneBases = plan->addressLaneBases;
    rows.warpBases = side.image.warpBases;
    MatrixSide matrixSide{std::move(*plan), sideOf(rows, [](const Coords& c) { return c; }), {}};
    for (const MatrixInstruction& inst : matrixSide.plan.instructions)
      matrixSide.firstSlots.push_back(slotOf(matrixSide.rows, map, fn, inst.firstRegister));
    return matrixSide;
  };
  llvm::Type* pairType = llvm::FixedVectorType::get(mt, 2);
  auto packWord = [&](llvm::Value* low, llvm::Value* high) {
    llvm::Value* pair = b_.CreateInsertElement(llvm::PoisonValue::get(pairType), toMemory(low, element), uint64_t(0));
    return b_.CreateBitCast(b_.CreateInsertElement(pair, toMemory(high, element), uint64_t(1)), b_.getInt32Ty());
  };
  std::vector<std::optional<MatrixSide>> sourceMatrices, destMatrices;
  for (size_t i = 0; i < sources.size(); ++i)
    sourceMatrices.push_back(matrixSideOf(sourceSides[i], *sources[i].map, sources[i].toBuffer, sourceSlots[i], true));
  for (size_t i = 0; i < dests.size(); ++i)
    destMatrices.push_back(matrixSideOf(destSides[i], *dests[i].map, dests[i].fromBuffer, destSlots[i], false));

  std::vector<Regs> out;
  for (const ExchangeDest& d : dests) out.emplace_back(d.map->numRegs(), nullptr);
  for (int64_t k = 0; k < rounds; ++k) {
    if (k > 0) barrier();  // every read of the previous round is done before its bytes are rewritten
    for (size_t i = 0; i < sources.size(); ++i) {
      const ExchangeSource& s = sources[i];
      if (const std::optional<MatrixSide>& m = sourceMatrices[i]) {
        for (size_t j = 0; j < m->plan.instructions.size(); ++j) {
          const MatrixInstruction& inst = m->plan.instructions[j];
          if (inst.round != k) continue;
          std::vector<llvm::Value*> words;
          for (auto [low, high] : inst.words) words.push_back(packWord((*s.regs)[low], (*s.regs)[high]));
          hooks_.storeMatrices(b_, pointerInRound(m->rows, m->firstSlots[j], k), words);
        }
        continue;
      }
      auto owner = [&](int64_t r) { return static_cast<bool>(s.map->regOwner[r]); };
      for (int64_t r = 0; r < s.map->numRegs();) {
        if (!owner(r)) {  // same element as an earlier register of this thread
          ++r;
          continue;
        }
        const Slot& slot = sourceSlots[i][r];
        const int64_t n = runLength(sourceSlots[i], r, owner);
        predicated(inRound(sourceSides[i], slot, k), [&]() -> llvm::Value* {
          llvm::Value* v = toMemory((*s.regs)[r], element);
          if (n > 1) {
            v = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(n)));
            for (int64_t j = 0; j < n; ++j) v = b_.CreateInsertElement(v, toMemory((*s.regs)[r + j], element), j);
          }
          b_.CreateAlignedStore(v, pointerInRound(sourceSides[i], slot, k),
                                llvm::Align(static_cast<uint64_t>(slot.alignBytes)));
          return nullptr;
        }, nullptr);
        r += n;
      }
    }
    barrier();
    for (size_t i = 0; i < dests.size(); ++i) {
      if (const std::optional<MatrixSide>& m = destMatrices[i]) {
        for (size_t j = 0; j < m->plan.instructions.size(); ++j) {
          const MatrixInstruction& inst = m->plan.instructions[j];
          if (inst.round != k) continue;
          const std::vector<llvm::Value*> words = hooks_.loadMatrices(
              b_, pointerInRound(m->rows, m->firstSlots[j], k), static_cast<int64_t>(inst.words.size()));
          for (size_t w = 0; w < words.size(); ++w) {
            llvm::Value* pair = b_.CreateBitCast(words[w], pairType);
            out[i][inst.words[w].first] = fromMemory(b_.CreateExtractElement(pair, uint64_t(0)), element);
            out[i][inst.words[w].second] = fromMemory(b_.CreateExtractElement(pair, uint64_t(1)), element);
          }
        }
        continue;
      }
      auto any = [](int64_t) { return true; };
      for (int64_t r = 0; r < dests[i].map->numRegs();) {
        const Slot& slot = destSlots[i][r];
        const int64_t n = runLength(destSlots[i], r, any);
        if (n > 1) {
          // A run is in one known round: loaded there, untouched in the others.
          if (*slot.round == k) {
            llvm::Value* v = b_.CreateAlignedLoad(llvm::FixedVectorType::get(mt, static_cast<unsigned>(n)),
                                                  pointerInRound(destSides[i], slot, k),
                                                  llvm::Align(static_cast<uint64_t>(slot.alignBytes)));
            for (int64_t j = 0; j < n; ++j) out[i][r + j] = fromMemory(b_.CreateExtractElement(v, j), element);
          }
        } else {
          llvm::Value* earlier = out[i][r] ? out[i][r] : llvm::PoisonValue::get(regType(element));
          out[i][r] = predicated(inRound(destSides[i], slot, k), [&] {
            return fromMemory(b_.CreateAlignedLoad(mt, pointerInRound(destSides[i], slot, k),
                                                   llvm::Align(static_cast<uint64_t>(slot.alignBytes))),
                              element);
          }, earlier);
        }
        r += n;
      }
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ driver

void KernelLowering::declareKernel() {
  std::vector<llvm::Type*> params;
  for (unsigned i = 0; i < func_.numArguments(); ++i) {
    ir::Type t = func_.argument(i)->type();
    if (t.isTile()) throw Error("cannot lower kernel '" + func_.name() + "': argument " + std::to_string(i) +
                                " is a tile (" + t.str() + "); kernel arguments are scalars and pointers");
    // i1 travels as a byte: kernel parameters are at least byte-sized.
    params.push_back(t.isTensorDesc() ? hooks_.descriptorParameterType(ctx_) : t.isBool() ? b_.getInt8Ty() : regType(t));
  }
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  kernel_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, func_.name(), module_.get());
  // A warp-specialized kernel's block has its producer warps after the num_warps its layouts were planned for.
  // Ping-pong consumers (consumer_groups) are that many groups of num_warps warps.
  for (const auto& op : func_.body()->ops())
    if (op->is(OpKind::WarpSpecialize)) {
      producerWarps_ = op->intAttr("producer_warps");
      if (op->hasAttr("consumer_groups")) consumerGroups_ = op->intAttr("consumer_groups");
    }
  hooks_.configureKernel(*kernel_, static_cast<int>(opts_.numWarps * consumerGroups_ + producerWarps_));
  if (producerWarps_) hooks_.configureWarpSpecialized(*kernel_);
  for (unsigned i = 0; i < func_.numArguments(); ++i) {
    llvm::Argument* a = kernel_->getArg(i);
    a->setName(func_.argument(i)->nameHint().empty() ? "arg" + std::to_string(i) : func_.argument(i)->nameHint());
    ir::Type t = func_.argument(i)->type();
    if (t.isTensorDesc()) declareDescriptor(i);
    if (t.isPtr()) {
      a->addAttr(llvm::Attribute::NoUndef);
      const ir::AttrDict& attrs = func_.argAttrs(i);
      auto it = attrs.find("divisibility");
      if (it != attrs.end() && it->second.isInt() && it->second.getInt() > 0)
        a->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(static_cast<uint64_t>(
                                                              std::min<int64_t>(it->second.getInt(), 4096)))));
    }
  }
}

// A descriptor parameter is its bytes (DescriptorParameter.h); the kernel's named metadata tessera.tensor_maps
// lists the parameters that carry a tensor map, with its swizzle, for the runtime that encodes the maps.
void KernelLowering::declareDescriptor(unsigned argNo) {
  const ir::Type t = func_.argument(argNo)->type();
  const bool withMap = hooks_.descriptorsCarryTensorMaps();
  const int rank = static_cast<int>(t.blockShape().size());
  hooks_.declareDescriptorParameter(*kernel_, argNo, descriptorParamBytes(rank, withMap),
                                    descriptorParamAlign(withMap));
  if (!withMap) return;
  const ir::AttrDict& attrs = func_.argAttrs(argNo);
  auto it = attrs.find(ir::kTensorMapSwizzleAttr);
  const int64_t swizzle = it != attrs.end() && it->second.isInt() ? it->second.getInt() : 0;
  llvm::Metadata* entry[] = {llvm::ConstantAsMetadata::get(b_.getInt32(argNo)),
                             llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(swizzle)))};
  module_->getOrInsertNamedMetadata(kTensorMapsMetadata)->addOperand(llvm::MDNode::get(ctx_, entry));
}

void KernelLowering::noteDot(const ir::Op& dot, const std::string& instruction, const std::string& note) {
  llvm::Metadata* entry[] = {llvm::MDString::get(ctx_, dot.loc().known() ? dot.loc().str() : std::string()),
                             llvm::MDString::get(ctx_, instruction), llvm::MDString::get(ctx_, note)};
  module_->getOrInsertNamedMetadata(kDotsMetadata)->addOperand(llvm::MDNode::get(ctx_, entry));
}

std::unique_ptr<llvm::Module> KernelLowering::run() {
  if (func_.attrs().count("num_warps") && func_.attrs().at("num_warps").isInt() &&
      func_.attrs().at("num_warps").getInt() != opts_.numWarps)
    throw Error("kernel '" + func_.name() + "' was laid out for num_warps = " +
                std::to_string(func_.attrs().at("num_warps").getInt()) + " but is lowered for " +
                std::to_string(opts_.numWarps));
  module_ = std::make_unique<llvm::Module>(func_.name(), ctx_);
  declareKernel();
  debugLocations_ = std::make_unique<DebugLocations>(*module_, *kernel_, func_, hooks_.lineDirectivesOnly());
  prologue_ = llvm::BasicBlock::Create(ctx_, "prologue", kernel_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "body", kernel_);
  b_.SetInsertPoint(prologue_);
  llvm::Value* tid = hooks_.threadId(b_);
  laneId_ = b_.CreateURem(tid, b_.getInt32(static_cast<uint32_t>(warpSize_)), "lane");
  warpId_ = b_.CreateUDiv(tid, b_.getInt32(static_cast<uint32_t>(warpSize_)), "warp");
  // Each consumer group lays its tiles out over its own num_warps warps (the producers' warp is never read: they
  // run scalars).
  if (consumerGroups_ > 1) warpId_ = b_.CreateURem(warpId_, b_.getInt32(static_cast<uint32_t>(opts_.numWarps)), "warp");
  for (unsigned i = 0; i < func_.numArguments(); ++i) {
    llvm::Value* a = kernel_->getArg(i);
    if (func_.argument(i)->type().isBool()) a = b_.CreateICmpNE(a, b_.getInt8(0));
    set(func_.argument(i), {a});
  }
  b_.SetInsertPoint(body);
  lowerBlock(*func_.body());
  b_.SetInsertPoint(prologue_);
  b_.CreateBr(body);

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*module_, &os))
    throw Error("internal error: lowering kernel '" + func_.name() + "' produced invalid LLVM IR: " + os.str());
  return std::move(module_);
}

void KernelLowering::lowerBlock(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    try {
      lowerOp(*op);
    } catch (const Error& e) {
      // Helpers that only know the op's name (thread maps, layouts) throw without a location: add the op's.
      if (e.location().known()) throw;
      throw Error(e.message(), op->loc());
    }
  }
}

void KernelLowering::lowerOp(const ir::Op& op) {
  DebugLocations::OpScope located(*debugLocations_, op, b_);
  switch (op.kind()) {
    case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
    case OpKind::Splat:
      return lowerConstantLike(op);
    case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans: case OpKind::Cat:
    case OpKind::Join: case OpKind::Split:
      return lowerShapeOp(op);
    case OpKind::ConvertLayout: return lowerConvertLayout(op);
    case OpKind::Load: return lowerLoad(op);
    case OpKind::Store: return lowerStore(op);
    case OpKind::AtomicRMW: case OpKind::AtomicCAS: return lowerAtomic(op);
    case OpKind::DescLoad: case OpKind::DescStore: case OpKind::DescField: return lowerDescriptorOp(op);
    case OpKind::Reduce: return lowerReduce(op);
    case OpKind::Scan: return lowerScan(op);
    case OpKind::Dot: return lowerDot(op);
    case OpKind::LocalAlloc: case OpKind::AsyncCopy: case OpKind::AsyncCommitGroup: case OpKind::AsyncWait:
    case OpKind::LocalLoad: case OpKind::LocalStore:
      return lowerSharedBufferOp(op);
    case OpKind::MbarrierAlloc: case OpKind::AsyncTmaCopy: case OpKind::MbarrierWait: case OpKind::MbarrierArrive:
      return lowerTmaOp(op);
    case OpKind::WarpSpecialize:
      return lowerWarpSpecialize(op);
    case OpKind::TurnWait: case OpKind::TurnPass:
      return lowerTurn(op);
    case OpKind::ConsumerGroup:
      return set(op.result(0), {consumerGroup(op)});
    case OpKind::For: case OpKind::If: case OpKind::While:
      return lowerControlFlow(op);
    case OpKind::Yield:
      fail(op, "'yield' is lowered by its parent op");  // parents consume their terminators
    case OpKind::Return:
      b_.CreateRetVoid();
      return;
    case OpKind::Barrier:
      barrier();
      return;
    case OpKind::Hint:
      set(op.result(0), get(op.operand(0)));
      return;
    case OpKind::DotWait: {
      Regs all;  // every tile's registers, in operand order: one wait for all of them
      for (const ir::Value* v : op.operands()) all.insert(all.end(), get(v).begin(), get(v).end());
      Regs waited;
      try {
        waited = hooks_.dotWait(b_, all, op.intAttr("pending"));
      } catch (const Error& e) {
        fail(op, e.message());  // the target's reason, at the op's location
      }
      size_t next = 0;
      for (unsigned i = 0; i < op.numResults(); ++i) {
        const size_t count = get(op.operand(i)).size();
        set(op.result(i), Regs(waited.begin() + static_cast<std::ptrdiff_t>(next),
                               waited.begin() + static_cast<std::ptrdiff_t>(next + count)));
        next += count;
      }
      return;
    }
    case OpKind::DebugPrint: case OpKind::DeviceAssert:
      return lowerDebugOp(op);
    default:
      if (op.info().has(ir::kElementwise)) return lowerElementwise(op);
      fail(op, "no lowering for this op");
  }
}

std::unique_ptr<llvm::Module> lowerFunction(const ir::Function& f, llvm::LLVMContext& ctx, LoweringHooks& hooks,
                                            const LoweringOptions& opts) {
  KernelLowering lowering(f, ctx, hooks, opts);
  return lowering.run();
}

}  // namespace tessera::backends
