#include "tessera/Control.h"

#include <algorithm>
#include <exception>

#include "backends/interpreter/Tile.h"
#include "tessera/Context.h"
#include "tessera/Promotion.h"

namespace tessera {

using detail::Context;
using detail::Def;
using detail::FrameKind;
using detail::Mode;
using ir::Type;

namespace {

// Closes a loop frame (for or while): drops carried values that were never reassigned (trivial phis),
// carries values that were assigned without being read first, yields the rest, and makes the loop's
// results the variables' new values in the enclosing scope.
void closeLoop(Context& ctx, ir::Op* loop, unsigned regionWithYield, const SourceLoc& loc) {
  std::vector<detail::Carried> carried = ctx.top().carried;
  auto defs = ctx.popFrame();
  bool isWhile = loop->is(ir::OpKind::While);
  unsigned firstInit = isWhile ? 0 : 3;
  unsigned firstArg = isWhile ? 0 : 1;

  // Latest definition of each variable inside the loop.
  auto latest = [&](Tensor* t) -> const Def* {
    for (auto& [var, d] : defs)
      if (var == t) return &d;
    return nullptr;
  };

  std::vector<ir::Value*> next;  // one per carried value, in order
  std::vector<Tensor*> vars;
  for (detail::Carried& c : carried) {
    const Def* d = c.var ? latest(c.var) : nullptr;
    ir::Value* arg = isWhile ? c.afterArg : c.arg;
    next.push_back(d && d->written ? d->value : arg);
    vars.push_back(c.var);
  }
  // Variables assigned in the body without being read there first, and defined before the loop.
  for (auto& [var, d] : defs) {
    bool isCarried = std::any_of(carried.begin(), carried.end(), [&](const detail::Carried& c) { return c.var == var; });
    if (isCarried || !d.written || !var->defined()) continue;  // locals of the body are not carried
    ir::Value* init = ctx.read(*var, loc);
    loop->addOperand(init);
    loop->addResult(init->type());
    ir::Value* arg = loop->region(0)->addArgument(init->type());
    if (isWhile) loop->region(1)->addArgument(init->type());
    if (d.value->type() != init->type())
      throw Error("a variable of type " + init->type().str() + " is assigned a value of type " + d.value->type().str() +
                      " inside a traced loop; loop-carried variables must keep their type",
                  detail::toLocation(loc));
    carried.push_back(detail::Carried{var, init, arg, nullptr});
    next.push_back(d.value);
    vars.push_back(var);
  }
  for (size_t i = 0; i < carried.size(); ++i)
    if (next[i]->type() != carried[i].init->type())
      throw Error("a variable of type " + carried[i].init->type().str() + " is assigned a value of type " +
                      next[i]->type().str() + " inside a traced loop; loop-carried variables must keep their type",
                  detail::toLocation(loc));

  // Remove trivial carried values (never reassigned): uses of the argument become uses of the initial value,
  // including the values still to be yielded (another variable may have been assigned this one).
  for (int i = static_cast<int>(carried.size()) - 1; i >= 0; --i) {
    ir::Value* bodyArg = loop->region(regionWithYield)->argument(firstArg + i);
    if (next[i] != bodyArg) continue;
    std::replace(next.begin(), next.end(), bodyArg, carried[i].init);
    for (unsigned r = 0; r < loop->numRegions(); ++r) {
      ir::Value* a = loop->region(r)->argument(firstArg + i);
      a->replaceAllUsesWith(carried[i].init);
      loop->region(r)->eraseArgument(firstArg + i);
    }
    loop->eraseOperand(firstInit + i);
    loop->eraseResult(i);
    next.erase(next.begin() + i);
    vars.erase(vars.begin() + i);
  }
  ir::Builder b(loop->region(regionWithYield));
  b.setLoc(detail::toLocation(loc));
  b.yield(next);
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i]) ctx.write(*vars[i], loop->result(static_cast<unsigned>(i)));
}

// Resolves loop bounds to one signed integer type (i64 if any bound is 64-bit, else i32).
Type boundType(const TArg& lb, const TArg& ub, const TArg& step, const SourceLoc& loc) {
  bool wide = false;
  for (const TArg* a : {&lb, &ub, &step}) {
    Type t = detail::typeOf(*a);
    if (t.isTile() || (!t.isInt() || t.isBool()))
      detail::fail("range bounds must be integer scalars, got " + t.str(), loc);
    wide |= t.bitWidth() == 64;
  }
  return wide ? Type::i64() : Type::i32();
}

int64_t concreteInt(const TArg& a) {
  if (a.kind() != TArg::Kind::Tensor) return a.intValue();
  return a.tensor()->value().intAt(0);
}

}  // namespace

// ---------------------------------------------------------------- range

Range::Range(const TArg& lb, const TArg& ub, const TArg& step, SourceLoc loc) : loc_(loc) {
  Context& ctx = Context::current(loc);
  ivType_ = boundType(lb, ub, step, loc);
  if (ctx.mode() == Mode::Eager) {
    cur_ = concreteInt(lb);
    ub_ = concreteInt(ub);
    step_ = concreteInt(step);
    if (step_ <= 0) detail::fail("range step must be positive, got " + std::to_string(step_), loc);
    return;
  }
  if (step.kind() != TArg::Kind::Tensor && step.intValue() <= 0)
    detail::fail("range step must be positive, got " + std::to_string(step.intValue()), loc);
  Tensor l = detail::materialize(lb, ivType_, {}, loc);
  Tensor u = detail::materialize(ub, ivType_, {}, loc);
  Tensor s = detail::materialize(step, ivType_, {}, loc);
  ctx.builder().setLoc(detail::toLocation(loc));
  forOp_ = ctx.builder().forOp(l.traced(loc), u.traced(loc), s.traced(loc), {});
  forOp_->region(0)->argument(0)->setNameHint("iv");
}

Range::~Range() {
  if (state_ == 1 || state_ == 2) {
    if (std::uncaught_exceptions() > 0) return;  // tracing is being abandoned anyway
    if (Context* ctx = Context::currentOrNull())
      ctx->setPendingError("a traced loop body was left early (break or return); the body of a range() loop is "
                           "traced once and must run to its end",
                           loc_);
  }
}

Range::iterator Range::begin() {
  if (forOp_) {
    Context& ctx = Context::current(loc_);
    frameId_ = ctx.pushFrame(FrameKind::Loop, forOp_, forOp_->region(0)).id;
    state_ = 1;
  }
  return iterator(this);
}

Tensor Range::iterator::operator*() const {
  Range& r = *range_;
  if (r.forOp_) return Tensor::fromTraced(r.forOp_->region(0)->argument(0));
  return Tensor::fromTile(interp::Tile::scalarInt(r.ivType_, r.cur_));
}

Range::iterator& Range::iterator::operator++() {
  Range& r = *range_;
  if (r.forOp_) r.state_ = 3;
  else r.cur_ += r.step_;
  return *this;
}

bool Range::iterator::operator!=(const iterator&) {
  Range& r = *range_;
  if (!r.forOp_) return r.cur_ < r.ub_;
  if (r.state_ == 1) {
    r.state_ = 2;
    return true;
  }
  if (r.state_ == 3) {
    Context& ctx = Context::current(r.loc_);
    if (ctx.top().id != r.frameId_)
      detail::fail("internal: traced loop scopes closed out of order", r.loc_);
    closeLoop(ctx, r.forOp_, 0, r.loc_);
    r.state_ = 4;
  }
  return false;
}

Range range(const TArg& ub, SourceLoc loc) { return Range(TArg(0, loc), ub, TArg(1, loc), loc); }
Range range(const TArg& lb, const TArg& ub, SourceLoc loc) { return Range(lb, ub, TArg(1, loc), loc); }
Range range(const TArg& lb, const TArg& ub, const TArg& step, SourceLoc loc) { return Range(lb, ub, step, loc); }

// ---------------------------------------------------------------- if_

void if_(const TArg& cond, const std::function<void()>& then, SourceLoc loc) { if_(cond, then, [] {}, loc); }

void if_(const TArg& cond, const std::function<void()>& then, const std::function<void()>& otherwise, SourceLoc loc) {
  Context& ctx = Context::current(loc);
  Type ct = detail::typeOf(cond);
  if (!ct.isBool() || ct.isTile())
    detail::fail("if_: the condition must be a boolean scalar (i1), got " + ct.str() +
                     " (for per-element choices use where())",
                 loc);
  if (ctx.mode() == Mode::Eager) {
    bool c = cond.kind() == TArg::Kind::Tensor ? cond.tensor()->value().intAt(0) != 0 : cond.intValue() != 0;
    (c ? then : otherwise)();
    return;
  }
  Tensor c = detail::materialize(cond, Type::i1(), {}, loc);
  ctx.builder().setLoc(detail::toLocation(loc));
  ir::Op* op = ctx.builder().ifOp(c.traced(loc), {});
  ctx.pushFrame(FrameKind::IfThen, op, op->region(0));
  then();
  ctx.checkPendingError();
  auto thenDefs = ctx.popFrame();
  ctx.pushFrame(FrameKind::IfElse, op, op->region(1));
  otherwise();
  ctx.checkPendingError();
  auto elseDefs = ctx.popFrame();

  // Every variable (defined before the if) assigned in either arm becomes a result.
  std::vector<Tensor*> vars;
  auto assigned = [](const std::vector<std::pair<Tensor*, Def>>& defs, Tensor* t) -> ir::Value* {
    for (auto& [v, d] : defs)
      if (v == t && d.written) return d.value;
    return nullptr;
  };
  for (auto* list : {&thenDefs, &elseDefs})
    for (auto& [t, d] : *list)
      if (d.written && std::find(vars.begin(), vars.end(), t) == vars.end()) vars.push_back(t);

  std::vector<ir::Value*> thenValues, elseValues;
  std::vector<Tensor*> results;
  for (Tensor* t : vars) {
    ir::Value* tv = assigned(thenDefs, t);
    ir::Value* ev = assigned(elseDefs, t);
    bool definedBefore = t->defined();
    if (!definedBefore && (!tv || !ev)) continue;  // a local of one arm: not visible after the if
    if (!tv) tv = ctx.read(*t, loc);
    if (!ev) ev = ctx.read(*t, loc);
    if (tv->type() != ev->type())
      detail::fail("if_: a variable is " + tv->type().str() + " after the then-branch but " + ev->type().str() +
                       " after the else-branch; both branches must give it one type",
                   loc);
    thenValues.push_back(tv);
    elseValues.push_back(ev);
    results.push_back(t);
    op->addResult(tv->type());
  }
  ir::Builder tb(op->region(0)), eb(op->region(1));
  tb.setLoc(detail::toLocation(loc));
  eb.setLoc(detail::toLocation(loc));
  tb.yield(thenValues);
  eb.yield(elseValues);
  for (size_t i = 0; i < results.size(); ++i) ctx.write(*results[i], op->result(static_cast<unsigned>(i)));
}

// ---------------------------------------------------------------- while_

void while_(const std::function<Tensor()>& cond, const std::function<void()>& body, SourceLoc loc) {
  Context& ctx = Context::current(loc);
  if (ctx.mode() == Mode::Eager) {
    while (true) {
      Tensor c = cond();
      if (!c.defined() || !c.dtype().isBool() || c.rank() != 0)
        detail::fail("while_: the condition function must return a boolean scalar", loc);
      if (c.value().intAt(0) == 0) break;
      body();
    }
    return;
  }
  ctx.builder().setLoc(detail::toLocation(loc));
  ir::Op* op = ctx.builder().whileOp({});
  ctx.pushFrame(FrameKind::WhileBefore, op, op->region(0));
  Tensor c = cond();
  if (!c.defined() || !c.dtype().isBool() || c.rank() != 0)
    detail::fail("while_: the condition function must return a boolean scalar (i1)", loc);
  ir::Value* condValue = c.traced(loc);
  ctx.switchWhileToAfterRegion();
  body();
  ctx.checkPendingError();
  // The before region yields the condition; it is built before closeLoop so trivial carried values in it are
  // replaced too.
  ir::Builder bb(op->region(0));
  bb.setLoc(detail::toLocation(loc));
  bb.yield({condValue});
  closeLoop(ctx, op, 1, loc);
}

}  // namespace tessera
