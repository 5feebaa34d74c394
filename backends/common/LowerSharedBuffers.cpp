// Shared buffers and asynchronous copies: local_alloc (a base address in the kernel's shared memory, placed by
// allocate-shared-memory), async_copy (each thread copies the elements it owns, in runs of up to 16 contiguous bytes,
// with the target's asynchronous copy where it has one, else a vector load and stores, in rounds that bound the
// registers loaded at once), the commit and wait groups (the target's), local_load (each thread reads its
// registers' elements) and local_store (each element's owner writes it). A buffer value's one "register" is the
// address of its first stage; tokens have none.
#include <algorithm>

#include "backends/common/KernelLowering.h"
#include "backends/common/XorOfBases.h"
#include "ir/Layout.h"
#include "ir/SharedRuns.h"

namespace tessera::backends {

using ir::OpKind;

namespace {

ir::Layout sharedLayoutOf(const ir::Type& buffer) { return ir::Layout::fromAttr(*buffer.encoding()); }

int64_t stageBytes(const ir::Type& buffer) { return buffer.stageTile().numElements() * buffer.storageBytes(); }

// Lanes first .. first + count - 1 of a vector.
std::vector<int> shuffleMask(int64_t first, int64_t count) {
  std::vector<int> lanes;
  for (int64_t i = 0; i < count; ++i) lanes.push_back(static_cast<int>(first + i));
  return lanes;
}

}  // namespace

// Lanes first .. first + count - 1 of `whole` (a vector of `length`, a scalar when that is 1), as a vector (a scalar
// when count is 1).
llvm::Value* KernelLowering::extractLanes(llvm::Value* whole, int64_t first, int64_t count, int64_t length) {
  if (count == length) return whole;
  if (count == 1) return b_.CreateExtractElement(whole, b_.getInt64(static_cast<uint64_t>(first)));
  return b_.CreateShuffleVector(whole, shuffleMask(first, count));
}

// `whole` (a vector of `length`) with lanes first .. first + count - 1 replaced by `part` (a scalar when count is 1).
llvm::Value* KernelLowering::insertLanes(llvm::Value* whole, llvm::Value* part, int64_t first, int64_t count,
                                         int64_t length) {
  if (count == length) return part;
  for (int64_t i = 0; i < count; ++i) {
    llvm::Value* lane = count == 1 ? part : b_.CreateExtractElement(part, b_.getInt64(static_cast<uint64_t>(i)));
    whole = b_.CreateInsertElement(whole, lane, b_.getInt64(static_cast<uint64_t>(first + i)));
  }
  return whole;
}

// Stage offsets and element indices are never negative: they are zero-extended to i64 here, so that the GEPs do not
// sign-extend them and every optimization pipeline emits the same address arithmetic.
llvm::Value* KernelLowering::sharedStage(const ir::Value* buffer, const ir::Value* stage) {
  llvm::Value* offset = b_.CreateMul(get(stage)[0], b_.getInt32(static_cast<uint32_t>(stageBytes(buffer->type()))));
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), get(buffer)[0], b_.CreateZExt(offset, b_.getInt64Ty()));
}

// Layout::sharedOffset on i32 values: the row is the index over every dimension but the fastest (`order`), and the
// vector of `vec` elements a column falls in is XOR-ed with the row's phase.
llvm::Value* KernelLowering::sharedElementIndex(const ir::Op& op, const ir::Layout& layout,
                                                const std::vector<int64_t>& shape,
                                                const std::vector<llvm::Value*>& coords) {
  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  if (layout.kind() == ir::Layout::Kind::LinearShared) {
    // The inverse of the layout: the XOR of the offsets of the coordinates' set bits.
    const ir::LinearLayout inverse = layout.toLinear(shape).invert();
    llvm::Value* index = i32(0);
    for (size_t d = 0; d < coords.size(); ++d) {
      const std::vector<ir::LinearLayout::Basis>& bases = inverse.inDim(ir::tensorDimName(static_cast<int>(d))).bases;
      index = b_.CreateXor(index, xorOfBases(b_, coords[d], bases));
    }
    return b_.CreateZExt(index, b_.getInt64Ty());
  }
  if (layout.kind() != ir::Layout::Kind::Shared)
    fail(op, "shared buffers in layout " + layout.str() + " are not supported by the lowering (use #shared or "
             "#linear_shared)");
  const std::vector<int64_t>& order = layout.order();
  const int64_t rowLength = shape[order[0]];
  llvm::Value* row = i32(0);
  int64_t stride = 1;
  for (size_t i = 1; i < order.size(); ++i) {
    row = b_.CreateAdd(row, b_.CreateMul(coords[order[i]], i32(stride)));
    stride *= shape[order[i]];
  }
  const int64_t vec = layout.vec();
  const int64_t phases = std::min(layout.maxPhase(), std::max<int64_t>(1, rowLength / vec));
  llvm::Value* col = coords[order[0]];
  llvm::Value* phase = b_.CreateURem(b_.CreateUDiv(row, i32(layout.perPhase())), i32(phases));
  llvm::Value* vector = b_.CreateXor(b_.CreateUDiv(col, i32(vec)), phase);
  llvm::Value* index = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(row, i32(rowLength)), b_.CreateMul(vector, i32(vec))),
                                    b_.CreateURem(col, i32(vec)));
  return b_.CreateZExt(index, b_.getInt64Ty());
}

std::function<llvm::Value*(int64_t)> KernelLowering::sharedElementIndices(const ir::Op& op, const ir::Layout& layout,
                                                                         const std::vector<int64_t>& shape,
                                                                         const ThreadMap& map) {
  std::vector<Coords> threadBases = map.laneBases;
  threadBases.insert(threadBases.end(), map.warpBases.begin(), map.warpBases.end());
  auto indexer = sharedIndexer(layout, shape, threadPart(map), threadBases);
  if (!indexer)
    return [this, &op, layout, shape, &map](int64_t reg) {
      std::vector<llvm::Value*> coords;
      for (int d = 0; d < map.rank(); ++d) coords.push_back(coord(map, reg, d));
      return sharedElementIndex(op, layout, shape, coords);
    };
  return [indexer, &map](int64_t reg) { return indexer(map.regCoords[reg]); };
}

std::function<llvm::Value*(const Coords&)> KernelLowering::sharedIndexer(const ir::Layout& layout,
                                                                        const std::vector<int64_t>& shape,
                                                                        const std::vector<llvm::Value*>& thread,
                                                                        const std::vector<Coords>& threadBases) {
  const bool tileShape = std::all_of(shape.begin(), shape.end(), [](int64_t s) { return s > 0 && (s & (s - 1)) == 0; });
  if (layout.kind() != ir::Layout::Kind::LinearShared && (layout.kind() != ir::Layout::Kind::Shared || !tileShape))
    return {};
  const ir::LinearLayout inverse = layout.toLinear(shape).invert();
  std::vector<std::vector<ir::LinearLayout::Basis>> bases;  // per dimension: the offset of each coordinate bit
  for (size_t d = 0; d < shape.size(); ++d) bases.push_back(inverse.inDim(ir::tensorDimName(static_cast<int>(d))).bases);
  auto offsetOf = [bases](const Coords& c) {
    int64_t offset = 0;
    for (size_t d = 0; d < bases.size(); ++d)
      for (size_t i = 0; i < bases[d].size(); ++i)
        if ((c[d] >> i) & 1) offset ^= bases[d][i][0];
    return offset;
  };
  int64_t threadBits = 0;  // every bit a thread's part may have
  for (const Coords& c : threadBases) threadBits |= offsetOf(c);
  llvm::Value* threadIndex = b_.getInt32(0);
  for (size_t d = 0; d < shape.size(); ++d) threadIndex = b_.CreateXor(threadIndex, xorOfBases(b_, thread[d], bases[d]));
  return [this, offsetOf, threadBits, threadIndex](const Coords& c) {
    const int64_t constantPart = offsetOf(c);
    llvm::Value* index = threadIndex;
    if (constantPart & threadBits)
      index = b_.CreateXor(index, b_.getInt32(static_cast<uint32_t>(constantPart & threadBits)));
    if (constantPart & ~threadBits)
      index = b_.CreateAdd(index, b_.getInt32(static_cast<uint32_t>(constantPart & ~threadBits)), "", true, true);
    return b_.CreateZExt(index, b_.getInt64Ty());
  };
}

void KernelLowering::storeToShared(const ir::Op& op, const Regs& regs, const ThreadMap& map, ir::Type elem,
                                   const ir::Layout& layout, const std::vector<int64_t>& shape, llvm::Value* stage) {
  const auto [dim, run] = map.registerRuns();
  const int64_t vec = std::min({run, ir::sharedRunAlong(layout, shape, static_cast<int>(dim)),
                                std::max<int64_t>(1, 16 / elem.storageBytes())});
  llvm::Type* mt = memType(elem);
  const auto indexOf = sharedElementIndices(op, layout, shape, map);
  for (int64_t r = 0; r < map.numRegs(); r += vec) {
    llvm::Value* dst = smemElementPtr(stage, mt, indexOf(r));
    predicated(ownsRegister(map, r), [&]() -> llvm::Value* {
      llvm::Value* word = toMemory(regs[r], elem);
      if (vec > 1) {
        word = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(vec)));
        for (int64_t i = 0; i < vec; ++i)
          word = b_.CreateInsertElement(word, toMemory(regs[r + i], elem), b_.getInt64(i));
      }
      b_.CreateAlignedStore(word, dst, llvm::Align(static_cast<uint64_t>(vec * elem.storageBytes())));
      return nullptr;
    }, nullptr);
  }
}

void KernelLowering::lowerSharedBufferOp(const ir::Op& op) {
  switch (op.kind()) {
    case OpKind::LocalAlloc: {
      const ir::Type t = op.result(0)->type();
      set(op.result(0), {scratch(op, t.stages() * stageBytes(t))});
      return;
    }
    case OpKind::AsyncCopy: {
      const auto& [ptrValue, map, ptrs, elem, bytes, mt] = memoryAccess(op);
      const ir::Value* buffer = op.operand(1);
      const ir::Value* mask = op.numOperands() > 3 ? op.operand(3) : nullptr;
      const ir::Layout layout = sharedLayoutOf(buffer->type());
      const std::vector<int64_t>& shape = buffer->type().stageShape();
      // A thread's `run` registers are contiguous in global memory (at most 16 bytes), read `width` at a time
      // (aligned, under one mask value), and `vec` of them are consecutive in a stage too. An asynchronous copy
      // moves `piece` = min(width, vec) at a time; a load and a store read the run `width` at a time and store it
      // `vec` at a time (element by element into a buffer transposed to the pointers), so that a run of unaligned
      // elements still reaches shared memory in one wide store.
      const auto [dim, width] = vectorRun(ptrValue, map, mask);
      const int64_t run = std::max(width, std::min(contiguousRun(ptrValue, map), std::max<int64_t>(1, 16 / bytes)));
      const int64_t vec = std::min(run, ir::sharedRunAlong(layout, shape, static_cast<int>(dim)));
      const int64_t piece = std::min(width, vec);
      llvm::Value* stage = sharedStage(buffer, op.operand(2));
      auto vectorOf = [&](int64_t n) -> llvm::Type* {
        return n == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(n));
      };
      auto inBounds = [&](int64_t r) { return mask ? get(mask)[r] : b_.getTrue(); };
      const auto indexOf = sharedElementIndices(op, layout, shape, map);
      auto destination = [&](int64_t r) { return smemElementPtr(stage, mt, indexOf(r)); };
      // A copy through registers goes in rounds (LoweringHooks::copyRoundRegisters), which may span copies: a
      // round ends before the run that would take it over the target's limit.
      const bool throughRegisters = !hooks_.hasAsyncCopy(piece * bytes);
      const int64_t roundRegisters = throughRegisters ? hooks_.copyRoundRegisters() : 0;
      const int64_t registersPerRun = (run / width) * std::max<int64_t>(1, (width * bytes + 3) / 4);
      for (int64_t r = 0; r < map.numRegs(); r += run) {
        if (roundRegisters > 0 && copyRoundLoaded_ > 0 && copyRoundLoaded_ + registersPerRun > roundRegisters) {
          hooks_.endCopyRound(b_);
          copyRoundLoaded_ = 0;
        }
        // Replicated elements are copied once, by their owner.
        predicated(ownsRegister(map, r), [&]() -> llvm::Value* {
          if (!throughRegisters) {
            for (int64_t c = r; c < r + run; c += piece)
              hooks_.asyncCopy(b_, destination(c), ptrs[c], piece * bytes, inBounds(c));
            return nullptr;
          }
          llvm::Value* loaded = llvm::PoisonValue::get(vectorOf(run));
          for (int64_t c = r; c < r + run; c += width) {
            llvm::Value* part = maskedGlobalLoad(vectorOf(width), ptrs[c], inBounds(c),
                                                 llvm::Constant::getNullValue(vectorOf(width)), width * bytes);
            loaded = insertLanes(loaded, part, c - r, width, run);
          }
          for (int64_t c = r; c < r + run; c += vec)
            b_.CreateAlignedStore(extractLanes(loaded, c - r, vec, run), destination(c),
                                  llvm::Align(static_cast<uint64_t>(vec * bytes)));
          return nullptr;
        }, nullptr);
        if (roundRegisters > 0) copyRoundLoaded_ += registersPerRun;
      }
      set(op.result(0), {});
      return;
    }
    case OpKind::AsyncCommitGroup:
      hooks_.asyncCommitGroup(b_);
      set(op.result(0), {});
      return;
    case OpKind::AsyncWait:
      hooks_.asyncWait(b_, op.intAttr("pending"));
      set(op.result(0), {});
      return;
    case OpKind::LocalStore: {
      // The value's owners write its elements.
      const ir::Value* buffer = op.operand(1);
      storeToShared(op, get(op.operand(0)), mapOf(op.operand(0)->type(), op.name()), buffer->type().element(),
                    sharedLayoutOf(buffer->type()), buffer->type().stageShape(), sharedStage(buffer, op.operand(2)));
      set(op.result(0), {});
      return;
    }
    case OpKind::LocalLoad: {
      // Read by dots from its buffer alone: the tile gets no registers (a lowering asking for them anyway fails
      // with "used before it was lowered").
      if (transforms::onlyDotsReadBufferOf(op)) return;
      const ir::Value* buffer = op.operand(0);
      const ir::Type elem = buffer->type().element();
      const ir::Layout layout = sharedLayoutOf(buffer->type());
      const ThreadMap& map = mapOf(op.result(0)->type(), op.name());
      llvm::Value* stage = sharedStage(buffer, op.operand(1));
      llvm::Type* mt = memType(elem);
      Regs out;
      const auto indexOf = sharedElementIndices(op, layout, buffer->type().stageShape(), map);
      for (int64_t r = 0; r < map.numRegs(); ++r) {
        llvm::Value* p = smemElementPtr(stage, mt, indexOf(r));
        out.push_back(fromMemory(b_.CreateLoad(mt, p), elem));
      }
      set(op.result(0), std::move(out));
      return;
    }
    default:
      fail(op, "is not a shared-buffer op");
  }
}

}  // namespace tessera::backends
