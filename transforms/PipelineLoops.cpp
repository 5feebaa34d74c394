// pipeline-loops: software pipelining of the asynchronous copies in `for` loops, with `num_stages` (PassOptions)
// stages. A loop whose body copies into shared buffers and waits for each copy before reading it (what
// async-copy-dot-operands makes):
//
//   for k { %t = async_copy %p(k), %buf, %c0, %m(k); %g = async_commit_group %t; %w = async_wait %g {pending = 0}
//           %a = local_load %buf, %c0, %w; ... }
//
// becomes, with S = num_stages stages per buffer, iteration j's copy landing in stage j % S:
//
//   copies of iterations 0 .. S-2 into stages 0 .. S-2, one commit group per iteration        (the prologue)
//   for k { %w = async_wait {pending = S-2}                    (iteration i's copies have landed)
//           copies of iteration i+S-1 into stage (i+S-1) % S   (the stage iteration i-1 read)
//           async_commit_group
//           %a = local_load %buf, i % S, %w; ... }
//   async_wait {pending = 0}                                   (nothing in flight once the loop is done)
//
// The copies' operands for a later iteration are recomputed from the loop-carried values that iteration will see,
// which the pass carries S-1 iterations ahead as extra loop-carried values (each advanced by a copy of the ops that
// compute it for the next iteration, which must be pure). Copies for iterations past the end (ragged trip counts)
// are masked off: they read nothing and fill their stage with zeros that nobody reads. insert-barriers then puts one
// barrier per iteration after the wait: it orders both the reads of the stage about to be overwritten and the reads
// of the stage that just landed. num_stages = 1 leaves the loop as it is. So does a persistent kernel's tile loop
// (make-persistent's `persistent_tiles`): the loops inside it are pipelined. A loop gets fewer stages where they
// would not fit the target's shared memory (stagesThatFit), and at most 2 where the target copies none of its
// operands asynchronously (LayoutPolicy::copiesAsynchronously): such a copy has landed by the end of the iteration
// that issues it, so a third stage would buy nothing. Where 2 stages of such copies do not fit on a target that has
// no asynchronous copy (AMDGPU), the loop keeps one buffer each and is still pipelined two iterations deep:
// iteration i's copies for i + 1 load into registers where they were, and stage-copies-in-registers stores them
// into the one stage at the end of the iteration, after the reads of it (insert-barriers orders the two), so the
// loads' latency is still hidden behind the iteration's work (AMD attention at 128x128, d 64, and matmuls at
// 128x256x64).
//
// Dots the target runs asynchronously (LayoutPolicy::dotIsAsynchronous; on NVPTX, wgmma reading both operands from their buffers) that accumulate
// into a carried value only they read are left in flight across iterations:
//
//   for k { %w = async_wait {pending = S-2}; %a = local_load %buf, i % S, %w; ...
//           %d = dot %a, %b, %acc {pending = 1}    (returns once iteration i-1's dot is complete)
//           copies of iteration i+S-1 into stage (i+S-1) % S, async_commit_group; yield %d }
//   async_wait {pending = 0}; %acc' = dot_wait %acc {pending = 0}
//
// The copies follow the dot: the stage they overwrite is the one iteration i-1's dot read, complete in every warp
// once each has passed its dot and the barrier insert-barriers puts before the copies. The tensor cores work on
// iteration i while the threads issue the copies and wait for iteration i+1's. A dot whose accumulator is computed
// from the carried value (attention's P V adds to O rescaled) is left in flight too; the carried value is then
// waited for in the next iteration before its first use, or right after an earlier dot (Q K^T, which waits for
// every group itself), and the copies follow that wait:
//
//   for k { %s = dot %q, %k_i, %zero; %o = dot_wait %acc {pending = 0}; copies of iteration i+S-1 ...
//           %oa = mul %o, %alpha; %d = dot %p, %v_i, %oa {pending = 1}; yield %d }
//
// A fresh product the next iteration reads (attention_fwd_desc_overlap's scores of key block i+1, issued before
// block i's softmax) is left in flight too; the next iteration waits for it with every group before issuing the
// next one, and a later wait there leaves that one pending (FlashAttention-3's overlap within a warpgroup):
//
//   for k { %s = dot_wait %s_i {pending = 0}; copies ...; %next = dot %q, %k_i+1, %zero {pending = 1}
//           softmax(%s) ...; %o = dot_wait %acc {pending = 1}; %d = dot %p, %v_i, %o * %alpha {pending = 1}
//           yield %d, %next }
//
// TMA copies (async_tma_copy, waited for by an mbarrier_wait, as async-copy-dot-operands makes them from desc_loads)
// are pipelined alike, their mbarriers getting one barrier per stage: iteration j's copy lands in stage j % S and
// completes phase j / S of barrier j % S, so iteration i waits for parity (i / S) & 1 of barrier i % S. The copies
// ahead are issued before that wait, predicated off past the end (nothing issued, no bytes expected: no phase
// nobody waits for is left pending); insert-barriers puts a barrier before them, which orders every thread's reads
// of the stage iteration i-1 read before thread 0 overwrites it. They need no drain: every copy issued is waited
// for in the loop.
//
// With warp_specialize (PassOptions::warpSpecialize), a loop of TMA copies in the function's body is split between
// warps instead (and so are the body's later loops of TMA copies: see specialize): the kernel's num_warps warps
// consume, and more warps produce (one thread of them issues every copy; producers need few registers and give
// theirs to the consumers: the target's LayoutPolicy::warpRoles says how many warps and registers). A second set
// of barriers,
// `empty`, one per stage, each expecting one arrival per consumer thread, hands stages back:
//
//   %full = mbarrier_alloc; %empty = mbarrier_alloc {arrivals = 32 * num_warps}; %buf = local_alloc
//   warp_specialize {producer_warps = 4, ...} {
//     for k { j = (k - lb) / step; mbarrier_wait %empty, j % S, ((j / S) & 1) ^ 1   (iteration j - S released it;
//             async_tma_copy ... %buf, j % S, %full                                  a fresh barrier passes parity 1)
//             yield }
//   } {
//     the body, its loop waiting for parity (i / S) & 1 of %full[i % S] and releasing each stage once read:
//     %empty[(i + S - 1) % S] after its dots left in flight (where i >= 1: iteration i-1's dots are complete), else
//     %empty[i % S] at the end of the iteration
//   }
//
// The consumers issue no copies, so their loop needs no barrier. Everything but the shared allocations moves into
// the consumers' region (tile ops are laid out for num_warps warps); the producer recomputes what the copies'
// offsets need, which must be pure scalars.
//
// A TMA copy before the loop of a block the loop's ring holds (attention_fwd_desc_overlap's first key block, whose
// scores the loop carries in), read there by dots only, takes the ring's position before the loop's first
// iteration (PrologueCopy). Its own buffer would be live beside the stages, which the producer fills meanwhile:
//
//   producer:  mbarrier_wait %empty, P % S, ...; async_tma_copy %k ... %kbuf, P % S, %kfull
//              mbarrier_arrive %vfull, P % S          (V skips position P: every barrier, one phase per position)
//              the loop, its iterations at positions P + 1, P + 2, ...
//   consumers: mbarrier_wait %kfull, P % S, (P / S) & 1; %s0 = dot %q, (local_load %kbuf, P % S)
//              mbarrier_arrive %empty, P % S; the loop, counting from P + 1
//
// In a persistent kernel such a copy runs once per tile, and its position counts among the tiles' iterations.
//
// In a persistent kernel the loop is in the tile loop: the producer loops over the same tiles, carrying its own
// count of the iterations before each tile (analysis/ProgramIterations.h), and the consumers hand the tile's last
// stage back after the dot_wait that follows their loop, so the producer fills the next tile's stages while the
// consumers run the epilogue. The buffers then leave the tile loop, so that the epilogue does not reuse their
// bytes.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/Builder.h"
#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"
#include "transforms/analysis/AxisInfo.h"
#include "transforms/analysis/ProgramIterations.h"
#include "transforms/analysis/PureSlice.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {
namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;
using Mapping = std::unordered_map<const Value*, Value*>;

// One copy of the loop body as async-copy-dot-operands writes it: the copy, its group (none for a TMA copy), its
// wait (async_wait, or mbarrier_wait) and its readers.
struct BodyCopy {
  Op* copy;
  Op* commit;
  Op* wait;
  std::vector<Op*> reads;  // local_loads of the wait's token

  bool tma() const { return copy->is(OpKind::AsyncTmaCopy); }
  // async_tma_copy's operands: the descriptor, one offset per dimension, the buffer, the stage, the mbarriers.
  unsigned rank() const { return static_cast<unsigned>(copy->operand(0)->type().blockShape().size()); }
  Value* buffer() const { return copy->operand(tma() ? rank() + 1 : 1); }
  Value* barriers() const { return tma() ? copy->operand(rank() + 3) : nullptr; }
};

Op* onlyUser(const Value* v) { return v->uses().size() == 1 ? v->uses()[0].user : nullptr; }

// A TMA copy in the form above: unpredicated, its only user the wait on its own barrier and stage.
std::optional<BodyCopy> tmaBodyCopy(Op* op) {
  BodyCopy c{op, nullptr, onlyUser(op->result(0)), {}};
  const unsigned rank = c.rank();
  if (op->numOperands() != rank + 4 || !c.wait || !c.wait->is(OpKind::MbarrierWait) || c.wait->numOperands() != 4 ||
      c.wait->operand(0) != c.barriers() || c.wait->operand(1) != op->operand(rank + 2))
    return std::nullopt;
  return c;
}

// The copies of `body`, or nullopt when some copy, group or wait there is not in the form above.
std::optional<std::vector<BodyCopy>> bodyCopies(Block& body) {
  std::vector<BodyCopy> copies;
  for (auto& owned : body.ops()) {
    Op* op = owned.get();
    if (op->is(OpKind::AsyncTmaCopy)) {
      std::optional<BodyCopy> c = tmaBodyCopy(op);
      if (!c) return std::nullopt;
      for (const ir::Use& use : c->wait->result(0)->uses()) {
        if (!use.user->is(OpKind::LocalLoad) || use.user->operand(0) != c->buffer()) return std::nullopt;
        c->reads.push_back(use.user);
      }
      copies.push_back(*c);
      continue;
    }
    if (!op->is(OpKind::AsyncCopy)) continue;
    BodyCopy c{op, onlyUser(op->result(0)), nullptr, {}};
    if (!c.commit || !c.commit->is(OpKind::AsyncCommitGroup) || c.commit->numOperands() != 1) return std::nullopt;
    c.wait = onlyUser(c.commit->result(0));
    if (!c.wait || !c.wait->is(OpKind::AsyncWait) || c.wait->numOperands() != 1) return std::nullopt;
    for (const ir::Use& use : c.wait->result(0)->uses()) {
      if (!use.user->is(OpKind::LocalLoad) || use.user->operand(0) != op->operand(1)) return std::nullopt;
      c.reads.push_back(use.user);
    }
    copies.push_back(c);
  }
  return copies;
}

class PipelineLoopsPass : public Pass {
 public:
  explicit PipelineLoopsPass(const PassOptions& options)
      : requestedStages_(options.numStages),
        maxSharedBytes_(options.maxSharedBytes),
        policy_(options.layoutPolicy),
        warpSpecialize_(options.warpSpecialize),
        consumerThreads_(int64_t{options.numWarps} * options.warpSize),
        numWarps_(options.numWarps),
        options_(options) {}
  const char* name() const override { return "pipeline-loops"; }

  void run(ir::Function& f) override {
    if (requestedStages_ < 1)
      throw Error("pipeline-loops: num_stages must be >= 1, got " + std::to_string(requestedStages_));
    if (warpSpecialize_) {
      if (requestedStages_ == 1)
        throw Error("warp_specialize needs num_stages >= 2 (the producer runs stages ahead)", f.loc());
      try {
        roles_ = policy_ ? policy_->warpRoles(numWarps_) : std::nullopt;
      } catch (const Error& e) {
        throw Error(e.message(), f.loc());
      }
      if (!roles_) throw Error("warp_specialize: the target does not reallocate registers between warps", f.loc());
    }
    if (requestedStages_ == 1) return;
    specialized_ = false;  // per function
    notSpecialized_.clear();
    ws_ = nullptr;
    lastSpecialized_ = nullptr;
    tilesOfSpecialized_ = nullptr;
    tileBase_ = nullptr;
    producerTiles_ = nullptr;
    producerMapping_.clear();
    specializedCopies_.clear();
    std::vector<Op*> loops;
    f.walk([&](Op* op) {
      // A persistent kernel's tile loop (make-persistent) is not pipelined: copying later tiles' blocks ahead
      // would take num_stages times the shared memory of every block a tile copies once.
      if (op->is(OpKind::For) && !op->hasAttr(ir::kPersistentTilesAttr)) loops.push_back(op);
    });
    for (Op* loop : loops) pipeline(f, *loop);
    if (warpSpecialize_ && !specialized_) {
      std::string why;
      for (const NotTma& n : notSpecialized_)
        why += "\n  " + n.dot + ": " +
               (n.operands.size() == 1 ? "operand " + n.operands : std::string("operands A and B")) +
               " of this dot " + (n.operands.size() == 1 ? "is" : "are") + " copied by async_copy: " + n.why;
      throw Error("warp_specialize needs a loop in @" + f.name() +
                      "'s body (or its persistent tile loop's) whose dot operands all arrive by TMA copies (desc_load "
                      "where the target copies with TMA), and found none" +
                      (why.empty() ? std::string() : ":" + why),
                  f.loc());
    }
  }

 private:
  // The dots of `body` the target can leave in flight (LayoutPolicy::dotIsAsynchronous) whose result only the yield
  // reads:
  //  - carried back into their own accumulator, directly, the accumulator the carried value, which nothing else
  //    reads (a matmul's);
  //  - or into an accumulator computed from the carried value (attention's P V, which adds to O rescaled);
  //  - or a fresh product (its accumulator computed from no carried value) that the next iteration reads:
  //    attention's scores of the next key block, issued before this block's softmax, as FlashAttention-3 overlaps
  //    the softmax with the tensor cores' work within a warpgroup.
  // leaveInFlight then waits for the carried value before its first use in the next iteration, where it is read.
  // One that takes A from registers qualifies only where A is computed, in the iteration, after an asynchronous
  // dot: that dot returns once the previous iteration's groups are complete (every earlier group, or all but
  // itself when it is left in flight), so the next iteration rewrites A's registers only once this dot is done
  // reading them.
  std::vector<Op*> asynchronousDots(Block& body) const {
    std::vector<Op*> dots;
    if (!policy_) return dots;
    Op* yield = body.terminator();
    const Op* firstAsynchronous = nullptr;
    for (auto& owned : body.ops()) {
      Op* dot = owned.get();
      if (!dot->is(OpKind::Dot) || !policy_->dotIsAsynchronous(*dot)) continue;
      if (!firstAsynchronous) firstAsynchronous = dot;
      const Value* result = dot->result(0);
      if (result->uses().size() != 1 || result->uses()[0].user != yield) continue;
      const Value* carried = body.argument(result->uses()[0].operandIndex + 1);
      const Value* acc = dot->operand(2);
      const bool direct = acc == carried && acc->uses().size() == 1;
      const bool fresh = !dependsOn(body, acc, [&](const Value* v) { return isBodyArgument(body, v); });
      if (!direct && !fresh && !dependsOn(body, acc, [&](const Value* v) { return v == carried; })) continue;
      if (transforms::dotTakesAInRegisters(*dot) && !computedAfter(body, dot->operand(0), firstAsynchronous)) continue;
      dots.push_back(dot);
    }
    return dots;
  }

  static bool isBodyArgument(const Block& body, const Value* v) { return v->isBlockArg() && v->ownerBlock() == &body; }

  // Whether `v` is computed by an op directly in `body` that comes after `op` (null: never).
  static bool computedAfter(const Block& body, const Value* v, const Op* op) {
    const Op* def = v->definingOp();
    if (!op || !def || def->parentBlock() != &body) return false;
    for (auto& owned : body.ops()) {
      if (owned.get() == def) return false;
      if (owned.get() == op) return true;
    }
    return false;
  }

  // Whether `root` is computed in `body` (through the ops directly in it) from a value `found` accepts.
  template <typename Found>
  static bool dependsOn(const Block& body, const Value* root, Found found) {
    std::unordered_set<const Value*> seen;
    std::vector<const Value*> work{root};
    while (!work.empty()) {
      const Value* v = work.back();
      work.pop_back();
      if (!seen.insert(v).second) continue;
      if (found(v)) return true;
      const Op* def = v->definingOp();
      if (!def || def->parentBlock() != &body) continue;
      for (const Value* operand : def->operands()) work.push_back(operand);
    }
    return false;
  }

  // Leaves `dots` (asynchronousDots) in flight: each returns once the previous iteration's dots are complete
  // (pending = 1). Where the carried value is read by more than the dot, it is waited for (dot_wait) before its
  // first use in the iteration, or sooner: after the first other dot before that use (which on wgmma waits for
  // every group anyway: attention's Q K^T), or, for a fresh product, before its dot. That wait leaves one group
  // pending where one of `dots` is issued before it (the next scores stay in flight through the softmax, O is
  // rescaled), none otherwise. Returns the op after which the previous iteration's dots are complete, where their
  // stages may be written again: the first such dot_wait, else the last dot.
  static Op* leaveInFlight(Block& body, const std::vector<Op*>& dots) {
    Op* yield = body.terminator();
    Op* complete = dots.back();
    auto before = [&](const Op* x, const Op* y) {
      for (auto& owned : body.ops()) {
        if (owned.get() == x) return true;
        if (owned.get() == y) return false;
      }
      return false;
    };
    for (Op* dot : dots) {
      dot->setAttr("pending", ir::Attr::integer(1));
      Value* carried = body.argument(dot->result(0)->uses()[0].operandIndex + 1);
      if (!carried->hasUses()) continue;  // read only after the loop, which waits for it (waitForDots)
      if (carried->uses().size() == 1 && carried->uses()[0].user == dot) continue;  // only the dot reads it
      // A fresh product (the next block's scores) is waited for before the dot issues the next one, with every
      // group: the emulator knows the registers a wgmma writes by its instruction, so a read of the previous
      // product after the instruction's next issue would look like a read of the pending one.
      const bool fresh = !dependsOn(body, dot->operand(2), [&](const Value* v) { return isBodyArgument(body, v); });
      ir::Builder b(&body, nullptr);
      for (auto& owned : body.ops()) {
        Op* op = owned.get();
        if (op == yield) break;
        if (usesValue(*op, carried) || (fresh && op == dot)) {
          b = ir::Builder(&body, op);
          break;
        }
        if (op->is(OpKind::Dot) && std::find(dots.begin(), dots.end(), op) == dots.end()) {
          b = ir::Builder(&body, nextOp(*op));
          break;
        }
      }
      b.setLoc(dot->loc());
      Op* wait = b.create(OpKind::DotWait, {carried}, {carried->type()}, {{"pending", ir::Attr::integer(0)}});
      if (std::any_of(dots.begin(), dots.end(), [&](const Op* d) { return before(d, wait); }))
        wait->setAttr("pending", ir::Attr::integer(1));
      std::vector<ir::Use> uses = carried->uses();
      for (const ir::Use& use : uses)
        if (use.user != wait) use.user->setOperand(use.operandIndex, wait->result(0));
      if (before(wait, complete)) complete = wait;
    }
    return complete;
  }

  // Whether `op` or an op nested in its regions reads `v`.
  static bool usesValue(const Op& op, const Value* v) {
    for (const ir::Use& use : v->uses())
      for (const Op* p = use.user; p; p = p->parentOp())
        if (p == &op) return true;
    return false;
  }

  // Whether every use of `v` is inside `loop`.
  static bool usedOnlyIn(const Value* v, const Op& loop) {
    for (const ir::Use& use : v->uses())
      for (const Op* p = use.user; p != &loop; p = p->parentOp())
        if (!p) return false;
    return true;
  }

  // Why a loop gets no producer warpgroup, for the error warp_specialize gives when none does: each dot operand
  // copied other than by TMA, with the target's reason (LayoutPolicy::dotOperandTmaRefusal), once per dot and reason.
  void noteCopiesNotTma(const std::vector<BodyCopy>& copies) {
    for (const BodyCopy& c : copies) {
      if (c.tma()) continue;
      for (const Op* read : c.reads)
        for (const ir::Use& use : read->result(0)->uses()) {
          if (!use.user->is(OpKind::Dot) || use.operandIndex > 1) continue;
          const Op& dot = *use.user;
          std::string why = policy_ ? policy_->dotOperandTmaRefusal(dot, use.operandIndex) : std::string();
          if (why.empty())
            why = "its block is not read through a tensor descriptor (a desc_load of a kernel parameter, once per "
                  "iteration)";
          const std::string where = dot.loc().known() ? dot.loc().str() : std::string("a dot");
          const char operand = use.operandIndex ? 'B' : 'A';
          auto same = std::find_if(notSpecialized_.begin(), notSpecialized_.end(),
                                   [&](const NotTma& n) { return n.dot == where && n.why == why; });
          if (same == notSpecialized_.end())
            notSpecialized_.push_back({where, std::string(1, operand), why});
          else if (same->operands.find(operand) == std::string::npos)
            same->operands += operand;
        }
    }
  }

  void pipeline(const ir::Function& f, Op& loop) {
    Block& body = *loop.region(0);
    std::optional<std::vector<BodyCopy>> found = bodyCopies(body);
    if (!found || found->empty()) return;
    const std::vector<BodyCopy>& copies = *found;
    if (warpSpecialize_) noteCopiesNotTma(copies);
    auto ownedByLoop = [&](const Value* v, OpKind alloc) {
      return v->definingOp() && v->definingOp()->is(alloc) && v->type().stages() == 1 && usedOnlyIn(v, loop);
    };
    bool anyAsyncCopy = false;
    for (const BodyCopy& c : copies) {
      // Every stage of the buffer (and every barrier) becomes this loop's: nothing else may use them.
      if (!ownedByLoop(c.buffer(), OpKind::LocalAlloc)) return;
      if (c.tma() && !ownedByLoop(c.barriers(), OpKind::MbarrierAlloc)) return;
      anyAsyncCopy = anyAsyncCopy || !c.tma();
    }
    stages_ = stagesThatFit(copies, loop);
    // A copy the target moves with loads and stores has landed when the iteration that issues it ends, however
    // far ahead it copies: where none of the loop's copies is asynchronous, stages past 2 would only take more
    // shared memory, and more registers in the prologue, whose copies for several stages all wait there at once.
    const bool asynchronous = anyAsynchronous(f, copies);
    if (!asynchronous) stages_ = std::min(stages_, 2);
    bufferStages_ = stages_;
    if (stages_ < 2) {
      // Not even two stages fit. Where stage-copies-in-registers moves each copy's stores to the end of its
      // iteration (a target with no asynchronous copy), the copies still run an iteration ahead in one buffer (see
      // the header). Elsewhere the loop keeps its buffers as they are and runs unpipelined: an asynchronous copy,
      // or on NVPTX one that cannot be (rows of 2-byte alignment: a load and a store where it stands), would
      // overwrite the stage before the iteration reads it.
      const bool storesAfterReads = policy_ && !policy_->copiesAsynchronously(kMaxAccessBytes);
      if (asynchronous || !storesAfterReads || requestedStages_ < 2 || warpSpecialize_) return;
      stages_ = 2;
      bufferStages_ = 1;
    }

    // What the copies' operands need, and which carried values must be advanced: those the copies use, and those
    // the advancing of those uses, transitively. Everything recomputed must be pure.
    const unsigned numCarried = body.numArguments() - 1;
    Op* yield = body.terminator();
    std::vector<Value*> copyInputs;
    for (const BodyCopy& c : copies) {
      if (c.tma()) {
        for (unsigned i = 1; i <= c.rank(); ++i) copyInputs.push_back(c.copy->operand(i));  // the offsets
        continue;
      }
      for (unsigned i : {0u, 3u})
        if (i < c.copy->numOperands()) copyInputs.push_back(c.copy->operand(i));
    }
    std::set<unsigned> carried;  // carried-value indices (0-based, without the induction variable)
    while (true) {
      std::vector<Value*> roots = copyInputs;
      for (unsigned c : carried) roots.push_back(yield->operand(c));
      std::vector<Op*> slice;
      if (!pureSliceOf(body, roots, slice)) return;
      std::set<unsigned> grown = carried;
      auto noteArg = [&](const Value* v) {
        if (v->ownerBlock() == &body && v->index() > 0) grown.insert(v->index() - 1);
      };
      for (const Value* v : roots) noteArg(v);
      for (const Op* op : slice)
        for (const Value* v : op->operands()) noteArg(v);
      if (grown == carried) break;
      carried = std::move(grown);
    }
    std::vector<Op*> copySlice, advanceSlice;
    std::vector<Value*> nexts;
    for (unsigned c : carried) nexts.push_back(yield->operand(c));
    if (!pureSliceOf(body, copyInputs, copySlice) || !pureSliceOf(body, nexts, advanceSlice)) return;

    for (const BodyCopy& c : copies) {
      Value* buffer = c.buffer();
      ir::Type t = buffer->type();
      buffer->setType(ir::Type::sharedBuffer(bufferStages_, t.stageShape(), t.element(), t.encoding()));
      if (c.tma()) c.barriers()->setType(ir::Type::mbarriers(stages_));
    }

    Value* iv = body.argument(0);
    const ir::Type ivType = iv->type();
    Value* lb = loop.operand(0);
    Value* ub = loop.operand(1);
    Value* step = loop.operand(2);

    // An iteration's values: the induction variable and the carried values it sees. `advance` gives the next one's.
    auto advance = [&](ir::Builder& b, const Mapping& m) {
      Mapping scratch = m;
      cloneSlice(b, advanceSlice, scratch);
      Mapping next;
      next[iv] = b.create1(OpKind::Add, {m.at(iv), step}, ivType);
      for (unsigned c : carried) {
        Value* y = yield->operand(c);
        auto it = scratch.find(y);
        next[body.argument(c + 1)] = it == scratch.end() ? y : it->second;
      }
      return next;
    };
    // Issues every copy of the iteration `m` describes into `stage`, masked off (TMA: predicated off) unless that
    // iteration runs, then commits the asynchronous copies as one group.
    auto issue = [&](ir::Builder& b, const Mapping& m, Value* stage) {
      Mapping scratch = m;
      cloneSlice(b, copySlice, scratch);
      auto mapped = [&](Value* v) {
        auto it = scratch.find(v);
        return it == scratch.end() ? v : it->second;
      };
      Value* runs = b.cmp("lt", m.at(iv), ub);
      std::vector<Value*> tokens;
      for (const BodyCopy& c : copies) {
        if (c.tma()) {
          std::vector<Value*> operands = {c.copy->operand(0)};
          for (unsigned i = 1; i <= c.rank(); ++i) operands.push_back(mapped(c.copy->operand(i)));
          operands.insert(operands.end(), {c.buffer(), stage, c.barriers(), runs});
          b.create1(OpKind::AsyncTmaCopy, operands, ir::Type::asyncToken());
          continue;
        }
        Value* ptr = mapped(c.copy->operand(0));
        Value* mask = b.create1(OpKind::Splat, {runs}, ptr->type().withElement(ir::Type::i1()));
        if (c.copy->numOperands() > 3) mask = b.create1(OpKind::And, {mapped(c.copy->operand(3)), mask}, mask->type());
        tokens.push_back(
            b.create1(OpKind::AsyncCopy, {ptr, c.copy->operand(1), stage, mask}, ir::Type::asyncToken()));
      }
      if (!tokens.empty()) b.create1(OpKind::AsyncCommitGroup, tokens, ir::Type::asyncToken());
    };
    auto i32 = [](ir::Builder& b, int64_t v) { return b.constantInt(v, ir::Type::i32()); };

    // TMA barriers count phases over the program: iterations are counted from the program's first run of the loop
    // (analysis/ProgramIterations.h; a persistent kernel's tile loop carries the count), and iteration j of the
    // program lands in stage j % S. Without TMA copies, each run of the loop starts at stage 0.
    const bool anyTma = std::any_of(copies.begin(), copies.end(), [](const BodyCopy& c) { return c.tma(); });
    const bool allTma = std::all_of(copies.begin(), copies.end(), [](const BodyCopy& c) { return c.tma(); });
    // A later loop of TMA copies in the function's body (attention's second key loop) is among the consumers by
    // now: its copies go to the same producer, after the first loop's.
    Op* specializedBefore = ws_ && (loop.parentBlock() == ws_->region(1) ||
                                    (tilesOfSpecialized_ && loop.parentOp() == tilesOfSpecialized_))
                                ? ws_
                                : nullptr;
    if (warpSpecialize_ && allTma && ((!specialized_ && countsProgramIterations(loop)) || specializedBefore)) {
      specialize(loop, copies, carried, copySlice, advanceSlice, specializedBefore);
      specialized_ = true;
      return;
    }
    if (anyTma && specialized_ && !countsProgramIterations(loop))
      throw Error("warp_specialize hands a producer the loops of the function's body whose copies are all TMA "
                  "copies (or one loop of a persistent kernel's tiles); this loop comes after one and is not such a "
                  "loop",
                  loop.loc());
    if (anyTma && !countsProgramIterations(loop))
      throw Error("internal error: pipeline-loops: TMA copies in a loop outside the program's body", loop.loc());
    Value* base = anyTma ? iterationBase(loop) : nullptr;

    // The prologue: iterations 0 .. S-2.
    ir::Builder pre(loop.parentBlock(), &loop);
    pre.setLoc(loop.loc());
    auto prologueStage = [&](int64_t s) {
      if (!base) return i32(pre, s % bufferStages_);
      // One statement per op: the order the IR gets them in must not be the compiler's argument order.
      Value* iteration = pre.binary(OpKind::Add, base, i32(pre, s));
      Value* stages = i32(pre, bufferStages_);
      return pre.binary(OpKind::Rem, iteration, stages);
    };
    Mapping m;
    m[iv] = lb;
    for (unsigned c = 0; c < numCarried; ++c) m[body.argument(c + 1)] = loop.operand(3 + c);
    for (int64_t s = 0; s + 1 < stages_; ++s) {
      issue(pre, m, prologueStage(s));
      m = advance(pre, m);
    }

    // The loop carries the values iteration i + S - 1 sees (m now describes iteration S - 1).
    std::vector<Value*> aheadArgs;
    for (unsigned c : carried) {
      loop.addOperand(m.at(body.argument(c + 1)));
      loop.addResult(m.at(body.argument(c + 1))->type());
      aheadArgs.push_back(body.addArgument(m.at(body.argument(c + 1))->type()));
    }

    ir::Builder in(&body, body.front());
    in.setLoc(loop.loc());
    // Stages: iteration i = (k - lb) / step (plus the base: iterations in earlier tiles) reads stage i % S and
    // writes stage (i + S - 1) % S.
    Value* iterationI32 = nullptr;
    if (base) {
      iterationI32 = programIteration(in, loop);
    } else {
      Value* iteration = in.create1(OpKind::Div, {in.create1(OpKind::Sub, {iv, lb}, ivType), step}, ivType);
      iterationI32 = ivType == ir::Type::i32() ? iteration : in.cast(iteration, ir::Type::i32());
    }
    Value* readStage = in.create1(OpKind::Rem, {iterationI32, i32(in, bufferStages_)}, ir::Type::i32());
    Value* writeStage = in.create1(
        OpKind::Rem,
        {in.create1(OpKind::Add, {iterationI32, i32(in, stages_ - 1)}, ir::Type::i32()), i32(in, bufferStages_)},
        ir::Type::i32());
    Value* landed = anyAsyncCopy ? in.create1(OpKind::AsyncWait, {}, ir::Type::asyncToken(),
                                              {{"pending", ir::Attr::integer(stages_ - 2)}})
                                 : nullptr;
    Mapping ahead;
    ahead[iv] = in.create1(OpKind::Add, {iv, in.create1(OpKind::Mul, {step, in.constantInt(stages_ - 1, ivType)}, ivType)},
                           ivType);
    {
      size_t i = 0;
      for (unsigned c : carried) ahead[body.argument(c + 1)] = aheadArgs[i++];
    }
    // With dots left in flight, the copies come after the last of them: a dot returns once the previous
    // iteration's dots are complete (wait_group 1), and the barrier insert-barriers puts before the copies then
    // orders every warp's completion before any copy overwrites the stage those dots read.
    const std::vector<Op*> asyncDots = asynchronousDots(body);
    if (asyncDots.empty()) {
      issue(in, ahead, writeStage);
    } else {
      ir::Builder late(&body, nextOp(*leaveInFlight(body, asyncDots)));
      late.setLoc(loop.loc());
      issue(late, ahead, writeStage);
    }
    Value* parity = in.create1(OpKind::And, {in.create1(OpKind::Div, {iterationI32, i32(in, stages_)}, ir::Type::i32()),
                                             i32(in, 1)},
                               ir::Type::i32());
    for (const BodyCopy& c : copies) {
      Value* ready = landed;
      if (c.tma()) ready = in.create1(OpKind::MbarrierWait, {c.barriers(), readStage, parity}, ir::Type::asyncToken());
      for (Op* read : c.reads) {
        read->setOperand(1, readStage);
        read->setOperand(2, ready);
      }
    }
    for (const BodyCopy& c : copies) {
      body.erase(c.wait);
      if (c.commit) body.erase(c.commit);
      body.erase(c.copy);
    }
    ir::Builder tail(&body, yield);
    tail.setLoc(loop.loc());
    Mapping next = advance(tail, ahead);
    for (unsigned c : carried) yield->addOperand(next.at(body.argument(c + 1)));

    ir::Builder after(loop.parentBlock(), nextOp(loop));
    after.setLoc(loop.loc());
    // Drain: the masked-off copies past the end still write their zeros (TMA copies past the end issue nothing).
    if (anyAsyncCopy) after.create1(OpKind::AsyncWait, {}, ir::Type::asyncToken(), {{"pending", ir::Attr::integer(0)}});
    waitForDots(after, loop, asyncDots);
  }

  // The last iteration's dots are still in flight: their results, and their buffers, are ready after a dot_wait
  // (at `after`, past the loop).
  static void waitForDots(ir::Builder& after, Op& loop, const std::vector<Op*>& asyncDots) {
    if (asyncDots.empty()) return;
    std::vector<Value*> inFlight;
    std::vector<ir::Type> types;
    for (Op* dot : asyncDots) {
      inFlight.push_back(loop.result(dot->result(0)->uses()[0].operandIndex));
      types.push_back(inFlight.back()->type());
    }
    Op* wait = after.create(OpKind::DotWait, inFlight, types, {{"pending", ir::Attr::integer(0)}});
    for (size_t i = 0; i < inFlight.size(); ++i) {
      std::vector<ir::Use> uses = inFlight[i]->uses();
      for (const ir::Use& use : uses)
        if (use.user != wait) use.user->setOperand(use.operandIndex, wait->result(static_cast<unsigned>(i)));
    }
  }

  // The warp-specialized form of `loop` (see the top of the file), a loop in the function's body or in a persistent
  // kernel's tile loop. `carried`, `copySlice` and `advanceSlice` are pipeline()'s: the carried values the copies'
  // offsets need and the ops computing those offsets and advancing them. With `existing` (a warp_specialize op in
  // the function's body made for an earlier loop), `loop` is in its consumers' region: its own producer loop goes
  // after the earlier ones. When its copies are the first loop's it continues in their buffers and barriers
  // (continuesEarlierLoops); else it keeps its own buffers and `full` barriers and gets its own `empty` ones, their
  // phases counting this loop's iterations alone (it runs once per program).
  void specialize(Op& loop, const std::vector<BodyCopy>& copies, const std::set<unsigned>& carried,
                  const std::vector<Op*>& copySlice, const std::vector<Op*>& advanceSlice, Op* existing) {
    // A persistent kernel's tile loop, or null: the loop's parent, or, for a later loop of its tiles, the consumers'
    // tile loop it is in.
    Op* tiles = existing ? (loop.parentOp() == tilesOfSpecialized_ ? tilesOfSpecialized_ : nullptr) : loop.parentOp();
    Block& fbody = existing ? *existing->parentBlock() : tiles ? *tiles->parentBlock() : *loop.parentBlock();
    Block* tileBody = tiles ? tiles->region(0) : nullptr;
    // Where the ops the producer recomputes are: the function's body, or the consumers' region it moved to.
    Block& program = existing ? *existing->region(1) : fbody;
    // A later loop whose copies are the earlier loops' (the same descriptors into buffers of the same type and
    // stages: attention's masked key blocks after its unmasked ones) goes on in their buffers and barriers, its
    // iterations counted on from theirs, as a persistent kernel's next tile does: the kernel then needs one set of
    // buffers, not one per loop.
    const bool continues = existing && continuesEarlierLoops(copies);
    // The same tiles run a later loop's copies in the producer's tile loop, after the earlier ones': it must continue
    // in their buffers and barriers (one count of iterations over the program, which the tile loops carry).
    const bool laterInTiles = existing && tiles;
    if (laterInTiles && !continues)
      throw Error("warp_specialize: a later loop of a persistent kernel's tile must copy through the first loop's "
                  "descriptors into buffers of the same types, at the same stages, to share its producer",
                  loop.loc());
    // The iterations before this loop's first (null: none): earlier loops', or earlier tiles'.
    Value* base = continues ? consumersEnd_ : existing ? nullptr : iterationBase(loop);
    // Copies before the loop into blocks of its ring (attention's first key block): they take the ring's stage
    // before the loop's first iteration instead of buffers of their own.
    Block& loopBlock = *loop.parentBlock();  // the program's block, or the tile loop's
    const std::vector<PrologueCopy> prologue =
        prologueCopies(loopBlock, loop, copies, existing ? lastSpecialized_ : nullptr);
    Value* const countedFrom = base;  // base stays this where no copy comes before the loop
    Block& body = *loop.region(0);
    Op* yield = body.terminator();
    Value* iv = body.argument(0);
    const ir::Type ivType = iv->type();
    const ir::Type i32Type = ir::Type::i32();
    auto i32 = [&](ir::Builder& b, int64_t v) { return b.constantInt(v, i32Type); };
    auto mapped = [](const Mapping& m, Value* v) {
      auto it = m.find(v);
      return it == m.end() ? v : it->second;
    };

    // Shared allocations first, in the function's body: both regions use them. A persistent kernel's buffers leave
    // the tile loop too: the producer fills the next tile's stages while the consumers' epilogue runs, so the
    // epilogue must not reuse their bytes.
    std::vector<Op*> allocs;
    for (Block* block : {&fbody, tileBody, existing ? &program : nullptr})
      if (block)
        for (auto& owned : block->ops())
          if (owned->is(OpKind::LocalAlloc) || owned->is(OpKind::MbarrierAlloc)) allocs.push_back(owned.get());
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) {
      std::unique_ptr<Op> alloc = (*it)->parentBlock()->remove(*it);
      fbody.insertBefore(fbody.front(), std::move(alloc));
    }
    ir::Builder top(&fbody, existing ? existing : allocs.empty() ? fbody.front() : nextOp(*allocs.back()));
    top.setLoc(loop.loc());
    Value* empty = continues ? handedBack_
                             : top.create1(OpKind::MbarrierAlloc, {}, ir::Type::mbarriers(stages_),
                                           {{"arrivals", ir::Attr::integer(consumerThreads_)}});
    if (!continues) empty->setNameHint("empty");
    Op* ws = existing ? existing
                      : top.create(OpKind::WarpSpecialize, {}, {},
                                   {{"producer_warps", ir::Attr::integer(roles_->producerWarps)},
                                    {"producer_registers", ir::Attr::integer(roles_->producerRegisters)},
                                    {"consumer_registers", ir::Attr::integer(roles_->consumerRegisters)}});
    if (!existing) {
      ws_ = ws;
      tilesOfSpecialized_ = tiles;
      handedBack_ = empty;
      specializedStages_ = stages_;
      for (const BodyCopy& c : copies) specializedCopies_.push_back({c.copy->operand(0), c.buffer(), c.barriers()});
    }

    // What the producer recomputes: the ops of the function's body (and of the tile's) that the loop's bounds, its
    // carried values' starts and the copies' offsets need. Pure scalars only: one thread runs them.
    std::vector<Value*> needed = {loop.operand(0), loop.operand(1), loop.operand(2)};
    for (unsigned c : carried) needed.push_back(loop.operand(3 + c));
    auto outsideBody = [&](const Value* v) {
      return v->isBlockArg() ? v->ownerBlock() != &body : v->definingOp()->parentBlock() != &body;
    };
    for (const std::vector<Op*>* slice : {&copySlice, &advanceSlice})
      for (const Op* op : *slice)
        for (Value* v : op->operands())
          if (outsideBody(v)) needed.push_back(v);
    for (const BodyCopy& c : copies)
      for (unsigned i = 1; i <= c.rank(); ++i)
        if (outsideBody(c.copy->operand(i))) needed.push_back(c.copy->operand(i));
    for (const PrologueCopy& p : prologue)
      for (unsigned i = 1; i <= p.copy.rank(); ++i) needed.push_back(p.copy.copy->operand(i));
    auto unrecomputable = [&](const std::string& why) {
      return Error("warp_specialize: the producer cannot recompute what its TMA copies need: " + why, loop.loc());
    };
    std::vector<Op*> tileSlice, programSlice;
    std::vector<Value*> programRoots = needed;
    if (tiles) {
      auto inTile = [&](const Value* v) {
        return v->isBlockArg() ? v->ownerBlock() == tileBody : v->definingOp()->parentBlock() == tileBody;
      };
      std::vector<Value*> tileRoots;
      programRoots = {tiles->operand(0), tiles->operand(1), tiles->operand(2)};
      if (!laterInTiles) programRoots.push_back(tiles->operand(base->index() + 2));
      for (Value* v : needed) (inTile(v) ? tileRoots : programRoots).push_back(v);
      if (!pureSliceOf(*tileBody, tileRoots, tileSlice)) throw unrecomputable("an op of the tile that is not pure");
      std::vector<const Value*> used(tileRoots.begin(), tileRoots.end());
      for (const Op* op : tileSlice)
        for (Value* v : op->operands()) {
          used.push_back(v);
          if (!inTile(v)) programRoots.push_back(v);
        }
      for (const Value* v : used)
        if (v->isBlockArg() && v->ownerBlock() == tileBody && v->index() != 0)
          throw unrecomputable("a value the tile loop carries");
    }
    if (!pureSliceOf(program, programRoots, programSlice)) throw unrecomputable("an op that is not pure");
    for (const std::vector<Op*>* slice : {&programSlice, &tileSlice})
      for (const Op* op : *slice)
        for (const Value* r : op->results())
          if (r->type().isTile()) throw unrecomputable("a tile (" + op->describe() + "), which one thread does not hold");

    // The producer: (the tiles and) the loop's iterations, each waiting for its stage to be handed back and copying
    // into it. Iteration G of the program fills stage G % S, whose previous filling, G - S, was released in phase
    // G / S - 1 of its empty barrier: parity ((G / S) & 1) ^ 1, which a fresh barrier passes.
    // After earlier loops', or, for a later loop of the tiles, before the producer's tile loop (and, in it, after
    // the earlier loops of the tile: continuing their count of iterations, `producerEnd_`).
    ir::Builder pb(ws->region(0), laterInTiles ? producerTiles_ : existing ? ws->region(0)->terminator() : nullptr);
    pb.setLoc(loop.loc());
    Mapping m = laterInTiles ? producerMapping_ : Mapping{};
    cloneSlice(pb, programSlice, m);
    ir::Builder tileB(ws->region(0), nullptr);
    ir::Builder* at = &pb;
    Value* producerBase = continues ? producerEnd_ : nullptr;
    if (laterInTiles) {
      Block& ptb = *producerTiles_->region(0);
      tileB = ir::Builder(&ptb, ptb.terminator());
      tileB.setLoc(loop.loc());
      cloneSlice(tileB, tileSlice, m);
      at = &tileB;
    } else if (tiles) {
      Op* producerTiles = pb.create(OpKind::For,
                                    {mapped(m, tiles->operand(0)), mapped(m, tiles->operand(1)),
                                     mapped(m, tiles->operand(2)), mapped(m, tiles->operand(base->index() + 2))},
                                    {i32Type});
      Block& ptb = *producerTiles->region(0);
      m[tileBody->argument(0)] = ptb.addArgument(tileBody->argument(0)->type());
      producerBase = ptb.addArgument(i32Type);
      tileB = ir::Builder(&ptb, nullptr);
      tileB.setLoc(loop.loc());
      cloneSlice(tileB, tileSlice, m);
      at = &tileB;
      producerTiles_ = producerTiles;
    }
    std::vector<Value*> producerOperands = {mapped(m, loop.operand(0)), mapped(m, loop.operand(1)),
                                            mapped(m, loop.operand(2))};
    std::vector<ir::Type> carriedTypes;
    for (unsigned c : carried) {
      producerOperands.push_back(mapped(m, loop.operand(3 + c)));
      carriedTypes.push_back(producerOperands.back()->type());
    }
    if (!prologue.empty()) producerBase = issuePrologue(*at, prologue, copies, empty, producerBase, m);
    Op* producer = at->create(OpKind::For, producerOperands, carriedTypes);
    Block& pbody = *producer->region(0);
    m[iv] = pbody.addArgument(ivType);
    for (unsigned c : carried) m[body.argument(c + 1)] = pbody.addArgument(body.argument(c + 1)->type());
    ir::Builder in(&pbody, nullptr);
    in.setLoc(loop.loc());
    Value* j = in.binary(OpKind::Div, in.binary(OpKind::Sub, m[iv], producerOperands[0]), producerOperands[2]);
    if (ivType != i32Type) j = in.cast(j, i32Type);
    if (producerBase) j = in.binary(OpKind::Add, producerBase, j);
    // One op per statement here and below: the IR's order must not be the compiler's argument evaluation order.
    Value* stage = in.binary(OpKind::Rem, j, i32(in, stages_));
    Value* round = in.binary(OpKind::Div, j, i32(in, stages_));
    Value* one = i32(in, 1);
    Value* roundParity = in.binary(OpKind::And, round, one);
    Value* released = in.binary(OpKind::Xor, roundParity, one);
    in.create1(OpKind::MbarrierWait, {empty, stage, released}, ir::Type::asyncToken());
    cloneSlice(in, copySlice, m);
    for (const BodyCopy& c : copies) {
      std::vector<Value*> operands = {c.copy->operand(0)};
      for (unsigned i = 1; i <= c.rank(); ++i) operands.push_back(mapped(m, c.copy->operand(i)));
      operands.insert(operands.end(), {c.buffer(), stage, c.barriers()});
      in.create1(OpKind::AsyncTmaCopy, operands, ir::Type::asyncToken());
    }
    cloneSlice(in, advanceSlice, m);
    std::vector<Value*> nexts;
    for (unsigned c : carried) nexts.push_back(mapped(m, yield->operand(c)));
    in.create(OpKind::Yield, nexts, {});
    if (tiles) {  // the next tile's base: this one's plus the loops' trip counts
      Value* trips = tripCount(tileB, producerOperands[0], producerOperands[1], producerOperands[2]);
      producerEnd_ = tileB.binary(OpKind::Add, producerBase, trips);
      if (laterInTiles) producerTiles_->region(0)->terminator()->setOperand(0, producerEnd_);
      else tileB.create(OpKind::Yield, {producerEnd_}, {});
      producerMapping_ = m;
    }
    if (!tiles && (!existing || continues)) {  // where a later loop's producer continuing these copies counts on
      Value* trips = tripCount(pb, producerOperands[0], producerOperands[1], producerOperands[2]);
      producerEnd_ = producerBase ? pb.binary(OpKind::Add, producerBase, trips) : trips;
    }
    if (!existing) pb.create(OpKind::Yield, {}, {});

    // The consumers: the loop waits for each stage (iteration G of the program: stage G % S, parity (G / S) & 1)
    // and hands it back once read; the prologue's copies are read from the stage before the loop's first.
    if (!prologue.empty()) base = readPrologue(loopBlock, prologue, copies, empty, base);
    ir::Builder head(&body, body.front());
    head.setLoc(loop.loc());
    Value* local = head.binary(OpKind::Div, head.binary(OpKind::Sub, iv, loop.operand(0)), loop.operand(2));
    if (ivType != i32Type) local = head.cast(local, i32Type);
    Value* iteration = base ? head.binary(OpKind::Add, base, local) : local;
    Value* readStage = head.binary(OpKind::Rem, iteration, i32(head, stages_));
    Value* readRound = head.binary(OpKind::Div, iteration, i32(head, stages_));
    Value* parity = head.binary(OpKind::And, readRound, i32(head, 1));
    for (const BodyCopy& c : copies) {
      Value* ready = head.create1(OpKind::MbarrierWait, {c.barriers(), readStage, parity}, ir::Type::asyncToken());
      for (Op* read : c.reads) {
        read->setOperand(1, readStage);
        read->setOperand(2, ready);
      }
    }
    for (const BodyCopy& c : copies) {
      body.erase(c.wait);
      body.erase(c.copy);
    }
    const std::vector<Op*> asyncDots = asynchronousDots(body);
    if (asyncDots.empty()) {
      ir::Builder tail(&body, yield);
      tail.setLoc(loop.loc());
      tail.create(OpKind::MbarrierArrive, {empty, readStage}, {});
      if (!existing || continues) {
        ir::Builder after(loop.parentBlock(), nextOp(loop));
        after.setLoc(loop.loc());
        Value* trips = tripCount(after, loop.operand(0), loop.operand(1), loop.operand(2));
        consumersEnd_ = base ? after.binary(OpKind::Add, base, trips) : trips;
      }
    } else {
      // A dot returns once the previous iteration's are complete: that iteration's stage is free. The last
      // iteration's is free after the dot_wait that follows the loop (the producer may be filling the next tile's).
      ir::Builder late(&body, nextOp(*leaveInFlight(body, asyncDots)));
      late.setLoc(loop.loc());
      Value* ahead = late.binary(OpKind::Add, iteration, i32(late, stages_ - 1));
      Value* previous = late.binary(OpKind::Rem, ahead, i32(late, stages_));
      Value* hasPrevious = late.cmp("ge", local, i32(late, 1));
      late.create(OpKind::MbarrierArrive, {empty, previous, hasPrevious}, {});
      ir::Builder after(loop.parentBlock(), nextOp(loop));
      after.setLoc(loop.loc());
      waitForDots(after, loop, asyncDots);
      Value* trips = tripCount(after, loop.operand(0), loop.operand(1), loop.operand(2));
      Value* end = base ? after.binary(OpKind::Add, base, trips) : trips;
      Value* lastIteration = after.binary(OpKind::Sub, end, i32(after, 1));
      Value* last = after.binary(OpKind::Rem, lastIteration, i32(after, stages_));
      Value* ran = after.cmp("gt", trips, i32(after, 0));
      after.create(OpKind::MbarrierArrive, {empty, last, ran}, {});
      if (!existing || continues) consumersEnd_ = end;
    }
    // The tiles' count of iterations: the first loop's base, which the tile loop carries, goes on by every loop's
    // (and by the positions of the copies before them).
    if (tiles && !existing) {
      tileBase_ = countedFrom;
      if (!prologue.empty()) tiles->region(0)->terminator()->setOperand(tileBase_->index() - 1, consumersEnd_);
    }
    if (laterInTiles) {
      tiles->region(0)->terminator()->setOperand(tileBase_->index() - 1, consumersEnd_);
      loop.attrs().erase("iteration_base");  // its own count over the tiles (now unused) is not its iterations'
    }

    lastSpecialized_ = &loop;
    // Everything after the warp_specialize op but the return moves into the consumers' region.
    if (existing) return;
    Block& consumers = *ws->region(1);
    std::vector<Op*> moved;
    for (Op* op = nextOp(*ws); op && op != fbody.terminator(); op = nextOp(*op)) moved.push_back(op);
    for (Op* op : moved) consumers.append(fbody.remove(op));
    ir::Builder(&consumers, nullptr).create(OpKind::Yield, {}, {});
  }

  // A TMA copy before a warp-specialized loop, into a one-stage buffer of the blocks one of the loop's copies
  // brings (the same descriptor, the same stage type), read before the loop by dots that complete where they stand:
  // attention_fwd_desc_overlap's first key block, whose scores the loop carries in. Left as it is, its buffer and
  // the ring's stages are live at once (the producer fills the ring while the consumers wait for this copy):
  // 295040 bytes for two key loops at 128x128, d 128, more than an H100 gives. Instead the producer copies it into
  // the ring, at the position before the loop's first iteration; the ring's other barriers get an arrival there
  // (their copies skip that position), so that every barrier still completes one phase per position.
  struct PrologueCopy {
    BodyCopy copy;  // the copy, its wait and its local_loads
    size_t ring;    // the loop's copy whose buffer and barriers it takes
    Op* lastRead;   // the last dot reading it: the stage is handed back after it
  };

  // The prologue copies of `loop`, in its block between `earlier` (the loop specialized before it, or
  // null) and it, each taking a different copy of the loop.
  static std::vector<PrologueCopy> prologueCopies(Block& block, const Op& loop, const std::vector<BodyCopy>& copies,
                                                  const Op* earlier) {
    std::unordered_map<const Op*, size_t> order;
    for (auto& owned : block.ops()) order.emplace(owned.get(), order.size());
    auto at = [&](const Op* op) -> std::optional<size_t> {
      auto it = order.find(op);
      return it == order.end() ? std::nullopt : std::optional<size_t>(it->second);
    };
    const std::optional<size_t> loopAt = at(&loop);
    const std::optional<size_t> earlierAt = earlier ? at(earlier) : std::nullopt;
    if (!loopAt || (earlier && !earlierAt)) return {};
    auto between = [&](const Op* op) {
      const std::optional<size_t> i = at(op);
      return i && *i < *loopAt && (!earlierAt || *i > *earlierAt);
    };
    std::vector<PrologueCopy> found;
    std::vector<bool> taken(copies.size(), false);
    for (auto& owned : block.ops()) {
      Op* op = owned.get();
      if (op == &loop) break;
      if (!op->is(OpKind::AsyncTmaCopy)) continue;
      std::optional<BodyCopy> c = tmaBodyCopy(op);
      if (!c || !between(c->wait)) continue;
      const Value* buffer = c->buffer();
      const Value* barriers = c->barriers();
      const Op* bufferAlloc = buffer->definingOp();
      const Op* barrierAlloc = barriers->definingOp();
      if (!bufferAlloc || !bufferAlloc->is(OpKind::LocalAlloc) || buffer->type().stages() != 1 || !barrierAlloc ||
          !barrierAlloc->is(OpKind::MbarrierAlloc) || barriers->type().stages() != 1 || barriers->uses().size() != 2)
        continue;
      Op* lastRead = nullptr;
      bool readByDots = true;
      for (const ir::Use& use : c->wait->result(0)->uses()) {
        Op* read = use.user;
        if (!read->is(OpKind::LocalLoad) || read->operand(0) != buffer || !between(read)) readByDots = false;
        c->reads.push_back(read);
        for (const ir::Use& r : read->result(0)->uses()) {
          Op* dot = r.user;
          if (!dot->is(OpKind::Dot) || dot->hasAttr("pending") || !between(dot)) readByDots = false;
          else if (!lastRead || *at(dot) > *at(lastRead)) lastRead = dot;
        }
      }
      // Nothing else may use the buffer: its bytes go.
      if (!readByDots || !lastRead || buffer->uses().size() != c->reads.size() + 1) continue;
      for (size_t i = 0; i < copies.size(); ++i) {
        const ir::Type ring = copies[i].buffer()->type();
        const ir::Type own = buffer->type();
        if (taken[i] || copies[i].copy->operand(0) != op->operand(0) ||
            ir::Type::sharedBuffer(ring.stages(), own.stageShape(), own.element(), own.encoding()) != ring)
          continue;
        taken[i] = true;
        found.push_back({*c, i, lastRead});
        break;
      }
    }
    return found;
  }

  // Position `position` of the ring (null: 0), its stage P % S and the parity of its round, (P / S) & 1.
  struct RingPosition {
    Value* position;
    Value* stage;
    Value* parity;
  };
  RingPosition ringPosition(ir::Builder& b, Value* position) const {
    auto i32 = [&](int64_t v) { return b.constantInt(v, ir::Type::i32()); };
    if (!position) position = i32(0);
    Value* stage = b.binary(OpKind::Rem, position, i32(stages_));
    Value* round = b.binary(OpKind::Div, position, i32(stages_));
    Value* parity = b.binary(OpKind::And, round, i32(1));
    return {position, stage, parity};
  }

  // The producer's side of `prologue`: at position `base` (null: 0) it waits for the stage to be handed back,
  // copies the prologue into it and arrives at the barriers of the loop's copies that have no prologue copy.
  // Returns the position of the loop's first iteration.
  Value* issuePrologue(ir::Builder& b, const std::vector<PrologueCopy>& prologue, const std::vector<BodyCopy>& copies,
                       Value* empty, Value* base, const Mapping& m) const {
    auto i32 = [&](int64_t v) { return b.constantInt(v, ir::Type::i32()); };
    auto mapped = [&](Value* v) {
      auto it = m.find(v);
      return it == m.end() ? v : it->second;
    };
    const RingPosition at = ringPosition(b, base);
    Value* stage = at.stage;
    Value* released = b.binary(OpKind::Xor, at.parity, i32(1));
    b.create1(OpKind::MbarrierWait, {empty, stage, released}, ir::Type::asyncToken());
    std::vector<bool> filled(copies.size(), false);
    for (const PrologueCopy& p : prologue) {
      const BodyCopy& ring = copies[p.ring];
      std::vector<Value*> operands = {p.copy.copy->operand(0)};
      for (unsigned i = 1; i <= p.copy.rank(); ++i) operands.push_back(mapped(p.copy.copy->operand(i)));
      operands.insert(operands.end(), {ring.buffer(), stage, ring.barriers()});
      b.create1(OpKind::AsyncTmaCopy, operands, ir::Type::asyncToken());
      filled[p.ring] = true;
    }
    for (size_t i = 0; i < copies.size(); ++i)
      if (!filled[i]) b.create(OpKind::MbarrierArrive, {copies[i].barriers(), stage}, {});
    return b.binary(OpKind::Add, at.position, i32(1));
  }

  // The consumers' side of `prologue`: each copy's wait becomes a wait for position `base` (null: 0) of its ring
  // barrier, its reads read that stage, and the consumers hand the stage back after the last read; the copies and
  // their own buffers and barriers go. Returns the position of the loop's first iteration.
  Value* readPrologue(Block& block, const std::vector<PrologueCopy>& prologue, const std::vector<BodyCopy>& copies,
                      Value* empty, Value* base) const {
    Op* firstWait = nullptr;
    Op* lastRead = nullptr;
    for (auto& owned : block.ops())
      for (const PrologueCopy& p : prologue) {
        if (owned.get() == p.copy.wait && !firstWait) firstWait = owned.get();
        if (owned.get() == p.lastRead) lastRead = owned.get();
      }
    ir::Builder b(&block, firstWait);
    b.setLoc(firstWait->loc());
    const RingPosition at = ringPosition(b, base);
    Value* stage = at.stage;
    Value* parity = at.parity;
    Value* next = b.binary(OpKind::Add, at.position, b.constantInt(1, ir::Type::i32()));
    for (const PrologueCopy& p : prologue) {
      const BodyCopy& ring = copies[p.ring];
      ir::Builder w(&block, p.copy.wait);
      w.setLoc(p.copy.wait->loc());
      Value* ready = w.create1(OpKind::MbarrierWait, {ring.barriers(), stage, parity}, ir::Type::asyncToken());
      for (Op* read : p.copy.reads) {
        read->setOperand(0, ring.buffer());
        read->setOperand(1, stage);
        read->setOperand(2, ready);
      }
      Op* bufferAlloc = p.copy.buffer()->definingOp();
      Op* barrierAlloc = p.copy.barriers()->definingOp();
      block.erase(p.copy.wait);
      p.copy.copy->parentBlock()->erase(p.copy.copy);
      bufferAlloc->parentBlock()->erase(bufferAlloc);
      barrierAlloc->parentBlock()->erase(barrierAlloc);
    }
    ir::Builder release(&block, nextOp(*lastRead));
    release.setLoc(lastRead->loc());
    release.create(OpKind::MbarrierArrive, {empty, stage}, {});
    return next;
  }

  // Whether `copies` (of a loop after the specialized one) copy through the specialized loop's descriptors into
  // buffers of the same type, one each, at the same number of stages; if so, they now use its buffers and barriers
  // (their own allocations go).
  bool continuesEarlierLoops(const std::vector<BodyCopy>& copies) {
    if (copies.size() != specializedCopies_.size() || stages_ != specializedStages_) return false;
    std::vector<const SpecializedCopy*> matched;
    for (const BodyCopy& c : copies) {
      const SpecializedCopy* found = nullptr;
      for (const SpecializedCopy& e : specializedCopies_)
        if (e.descriptor == c.copy->operand(0) && e.buffer->type() == c.buffer()->type() &&
            std::find(matched.begin(), matched.end(), &e) == matched.end()) {
          found = &e;
          break;
        }
      if (!found) return false;
      matched.push_back(found);
    }
    for (size_t i = 0; i < copies.size(); ++i) {
      Value* buffer = copies[i].buffer();
      Value* barriers = copies[i].barriers();
      Op* bufferAlloc = buffer->definingOp();
      Op* barrierAlloc = barriers->definingOp();
      buffer->replaceAllUsesWith(matched[i]->buffer);
      barriers->replaceAllUsesWith(matched[i]->barriers);
      bufferAlloc->parentBlock()->erase(bufferAlloc);
      barrierAlloc->parentBlock()->erase(barrierAlloc);
    }
    return true;
  }

  static Op* nextOp(Op& op) {
    Block* block = op.parentBlock();
    auto it = std::find_if(block->ops().begin(), block->ops().end(),
                           [&](const std::unique_ptr<Op>& o) { return o.get() == &op; });
    return std::next(it) == block->ops().end() ? nullptr : std::next(it)->get();
  }

  // Whether the target runs one of `copies` asynchronously: a TMA copy, or an async_copy whose pointers and mask
  // allow pieces (along some dimension) as wide as the target's asynchronous copies (on NVPTX, rows of 2-byte
  // elements at odd strides do not: cp.async moves at least 4 aligned bytes). No policy: the copies are.
  bool anyAsynchronous(const ir::Function& f, const std::vector<BodyCopy>& copies) const {
    if (!policy_) return true;
    const AxisInfoAnalysis axis(f);
    for (const BodyCopy& c : copies) {
      if (c.tma()) return true;
      const Value* ptr = c.copy->operand(0);
      const Value* mask = c.copy->numOperands() > 3 ? c.copy->operand(3) : nullptr;
      const int64_t bytes = ptr->type().pointee().storageBytes();
      for (int d = 0; d < static_cast<int>(ptr->type().shape().size()); ++d) {
        const int64_t width = axis.widestAccess(ptr, mask, d, std::max<int64_t>(1, kMaxAccessBytes / bytes));
        if (policy_->copiesAsynchronously(width * bytes)) return true;
      }
    }
    return false;
  }

  // num_stages, or fewer where the target's shared memory (maxSharedBytes, 0 = no limit) cannot hold that many
  // stages of the loop's buffers beside what else the loop needs: the buffers made before it that it reads
  // (attention's Q) and the largest scratch of an op in it (a dot staging an operand from registers, such as
  // attention's P). Attention at 128x128, head dim 128 takes 224 KiB at 3 stages: sm_90a's 227 KiB hold them,
  // sm_80's 163 KiB only 2, which still overlap one iteration's copies with the previous one's work. 1 (no
  // pipelining) where not even 2 fit: 160 KiB at 2 stages, 96 KiB at 1, and sm_86 gives 99 KiB. Warp-specialized
  // and persistent, the epilogue counts too (below): the same attention keeps 2 stages beside its output's staging.
  // Warp specialization needs 2: an error where they do not fit.
  int stagesThatFit(const std::vector<BodyCopy>& copies, Op& loop) const {
    std::set<const Value*> buffers;
    int64_t stageBytes = 0;
    for (const BodyCopy& c : copies)
      if (buffers.insert(c.buffer()).second)
        stageBytes += c.buffer()->type().stageTile().numElements() * c.buffer()->type().storageBytes();
    int64_t otherBytes = 0;
    if (maxSharedBytes_ > 0) {
      std::set<const Value*> readBuffers;
      int64_t scratch = 0;
      // A buffer counts when an op in the loop reads it, or reads a local_load of it from before the loop: the
      // buffer then lives through the loop (OpNumbering::bufferInterval), as K and V do in the attention
      // backward's dK/dV loop, whose dots read tiles loaded from them once.
      auto countBuffer = [&](const Value* buffer) {
        const Op* def = buffer->definingOp();
        if (def && def->is(OpKind::LocalAlloc) && !buffers.count(buffer) && !def->isNestedIn(loop) &&
            readBuffers.insert(buffer).second)
          otherBytes += sharedBufferBytes(buffer->type());
      };
      loop.walk([&](Op* op) {
        for (const Value* v : op->operands()) {
          countBuffer(v);
          if (const Op* def = v->definingOp(); def && def->is(OpKind::LocalLoad) && !def->isNestedIn(loop))
            countBuffer(def->operand(0));
        }
        scratch = std::max(scratch, scratchBytes(*op, options_));
      });
      // Warp-specialized in a persistent kernel: the producer fills the next tile's stages while the consumers
      // run the rest of the tile loop's body (the epilogue), whose scratch then lives beside the buffers too. An
      // exchange there counts a quarter of its rows: allocate-shared-memory runs it in rounds where the total
      // asks for that (a few rounds, once per tile, cost less than a stage).
      if (Op* tiles = loop.parentOp(); warpSpecialize_ && tiles && tiles->hasAttr(ir::kPersistentTilesAttr))
        tiles->walk([&](Op* op) {
          if (op == &loop || op->isNestedIn(loop)) return;
          int64_t bytes = scratchBytes(*op, options_);
          if (bytes > 0 && isExchangeOp(*op)) {
            const ExchangeBuffer exchange = exchangeBufferOf(*op);
            bytes = std::min(bytes, exchange.roundBytes(std::max<int64_t>(1, exchange.rows() / 4)));
          }
          scratch = std::max(scratch, bytes);
        });
      otherBytes += scratch;
    }
    int stages = requestedStages_;
    auto fits = [&](int n) { return maxSharedBytes_ <= 0 || n * stageBytes + otherBytes <= maxSharedBytes_; };
    while (stages > 1 && !fits(stages)) --stages;
    // A producer warpgroup works stages ahead: with fewer than 2 it has nothing to do.
    if (warpSpecialize_ && !fits(2))
      throw Error("warp_specialize: 2 stages of this loop's copies (" + std::to_string(2 * stageBytes + otherBytes) +
                      " bytes of shared memory with what else the loop needs) exceed the " +
                      std::to_string(maxSharedBytes_) + " bytes a program may have on " +
                      (options_.arch.empty() ? std::string("the default arch") : options_.arch) +
                      "; use smaller blocks",
                  loop.loc());
    return stages;
  }

  int requestedStages_;
  int64_t maxSharedBytes_;
  int stages_ = 1;        // of the loop being pipelined: how many iterations its copies run ahead, plus one
  int bufferStages_ = 1;  // the stages of its buffers: stages_, or 1 (copies into one buffer, see the header)
  std::shared_ptr<const LayoutPolicy> policy_;
  bool warpSpecialize_;
  int64_t consumerThreads_;
  int numWarps_;
  PassOptions options_;  // for the scratch of the ops in a loop (stagesThatFit)
  bool specialized_ = false;  // a loop got a producer warpgroup (warp_specialize)
  struct NotTma {
    std::string dot;       // its location
    std::string operands;  // "A", "B" or "AB"
    std::string why;
  };
  std::vector<NotTma> notSpecialized_;  // why the loops did not (noteCopiesNotTma)
  // The warp_specialize op made in the function's body (not in a persistent kernel), and what a later loop of the
  // same copies continues from: the specialized loop's copies, its stages and `empty` barriers, and the count of
  // iterations the loops so far ran, as the consumers (after the last loop) and the producer compute it.
  struct SpecializedCopy {
    Value* descriptor;
    Value* buffer;
    Value* barriers;
  };
  Op* ws_ = nullptr;
  std::vector<SpecializedCopy> specializedCopies_;
  int specializedStages_ = 0;
  Value* handedBack_ = nullptr;
  Op* lastSpecialized_ = nullptr;  // the last loop specialized: a later loop's prologue copies come after it
  Value* consumersEnd_ = nullptr;
  Value* producerEnd_ = nullptr;
  // With a persistent kernel: the consumers' tile loop, the first loop's base (the tile loop's carried count of
  // iterations), the producer's tile loop and what the producer's recomputed ops stand for.
  Op* tilesOfSpecialized_ = nullptr;
  Value* tileBase_ = nullptr;
  Op* producerTiles_ = nullptr;
  Mapping producerMapping_;
  std::optional<LayoutPolicy::WarpRoles> roles_;  // the target's split, with warpSpecialize
};

}  // namespace

std::unique_ptr<Pass> createPipelineLoopsPass(const PassOptions& options) {
  return std::make_unique<PipelineLoopsPass>(options);
}

}  // namespace tessera::transforms
