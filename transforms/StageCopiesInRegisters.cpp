// stage-copies-in-registers: on a target whose async_copy is not asynchronous (LayoutPolicy::copiesAsynchronously
// false: AMDGPU lowers it as a global load and an LDS store), the copies pipeline-loops issues ahead in a loop are
// split so that the loads' latency hides behind the iteration's work, as Triton's AMD stream pipeliner does:
//
//   for k { async_wait; %t = async_copy %p(i+S-1), %buf, %w, %m; %g = async_commit_group %t
//           %a = local_load %buf, %r; ...dot...; yield }
//
// becomes
//
//   for k { async_wait; %v = load %p(i+S-1), %m                (issued before the work, in flight during it)
//           %a = local_load %buf, %r; ...dot...
//           %t = local_store %v, %buf, %w; %g = async_commit_group %t; yield }
//
// The loaded tile waits in registers (the pointers' layout) until the end of the iteration. A copy is ahead when
// its group is waited for by no op of this iteration (its commit group's token is unused: a later iteration's
// async_wait counts it), so nothing in the iteration reads the stage it fills (pipeline-loops: stage (i+S-1) % S,
// while the iteration reads stage i % S) and the store may move to the end. Masked-off elements load as zero, what
// the copy filled them with. insert-barriers then orders the store after the previous iteration's reads of its
// stage and before the next iteration's reads (analysis/Membar.h: one barrier per iteration, as before).
//
// A copy into a buffer whose fastest dimension is not the pointers' (transposingLayouts) loads in a layout with
// several rows per thread, so that the store writes the buffer's vectors whole (8 bytes) instead of 2 bytes at a
// time; one into a buffer of the pointers' order whose rows are longer than a store phase (directLayout) loads
// with fewer lanes to a row where that spreads the stores over more banks. Such copies outside loops are split in
// place. A dot operand that the dot stages itself and a load gives it straight is loaded in the same layouts, for
// the same reasons (LayoutPolicy::dotOperandStagingLayout).
#include <algorithm>
#include <set>

#include "ir/Builder.h"
#include "ir/LinearLayout.h"
#include "ir/SharedRuns.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
#include "transforms/Rematerialize.h"
#include "transforms/analysis/AxisInfo.h"
#include "transforms/analysis/ExchangeConflicts.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;

bool containsWait(Op& op) {
  bool found = false;
  op.walk([&](Op* inner) { found = found || inner->is(OpKind::AsyncWait); });
  return found;
}

// The commit group of `copy` when the copy is ahead (see above): its only user is a group no op uses, and no
// async_wait follows it in the iteration, not even inside a later op (the prologue copies of an inner pipelined
// loop, in the body of an outer loop, are waited for in the inner loop).
Op* aheadGroup(Op& copy) {
  const std::vector<ir::Use>& uses = copy.result(0)->uses();
  if (uses.size() != 1 || !uses[0].user->is(OpKind::AsyncCommitGroup)) return nullptr;
  Op* group = uses[0].user;
  if (group->result(0)->hasUses() || group->parentBlock() != copy.parentBlock()) return nullptr;
  Block& body = *copy.parentBlock();
  auto it = std::find_if(body.ops().begin(), body.ops().end(), [&](const auto& o) { return o.get() == &copy; });
  for (; it != body.ops().end(); ++it)
    if (containsWait(**it)) return nullptr;
  return group;
}

using Bases = std::vector<ir::LinearLayout::Basis>;

// `count` (a power of two) bases along `dim`: first, 2 first, 4 first...
Bases along(int64_t dim, int64_t first, int64_t count) {
  Bases bases;
  for (int64_t step = first; step < first * count; step *= 2) {
    ir::LinearLayout::Basis basis(2, 0);
    basis[dim] = step;
    bases.push_back(basis);
  }
  return bases;
}

Bases concat(std::initializer_list<Bases> parts) {
  Bases all;
  for (const Bases& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// The layouts a staged copy loads in and stores from where the buffer's fastest dimension is not the pointers'
// (attention's V on AMD: contiguous along the head dimension in memory, along the keys in LDS, as the MFMA B
// operand reads it). In the pointers' layout a thread holds a run of one row, whose elements go to LDS 2 bytes at a
// time, two lanes to a bank. Instead each thread takes `a` rows (up to the buffer's vector) of `b` elements: it
// loads b elements at a time, and the same registers in another order (a register permutation, no data moves)
// store a at a time. None where that does not apply or the tile does not fill the threads evenly.
struct StagingLayouts {
  ir::Layout load, store;
};

// How the lanes and warps spread over the tile for `lanesC` lanes along the pointers' contiguous dimension `c`
// (the rest go along the buffer's, `f`), each thread holding `a` rows of `b` elements.
struct TransposingShape {
  int64_t lanesF, warpsC, warpsF, extra;  // extra: more rows per thread, beyond every lane and warp
};

std::optional<TransposingShape> transposingShape(const std::vector<int64_t>& shape, int64_t c, int64_t f, int64_t a,
                                                 int64_t b, int64_t lanesC, int64_t perThread, int64_t numWarps,
                                                 int64_t warpSize) {
  if (b * lanesC > shape[c] || lanesC > warpSize) return std::nullopt;
  const int64_t lanesF = warpSize / lanesC;
  const int64_t warpsC = std::min(numWarps, shape[c] / (b * lanesC)), warpsF = numWarps / warpsC;
  const int64_t extra = perThread / (a * b);
  if (extra < 1 || b * lanesC * warpsC != shape[c] || a * lanesF * warpsF * extra != shape[f]) return std::nullopt;
  return TransposingShape{lanesF, warpsC, warpsF, extra};
}

std::optional<StagingLayouts> transposingLayouts(const ir::Type& ptrs, const ir::Layout& shared, int64_t elementBytes,
                                                 int64_t numWarps, int64_t warpSize) {
  const std::optional<ir::Layout> ptrLayout = ir::Layout::ofType(ptrs);
  if (ptrs.shape().size() != 2 || !ptrLayout || ptrLayout->kind() != ir::Layout::Kind::Blocked) return std::nullopt;
  if (shared.kind() != ir::Layout::Kind::Shared && shared.kind() != ir::Layout::Kind::LinearShared) return std::nullopt;
  const std::vector<int64_t>& shape = ptrs.shape();
  const int64_t c = ptrLayout->order()[0];  // contiguous in memory
  const int64_t f = ir::sharedFastestDim(shared, shape);  // contiguous in the buffer
  const int64_t threads = numWarps * warpSize, elements = shape[0] * shape[1];
  if (c == f || elements % threads != 0) return std::nullopt;
  const int64_t perThread = elements / threads;
  const int64_t a = std::min({ir::sharedRunAlong(shared, shape, static_cast<int>(f)), perThread, shape[f]});
  if (a < 2) return std::nullopt;
  // The run: the widest the pointers allow (16-byte loads; narrower ones cost more load instructions than the
  // conflicts they would save where the buffer's rows are shorter than the banks).
  const int64_t b = std::min({perThread / a, ptrLayout->sizePerThread()[c], shape[c]});

  auto linear = [&](int64_t lanesC, const TransposingShape& t, Bases registers, Bases lanes) {
    const Bases warps = concat({along(c, b * lanesC, t.warpsC), along(f, a * t.lanesF, t.warpsF)});
    return ir::LinearLayout({{ir::kRegisterDim, std::move(registers)}, {ir::kLaneDim, std::move(lanes)},
                             {ir::kWarpDim, warps}},
                            {{ir::tensorDimName(0), shape[0]}, {ir::tensorDimName(1), shape[1]}});
  };
  // The lanes split every way: the first `rowLanes` go along the rows, the next `lanesC` along the pointers'
  // contiguous dimension (each row takes lanesC * b consecutive elements, at least 128 bytes where the tile has
  // them: whole cache lines), the rest along the rows again. Which the stores (a elements of `a` registers, rows
  // first) spread best over the banks depends on the buffer's swizzle: attention's V, one column per 8 phases: all
  // 16 lanes of a store phase along the rows first; the tutorial matmul's B at 32x32, two columns per phase: none;
  // the MFMA operands' 16 phases of 8-byte chunks over 128-byte rows, with 16-byte runs (a run's columns in two
  // phases): 8. Where they cost the same: the longest rows a load reads, then the fewest row lanes first.
  const int64_t wholeLines = std::min<int64_t>(128, std::min(warpSize * b, shape[c]) * elementBytes);
  const Bases rowRegs = along(f, 1, a), runRegs = along(c, 1, b);
  std::optional<StagingLayouts> best;
  int64_t bestCost = 0;
  for (int64_t lanesC = warpSize; lanesC >= 1; lanesC /= 2) {
    const std::optional<TransposingShape> t =
        transposingShape(shape, c, f, a, b, lanesC, perThread, numWarps, warpSize);
    if (!t || lanesC * b * elementBytes < wholeLines) continue;
    const Bases extraRegs = along(f, a * t->lanesF * t->warpsF, t->extra);
    for (int64_t rowLanes = 1; rowLanes <= t->lanesF; rowLanes *= 2) {
      const Bases lanes =
          concat({along(f, a, rowLanes), along(c, b, lanesC), along(f, a * rowLanes, t->lanesF / rowLanes)});
      const ir::LinearLayout store = linear(lanesC, *t, concat({rowRegs, runRegs, extraRegs}), lanes);
      const int64_t cost = sharedBufferWavefronts(store, shared, shape, elementBytes, a);
      if (!best || cost < bestCost) {
        best = StagingLayouts{ir::Layout::linear(linear(lanesC, *t, concat({runRegs, rowRegs, extraRegs}), lanes)),
                              ir::Layout::linear(store)};
        bestCost = cost;
      }
    }
  }
  return best;
}

// The layout a copy loads in and stores from where the buffer's fastest dimension is the pointers' (attention's Q
// and K at head dimension 128: rows of 256 bytes in memory and in LDS), when it stores with fewer bank conflicts
// than the pointers' layout. That one gives a row's 16-byte runs to 16 consecutive lanes; the MFMA buffers' swizzle
// permutes 8-byte chunks, so the runs go to LDS 8 bytes at a time, 16 lanes a phase, and those 16 (one 256-byte
// row) meet twice in each bank. With 8 lanes to a row, a phase writes two rows, whose chunks the swizzle sends to
// the other half of the banks each. Runs stay whole and each row's lanes read at least 128 bytes (whole cache
// lines) where the tile has them; among layouts that cost the same, the most lanes along a row.
std::optional<ir::Layout> directLayout(const ir::Type& ptrs, const ir::Layout& shared, int64_t elementBytes,
                                       int64_t numWarps, int64_t warpSize) {
  const std::optional<ir::Layout> ptrLayout = ir::Layout::ofType(ptrs);
  if (ptrs.shape().size() != 2 || !ptrLayout || ptrLayout->kind() != ir::Layout::Kind::Blocked) return std::nullopt;
  if (shared.kind() != ir::Layout::Kind::Shared && shared.kind() != ir::Layout::Kind::LinearShared) return std::nullopt;
  const std::vector<int64_t>& shape = ptrs.shape();
  const int64_t c = ptrLayout->order()[0], r = 1 - c;  // contiguous in memory and in the buffer / the rows
  const int64_t threads = numWarps * warpSize, elements = shape[0] * shape[1];
  if (c != ir::sharedFastestDim(shared, shape) || elements % threads != 0) return std::nullopt;
  const int64_t perThread = elements / threads;
  const int64_t b = std::min({perThread, ptrLayout->sizePerThread()[c], shape[c]});
  const int64_t perAccess = std::min(b, ir::sharedRunAlong(shared, shape, static_cast<int>(c)));
  const int64_t wholeLines = std::min<int64_t>(128, std::min(warpSize * b, shape[c]) * elementBytes);
  auto cost = [&](const ir::LinearLayout& layout) {
    return sharedBufferWavefronts(layout, shared, shape, elementBytes, perAccess);
  };
  std::optional<ir::Layout> best;
  int64_t bestCost = cost(ptrLayout->toLinear(shape));
  for (int64_t lanesC = warpSize; lanesC >= 1; lanesC /= 2) {
    if (b * lanesC > shape[c] || lanesC * b * elementBytes < wholeLines) continue;
    const int64_t lanesR = warpSize / lanesC;
    const int64_t warpsC = std::min(numWarps, shape[c] / (b * lanesC)), warpsR = numWarps / warpsC;
    const int64_t extra = perThread / b;  // rows per thread
    if (b * lanesC * warpsC != shape[c] || lanesR * warpsR * extra != shape[r]) continue;
    const ir::LinearLayout layout(
        {{ir::kRegisterDim, concat({along(c, 1, b), along(r, lanesR * warpsR, extra)})},
         {ir::kLaneDim, concat({along(c, b, lanesC), along(r, 1, lanesR)})},
         {ir::kWarpDim, concat({along(c, b * lanesC, warpsC), along(r, lanesR, warpsR)})}},
        {{ir::tensorDimName(0), shape[0]}, {ir::tensorDimName(1), shape[1]}});
    if (const int64_t candidate = cost(layout); candidate < bestCost) {
      best = ir::Layout::linear(layout);
      bestCost = candidate;
    }
  }
  return best;
}

// The layouts to load and store a copy of `ptrs` into a buffer of layout `shared` in, where they are not the
// pointers': transposing, or direct (both the same).
std::optional<StagingLayouts> stagingLayouts(const ir::Type& ptrs, const ir::Layout& shared, int64_t elementBytes,
                                             int64_t numWarps, int64_t warpSize) {
  if (std::optional<StagingLayouts> transposing = transposingLayouts(ptrs, shared, elementBytes, numWarps, warpSize))
    return transposing;
  if (std::optional<ir::Layout> direct = directLayout(ptrs, shared, elementBytes, numWarps, warpSize))
    return StagingLayouts{*direct, *direct};
  return std::nullopt;
}

// The copy replaced by a load in front of it and a local_store in front of `storeBefore` (null: where the copy
// was), through the staging layouts where they apply and the pointers (and mask) can be recomputed in them. False,
// changing nothing, when `onlyRestaged` and they do not.
bool splitCopy(Op* copy, Op* storeBefore, bool onlyRestaged, int64_t numWarps, int64_t warpSize,
               Rematerializer& remat, std::set<Op*>& copied) {
  Block& block = *copy->parentBlock();
  // async_copy %ptrs, %buffer, %stage[, %mask]
  ir::Value* ptrs = copy->operand(0);
  ir::Value* mask = copy->numOperands() > 3 ? copy->operand(3) : nullptr;
  const ir::Type& buffer = copy->operand(1)->type();
  std::optional<StagingLayouts> staging;
  if (buffer.encoding())
    staging = stagingLayouts(ptrs->type(), ir::Layout::fromAttr(*buffer.encoding()), buffer.storageBytes(),
                             numWarps, warpSize);
  int ptrBudget = Rematerializer::kBudget, maskBudget = Rematerializer::kBudget;
  if (!staging || !Rematerializer::possible(ptrs, staging->load, ptrBudget) ||
      (mask && !Rematerializer::possible(mask, staging->load, maskBudget))) {
    if (onlyRestaged) return false;
    staging.reset();
  }
  if (staging) {
    ptrs = remat.recompute(ptrs, staging->load, copied);
    if (mask) mask = remat.recompute(mask, staging->load, copied);
  }
  if (!storeBefore) storeBefore = copy;
  std::vector<ir::Value*> loadOperands{ptrs};
  if (mask) loadOperands.push_back(mask);
  ir::Value* loaded =
      ir::Builder(&block, copy).create1(OpKind::Load, loadOperands, ptrs->type().withElement(ptrs->type().pointee()));
  loaded->definingOp()->setLoc(copy->loc());
  if (staging && staging->store != staging->load) {
    loaded = ir::Builder(&block, storeBefore).create1(OpKind::ConvertLayout, {loaded},
                                                      staging->store.apply(loaded->type()));
    loaded->definingOp()->setLoc(copy->loc());
  }
  Op* store = ir::Builder(&block, storeBefore).create(OpKind::LocalStore, {loaded, copy->operand(1), copy->operand(2)},
                                                      {copy->result(0)->type()});
  store->setLoc(copy->loc());
  copy->result(0)->replaceAllUsesWith(store->result(0));
  block.erase(copy);
  return true;
}

void stageCopies(Block& body, int64_t numWarps, int64_t warpSize, Rematerializer& remat, std::set<Op*>& copied) {
  Op* end = body.terminator();
  std::vector<std::pair<Op*, Op*>> copies;  // (copy, its group)
  for (auto& owned : body.ops())
    if (owned->is(OpKind::AsyncCopy))
      if (Op* group = aheadGroup(*owned)) copies.push_back({owned.get(), group});
  std::vector<Op*> groups;  // in body order, each moved once
  for (auto [copy, group] : copies) {
    splitCopy(copy, end, /*onlyRestaged=*/false, numWarps, warpSize, remat, copied);
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
  }
  // Each group after the stores it commits.
  for (Op* group : groups) body.insertBefore(end, body.remove(group));
}

// A dot operand that the dot stages itself (no buffer holds it) and that a load gives it straight: loaded in the
// staging layouts for the dot's staging buffer, so that the dot writes its vectors whole and with the fewest
// conflicts. Attention's V at 128x128, d 128 on AMD (no room in LDS for its buffers): 128 2-byte LDS writes per key
// loop and thread before the transposing layouts; its K^T, 16 lanes to a 256-byte row, 2-way conflicts before the
// direct one.
void loadStagedOperandsRestaged(ir::Function& f, const LayoutPolicy& policy, int64_t numWarps, int64_t warpSize,
                                Rematerializer& remat, std::set<Op*>& copied) {
  std::vector<std::pair<Op*, unsigned>> operands;  // (dot, operand index)
  f.walk([&](Op* op) {
    if (op->is(OpKind::Dot))
      for (unsigned i = 0; i < 2; ++i)
        if (!dotOperandBuffer(*op, i) && !(i == 0 && dotTakesAInRegisters(*op))) operands.push_back({op, i});
  });
  for (auto [dot, i] : operands) {
    ir::Value* operand = dot->operand(i);
    Op* load = operand->definingOp();
    if (!load || !load->is(OpKind::Load) || operand->uses().size() != 1 || !load->attrs().empty() ||
        load->numOperands() > 2)
      continue;
    const std::optional<ir::Layout> lds = policy.dotOperandStagingLayout(*dot, i);
    if (!lds) continue;
    ir::Value* ptrs = load->operand(0);
    ir::Value* mask = load->numOperands() > 1 ? load->operand(1) : nullptr;
    const std::optional<StagingLayouts> staging =
        stagingLayouts(ptrs->type(), *lds, operand->type().storageBytes(), numWarps, warpSize);
    int ptrBudget = Rematerializer::kBudget, maskBudget = Rematerializer::kBudget;
    if (!staging || !Rematerializer::possible(ptrs, staging->load, ptrBudget) ||
        (mask && !Rematerializer::possible(mask, staging->load, maskBudget)))
      continue;
    Block& block = *load->parentBlock();
    std::vector<ir::Value*> loadOperands{remat.recompute(ptrs, staging->load, copied)};
    if (mask) loadOperands.push_back(remat.recompute(mask, staging->load, copied));
    ir::Builder build(&block, load);
    ir::Value* loaded = build.create1(OpKind::Load, loadOperands, staging->load.apply(operand->type()));
    loaded->definingOp()->setLoc(load->loc());
    if (staging->store != staging->load) {
      loaded = build.create1(OpKind::ConvertLayout, {loaded}, staging->store.apply(operand->type()));
      loaded->definingOp()->setLoc(load->loc());
    }
    operand->replaceAllUsesWith(loaded);
    remat.forget(load);
    block.erase(load);
  }
}

class StageCopiesInRegistersPass : public Pass {
 public:
  explicit StageCopiesInRegistersPass(const PassOptions& options)
      : policy_(options.layoutPolicy), numWarps_(options.numWarps), warpSize_(options.warpSize) {}
  const char* name() const override { return "stage-copies-in-registers"; }

  void run(ir::Function& f) override {
    if (!policy_ || policy_->copiesAsynchronously(kMaxAccessBytes)) return;
    std::vector<Block*> bodies;
    f.walk([&](Op* op) {
      if (op->is(OpKind::For)) bodies.push_back(op->region(0));
    });
    Rematerializer remat;
    std::set<Op*> copied;  // originals that recomputed pointers may have left unused: dce erases them
    for (Block* body : bodies) stageCopies(*body, numWarps_, warpSize_, remat, copied);
    loadStagedOperandsRestaged(f, *policy_, numWarps_, warpSize_, remat, copied);
    // The other copies (a loop's prologue, a copy outside loops) stay where they are; those with staging layouts
    // are split in place, for the wide LDS stores without conflicts.
    std::vector<Op*> rest;
    f.walk([&](Op* op) {
      if (op->is(OpKind::AsyncCopy)) rest.push_back(op);
    });
    for (Op* copy : rest) splitCopy(copy, nullptr, /*onlyRestaged=*/true, numWarps_, warpSize_, remat, copied);
  }

 private:
  std::shared_ptr<const LayoutPolicy> policy_;
  int64_t numWarps_, warpSize_;
};

}  // namespace

std::unique_ptr<Pass> createStageCopiesInRegistersPass(const PassOptions& options) {
  return std::make_unique<StageCopiesInRegistersPass>(options);
}

}  // namespace tessera::transforms
