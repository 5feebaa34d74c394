// scan: in parallel when the layout splits the axis into [high register bits | warp bits | lane bits | low
// register bits] (every blocked layout and its slices do): each thread scans its registers, an XOR-butterfly
// scan across the lanes along the axis gives each lane the combination of the lanes before it, warp totals go
// through shared memory, and each thread folds the carries into its registers. The combine order is always the
// scan order (the combine need not be commutative). Other layouts fall back to a serial scan through shared
// memory, one thread per line.
#include "backends/common/KernelLowering.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <optional>

namespace tessera::backends {

namespace {

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

int64_t lowestBit(int64_t x) { return x & -x; }

int64_t highestBit(int64_t x) {
  int64_t h = 0;
  while (x) {
    h = lowestBit(x);
    x &= x - 1;
  }
  return h;
}

// The bits of `value` selected by `mask`, packed together (lowest first).
int64_t compressBits(int64_t value, int64_t mask) {
  int64_t out = 0;
  for (int k = 0; mask; mask &= mask - 1, ++k)
    if (value & lowestBit(mask)) out |= int64_t(1) << k;
  return out;
}

// How a parallel scan walks one layout. Positions along the axis split into bit fields, most significant first:
// high register bits (which chunk of a thread's line), warp bits, lane bits, low register bits (the step within a
// chunk). The element order along the axis is the order of those fields.
struct ScanPlan {
  std::vector<int> laneBits;  // lane-id bits that move along the axis, by increasing axis position
  std::vector<int> warpBits;  // warp-id bits that move along the axis, by increasing axis position
  int64_t chunks = 1, steps = 1;
  std::vector<Coords> lineKeys;                           // per line held by the thread: coordinates minus the axis
  std::vector<std::vector<std::vector<int64_t>>> regs;    // [line][chunk][step] -> register
  std::map<Coords, std::array<int64_t, 3>> placeOf;       // register coordinates -> (line, chunk, step)
};

// The plan for scanning `map` along `axis`, or nullopt when the layout does not have that structure.
std::optional<ScanPlan> planParallelScan(const ThreadMap& map, int axis) {
  const int64_t len = map.shape[axis];
  if (!isPowerOfTwo(len)) return std::nullopt;
  // Thread bits must move along the axis only (one position bit each) or not along it at all.
  auto axisBits = [&](const std::vector<Coords>& bases, std::vector<int>& bits, int64_t& mask) {
    std::vector<std::pair<int64_t, int>> found;
    for (size_t i = 0; i < bases.size(); ++i) {
      const int64_t a = bases[i][axis];
      if (a == 0) continue;
      Coords other = bases[i];
      other[axis] = 0;
      if (!isPowerOfTwo(a) || !isZero(other) || (mask & a)) return false;
      mask |= a;
      found.emplace_back(a, static_cast<int>(i));
    }
    std::sort(found.begin(), found.end());
    for (const auto& f : found) bits.push_back(f.second);
    return true;
  };
  ScanPlan plan;
  int64_t laneMask = 0, warpMask = 0;
  if (!axisBits(map.laneBases, plan.laneBits, laneMask) || !axisBits(map.warpBases, plan.warpBits, warpMask))
    return std::nullopt;
  if (laneMask & warpMask) return std::nullopt;
  if (laneMask && warpMask && highestBit(laneMask) > lowestBit(warpMask)) return std::nullopt;
  int64_t regMask = 0;
  for (int64_t r = 0; r < map.numRegs(); ++r) regMask |= map.regCoords[r][axis];
  const int64_t threadMask = laneMask | warpMask;
  if ((regMask & threadMask) || (regMask | threadMask) != len - 1) return std::nullopt;
  const int64_t lowMask = threadMask ? regMask & (lowestBit(threadMask) - 1) : regMask;
  const int64_t highMask = regMask & ~lowMask;
  if (threadMask && (highMask & (highestBit(threadMask) - 1))) return std::nullopt;  // register bits in between
  plan.steps = int64_t(1) << std::popcount(static_cast<uint64_t>(lowMask));
  plan.chunks = int64_t(1) << std::popcount(static_cast<uint64_t>(highMask));

  std::map<Coords, size_t> lineOf;
  for (int64_t r = 0; r < map.numRegs(); ++r) {
    if (!map.regOwner[r]) continue;
    Coords key = dropDim(map.regCoords[r], axis);
    auto [it, fresh] = lineOf.emplace(key, plan.lineKeys.size());
    if (fresh) {
      plan.lineKeys.push_back(key);
      plan.regs.emplace_back(plan.chunks, std::vector<int64_t>(plan.steps, -1));
    }
    const int64_t a = map.regCoords[r][axis];
    int64_t& slot = plan.regs[it->second][compressBits(a, highMask)][compressBits(a, lowMask)];
    if (slot >= 0) return std::nullopt;  // two owned registers at one position: not a linear layout
    slot = r;
    plan.placeOf[map.regCoords[r]] = {static_cast<int64_t>(it->second), compressBits(a, highMask), compressBits(a, lowMask)};
  }
  for (const auto& line : plan.regs)
    for (const auto& chunk : line)
      for (int64_t r : chunk)
        if (r < 0) return std::nullopt;  // a thread's line with a hole
  return plan;
}

// The parallel scan of one op along `axis` with `plan` (see the file comment).
class ParallelScan {
 public:
  ParallelScan(KernelLowering& k, const ir::Op& op, const ThreadMap& map, const ScanPlan& plan, int axis, bool reverse)
      : k_(k), b_(k.builder()), op_(op), map_(map), plan_(plan), axis_(axis), reverse_(reverse), n_(op.numOperands()) {}

  void run() {
    const size_t lines = plan_.lineKeys.size();
    // 1. Within the thread: scan each chunk of each line in scan order.
    std::vector<std::vector<std::vector<Regs>>> local(lines);  // [line][chunk][step]
    std::vector<std::vector<Regs>> totals(lines);              // [line][chunk]
    for (size_t g = 0; g < lines; ++g) {
      local[g].assign(plan_.chunks, std::vector<Regs>(plan_.steps));
      for (int64_t h = 0; h < plan_.chunks; ++h) {
        Regs running;
        for (int64_t i = 0; i < plan_.steps; ++i) {
          const int64_t s = reverse_ ? plan_.steps - 1 - i : i;
          Regs x = operandRegs(plan_.regs[g][h][s]);
          running = i == 0 ? x : combine(running, x);
          local[g][h][s] = running;
        }
        totals[g].push_back(running);
      }
    }

    // 2. Across lanes: an XOR butterfly from the lowest axis bit up. Each lane keeps the total of its block of
    //    lanes and the combination of the lanes before it in scan order (`before`, meaningful where hasBefore).
    std::vector<std::vector<Regs>> before = totals;
    llvm::Value* hasBefore = b_.getFalse();
    for (int bit : plan_.laneBits) {
      llvm::Value* laneBit = b_.CreateTrunc(b_.CreateLShr(k_.laneId(), b_.getInt32(bit)), b_.getInt1Ty());
      llvm::Value* later = reverse_ ? b_.CreateNot(laneBit) : laneBit;  // this lane comes after its partner
      for (size_t g = 0; g < lines; ++g)
        for (int64_t h = 0; h < plan_.chunks; ++h) {
          Regs& total = totals[g][h];
          Regs other;
          for (llvm::Value* v : total) other.push_back(k_.shuffleXor(v, 1 << bit));
          Regs merged = isConst(hasBefore, false) ? other
                                                  : select(hasBefore, combine(other, before[g][h]), other);
          before[g][h] = select(later, merged, before[g][h]);
          total = combine(select(later, other, total), select(later, total, other));
        }
      hasBefore = b_.CreateOr(hasBefore, later);
    }

    // 3. Across warps and chunks: the carry of each chunk is the combination of every (chunk, warp) block
    //    before it in scan order.
    std::vector<std::vector<Regs>> carry(lines, std::vector<Regs>(plan_.chunks));
    std::vector<llvm::Value*> hasCarry(plan_.chunks, b_.getFalse());
    const int64_t warps = int64_t(1) << plan_.warpBits.size();
    llvm::Value* warpPos = b_.getInt32(0);
    for (size_t i = 0; i < plan_.warpBits.size(); ++i)
      warpPos = b_.CreateOr(warpPos, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(k_.warpId(), b_.getInt32(plan_.warpBits[i])),
                                                               b_.getInt32(1)),
                                                  b_.getInt32(static_cast<uint32_t>(i))));
    std::vector<std::vector<std::vector<Regs>>> blockTotals = exchangeWarpTotals(totals, warpPos, warps);
    for (size_t g = 0; g < lines; ++g) {
      Regs running;
      bool started = false;
      for (int64_t hi = 0; hi < plan_.chunks; ++hi) {
        const int64_t h = reverse_ ? plan_.chunks - 1 - hi : hi;
        for (int64_t wi = 0; wi < warps; ++wi) {
          const int64_t w = reverse_ ? warps - 1 - wi : wi;
          if (started) {
            llvm::Value* here = warps == 1 ? b_.getTrue() : b_.CreateICmpEQ(warpPos, b_.getInt32(static_cast<uint32_t>(w)));
            carry[g][h] = carry[g][h].empty() ? running : select(here, running, carry[g][h]);
            if (g == 0) hasCarry[h] = hi > 0 ? b_.getTrue() : b_.CreateOr(hasCarry[h], here);
          }
          const Regs& t = blockTotals[g][h][w];
          running = started ? combine(running, t) : t;
          started = true;
        }
      }
    }

    // 4. Each register: combine(carry, lanes before, own running value), skipping the parts that are absent.
    for (size_t g = 0; g < lines; ++g)
      for (int64_t h = 0; h < plan_.chunks; ++h) {
        Regs prefix;
        llvm::Value* hasPrefix;
        if (isConst(hasCarry[h], false)) {
          prefix = before[g][h];
          hasPrefix = hasBefore;
        } else if (isConst(hasBefore, false)) {
          prefix = carry[g][h];
          hasPrefix = hasCarry[h];
        } else {
          prefix = select(hasCarry[h], select(hasBefore, combine(carry[g][h], before[g][h]), carry[g][h]), before[g][h]);
          hasPrefix = b_.CreateOr(hasCarry[h], hasBefore);
        }
        if (isConst(hasPrefix, false)) continue;
        for (int64_t s = 0; s < plan_.steps; ++s) {
          Regs& v = local[g][h][s];
          v = isConst(hasPrefix, true) ? combine(prefix, v) : select(hasPrefix, combine(prefix, v), v);
        }
      }

    for (unsigned i = 0; i < n_; ++i) {
      Regs regs;
      for (int64_t r = 0; r < map_.numRegs(); ++r) {
        const auto& place = plan_.placeOf.at(map_.regCoords[r]);
        regs.push_back(local[place[0]][place[1]][place[2]][i]);
      }
      k_.set(op_.result(i), std::move(regs));
    }
  }

 private:
  KernelLowering& k_;
  IRBuilder& b_;
  const ir::Op& op_;
  const ThreadMap& map_;
  const ScanPlan& plan_;
  int axis_;
  bool reverse_;
  unsigned n_;

  static bool isConst(llvm::Value* v, bool value) {
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
    return c && c->isOne() == value;
  }

  Regs operandRegs(int64_t reg) {
    Regs x;
    for (unsigned i = 0; i < n_; ++i) x.push_back(k_.get(op_.operand(i))[reg]);
    return x;
  }

  Regs combine(const Regs& acc, const Regs& x) {
    Regs args = acc;
    args.insert(args.end(), x.begin(), x.end());
    return k_.lowerCombine(*op_.region(0), args);
  }

  Regs select(llvm::Value* pred, const Regs& a, const Regs& c) {
    if (isConst(pred, true)) return a;
    if (isConst(pred, false)) return c;
    Regs r;
    for (size_t i = 0; i < a.size(); ++i) r.push_back(a[i] == c[i] ? a[i] : b_.CreateSelect(pred, a[i], c[i]));
    return r;
  }

  // The total of every (line, chunk, warp position) block: from registers with one warp along the axis,
  // otherwise through the op's scratch, slot ((line * chunks + chunk) * warps + warp) per input.
  std::vector<std::vector<std::vector<Regs>>> exchangeWarpTotals(const std::vector<std::vector<Regs>>& totals,
                                                                 llvm::Value* warpPos, int64_t warps) {
    const size_t lines = plan_.lineKeys.size();
    std::vector<std::vector<std::vector<Regs>>> out(lines, std::vector<std::vector<Regs>>(plan_.chunks));
    if (warps == 1) {
      for (size_t g = 0; g < lines; ++g)
        for (int64_t h = 0; h < plan_.chunks; ++h) out[g][h] = {totals[g][h]};
      return out;
    }
    int64_t lineCount = 1;
    for (int d = 0; d < map_.rank(); ++d)
      if (d != axis_) lineCount *= map_.shape[d];
    // A prefix of the scan's scratch (transforms/analysis/SharedScratch.h): the same per-operand areas, smaller.
    const transforms::OperandAreas areas = transforms::operandAreas(op_, lineCount * plan_.chunks * warps);
    llvm::Value* base = k_.scratch(op_, areas.bytes);
    auto elementPtr = [&](unsigned i, llvm::Value* index) {
      llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, static_cast<uint64_t>(areas.offsets[i]));
      return k_.smemElementPtr(p, k_.memType(op_.operand(i)->type()), index);
    };
    const std::vector<llvm::Value*>& thread = k_.threadPart(map_);
    std::vector<llvm::Value*> lineSlot;  // (line index * chunks) per line of this thread
    for (size_t g = 0; g < lines; ++g) {
      llvm::Value* idx = b_.getInt32(0);
      for (int d = 0, kd = 0; d < map_.rank(); ++d) {
        if (d == axis_) continue;
        llvm::Value* c = b_.CreateXor(thread[d], b_.getInt32(static_cast<uint32_t>(plan_.lineKeys[g][kd++])));
        idx = b_.CreateAdd(b_.CreateMul(idx, b_.getInt32(static_cast<uint32_t>(map_.shape[d]))), c);
      }
      lineSlot.push_back(b_.CreateMul(idx, b_.getInt32(static_cast<uint32_t>(plan_.chunks * warps))));
    }
    auto slotOf = [&](size_t g, int64_t h, llvm::Value* w) {
      return b_.CreateAdd(lineSlot[g], b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(h * warps)), w));
    };
    for (size_t g = 0; g < lines; ++g)
      for (int64_t h = 0; h < plan_.chunks; ++h)
        for (unsigned i = 0; i < n_; ++i)
          b_.CreateStore(k_.toMemory(totals[g][h][i], op_.operand(i)->type()), elementPtr(i, slotOf(g, h, warpPos)));
    k_.barrier();
    for (size_t g = 0; g < lines; ++g)
      for (int64_t h = 0; h < plan_.chunks; ++h)
        for (int64_t w = 0; w < warps; ++w) {
          Regs t;
          for (unsigned i = 0; i < n_; ++i) {
            ir::Type type = op_.operand(i)->type();
            llvm::Value* p = elementPtr(i, slotOf(g, h, b_.getInt32(static_cast<uint32_t>(w))));
            t.push_back(k_.fromMemory(b_.CreateLoad(k_.memType(type), p), type));
          }
          out[g][h].push_back(std::move(t));
        }
    return out;
  }
};

}  // namespace

void KernelLowering::lowerScan(const ir::Op& op) {
  const int axis = static_cast<int>(op.intAttr("axis"));
  const bool reverse = op.hasAttr("reverse") && op.attr("reverse").isBool() && op.attr("reverse").getBool();
  const unsigned n = op.numOperands();
  const ThreadMap& map = mapOf(op.operand(0)->type(), op.name());
  if (std::optional<ScanPlan> plan = planParallelScan(map, axis)) {
    ParallelScan(*this, op, map, *plan, axis, reverse).run();
    return;
  }

  // Fallback for layouts whose axis positions do not split as above: one thread per line, in shared memory.
  const std::vector<int64_t>& shape = map.shape;
  const int64_t elements = op.operand(0)->type().numElements();
  const int64_t len = shape[axis];
  int64_t stride = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) stride *= shape[d];
  const int64_t lines = elements / len;

  const transforms::OperandAreas areas = transforms::scanScratch(op);
  llvm::Value* base = scratch(op, areas.bytes);
  auto elementPtr = [&](unsigned i, llvm::Value* index) {
    llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, static_cast<uint64_t>(areas.offsets[i]));
    return smemElementPtr(p, memType(op.operand(i)->type()), index);
  };
  auto linear = [&](int64_t r) {
    llvm::Value* idx = b_.getInt32(0);
    for (int d = 0; d < map.rank(); ++d)
      idx = b_.CreateAdd(b_.CreateMul(idx, b_.getInt32(static_cast<uint32_t>(shape[d]))), coord(map, r, d));
    return idx;
  };
  auto loadElem = [&](unsigned i, llvm::Value* idx) {
    ir::Type t = op.operand(i)->type();
    return fromMemory(b_.CreateLoad(memType(t), elementPtr(i, idx)), t);
  };

  for (int64_t r = 0; r < map.numRegs(); ++r) {
    if (!map.regOwner[r]) continue;
    llvm::Value* idx = linear(r);
    for (unsigned i = 0; i < n; ++i)
      b_.CreateStore(toMemory(get(op.operand(i))[r], op.operand(i)->type()), elementPtr(i, idx));
  }
  barrier();

  // for (line = tid; line < lines; line += threads): scan the line in place.
  const int64_t threads = static_cast<int64_t>(opts_.numWarps) * warpSize_;
  llvm::Value* tid = b_.CreateAdd(b_.CreateMul(warpId(), b_.getInt32(warpSize_)), laneId());
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_, "scan.lines", kernel_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "scan.line", kernel_);
  llvm::BasicBlock* inner = llvm::BasicBlock::Create(ctx_, "scan.step", kernel_);
  llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx_, "scan.next", kernel_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "scan.done", kernel_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* line = b_.CreatePHI(b_.getInt32Ty(), 2, "line");
  line->addIncoming(tid, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(line, b_.getInt32(static_cast<uint32_t>(lines))), body, exit);

  b_.SetInsertPoint(body);
  llvm::Value* outer = b_.CreateUDiv(line, b_.getInt32(static_cast<uint32_t>(stride)));
  llvm::Value* innerIdx = b_.CreateURem(line, b_.getInt32(static_cast<uint32_t>(stride)));
  llvm::Value* lineBase = b_.CreateAdd(b_.CreateMul(outer, b_.getInt32(static_cast<uint32_t>(len * stride))), innerIdx);
  auto position = [&](llvm::Value* j) {  // element index of step j along the line
    llvm::Value* k = reverse ? b_.CreateSub(b_.getInt32(static_cast<uint32_t>(len - 1)), j) : j;
    return b_.CreateAdd(lineBase, b_.CreateMul(k, b_.getInt32(static_cast<uint32_t>(stride))));
  };
  Regs first;
  {
    llvm::Value* idx = position(b_.getInt32(0));
    for (unsigned i = 0; i < n; ++i) first.push_back(loadElem(i, idx));
  }
  if (len == 1) {
    b_.CreateBr(latch);
  } else {
    b_.CreateBr(inner);
    b_.SetInsertPoint(inner);
    llvm::PHINode* j = b_.CreatePHI(b_.getInt32Ty(), 2, "j");
    j->addIncoming(b_.getInt32(1), body);
    Regs acc;
    std::vector<llvm::PHINode*> accPhis;
    for (unsigned i = 0; i < n; ++i) {
      llvm::PHINode* p = b_.CreatePHI(first[i]->getType(), 2);
      p->addIncoming(first[i], body);
      accPhis.push_back(p);
      acc.push_back(p);
    }
    llvm::Value* idx = position(j);
    Regs x;
    for (unsigned i = 0; i < n; ++i) x.push_back(loadElem(i, idx));
    Regs args = acc;
    args.insert(args.end(), x.begin(), x.end());
    Regs next = lowerCombine(*op.region(0), args);
    for (unsigned i = 0; i < n; ++i) b_.CreateStore(toMemory(next[i], op.operand(i)->type()), elementPtr(i, idx));
    llvm::Value* jNext = b_.CreateAdd(j, b_.getInt32(1));
    llvm::BasicBlock* stepEnd = b_.GetInsertBlock();
    j->addIncoming(jNext, stepEnd);
    for (unsigned i = 0; i < n; ++i) accPhis[i]->addIncoming(next[i], stepEnd);
    b_.CreateCondBr(b_.CreateICmpSLT(jNext, b_.getInt32(static_cast<uint32_t>(len))), inner, latch);
  }
  b_.SetInsertPoint(latch);
  line->addIncoming(b_.CreateAdd(line, b_.getInt32(static_cast<uint32_t>(threads))), latch);
  b_.CreateBr(head);

  b_.SetInsertPoint(exit);
  barrier();
  for (unsigned i = 0; i < n; ++i) {
    Regs regs;
    for (int64_t r = 0; r < map.numRegs(); ++r) regs.push_back(loadElem(i, linear(r)));
    set(op.result(i), std::move(regs));
  }
}

}  // namespace tessera::backends
