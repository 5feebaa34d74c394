#include "transforms/analysis/Membar.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "ir/Builder.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;

// A set of byte ranges [first, second), kept sorted and merged.
class ByteRanges {
 public:
  static constexpr int64_t kEverything = std::numeric_limits<int64_t>::max();

  void add(int64_t begin, int64_t end) {
    if (begin >= end) return;
    ranges_.push_back({begin, end});
    std::sort(ranges_.begin(), ranges_.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (auto r : ranges_) {
      if (!merged.empty() && r.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, r.second);
      } else {
        merged.push_back(r);
      }
    }
    ranges_ = std::move(merged);
  }
  void add(const ByteRanges& o) {
    for (auto r : o.ranges_) add(r.first, r.second);
  }
  bool intersects(const ByteRanges& o) const {
    for (auto a : ranges_)
      for (auto b : o.ranges_)
        if (a.first < b.second && b.first < a.second) return true;
    return false;
  }
  bool empty() const { return ranges_.empty(); }
  bool operator==(const ByteRanges&) const = default;

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

// Shared-memory accesses not yet ordered by a barrier.
struct Pending {
  ByteRanges reads, writes;
  void add(const Pending& o) {
    reads.add(o.reads);
    writes.add(o.writes);
  }
  bool operator==(const Pending&) const = default;
};

bool pointsToShared(const ir::Value* ptr) {
  return ptr->type().element().isPtr() && ptr->type().addrSpace() == ir::kSharedAddrSpace;
}

// The bytes of the shared buffer a local_alloc result `buffer` names.
ByteRanges bufferRange(const ir::Value* buffer) {
  ByteRanges range;
  const Op* alloc = buffer->definingOp();
  if (std::optional<SharedRange> r = alloc ? scratchRangeOf(*alloc) : std::nullopt) range.add(r->offset, r->end());
  return range;
}

// The dots whose products `v` may still be waiting for: a dot left in flight (`pending`), or the one a loop's yield
// carries out of the loop as `v`.
void pendingDotsOf(const ir::Value* v, std::vector<const Op*>& dots) {
  const Op* def = v->definingOp();
  if (!def) return;
  if (def->is(OpKind::Dot) && def->hasAttr("pending") && def->intAttr("pending") > 0) dots.push_back(def);
  if (def->is(OpKind::For)) pendingDotsOf(def->region(0)->terminator()->operand(v->index()), dots);
}

// What `op` itself (not its regions) reads and writes in shared memory. An async_copy's write lands at the
// async_wait covering it, in another thread's view (asyncCopyLanding below); an async_tma_copy's at the
// mbarrier_wait on its barrier, visible there to the waiting thread without a barrier. A local_alloc accesses
// nothing; nor do mbarriers (mbarrier_alloc synchronizes its own initialization; waits only read the barrier).
Pending accessesOf(const Op& op) {
  Pending access;
  if (op.is(OpKind::LocalAlloc) || op.is(OpKind::MbarrierAlloc) || op.is(OpKind::MbarrierWait)) return access;
  if (op.is(OpKind::AsyncCopy)) {
    access.writes = bufferRange(op.operand(1));
    return access;
  }
  if (op.is(OpKind::AsyncTmaCopy)) {
    access.writes = bufferRange(op.operand(op.operand(0)->type().blockShape().size() + 1));
    return access;
  }
  if (op.is(OpKind::LocalLoad)) {
    access.reads = bufferRange(op.operand(0));
    return access;
  }
  if (op.is(OpKind::LocalStore)) {
    access.writes = bufferRange(op.operand(1));
    return access;
  }
  if (op.is(OpKind::Dot))  // it reads the buffers of the operands it does not stage
    for (unsigned i = 0; i < 2; ++i)
      if (const Op* load = dotOperandBuffer(op, i)) access.reads.add(bufferRange(load->operand(0)));
  if (op.is(OpKind::DotWait)) {  // the reads of the dots it waits for end here, not at the dots
    std::vector<const Op*> dots;
    for (const ir::Value* v : op.operands()) pendingDotsOf(v, dots);
    for (const Op* dot : dots)
      for (unsigned i = 0; i < 2; ++i)
        if (const Op* load = dotOperandBuffer(*dot, i)) access.reads.add(bufferRange(load->operand(0)));
    return access;
  }
  if (std::optional<SharedRange> scratch = scratchRangeOf(op)) {
    access.reads.add(scratch->offset, scratch->end());
    access.writes.add(scratch->offset, scratch->end());
  }
  bool shared = op.numOperands() > 0 && pointsToShared(op.operand(0));
  if (shared && op.is(OpKind::Load)) access.reads.add(0, ByteRanges::kEverything);
  if (shared && op.is(OpKind::Store)) access.writes.add(0, ByteRanges::kEverything);
  if (shared && (op.is(OpKind::AtomicRMW) || op.is(OpKind::AtomicCAS))) {
    access.reads.add(0, ByteRanges::kEverything);
    access.writes.add(0, ByteRanges::kEverything);
  }
  return access;
}

// An i32 constant's value.
std::optional<int64_t> constantOf(const ir::Value* v) {
  const Op* def = v->definingOp();
  if (!def || !def->is(OpKind::Constant) || v->type() != ir::Type::i32() || !def->attr("value").isInt())
    return std::nullopt;
  return def->attr("value").getInt();
}

// Whether stage indices `a` and `b` of one iteration differ whatever the iteration: two different constants, or
// x % S and (x + c) % S with S a constant and c not a multiple of S (pipeline-loops' stages: iteration i reads
// stage i % S and fills stage (i + S - 1) % S). Truncated remainders of x and x + c are congruent to them modulo S,
// so they differ, whichever signs x and x + c have.
bool differentStages(const ir::Value* a, const ir::Value* b) {
  if (std::optional<int64_t> ca = constantOf(a), cb = constantOf(b); ca && cb) return *ca != *cb;
  auto remainder = [](const ir::Value* v) -> std::optional<std::pair<const ir::Value*, int64_t>> {
    const Op* def = v->definingOp();
    if (!def || !def->is(OpKind::Rem) || v->type() != ir::Type::i32()) return std::nullopt;
    std::optional<int64_t> divisor = constantOf(def->operand(1));
    if (!divisor || *divisor <= 0) return std::nullopt;
    return std::make_pair(def->operand(0), *divisor);
  };
  auto plusConstant = [](const ir::Value* v) -> std::pair<const ir::Value*, int64_t> {
    const Op* def = v->definingOp();
    if (def && def->is(OpKind::Add))
      for (unsigned i = 0; i < 2; ++i)
        if (std::optional<int64_t> c = constantOf(def->operand(i))) return {def->operand(1 - i), *c};
    return {v, 0};
  };
  std::optional<std::pair<const ir::Value*, int64_t>> ra = remainder(a), rb = remainder(b);
  if (!ra || !rb || ra->second != rb->second) return false;
  auto [baseA, offsetA] = plusConstant(ra->first);
  auto [baseB, offsetB] = plusConstant(rb->first);
  return baseA == baseB && (offsetA - offsetB) % ra->second != 0;
}

// The (buffer, stage) an op reads (a local_load, a dot reading an operand from its buffer), for differentStages.
std::vector<std::pair<const ir::Value*, const ir::Value*>> stagesRead(const Op& op) {
  if (op.is(OpKind::LocalLoad)) return {{op.operand(0), op.operand(1)}};
  std::vector<std::pair<const ir::Value*, const ir::Value*>> stages;
  if (op.is(OpKind::Dot))
    for (unsigned i = 0; i < 2; ++i)
      if (const Op* load = dotOperandBuffer(op, i)) stages.push_back({load->operand(0), load->operand(1)});
  return stages;
}

bool conflicts(const Pending& pending, const Pending& access) {
  return access.reads.intersects(pending.writes) || access.writes.intersects(pending.writes) ||
         access.writes.intersects(pending.reads);
}

// The analysis over one function. In `Mode::Insert` it inserts a barrier before each conflicting op (and the
// state starts afresh there); in `Mode::Check` it only records whether some op conflicts, with the barriers as
// they are.
//
// Asynchronous copies: an async_copy must not start before earlier accesses of its buffer are ordered (its write is
// checked for conflicts where it is issued), but other threads may read what it wrote only after an async_wait and a
// barrier, so its write becomes pending at every async_wait (which adds the bytes of every buffer async copies
// write, without a conflict check of its own: its copies were checked when they were issued). An async_tma_copy is
// checked where it is issued too (one thread issues it, so reads of the stage by every thread must be ordered
// before it), but the mbarrier_wait that completes it makes its bytes visible to every waiting thread: it adds
// nothing pending.
class MembarAnalysis {
  // The accesses since the last barrier of one run over a block: those pending when it began (of earlier
  // iterations, of other blocks) as bytes only, and the block's own reads and local_stores with the stage of the
  // buffer they touch. A local_store (stage-copies-in-registers: iteration i fills the stage iteration i + S - 1
  // reads, and a prologue fills stages 0 .. S - 2 one after another) does not conflict with this run's reads or
  // stores of other stages of its buffer.
  struct StagedAccesses {
    struct Access {
      ByteRanges bytes;
      const ir::Value* buffer = nullptr;  // with the stage touched; null when unknown
      const ir::Value* stage = nullptr;
    };
    ByteRanges readsBefore, otherWrites;  // otherWrites: pending before, and this run's writes but local_stores'
    std::vector<Access> reads, stores;

    StagedAccesses() = default;
    explicit StagedAccesses(const Pending& before) : readsBefore(before.reads), otherWrites(before.writes) {}

    void add(const Op& op, const Pending& access) {
      const std::vector<std::pair<const ir::Value*, const ir::Value*>> stages = stagesRead(op);
      if (!access.reads.empty() && stages.empty()) reads.push_back({access.reads});
      if (!access.reads.empty())
        for (auto [buffer, stage] : stages) reads.push_back({bufferRange(buffer), buffer, stage});
      if (op.is(OpKind::LocalStore))
        stores.push_back({access.writes, op.operand(1), op.operand(2)});
      else
        otherWrites.add(access.writes);
    }
    void addLanded(const ByteRanges& writes) { otherWrites.add(writes); }  // at an async_wait
    bool conflictsWith(const Op& store, const ByteRanges& writes) const {
      if (writes.intersects(otherWrites) || writes.intersects(readsBefore)) return true;
      auto conflicting = [&](const Access& a) {
        const bool otherStage = a.buffer == store.operand(1) && differentStages(a.stage, store.operand(2));
        return a.bytes.intersects(writes) && !otherStage;
      };
      return std::any_of(reads.begin(), reads.end(), conflicting) ||
             std::any_of(stores.begin(), stores.end(), conflicting);
    }
  };

 public:
  enum class Mode { Insert, Check };
  MembarAnalysis(Mode mode, ir::Function& f) : mode_(mode) {
    f.walk([&](Op* op) {
      if (op->is(OpKind::AsyncCopy)) asyncCopyLanding_.add(bufferRange(op->operand(1)));
    });
  }

  // Analyzes `block` starting from `state`; returns the state at its end.
  Pending run(Block& block, Pending state) {
    StagedAccesses staged(state);
    for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
      Op* op = it->get();
      switch (op->kind()) {
        case OpKind::Barrier:
          state = {};
          staged = StagedAccesses();
          continue;
        case OpKind::If: {
          Pending thenEnd = run(*op->region(0), state);
          Pending elseEnd = run(*op->region(1), state);
          state = thenEnd;
          state.add(elseEnd);
          staged = StagedAccesses(state);
          continue;
        }
        case OpKind::For:
          orderBeforeLoop(block, *op, state, staged);
          state = runLoop(*op->region(0), nullptr, state);
          staged = StagedAccesses(state);
          continue;
        case OpKind::While:
          orderBeforeLoop(block, *op, state, staged);
          state = runLoop(*op->region(0), op->region(1), state);
          staged = StagedAccesses(state);
          continue;
        case OpKind::WarpSpecialize:
          // The producer's one thread only issues TMA copies, which the consumers' waits on the full mbarriers
          // order before their reads, and which wait on the empty mbarriers the consumers release once read: no
          // barrier orders anything there (and none may: the consumers do not take part). The consumers' region
          // is analyzed as straight-line code; its barriers are the consumers' own (lowered as a named barrier).
          requireOnlyTmaCopies(*op->region(0));
          state = run(*op->region(1), state);
          staged = StagedAccesses(state);
          continue;
        default:
          break;
      }
      for (unsigned r = 0; r < op->numRegions(); ++r) requireNoSharedAccess(*op->region(r));
      if (op->is(OpKind::AsyncWait)) {
        state.writes.add(asyncCopyLanding_);
        staged.addLanded(asyncCopyLanding_);
        continue;
      }
      Pending access = accessesOf(*op);
      const bool conflict =
          op->is(OpKind::LocalStore) ? staged.conflictsWith(*op, access.writes) : conflicts(state, access);
      if (conflict) {
        if (mode_ == Mode::Check) {
          conflict_ = true;
        } else {
          inserted_.push_back(ir::Builder(&block, op).create(OpKind::Barrier, {}, {}));
          state = {};
          staged = StagedAccesses();
        }
      }
      // A copy's write is checked where it is issued; it lands later (async_wait, mbarrier_wait).
      if (!op->is(OpKind::AsyncCopy) && !op->is(OpKind::AsyncTmaCopy)) {
        state.add(access);
        staged.add(*op, access);
      } else if (!access.reads.empty()) {
        staged.add(*op, {access.reads, {}});
      }
    }
    return state;
  }

  bool foundConflict() const { return conflict_; }
  const std::vector<Op*>& inserted() const { return inserted_; }

 private:
  // A `for` body (`second` null) or a `while`'s before/after regions. The state at the loop head accumulates the
  // entry state and the state at the back edge until neither it grows nor a barrier is added (byte ranges come
  // from a finite set of endpoints and barriers are only added, so this ends). Returns the state at the exit.
  Pending runLoop(Block& first, Block* second, const Pending& entry) {
    Pending head = entry;
    while (true) {
      size_t barriersBefore = inserted_.size();
      Pending firstEnd = run(first, head);
      Pending backEdge = second ? run(*second, firstEnd) : firstEnd;
      Pending next = head;
      next.add(backEdge);
      if (next == head && inserted_.size() == barriersBefore) return second ? firstEnd : head;
      head = std::move(next);
    }
  }

  // Where what is pending before `loop` conflicts with an access in its body (a buffer an async_copy filled before
  // the loop, read in every iteration), a barrier before the loop orders it once, rather than one in the body
  // ordering it in every iteration (where nothing in the body needs it: a warp-specialized consumer's loop has no
  // other barrier). insert-barriers drops it again where a barrier the body needs anyway orders the same.
  void orderBeforeLoop(Block& block, Op& loop, Pending& state, StagedAccesses& staged) {
    if (mode_ != Mode::Insert || !conflicts(state, accessesWithin(loop))) return;
    inserted_.push_back(ir::Builder(&block, &loop).create(OpKind::Barrier, {}, {}));
    state = {};
    staged = StagedAccesses();
  }

  // Every shared-memory access of the ops in `op`'s regions, as bytes (async_waits: every async_copy's landing).
  Pending accessesWithin(const Op& op) const {
    Pending all;
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (const auto& inner : op.region(r)->ops()) {
        if (inner->is(OpKind::AsyncWait)) all.writes.add(asyncCopyLanding_);
        all.add(accessesOf(*inner));
        all.add(accessesWithin(*inner));
      }
    return all;
  }

  // A warp_specialize producer region: its shared accesses are TMA copies, none of which a barrier could order.
  void requireOnlyTmaCopies(Block& region) {
    for (auto& inner : region.ops()) {
      Pending access = accessesOf(*inner);
      if ((!access.reads.empty() || !access.writes.empty()) && !inner->is(OpKind::AsyncTmaCopy))
        throw Error(inner->describe() + ": accesses shared memory in a warp_specialize producer region (only TMA "
                    "copies may: nothing orders other accesses against the consumers)", inner->loc());
      for (unsigned r = 0; r < inner->numRegions(); ++r) requireOnlyTmaCopies(*inner->region(r));
    }
  }

  // Reduce/scan combine regions run per element inside their op's lowering: shared memory there has no place.
  void requireNoSharedAccess(Block& region) {
    for (auto& inner : region.ops()) {
      Pending access = accessesOf(*inner);
      if (!access.reads.empty() || !access.writes.empty())
        throw Error(inner->describe() + ": accesses shared memory inside a combine region", inner->loc());
      for (unsigned r = 0; r < inner->numRegions(); ++r) requireNoSharedAccess(*inner->region(r));
    }
  }

  Mode mode_;
  ByteRanges asyncCopyLanding_;
  bool conflict_ = false;
  std::vector<Op*> inserted_;
};

}  // namespace

std::vector<Op*> insertConflictBarriers(ir::Function& f) {
  MembarAnalysis insertion(MembarAnalysis::Mode::Insert, f);
  insertion.run(*f.body(), {});
  return insertion.inserted();
}

bool hasSharedMemoryConflict(ir::Function& f) {
  MembarAnalysis check(MembarAnalysis::Mode::Check, f);
  check.run(*f.body(), {});
  return check.foundConflict();
}

}  // namespace tessera::transforms
