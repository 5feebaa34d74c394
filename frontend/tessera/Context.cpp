#include "tessera/Context.h"

#include <algorithm>
#include <atomic>
#include <cassert>

#include "backends/interpreter/Tile.h"
#include "ir/Verifier.h"
#include "tessera/Eager.h"
#include "tessera/Promotion.h"

namespace tessera::detail {

static thread_local Context* tlsContext = nullptr;

uint64_t newFrameId() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

tessera::Location toLocation(const SourceLoc& loc) { return tessera::Location::from(loc); }

Context::Context(ir::Function* function, ir::Block* block)
    : mode_(Mode::Trace), previous_(tlsContext), function_(function), builder_(block) {
  frames_.push_back(Frame{newFrameId(), FrameKind::Function, nullptr, block, {}, {}});
  tlsContext = this;
}

Context::Context(EagerEvaluator* eager) : mode_(Mode::Eager), previous_(tlsContext), eager_(eager) {
  tlsContext = this;
}

Context::~Context() {
  // Variables still listed in our frames outlive us (function parameters copied into globals, say): make sure
  // they no longer point at frames that are going away.
  for (Frame& f : frames_)
    for (Tensor* t : f.touched) {
      auto& defs = t->defs_;
      defs.erase(std::remove_if(defs.begin(), defs.end(), [&](const Def& d) { return d.frameId == f.id; }), defs.end());
      t->registered_ = false;
    }
  tlsContext = previous_;
}

Context* Context::currentOrNull() { return tlsContext; }

Context& Context::current(const SourceLoc& loc) {
  if (!tlsContext)
    throw Error("Tessera DSL operation used outside a kernel being traced or run eagerly", toLocation(loc));
  tlsContext->checkPendingError();
  return *tlsContext;
}

void Context::setPendingError(const std::string& message, const SourceLoc& loc) {
  if (!pendingError_) pendingError_ = std::make_unique<Error>(message, toLocation(loc));
}

void Context::checkPendingError() {
  if (pendingError_) {
    Error e = *pendingError_;
    pendingError_.reset();
    throw e;
  }
}

// ---------------------------------------------------------------- scopes

Frame& Context::pushFrame(FrameKind kind, ir::Op* op, ir::Block* block) {
  frames_.push_back(Frame{newFrameId(), kind, op, block, {}, {}});
  builder_.setInsertionPointToEnd(block);
  return frames_.back();
}

std::vector<std::pair<Tensor*, Def>> Context::popFrame() {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  builder_.setInsertionPointToEnd(frames_.back().block);
  std::vector<std::pair<Tensor*, Def>> out;
  for (Tensor* t : f.touched) {
    assert(!t->defs_.empty() && t->defs_.back().frameId == f.id);
    Def d = t->defs_.back();
    t->defs_.pop_back();
    t->registered_ = !t->defs_.empty();
    out.emplace_back(t, d);
  }
  return out;
}

static int frameIndex(const std::vector<Frame>& frames, uint64_t id) {
  for (int i = static_cast<int>(frames.size()) - 1; i >= 0; --i)
    if (frames[i].id == id) return i;
  return -1;
}

ir::Value* Context::addCarried(Frame& f, Tensor& t, ir::Value* init) {
  ir::Op* op = f.op;
  Carried c{&t, init, nullptr, nullptr};
  if (op->is(ir::OpKind::For)) {
    op->addOperand(init);
    op->addResult(init->type());
    c.arg = op->region(0)->addArgument(init->type());
  } else {  // while: both regions see every carried value
    op->addOperand(init);
    op->addResult(init->type());
    c.arg = op->region(0)->addArgument(init->type());
    c.afterArg = op->region(1)->addArgument(init->type());
  }
  c.arg->setNameHint(init->nameHint());
  if (c.afterArg) c.afterArg->setNameHint(init->nameHint());
  f.carried.push_back(c);
  return f.kind == FrameKind::WhileAfter ? c.afterArg : c.arg;
}

ir::Value* Context::read(const Tensor& ct, const SourceLoc& loc) {
  Tensor& t = const_cast<Tensor&>(ct);
  if (t.tile_) throw Error("a Tensor from eager mode was used while tracing", toLocation(loc));
  if (t.defs_.empty())
    throw Error(kUndefinedTensor, toLocation(loc));
  int fi = frameIndex(frames_, t.defs_.back().frameId);
  if (fi < 0)
    throw Error("use of a Tensor from another kernel trace or from outside this combine function (combine "
                "functions may only use their arguments)",
                toLocation(loc));
  ir::Value* v = t.defs_.back().value;
  for (size_t k = fi + 1; k < frames_.size(); ++k) {
    Frame& f = frames_[k];
    if (f.kind == FrameKind::Loop || f.kind == FrameKind::WhileBefore || f.kind == FrameKind::WhileAfter) {
      v = addCarried(f, t, v);
      t.defs_.push_back(Def{f.id, v, false});
      f.touched.push_back(&t);
      t.registered_ = true;
    }
  }
  return v;
}

void Context::write(Tensor& t, ir::Value* v) {
  Frame& cur = frames_.back();
  if (!t.defs_.empty() && t.defs_.back().frameId == cur.id) {
    t.defs_.back().value = v;
    t.defs_.back().written = true;
    return;
  }
  if (cur.kind == FrameKind::WhileBefore && !t.defs_.empty())
    throw Error("the condition function of while_ must not assign variables declared outside it",
                function_ ? function_->loc() : tessera::Location{});
  t.defs_.push_back(Def{cur.id, v, true});
  cur.touched.push_back(&t);
  t.registered_ = true;
}

void Context::forget(Tensor& t) {
  for (const Def& d : t.defs_) {
    int fi = frameIndex(frames_, d.frameId);
    if (fi < 0) continue;
    auto& touched = frames_[fi].touched;
    touched.erase(std::remove(touched.begin(), touched.end(), &t), touched.end());
    for (Carried& c : frames_[fi].carried)
      if (c.var == &t) c.var = nullptr;
  }
  t.defs_.clear();
  t.registered_ = false;
}

void Context::switchWhileToAfterRegion() {
  Frame& f = frames_.back();
  assert(f.kind == FrameKind::WhileBefore);
  f.kind = FrameKind::WhileAfter;
  f.block = f.op->region(1);
  builder_.setInsertionPointToEnd(f.block);
  for (Carried& c : f.carried)
    if (c.var)
      for (Def& d : c.var->defs_)
        if (d.frameId == f.id) d.value = c.afterArg;
}

// ---------------------------------------------------------------- op emission

std::vector<Tensor> Context::emit(ir::OpKind kind, const std::vector<Tensor>& operands,
                                  const std::vector<ir::Type>& resultTypes, ir::AttrDict attrs, const SourceLoc& loc,
                                  const std::function<void(ir::Op*)>& fillRegions) {
  std::vector<Tensor> results;
  if (mode_ == Mode::Trace) {
    std::vector<ir::Value*> values;
    for (const Tensor& t : operands) values.push_back(read(t, loc));
    builder_.setLoc(toLocation(loc));
    ir::Op* op = builder_.create(kind, values, resultTypes, std::move(attrs));
    if (fillRegions) fillRegions(op);
    for (ir::Value* r : op->results()) results.push_back(Tensor::fromTraced(r));
    return results;
  }

  // Eager: wrap the op in a one-op function over its operands, verify it (so eager mode rejects exactly what
  // tracing would), and evaluate it with the interpreter's semantics.
  std::vector<ir::Type> argTypes;
  std::vector<interp::Tile> tiles;
  for (const Tensor& t : operands) {
    if (!t.tile_)
      throw Error(t.defs_.empty() ? kUndefinedTensor : "a traced Tensor was used in eager mode",
                  toLocation(loc));
    argTypes.push_back(t.tile_->type);
    tiles.push_back(*t.tile_);
  }
  ir::Function scratch("eager", argTypes);
  ir::Builder b(scratch.body());
  b.setLoc(toLocation(loc));
  ir::Op* op = b.create(kind, scratch.body()->arguments(), resultTypes, std::move(attrs));
  if (fillRegions) fillRegions(op);
  b.ret();
  ir::verify(scratch);
  for (interp::Tile& t : eager_->evaluate(*op, tiles)) results.push_back(Tensor::fromTile(std::move(t)));
  return results;
}

}  // namespace tessera::detail
