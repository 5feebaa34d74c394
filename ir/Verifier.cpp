// The IR verifier. One scoped walk per function checks SSA visibility and terminator placement; per op it checks
// operand/result/region counts, required attributes and the type rules of docs/IR.md. The element types an op
// accepts come from Ops.def's element column; ops with the kSameType trait are verified from the table alone,
// every other op has a rule in checkKindRule (an op with neither is reported as having no rule).
//
// Every check reports through fail(), which either throws (verify) or records and carries on (verifyAll).
// Within one op the checks stop at its first problem: later rules assume the earlier ones held (counts before
// operand indexing, attribute kinds before reading them), which keeps a broken op from crashing the verifier.
#include "ir/Verifier.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/Builder.h"
#include "ir/Layout.h"
#include "ir/TensorDescriptor.h"

namespace tessera::ir {
namespace {

// The most arrivals an mbarrier phase may expect (PTX: mbarrier.init's count is below 2^20).
constexpr int64_t kMaxMbarrierArrivals = (int64_t{1} << 20) - 1;

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string typeList(const std::vector<Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i].str();
  return s + ")";
}

std::vector<Type> typesOf(const std::vector<Value*>& values) {
  std::vector<Type> out;
  for (const Value* v : values) out.push_back(v->type());
  return out;
}

// Spells a shape + element the way Type::str would, without constructing the Type (the shape may be illegal,
// and Type::tile throws on those).
std::string shapedTypeStr(const std::vector<int64_t>& shape, Type element) {
  if (shape.empty()) return element.str();
  std::string s = "tile<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + element.str() + ">";
}

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* attrKindName(Attr::Kind k) {
  switch (k) {
    case Attr::Kind::None:
      return "none";
    case Attr::Kind::Int:
      return "an int";
    case Attr::Kind::Float:
      return "a float";
    case Attr::Kind::Bool:
      return "a bool";
    case Attr::Kind::String:
      return "a string";
    case Attr::Kind::Type:
      return "a type";
    case Attr::Kind::Array:
      return "an array";
    case Attr::Kind::Layout:
      return "a layout";
  }
  return "?";
}

// A type problem that makes a value unusable, or nullopt. Types built through Type's factories are legal by
// construction; this guards against null types and values whose type was set to something out of range.
std::optional<std::string> typeProblem(Type t) {
  if (!t) return "has no type";
  if (auto err = Type::checkTileShape(t.shape())) return "has the illegal type " + t.str() + ": " + *err;
  if (t.isTile() && t.encoding()) {
    if (!t.encoding()->isLayout()) return "has type " + t.str() + " whose encoding is not a layout attribute";
    try {
      Layout layout = Layout::fromAttr(*t.encoding());
      if (layout.rank() != t.rank())
        return "has type " + t.str() + " whose layout has rank " + std::to_string(layout.rank()) + ", not " +
               std::to_string(t.rank());
      layout.requireShape(t.shape());  // a #linear layout is over one shape
    } catch (const Error& e) {
      return "has type " + t.str() + " whose encoding is not a valid layout: " + e.message();
    }
  }
  if (t.isSharedBuffer()) {
    if (!t.encoding()->isLayout()) return "has type " + t.str() + " whose encoding is not a layout attribute";
    try {
      Layout layout = Layout::fromAttr(*t.encoding());
      if (layout.isDistributed()) return "has type " + t.str() + " whose layout is not a shared layout";
      if (layout.rank() != static_cast<int>(t.stageShape().size()))
        return "has type " + t.str() + " whose layout has rank " + std::to_string(layout.rank()) + ", not " +
               std::to_string(t.stageShape().size());
      layout.requireShape(t.stageShape());
    } catch (const Error& e) {
      return "has type " + t.str() + " whose encoding is not a valid layout: " + e.message();
    }
  }
  if (t.isPtr() && t.addrSpace() != kGlobalAddrSpace && t.addrSpace() != kSharedAddrSpace)
    return "has type " + t.str() + " in address space " + std::to_string(t.addrSpace()) +
           " (only 1 = global and 3 = shared exist)";
  return std::nullopt;
}

class Verifier {
 public:
  explicit Verifier(bool stopAtFirst) : stopAtFirst_(stopAtFirst) {}

  std::vector<Error> takeErrors() { return std::move(errors_); }

  // typeProblem of `t`, once per distinct type: types are interned, and rebuilding a tile's layout from its
  // attribute for every use was most of the verifier's time (it runs after every pass).
  const std::optional<std::string>& typeProblemOf(Type t) {
    auto [it, inserted] = typeProblems_.try_emplace(t);
    if (inserted) it->second = typeProblem(t);
    return it->second;
  }

  void verifyFunction(const Function& f) {
    function_ = &f;
    const Block& body = *f.body();
    for (unsigned i = 0; i < body.numArguments(); ++i)
      if (const auto& problem = typeProblemOf(body.argument(i)->type()))
        report("function @" + f.name() + " argument #" + std::to_string(i) + " " + *problem, f.loc());
    for (unsigned i = 0; i < body.numArguments(); ++i) verifyPointerRange(f, i);
    verifyPersistent(f);
    scopes_.clear();
    verifyBlock(body, nullptr, 0);
  }

  // `pointer_range = 32` (the JIT's offsets32 fact: fewer than 2^31 elements behind the pointer) belongs on a
  // scalar pointer argument, and 32 is the only range there is.
  void verifyPointerRange(const Function& f, unsigned i) {
    auto it = f.argAttrs(i).find("pointer_range");
    if (it == f.argAttrs(i).end()) return;
    const Type t = f.argument(i)->type();
    const std::string where = "function @" + f.name() + " argument #" + std::to_string(i) + " ";
    if (!t.isScalar() || !t.isPtr())
      report(where + "has attribute 'pointer_range' but type " + t.str() + " (only pointer arguments may)", f.loc());
    else if (!it->second.isInt() || it->second.getInt() != 32)
      report(where + "attribute 'pointer_range' must be 32, got " + it->second.str(), f.loc());
  }

  // `persistent = true` (make-persistent) says the last three arguments are the launch grid: they must be i32.
  void verifyPersistent(const Function& f) {
    auto it = f.attrs().find(kPersistentAttr);
    if (it == f.attrs().end()) return;
    const std::string where = "function @" + f.name() + " ";
    if (!it->second.isBool() || !it->second.getBool()) {
      report(where + "attribute 'persistent' must be true, got " + it->second.str(), f.loc());
      return;
    }
    const unsigned n = f.numArguments();
    if (n < 3 || f.argument(n - 1)->type() != Type::i32() || f.argument(n - 2)->type() != Type::i32() ||
        f.argument(n - 3)->type() != Type::i32())
      report(where + "is persistent, so its last three arguments must be the launch grid's i32 x, y and z", f.loc());
  }

  void report(const std::string& message, const Location& loc) {
    Error e(message, loc);
    if (stopAtFirst_) throw e;
    errors_.push_back(std::move(e));
  }

 private:
  // ---------------------------------------------------------------- reporting and small helpers

  // Reports a problem with `op`; returns false so that rules can `return fail(...)`.
  bool fail(const Op& op, const std::string& detail) {
    report(std::string("'") + op.name() + "' " + detail, op.loc());
    return false;
  }

  // Finds attribute `key` of kind `kind`. Returns false (after reporting) if it is missing while required or
  // has the wrong kind; `out` is null when an optional attribute is absent.
  bool getAttr(const Op& op, const std::string& key, Attr::Kind kind, bool required, const Attr*& out) {
    out = nullptr;
    auto it = op.attrs().find(key);
    if (it == op.attrs().end()) return required ? fail(op, "is missing required attribute '" + key + "'") : true;
    if (it->second.kind() != kind)
      return fail(op, "attribute '" + key + "' must be " + attrKindName(kind) + ", got " + it->second.str());
    out = &it->second;
    return true;
  }

  bool getInt(const Op& op, const std::string& key, int64_t& out) {
    const Attr* a = nullptr;
    if (!getAttr(op, key, Attr::Kind::Int, true, a)) return false;
    out = a->getInt();
    return true;
  }

  bool getIntInRange(const Op& op, const std::string& key, int64_t lo, int64_t hi, int64_t& out) {
    if (!getInt(op, key, out)) return false;
    if (out < lo || out > hi)
      return fail(op, "attribute '" + key + "' must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                          ", got " + std::to_string(out));
    return true;
  }

  // A string attribute whose value is one of `allowed`.
  bool checkEnum(const Op& op, const std::string& key, std::initializer_list<const char*> allowed, bool required) {
    const Attr* a = nullptr;
    if (!getAttr(op, key, Attr::Kind::String, required, a)) return false;
    if (!a) return true;
    std::string choices;
    for (const char* c : allowed) {
      if (a->getString() == c) return true;
      choices += std::string(choices.empty() ? "" : ", ") + "\"" + c + "\"";
    }
    return fail(op, "attribute '" + key + "' must be one of " + choices + ", got " + a->str());
  }

  Type operandType(const Op& op, unsigned i) const { return op.operand(i)->type(); }
  Type resultType(const Op& op, unsigned i = 0) const { return op.result(i)->type(); }

  // Checks that result #i has `shape` and `element` (encodings are a layout matter: ops that change shape
  // may drop them).
  bool expectResult(const Op& op, unsigned i, const std::vector<int64_t>& shape, Type element) {
    Type r = resultType(op, i);
    if (r.shape() == shape && r.element() == element) return true;
    std::string which = op.numResults() == 1 ? "result" : "result #" + std::to_string(i);
    return fail(op, which + " must be " + shapedTypeStr(shape, element) + ", got " + r.str());
  }

  // All operands in [first, first+count) have exactly the type of operand `first`.
  bool sameOperandTypes(const Op& op, unsigned first, unsigned count) {
    for (unsigned i = first + 1; i < first + count; ++i)
      if (operandType(op, i) != operandType(op, first))
        return fail(op, "operands must have the same type, got " + operandType(op, first).str() + " and " +
                            operandType(op, i).str());
    return true;
  }

  // `t`'s element type is in the op's Ops.def element column.
  bool checkElementType(const Op& op, Type t) {
    const ElementTypeSet accepted = op.info().elements;
    if (acceptsElement(accepted, t)) return true;
    if (t.isFP8())
      return fail(op, "cannot operate on fp8 operands (" + t.str() +
                          "): fp8 is storage-only, cast to a wider float first");
    return fail(op, "requires " + describeElements(accepted) + " operands, got " + t.str());
  }

  // ---------------------------------------------------------------- the scoped walk (SSA, terminators)

  struct Scope {
    const Block* block;
    std::unordered_set<const Value*> values;
    const Op* isolatedBy;  // reduce/scan: nothing from enclosing scopes is visible
  };

  void verifyBlock(const Block& block, const Op* parent, unsigned regionIndex) {
    Scope scope{&block, {}, nullptr};
    if (parent && (parent->is(OpKind::Reduce) || parent->is(OpKind::Scan))) scope.isolatedBy = parent;
    for (const Value* a : block.arguments()) scope.values.insert(a);
    scopes_.push_back(std::move(scope));

    for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
      const Op& op = **it;
      bool isLast = std::next(it) == block.ops().end();
      checkTerminatorPlacement(op, parent, isLast);
      checkOperandsVisible(op);
      verifyOp(op);
      for (unsigned r = 0; r < op.numRegions(); ++r) verifyBlock(*op.region(r), &op, r);
      for (const Value* v : op.results()) scopes_.back().values.insert(v);
    }

    const Op* last = block.back();
    if (!last || !last->info().has(kTerminator)) {
      if (parent)
        fail(*parent, "region #" + std::to_string(regionIndex) + " must end with 'yield'");
      else
        report("function @" + function_->name() + " body must end with 'return'", function_->loc());
    }
    scopes_.pop_back();
  }

  void checkTerminatorPlacement(const Op& op, const Op* parent, bool isLast) {
    if (op.is(OpKind::Return) && parent) {
      fail(op, std::string("may only terminate a function body, not a region of '") + parent->name() + "'");
    } else if (op.is(OpKind::Yield) && !parent) {
      fail(op, "may only terminate a region of 'for', 'if', 'while', 'reduce' or 'scan', not a function body");
    } else if (op.info().has(kTerminator) && !isLast) {
      fail(op, "is a terminator and must be the last op of its block");
    }
  }

  void checkOperandsVisible(const Op& op) {
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Value* v = op.operand(i);
      bool found = false;
      const Op* crossedIsolation = nullptr;
      for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
        if (s->values.count(v)) {
          found = true;
          break;
        }
        if (s->isolatedBy && !crossedIsolation) crossedIsolation = s->isolatedBy;
      }
      std::string which = "operand #" + std::to_string(i);
      if (found && crossedIsolation) {
        fail(op, which + " is defined outside the enclosing '" + crossedIsolation->name() +
                     "' region, which may only use its own arguments and values defined inside it");
      } else if (!found) {
        if (definedInEnclosingBlock(v))
          fail(op, which + " is used before its definition");
        else
          fail(op, which + " is not defined in this block or an enclosing one");
      }
    }
  }

  bool definedInEnclosingBlock(const Value* v) const {
    const Block* home = v->isBlockArg() ? v->ownerBlock() : v->definingOp() ? v->definingOp()->parentBlock() : nullptr;
    for (const Scope& s : scopes_)
      if (s.block == home) return true;
    return false;
  }

  // ---------------------------------------------------------------- per-op rules

  void verifyOp(const Op& op) {
    if (!checkCounts(op)) return;
    if (!checkValueTypes(op)) return;
    if (!checkSharedBufferUses(op)) return;
    if (!checkDescriptorUses(op)) return;
    checkKindRule(op);
  }

  // Shared buffers and async tokens live only in the ops made for them (they are not values in registers).
  bool checkSharedBufferUses(const Op& op) {
    switch (op.kind()) {
      case OpKind::LocalAlloc:
      case OpKind::AsyncCopy:
      case OpKind::AsyncCommitGroup:
      case OpKind::AsyncWait:
      case OpKind::LocalLoad:
      case OpKind::LocalStore:
      case OpKind::MbarrierAlloc:
      case OpKind::AsyncTmaCopy:
      case OpKind::MbarrierWait:
      case OpKind::MbarrierArrive:
        return true;
      default:
        break;
    }
    auto special = [](Type t) { return t.isSharedBuffer() || t.isAsyncToken() || t.isMbarriers(); };
    const std::string owners = "local_alloc, async_copy, async_commit_group, async_wait, local_load, local_store, "
                               "mbarrier_alloc, async_tma_copy, mbarrier_wait and mbarrier_arrive";
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (special(operandType(op, i)))
        return fail(op, "operand #" + std::to_string(i) + " has type " + operandType(op, i).str() + ", which only " +
                            owners + " take");
    for (unsigned i = 0; i < op.numResults(); ++i)
      if (special(resultType(op, i)))
        return fail(op, "result #" + std::to_string(i) + " has type " + resultType(op, i).str() + ", which only " +
                            owners + " make");
    return true;
  }

  // Tensor descriptors are kernel parameters that only desc_load and desc_field read: they are not values in
  // registers, so no op makes them and no other op (nor a loop or branch) carries them.
  bool checkDescriptorUses(const Op& op) {
    const bool readsDescriptor = op.is(OpKind::DescLoad) || op.is(OpKind::DescStore) || op.is(OpKind::DescField) ||
                                 op.is(OpKind::AsyncTmaCopy);
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (operandType(op, i).isTensorDesc() && !(readsDescriptor && i == 0))
        return fail(op, "operand #" + std::to_string(i) + " is a tensor descriptor (" + operandType(op, i).str() +
                            "), which only desc_load, desc_store, desc_field and async_tma_copy take, as their first operand");
    for (unsigned i = 0; i < op.numResults(); ++i)
      if (resultType(op, i).isTensorDesc())
        return fail(op, "result #" + std::to_string(i) + " is a tensor descriptor (" + resultType(op, i).str() +
                            "); descriptors are kernel parameters");
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (unsigned a = 0; a < op.region(r)->numArguments(); ++a)
        if (op.region(r)->argument(a)->type().isTensorDesc())
          return fail(op, "region #" + std::to_string(r) + " argument #" + std::to_string(a) +
                              " is a tensor descriptor; descriptors are kernel parameters");
    return true;
  }

  bool checkCounts(const Op& op) {
    const OpInfo& info = op.info();
    int nOperands = static_cast<int>(op.numOperands());
    int nResults = static_cast<int>(op.numResults());
    auto operandRange = [&](int lo, int hi) {
      if (nOperands >= lo && nOperands <= hi) return true;
      return fail(op, "expects " + std::to_string(lo) + " to " + std::to_string(hi) + " operands, got " +
                          std::to_string(nOperands));
    };
    switch (op.kind()) {
      case OpKind::Load:
        if (!operandRange(1, 3)) return false;
        break;
      case OpKind::AsyncCopy:
        if (!operandRange(3, 4)) return false;
        break;
      case OpKind::LocalLoad:
        if (!operandRange(2, 3)) return false;
        break;
      case OpKind::Store:
      case OpKind::AtomicRMW:
        if (!operandRange(2, 3)) return false;
        break;
      case OpKind::Reduce:
      case OpKind::Scan:
        if (nOperands < 1) return fail(op, "expects at least one input, got none");
        if (nResults != nOperands)
          return fail(
              op, "expects one result per input (" + std::to_string(nOperands) + "), got " + std::to_string(nResults));
        break;
      case OpKind::For:
        if (nOperands < 3)
          return fail(op,
                      "expects at least 3 operands (lower bound, upper bound, step), got " + std::to_string(nOperands));
        if (nResults != nOperands - 3)
          return fail(op, "expects one result per carried value (" + std::to_string(nOperands - 3) + "), got " +
                              std::to_string(nResults));
        break;
      case OpKind::While:
        if (nResults != nOperands)
          return fail(op, "expects one result per carried value (" + std::to_string(nOperands) + "), got " +
                              std::to_string(nResults));
        break;
      default:
        break;
    }
    if (info.numOperands != kVariadic && nOperands != info.numOperands)
      return fail(op, "expects " + std::to_string(info.numOperands) + " operand" + (info.numOperands == 1 ? "" : "s") +
                          ", got " + std::to_string(nOperands));
    if (info.numResults != kVariadic && nResults != info.numResults)
      return fail(op, "expects " + std::to_string(info.numResults) + " result" + (info.numResults == 1 ? "" : "s") +
                          ", got " + std::to_string(nResults));
    if (static_cast<int>(op.numRegions()) != info.numRegions)
      return fail(op,
                  "expects " + std::to_string(info.numRegions) + " regions, got " + std::to_string(op.numRegions()));
    return true;
  }

  // Results and region arguments are checked where they are defined; an operand with a bad type was already
  // reported at its definition, so the op's own rule is just skipped.
  bool checkValueTypes(const Op& op) {
    bool ok = true;
    for (unsigned i = 0; i < op.numResults(); ++i)
      if (const auto& problem = typeProblemOf(resultType(op, i))) ok = fail(op, "result #" + std::to_string(i) + " " + *problem);
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (unsigned a = 0; a < op.region(r)->numArguments(); ++a)
        if (const auto& problem = typeProblemOf(op.region(r)->argument(a)->type()))
          ok = fail(op, "region #" + std::to_string(r) + " argument #" + std::to_string(a) + " " + *problem);
    for (const Value* v : op.operands())
      if (typeProblemOf(v->type())) ok = false;
    return ok;
  }

  // Ops with the kSameType trait are checked from Ops.def alone; every other op has its rule here.
  void checkKindRule(const Op& op) {
    if (op.info().has(kSameType)) {
      checkSameTypeOp(op);
      return;
    }
    switch (op.kind()) {
      case OpKind::Constant:
        checkConstant(op);
        return;
      case OpKind::ProgramId:
      case OpKind::NumPrograms:
        checkGridQuery(op);
        return;
      case OpKind::Arange:
        checkArange(op);
        return;
      case OpKind::Splat:
        checkSplat(op);
        return;
      case OpKind::Broadcast:
        checkBroadcast(op);
        return;
      case OpKind::ExpandDims:
        checkExpandDims(op);
        return;
      case OpKind::Reshape:
        checkReshape(op);
        return;
      case OpKind::Trans:
        checkTrans(op);
        return;
      case OpKind::Cat:
        checkCat(op);
        return;
      case OpKind::Join:
        checkJoin(op);
        return;
      case OpKind::Split:
        checkSplit(op);
        return;
      case OpKind::Cmp:
        checkCmp(op);
        return;
      case OpKind::Select:
        checkSelect(op);
        return;
      case OpKind::Cast:
        checkCast(op);
        return;
      case OpKind::Bitcast:
        checkBitcast(op);
        return;
      case OpKind::AddPtr:
        checkAddPtr(op);
        return;
      case OpKind::Load:
        checkLoad(op);
        return;
      case OpKind::Store:
        checkStore(op);
        return;
      case OpKind::AtomicRMW:
        checkAtomicRMW(op);
        return;
      case OpKind::AtomicCAS:
        checkAtomicCAS(op);
        return;
      case OpKind::DescLoad:
        checkDescLoad(op);
        return;
      case OpKind::DescStore:
        checkDescStore(op);
        return;
      case OpKind::DescField:
        checkDescField(op);
        return;
      case OpKind::Reduce:
      case OpKind::Scan:
        checkReduceOrScan(op);
        return;
      case OpKind::Dot:
        checkDot(op);
        return;
      case OpKind::For:
        checkFor(op);
        return;
      case OpKind::If:
        checkIf(op);
        return;
      case OpKind::While:
        checkWhile(op);
        return;
      case OpKind::Yield:   // operands are checked against what the parent op expects
      case OpKind::Return:  // no operands or results (counts); placement is checked by the walk
        return;
      case OpKind::DebugPrint:
        checkDebugPrint(op);
        return;
      case OpKind::DeviceAssert:
        checkDeviceAssert(op);
        return;
      case OpKind::Hint:
        checkHint(op);
        return;
      case OpKind::ConvertLayout:
        checkConvertLayout(op);
        return;
      case OpKind::Barrier:  // no operands, results or attributes (counts)
        return;
      case OpKind::LocalAlloc:
        if (!resultType(op).isSharedBuffer()) fail(op, "must produce a shared buffer (smem<...>), got " + resultType(op).str());
        return;
      case OpKind::AsyncCopy:
        checkAsyncCopy(op);
        return;
      case OpKind::AsyncCommitGroup:
        checkTokensOnly(op);
        return;
      case OpKind::AsyncWait:
        checkAsyncWait(op);
        return;
      case OpKind::LocalLoad:
        checkLocalLoad(op);
        return;
      case OpKind::LocalStore:
        checkLocalStore(op);
        return;
      case OpKind::MbarrierAlloc:
        checkMbarrierAlloc(op);
        return;
      case OpKind::AsyncTmaCopy:
        checkAsyncTmaCopy(op);
        return;
      case OpKind::MbarrierWait:
        checkMbarrierWait(op);
        return;
      case OpKind::MbarrierArrive:
        checkMbarrierArrive(op);
        return;
      case OpKind::WarpSpecialize:
        checkWarpSpecialize(op);
        return;
      case OpKind::DotWait:
        checkDotWait(op);
        return;
      case OpKind::TurnWait: case OpKind::TurnPass:
        checkTurn(op);
        return;
      case OpKind::ConsumerGroup:
        if (expectResult(op, 0, {}, Type::i32())) checkInConsumerRegion(op);
        return;
      default:
        fail(op, "has no verifier rule (an op without the kSameType trait needs one in Verifier.cpp)");
        return;
    }
  }

  // ---- constants, ids, ranges

  bool checkConstant(const Op& op) {
    Type t = resultType(op);
    if (t.isPtr()) return fail(op, "cannot produce a pointer (" + t.str() + ")");
    if (t.isFP8())
      return fail(op, "cannot produce fp8 (" + t.str() +
                          "): fp8 is storage-only, build the value in a wider "
                          "float type and cast it");
    auto it = op.attrs().find("value");
    if (it == op.attrs().end()) return fail(op, "is missing required attribute 'value'");
    const Attr& v = it->second;
    if (t.isInt() && !(v.isInt() || v.isBool()))
      return fail(op, "attribute 'value' must be an int or bool for integer type " + t.str() + ", got " + v.str());
    if (t.isFloat() && !v.isFloat())
      return fail(op, "attribute 'value' must be a float for floating-point type " + t.str() + ", got " + v.str());
    return true;
  }

  bool checkGridQuery(const Op& op) {
    int64_t axis;
    if (!getIntInRange(op, "axis", 0, 2, axis)) return false;
    return expectResult(op, 0, {}, Type::i32());
  }

  bool checkArange(const Op& op) {
    int64_t start, end;
    if (!getInt(op, "start", start) || !getInt(op, "end", end)) return false;
    if (start < std::numeric_limits<int32_t>::min() || end - 1 > std::numeric_limits<int32_t>::max())
      return fail(op, "range [" + std::to_string(start) + ", " + std::to_string(end) + ") does not fit in i32");
    int64_t n = end - start;
    if (!isPowerOfTwo(n) || n > kMaxTileElements)
      return fail(op, "length end - start = " + std::to_string(n) + " must be a positive power of two of at most " +
                          std::to_string(kMaxTileElements));
    return expectResult(op, 0, {n}, Type::i32());
  }

  // ---- shapes

  bool checkSplat(const Op& op) {
    Type in = operandType(op, 0), out = resultType(op);
    if (in.isTile()) return fail(op, "operand must be a scalar, got " + in.str());
    if (!out.isTile()) return fail(op, "result must be a tile, got " + out.str());
    if (out.element() != in) return fail(op, "result element type must be " + in.str() + ", got " + out.str());
    return true;
  }

  bool checkBroadcast(const Op& op) {
    Type in = operandType(op, 0), out = resultType(op);
    if (!in.isTile()) return fail(op, "operand must be a tile, got " + in.str() + " (use 'splat' for scalars)");
    if (out.element() != in.element() || out.rank() != in.rank())
      return fail(op, "result must have the operand's element type and rank " + std::to_string(in.rank()) + ", got " +
                          out.str());
    for (int d = 0; d < in.rank(); ++d)
      if (in.shape()[d] != out.shape()[d] && in.shape()[d] != 1)
        return fail(op, "cannot broadcast " + in.str() + " to " + out.str() + ": dimension " + std::to_string(d) +
                            " is neither equal nor 1");
    return true;
  }

  bool checkExpandDims(const Op& op) {
    Type in = operandType(op, 0);
    int64_t axis;
    if (!getIntInRange(op, "axis", 0, in.rank(), axis)) return false;
    std::vector<int64_t> shape = in.shape();
    shape.insert(shape.begin() + axis, 1);
    return expectResult(op, 0, shape, in.element());
  }

  bool checkReshape(const Op& op) {
    Type in = operandType(op, 0), out = resultType(op);
    if (!in.isTile() || !out.isTile())
      return fail(op, "operand and result must be tiles, got " + in.str() + " and " + out.str());
    if (out.element() != in.element())
      return fail(op, "result element type must be " + in.element().str() + ", got " + out.str());
    if (out.numElements() != in.numElements())
      return fail(op, "cannot reshape " + in.str() + " (" + std::to_string(in.numElements()) + " elements) to " +
                          out.str() + " (" + std::to_string(out.numElements()) + " elements)");
    return true;
  }

  bool checkTrans(const Op& op) {
    Type in = operandType(op, 0);
    if (!in.isTile()) return fail(op, "operand must be a tile, got " + in.str());
    const Attr* perm = nullptr;
    if (!getAttr(op, "perm", Attr::Kind::Array, true, perm)) return false;
    std::vector<int64_t> p;
    for (const Attr& e : perm->getArray()) {
      if (!e.isInt()) return fail(op, "attribute 'perm' must be an array of ints, got " + perm->str());
      p.push_back(e.getInt());
    }
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    bool isPermutation = static_cast<int>(p.size()) == in.rank();
    for (size_t i = 0; isPermutation && i < sorted.size(); ++i) isPermutation = sorted[i] == static_cast<int64_t>(i);
    if (!isPermutation)
      return fail(op, "attribute 'perm' " + perm->str() + " is not a permutation of the " + std::to_string(in.rank()) +
                          " dimensions of " + in.str());
    std::vector<int64_t> shape;
    for (int64_t d : p) shape.push_back(in.shape()[d]);
    return expectResult(op, 0, shape, in.element());
  }

  bool checkCat(const Op& op) {
    if (!sameOperandTypes(op, 0, 2)) return false;
    Type in = operandType(op, 0);
    if (!in.isTile()) return fail(op, "operands must be tiles, got " + in.str());
    std::vector<int64_t> shape = in.shape();
    shape[0] *= 2;
    return expectResult(op, 0, shape, in.element());
  }

  bool checkJoin(const Op& op) {
    if (!sameOperandTypes(op, 0, 2)) return false;
    Type in = operandType(op, 0);
    std::vector<int64_t> shape = in.shape();
    shape.push_back(2);
    return expectResult(op, 0, shape, in.element());
  }

  bool checkSplit(const Op& op) {
    Type in = operandType(op, 0);
    if (!in.isTile() || in.shape().back() != 2) return fail(op, "operand's last dimension must be 2, got " + in.str());
    std::vector<int64_t> shape = in.shape();
    shape.pop_back();
    return expectResult(op, 0, shape, in.element()) && expectResult(op, 1, shape, in.element());
  }

  // ---- element-wise

  bool checkSameTypeOp(const Op& op) {
    if (!sameOperandTypes(op, 0, op.numOperands())) return false;
    Type t = operandType(op, 0);
    if (!checkElementType(op, t)) return false;
    if (resultType(op) != t)
      return fail(op, "result type must be " + t.str() + " (the operands'), got " + resultType(op).str());
    return true;
  }

  bool checkCmp(const Op& op) {
    if (!checkEnum(op, "pred", {"eq", "ne", "lt", "le", "gt", "ge"}, true)) return false;
    if (!sameOperandTypes(op, 0, 2)) return false;
    Type t = operandType(op, 0);
    if (!checkElementType(op, t)) return false;
    return expectResult(op, 0, t.shape(), Type::i1());
  }

  bool checkSelect(const Op& op) {
    if (!sameOperandTypes(op, 1, 2)) return false;
    Type cond = operandType(op, 0), t = operandType(op, 1);
    if (!cond.isBool() || cond.shape() != t.shape())
      return fail(op, "condition must be " + shapedTypeStr(t.shape(), Type::i1()) +
                          " (i1 with the values' shape), got " + cond.str());
    if (resultType(op) != t)
      return fail(op, "result type must be " + t.str() + " (the values'), got " + resultType(op).str());
    return true;
  }

  // ---- conversions

  bool checkCast(const Op& op) {
    Type in = operandType(op, 0), out = resultType(op);
    if (out.shape() != in.shape())
      return fail(op, "result must keep the operand's shape " + shapeStr(in.shape()) + ", got " + out.str());
    Type from = in.element(), to = out.element();
    auto isAddressInt = [](Type t) {
      return !t.isPtr() && (t.scalarKind() == ScalarKind::I64 || t.scalarKind() == ScalarKind::U64);
    };
    if (to.isBool() || (from.isPtr() && to.isPtr()) || (!from.isPtr() && !to.isPtr())) return true;
    if (from.isPtr() && !isAddressInt(to))
      return fail(op, "cannot cast pointer " + from.str() + " to " + to.str() + " (only to a pointer, i64, u64 or i1)");
    if (to.isPtr() && !isAddressInt(from))
      return fail(op, "cannot cast " + from.str() + " to pointer " + to.str() + " (only from a pointer, i64 or u64)");
    return true;
  }

  bool checkBitcast(const Op& op) {
    Type in = operandType(op, 0), out = resultType(op);
    if (out.shape() != in.shape())
      return fail(op, "result must keep the operand's shape " + shapeStr(in.shape()) + ", got " + out.str());
    if (in.isBool() || out.isBool())
      return fail(op, "cannot bitcast to or from i1, got " + in.str() + " to " + out.str());
    if (in.bitWidth() != out.bitWidth())
      return fail(op, "requires equal bit widths, got " + in.element().str() + " (" + std::to_string(in.bitWidth()) +
                          " bits) and " + out.element().str() + " (" + std::to_string(out.bitWidth()) + " bits)");
    return true;
  }

  bool checkAddPtr(const Op& op) {
    Type ptr = operandType(op, 0), offset = operandType(op, 1);
    if (!ptr.isPtr()) return fail(op, "first operand must be a pointer or tile of pointers, got " + ptr.str());
    if (!offset.isInt() || offset.shape() != ptr.shape())
      return fail(
          op, "offset must be an integer with the pointer's shape " + shapeStr(ptr.shape()) + ", got " + offset.str());
    if (resultType(op) != ptr) return fail(op, "result type must be " + ptr.str() + ", got " + resultType(op).str());
    return true;
  }

  // ---- memory

  // The pointer operand, and that `mask` (if present) is i1 of the pointer's shape.
  bool checkPointerAndMask(const Op& op, int maskIndex) {
    Type ptr = operandType(op, 0);
    if (!ptr.isPtr()) return fail(op, "first operand must be a pointer or tile of pointers, got " + ptr.str());
    if (maskIndex >= 0 && maskIndex < static_cast<int>(op.numOperands())) {
      Type mask = operandType(op, maskIndex);
      if (!mask.isBool() || mask.shape() != ptr.shape())
        return fail(op, "mask must be " + shapedTypeStr(ptr.shape(), Type::i1()) + ", got " + mask.str());
    }
    return true;
  }

  // `what` (operand #i) must hold the pointee type in the pointer's shape.
  bool checkPointeeOperand(const Op& op, unsigned i, const std::string& what) {
    Type ptr = operandType(op, 0), t = operandType(op, i);
    if (t.shape() != ptr.shape() || t.element() != ptr.pointee())
      return fail(op, what + " must be " + shapedTypeStr(ptr.shape(), ptr.pointee()) +
                          " (the pointee in the pointer's "
                          "shape), got " +
                          t.str());
    return true;
  }

  bool checkCacheHints(const Op& op) {
    return checkEnum(op, "cache", {"ca", "cg", "cv"}, false) && checkEnum(op, "evict", {"first", "last"}, false);
  }

  bool checkLoad(const Op& op) {
    if (!checkCacheHints(op)) return false;
    const Attr* isVolatile = nullptr;
    if (!getAttr(op, "volatile", Attr::Kind::Bool, false, isVolatile)) return false;
    if (!checkPointerAndMask(op, 1)) return false;
    if (op.numOperands() == 3 && !checkPointeeOperand(op, 2, "'other'")) return false;
    Type ptr = operandType(op, 0);
    return expectResult(op, 0, ptr.shape(), ptr.pointee());
  }

  // ---- tensor descriptors

  bool checkDescriptorOperand(const Op& op) {
    if (op.numOperands() == 0 || !operandType(op, 0).isTensorDesc())
      return fail(op, "first operand must be a tensor descriptor (tensordesc<...>), got " +
                          (op.numOperands() ? operandType(op, 0).str() : std::string("none")));
    return true;
  }

  // desc_load %desc, %offset0, ..., %offsetN-1 : the block at those element offsets, one i32 per dimension.
  bool checkDescLoad(const Op& op) {
    if (!checkDescriptorOperand(op) || !checkBlockOffsets(op, op.numOperands() - 1)) return false;
    const Type desc = operandType(op, 0);
    return expectResult(op, 0, desc.blockShape(), desc.element());
  }

  // desc_store %desc, %offset0, ..., %offsetN-1, %value : writes the block %value (a tile of the descriptor's
  // block and element) at those offsets, the elements inside the tensor only.
  bool checkDescStore(const Op& op) {
    if (!checkDescriptorOperand(op)) return false;
    if (op.numOperands() < 2) return fail(op, "expects one offset per dimension of the descriptor's block, then a value");
    if (!checkBlockOffsets(op, op.numOperands() - 2)) return false;
    const Type desc = operandType(op, 0);
    const Type value = operandType(op, op.numOperands() - 1);
    const Type want = Type::tile(desc.blockShape(), desc.element());
    if (!value.isTile() || value.shape() != want.shape() || value.element() != want.element())
      return fail(op, "the value (last operand) must be a block of the descriptor, " + want.str() + ", got " +
                          value.str());
    return true;
  }

  // The `offsets` operands after the descriptor: one i32 per dimension of its block, which must fit in a tile.
  bool checkBlockOffsets(const Op& op, unsigned offsets) {
    const Type desc = operandType(op, 0);
    const std::vector<int64_t>& block = desc.blockShape();
    const unsigned rank = static_cast<unsigned>(block.size());
    if (offsets != rank)
      return fail(op, "expects " + std::to_string(rank) + " offset" + (rank == 1 ? "" : "s") + " (one per dimension of " +
                          desc.str() + "), got " + std::to_string(offsets));
    for (unsigned i = 1; i <= rank; ++i)
      if (operandType(op, i) != Type::i32())
        return fail(op, "offset #" + std::to_string(i - 1) + " (operand #" + std::to_string(i) + ") must be i32, got " +
                            operandType(op, i).str());
    if (auto err = Type::checkTileShape(block))
      return fail(op, "the blocks of " + desc.str() + " do not fit in a tile: " + *err);
    return true;
  }

  // desc_field %desc {field = "base"} : ptr<E>; {field = "shape" | "stride", dim = d} : i64.
  bool checkDescField(const Op& op) {
    if (!checkDescriptorOperand(op)) return false;
    if (!checkEnum(op, "field", {kDescFieldBase, kDescFieldShape, kDescFieldStride}, true)) return false;
    const Type desc = operandType(op, 0);
    if (op.stringAttr("field") == kDescFieldBase) {
      if (op.hasAttr("dim")) return fail(op, "field \"base\" takes no 'dim' attribute");
      return expectResult(op, 0, {}, Type::ptr(desc.element()));
    }
    int64_t dim;
    if (!getIntInRange(op, "dim", 0, static_cast<int64_t>(desc.blockShape().size()) - 1, dim)) return false;
    return expectResult(op, 0, {}, Type::i64());
  }

  // ---- shared buffers and asynchronous copies

  // Operand #i is a shared buffer and operand #i+1 its stage index (an i32 scalar).
  bool checkBufferAndStage(const Op& op, unsigned i) {
    if (!operandType(op, i).isSharedBuffer())
      return fail(op, "operand #" + std::to_string(i) + " must be a shared buffer (smem<...>), got " +
                          operandType(op, i).str());
    if (operandType(op, i + 1) != Type::i32())
      return fail(op, "stage index (operand #" + std::to_string(i + 1) + ") must be i32, got " +
                          operandType(op, i + 1).str());
    return true;
  }

  // Every operand and the result are async tokens.
  bool checkTokensOnly(const Op& op) {
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (!operandType(op, i).isAsyncToken())
        return fail(op, "operand #" + std::to_string(i) + " must be an async_token, got " + operandType(op, i).str());
    if (!resultType(op).isAsyncToken()) return fail(op, "must produce an async_token, got " + resultType(op).str());
    return true;
  }

  bool checkAsyncCopy(const Op& op) {
    if (!checkPointerAndMask(op, 3) || !checkBufferAndStage(op, 1)) return false;
    Type ptr = operandType(op, 0), buffer = operandType(op, 1);
    if (ptr.addrSpace() != kGlobalAddrSpace) return fail(op, "copies from global memory, got " + ptr.str());
    if (ptr.shape() != buffer.stageShape() || ptr.pointee() != buffer.element())
      return fail(op, "pointers " + ptr.str() + " must match one stage of " + buffer.str() + " (" +
                          buffer.stageTile().str() + ")");
    if (!resultType(op).isAsyncToken()) return fail(op, "must produce an async_token, got " + resultType(op).str());
    return true;
  }

  bool checkAsyncWait(const Op& op) {
    const Attr* pending = nullptr;
    if (!getAttr(op, "pending", Attr::Kind::Int, true, pending)) return false;
    if (pending->getInt() < 0) return fail(op, "attribute 'pending' must be >= 0, got " + pending->str());
    return checkTokensOnly(op);
  }

  bool checkLocalLoad(const Op& op) {
    if (!checkBufferAndStage(op, 0)) return false;
    if (op.numOperands() == 3 && !operandType(op, 2).isAsyncToken())
      return fail(op, "operand #2 must be an async_token, got " + operandType(op, 2).str());
    Type buffer = operandType(op, 0);
    return expectResult(op, 0, buffer.stageShape(), buffer.element());
  }

  // local_store %value, %buffer, %stage : async_token. The tile %value (one stage's shape and element type)
  // becomes stage %stage of %buffer.
  bool checkLocalStore(const Op& op) {
    if (!checkBufferAndStage(op, 1)) return false;
    Type value = operandType(op, 0), buffer = operandType(op, 1);
    if (!value.isTile() || value.shape() != buffer.stageShape() || value.element() != buffer.element())
      return fail(op, "value " + value.str() + " must match one stage of " + buffer.str() + " (" +
                          buffer.stageTile().str() + ")");
    if (!resultType(op).isAsyncToken()) return fail(op, "must produce an async_token, got " + resultType(op).str());
    return true;
  }

  // ---- TMA copies and mbarriers

  // mbarrier_alloc : mbarriers<N>. Its lowering initializes the barriers and synchronizes every thread of the
  // program, so it sits in the function's body, outside any loop or branch.
  bool checkMbarrierAlloc(const Op& op) {
    if (!resultType(op).isMbarriers())
      return fail(op, "must produce mbarriers (mbarriers<N>), got " + resultType(op).str());
    if (op.parentOp())
      return fail(op, "must be in the function's body, not inside '" + std::string(op.parentOp()->name()) + "'");
    const Attr* arrivals = nullptr;
    if (!getAttr(op, "arrivals", Attr::Kind::Int, false, arrivals)) return false;
    if (arrivals && (arrivals->getInt() < 1 || arrivals->getInt() > kMaxMbarrierArrivals))
      return fail(op, "attribute 'arrivals' (per phase) must be between 1 and " +
                          std::to_string(kMaxMbarrierArrivals) +
                          ", got " + std::to_string(arrivals->getInt()));
    return true;
  }

  // mbarrier_arrive %barriers, %index[, %pred]: every thread that runs it (where %pred holds) arrives once on
  // barrier %index.
  bool checkMbarrierArrive(const Op& op) {
    if (op.numOperands() != 2 && op.numOperands() != 3)
      return fail(op, "expects mbarriers, a barrier index and an optional predicate; got " +
                          std::to_string(op.numOperands()) + " operands");
    if (!operandType(op, 0).isMbarriers())
      return fail(op, "operand #0 must be mbarriers (mbarriers<N>), got " + operandType(op, 0).str());
    if (operandType(op, 1) != Type::i32())
      return fail(op, "barrier index (operand #1) must be i32, got " + operandType(op, 1).str());
    if (op.numOperands() == 3 && operandType(op, 2) != Type::i1())
      return fail(op, "the predicate (operand #2) must be i1, got " + operandType(op, 2).str());
    return true;
  }

  // warp_specialize {producer_warps, producer_registers, consumer_registers[, consumer_groups = G]} { producer }
  // { consumers }: the program's num_warps warps run the consumer region (G groups of num_warps warps each run it
  // side by side where G is given: ping-pong-consumers); producer_warps more warps (whole warpgroups) run the
  // producer region on one thread. Both regions take no arguments and yield nothing; the op is the last of the
  // function's body before its return, and the only one.
  bool checkWarpSpecialize(const Op& op) {
    if (op.parentOp())
      return fail(op, "must be in the function's body, not inside '" + std::string(op.parentOp()->name()) + "'");
    const Block* body = op.parentBlock();
    if (body->terminator()) {
      auto it = std::find_if(body->ops().begin(), body->ops().end(), [&](const auto& o) { return o.get() == &op; });
      if (it == body->ops().end() || std::next(it) == body->ops().end() || std::next(it)->get() != body->terminator())
        return fail(op, "must be the last op of the function's body before its 'return'");
    }
    for (const char* key : {"producer_warps", "producer_registers", "consumer_registers"}) {
      const Attr* a = nullptr;
      if (!getAttr(op, key, Attr::Kind::Int, true, a)) return false;
      const int64_t v = a->getInt();
      if (std::string(key) == "producer_warps") {
        if (v < 4 || v % 4 != 0)
          return fail(op, "producer_warps must be a positive multiple of 4 (whole warpgroups), got " + std::to_string(v));
      } else if (v < 24 || v > 256 || v % 8 != 0) {
        return fail(op, std::string(key) + " (registers per thread) must be a multiple of 8 between 24 and 256, got " +
                            std::to_string(v));
      }
    }
    if (op.hasAttr("consumer_groups")) {
      int64_t groups = 0;
      if (!getIntInRange(op, "consumer_groups", 1, 8, groups)) return false;
    }
    bool ok = true;
    for (unsigned r = 0; r < 2; ++r) ok = checkRegionArgs(op, r, {}, r == 0 ? "producer" : "consumers") && ok;
    if (!ok) return false;
    for (unsigned r = 0; r < 2; ++r) ok = checkYield(op, r, {}, "nothing") && ok;
    return ok;
  }

  // turn_wait / turn_pass {groups = G[, only_group = g][, sequence = s]}: the consumers of a warp_specialize split
  // into G >= 2 groups of whole warps that take turns; only_group (0 <= g < G) restricts the op to one group;
  // turns of different sequences (s >= 0, default 0) are handed around independently.
  bool checkTurn(const Op& op) {
    const Attr* groups = nullptr;
    if (!getAttr(op, "groups", Attr::Kind::Int, true, groups)) return false;
    if (groups->getInt() < 2) return fail(op, "needs at least 2 groups, got " + std::to_string(groups->getInt()));
    if (op.hasAttr("only_group")) {
      const Attr* only = nullptr;
      if (!getAttr(op, "only_group", Attr::Kind::Int, true, only)) return false;
      if (only->getInt() < 0 || only->getInt() >= groups->getInt())
        return fail(op, "only_group must be a group from 0 to " + std::to_string(groups->getInt() - 1) + ", got " +
                            std::to_string(only->getInt()));
    }
    if (op.hasAttr("sequence")) {
      int64_t sequence = 0;
      if (!getIntInRange(op, "sequence", 0, 3, sequence)) return false;
    }
    return checkInConsumerRegion(op);
  }

  bool checkInConsumerRegion(const Op& op) {
    // The block directly under the warp_specialize must be its consumer region.
    for (const Op* at = &op; at->parentOp(); at = at->parentOp())
      if (at->parentOp()->is(OpKind::WarpSpecialize)) {
        if (at->parentBlock() != at->parentOp()->region(1))
          return fail(op, "must be in a warp_specialize's consumer region, not its producer region");
        return true;
      }
    return fail(op, "must be in a warp_specialize's consumer region");
  }

  // async_tma_copy %desc, %offset0, ..., %offsetR-1, %buffer, %stage, %barriers[, %pred] : async_token. The block
  // of %desc at the offsets lands in stage %stage of %buffer, completing on barrier %stage of %barriers; %pred (i1)
  // false issues nothing.
  bool checkAsyncTmaCopy(const Op& op) {
    if (!checkDescriptorOperand(op)) return false;
    const Type desc = operandType(op, 0);
    const std::vector<int64_t>& block = desc.blockShape();
    const unsigned rank = static_cast<unsigned>(block.size());
    if (op.numOperands() != rank + 4 && op.numOperands() != rank + 5)
      return fail(op, "expects the descriptor, " + std::to_string(rank) + " offset" + (rank == 1 ? "" : "s") +
                          ", a shared buffer, a stage index, mbarriers and an optional predicate; got " +
                          std::to_string(op.numOperands()) + " operands");
    for (unsigned i = 1; i <= rank; ++i)
      if (operandType(op, i) != Type::i32())
        return fail(op, "offset #" + std::to_string(i - 1) + " (operand #" + std::to_string(i) + ") must be i32, got " +
                            operandType(op, i).str());
    if (!checkBufferAndStage(op, rank + 1)) return false;
    const Type buffer = operandType(op, rank + 1), barriers = operandType(op, rank + 3);
    // A stage holds the block's bytes: its shape, or (a view of them) that shape without unit dimensions,
    // possibly with its two dimensions swapped (the buffer's layout then runs along dimension 0).
    std::vector<int64_t> squeezed, stage;
    for (int64_t d : block)
      if (d != 1) squeezed.push_back(d);
    for (int64_t d : buffer.stageShape())
      if (d != 1) stage.push_back(d);
    const bool swapped = stage.size() == 2 && std::vector<int64_t>{stage[1], stage[0]} == squeezed;
    if ((buffer.stageShape() != block && stage != squeezed && !swapped) || buffer.element() != desc.element())
      return fail(op, "the blocks of " + desc.str() + " must match one stage of " + buffer.str() + " (" +
                          buffer.stageTile().str() + "), up to unit dimensions and a transpose");
    if (!barriers.isMbarriers() || barriers.stages() != buffer.stages())
      return fail(op, "operand #" + std::to_string(rank + 3) + " must be mbarriers<" + std::to_string(buffer.stages()) +
                          "> (one barrier per stage of the buffer), got " + barriers.str());
    if (op.numOperands() == rank + 5 && operandType(op, rank + 4) != Type::i1())
      return fail(op, "the predicate (operand #" + std::to_string(rank + 4) + ") must be i1, got " +
                          operandType(op, rank + 4).str());
    if (!resultType(op).isAsyncToken()) return fail(op, "must produce an async_token, got " + resultType(op).str());
    return true;
  }

  // mbarrier_wait %barriers, %index, %parity, %tokens... : async_token. Waits until the phase of parity %parity
  // (i32, 0 or 1) of barrier %index has completed; the tokens (of the copies it waits for) only order the IR.
  bool checkMbarrierWait(const Op& op) {
    if (op.numOperands() < 3)
      return fail(op, "expects mbarriers, a barrier index, a parity and optional tokens; got " +
                          std::to_string(op.numOperands()) + " operands");
    if (!operandType(op, 0).isMbarriers())
      return fail(op, "operand #0 must be mbarriers (mbarriers<N>), got " + operandType(op, 0).str());
    if (operandType(op, 1) != Type::i32())
      return fail(op, "barrier index (operand #1) must be i32, got " + operandType(op, 1).str());
    if (operandType(op, 2) != Type::i32())
      return fail(op, "parity (operand #2) must be i32, got " + operandType(op, 2).str());
    for (unsigned i = 3; i < op.numOperands(); ++i)
      if (!operandType(op, i).isAsyncToken())
        return fail(op, "operand #" + std::to_string(i) + " must be an async_token, got " + operandType(op, i).str());
    if (!resultType(op).isAsyncToken()) return fail(op, "must produce an async_token, got " + resultType(op).str());
    return true;
  }

  bool checkStore(const Op& op) {
    if (!checkCacheHints(op)) return false;
    return checkPointerAndMask(op, 2) && checkPointeeOperand(op, 1, "value");
  }

  bool checkAtomicCommon(const Op& op, unsigned valueIndex) {
    if (!checkEnum(op, "sem", {"relaxed", "acquire", "release", "acq_rel"}, true)) return false;
    if (!checkEnum(op, "scope", {"cta", "gpu", "sys"}, true)) return false;
    if (!checkPointerAndMask(op, op.is(OpKind::AtomicRMW) ? 2 : -1)) return false;
    if (!checkPointeeOperand(op, valueIndex, "value")) return false;
    Type value = operandType(op, valueIndex);
    if (value.isFP8()) return fail(op, "cannot operate on fp8 values (" + value.str() + "): fp8 is storage-only");
    if (resultType(op) != value)
      return fail(op, "result type must be " + value.str() + " (the value's), got " + resultType(op).str());
    return true;
  }

  bool checkAtomicRMW(const Op& op) {
    if (!checkEnum(op, "kind", {"add", "max", "min", "and", "or", "xor", "xchg"}, true)) return false;
    if (!checkAtomicCommon(op, 1)) return false;
    const std::string& kind = op.attrs().at("kind").getString();
    Type value = operandType(op, 1);
    if (kind == "add" || kind == "max" || kind == "min") {
      if (!acceptsElement(kNumericElements, value))
        return fail(op, "kind \"" + kind + "\" requires integer (not i1) or floating-point values, got " + value.str());
    } else if (kind == "and" || kind == "or" || kind == "xor") {
      if (!acceptsElement(kIntElements, value))
        return fail(op, "kind \"" + kind + "\" requires integer (not i1) values, got " + value.str());
    } else if (value.isPtr() || (value.bitWidth() != 16 && value.bitWidth() != 32 && value.bitWidth() != 64)) {
      return fail(op, "kind \"xchg\" requires a 16-, 32- or 64-bit non-pointer value, got " + value.str());
    }
    return true;
  }

  bool checkAtomicCAS(const Op& op) {
    if (!checkAtomicCommon(op, 2)) return false;
    if (operandType(op, 1) != operandType(op, 2))
      return fail(op, "compare and new values must have the same type, got " + operandType(op, 1).str() + " and " +
                          operandType(op, 2).str());
    Type value = operandType(op, 2);
    bool ok = (value.isInt() || value.isFloat()) &&
              (value.bitWidth() == 16 || value.bitWidth() == 32 || value.bitWidth() == 64);
    if (!ok) return fail(op, "requires 16-, 32- or 64-bit integer or floating-point values, got " + value.str());
    return true;
  }

  // ---- reductions, scans, dot

  bool checkReduceOrScan(const Op& op) {
    bool isReduce = op.is(OpKind::Reduce);
    unsigned n = op.numOperands();
    Type first = operandType(op, 0);
    if (!first.isTile()) return fail(op, "inputs must be tiles (rank >= 1), got " + first.str());
    for (unsigned i = 1; i < n; ++i)
      if (operandType(op, i).shape() != first.shape())
        return fail(op, "inputs must all have the same shape, got " + first.str() + " and " + operandType(op, i).str());
    int64_t axis;
    if (!getIntInRange(op, "axis", 0, first.rank() - 1, axis)) return false;
    if (!isReduce) {
      const Attr* reverse = nullptr;
      if (!getAttr(op, "reverse", Attr::Kind::Bool, true, reverse)) return false;
    }
    std::vector<int64_t> resultShape = isReduce ? reducedShape(first.shape(), static_cast<int>(axis)) : first.shape();
    std::vector<Type> elements;
    for (unsigned i = 0; i < n; ++i) {
      elements.push_back(operandType(op, i).element());
      if (!expectResult(op, i, resultShape, elements.back())) return false;
    }
    std::vector<Type> argTypes = elements;
    argTypes.insert(argTypes.end(), elements.begin(), elements.end());
    if (!checkRegionArgs(op, 0, argTypes, "the accumulators then the new elements")) return false;
    return checkYield(op, 0, elements, "the combined element types");
  }

  bool checkDot(const Op& op) {
    if (!checkEnum(op, "input_precision", {"ieee", "tf32"}, true)) return false;
    const Attr* inRegisters = nullptr;
    if (!getAttr(op, "a_in_registers", Attr::Kind::Bool, false, inRegisters)) return false;
    if (!checkPendingDot(op)) return false;
    Type a = operandType(op, 0), b = operandType(op, 1), acc = operandType(op, 2);
    if (a.rank() != 2 || b.rank() != 2 || acc.rank() != 2)
      return fail(op, "operands must be rank-2 tiles, got " + a.str() + ", " + b.str() + " and " + acc.str());
    int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    if (b.shape()[0] != k || acc.shape()[0] != m || acc.shape()[1] != n)
      return fail(op, "shapes must be [M, K] x [K, N] + [M, N], got " + shapeStr(a.shape()) + " x " +
                          shapeStr(b.shape()) + " + " + shapeStr(acc.shape()));
    Type in = a.element();
    if (b.element() != in && !(in.isFP8() && b.element().isFP8()))
      return fail(op, "a and b must have the same element type (or both be fp8), got " + a.str() + " and " + b.str());
    if (!acceptsElement(op.info().elements, in))
      return fail(op, "input element type must be " + describeElements(op.info().elements) + ", got " + in.str());
    ScalarKind ik = in.scalarKind();
    Type c = acc.element();
    bool accOk =
        ik == ScalarKind::I8 ? c == Type::i32() : (c == Type::f32() || (ik == ScalarKind::F16 && c == Type::f16()));
    if (!accOk)
      return fail(op, "accumulator element type " + c.str() + " does not match inputs of " + in.str() +
                          (ik == ScalarKind::I8    ? " (expected i32)"
                           : ik == ScalarKind::F16 ? " (expected f32 or f16)"
                                                   : " (expected f32)"));
    return expectResult(op, 0, acc.shape(), c);
  }

  // `pending = N` (pipeline-loops): a target that runs this dot asynchronously may leave N groups of them in
  // flight when it returns, so until a dot_wait covers it the result may only be accumulated into by another dot,
  // carried by a loop's yield (into such a dot, or out of the loop to a dot_wait), or waited for.
  bool checkPendingDot(const Op& op) {
    const Attr* pending = nullptr;
    if (!getAttr(op, "pending", Attr::Kind::Int, false, pending)) return false;
    if (!pending) return true;
    if (pending->getInt() < 0) return fail(op, "attribute 'pending' must be >= 0, got " + pending->str());
    for (const ir::Use& use : op.result(0)->uses()) {
      const Op* user = use.user;
      const bool accumulates = user->is(OpKind::Dot) && use.operandIndex == 2;
      if (!accumulates && !user->is(OpKind::Yield) && !user->is(OpKind::DotWait))
        return fail(op, "has pending products, which only another dot's accumulator, a yield or a dot_wait may "
                        "read, but " + user->describe() + " reads them");
    }
    return true;
  }

  // dot_wait %x... {pending = N} : T...: returns its operands (tiles of f32 or i32: dot accumulators) once at most
  // N groups of this thread's asynchronous dots are in flight.
  bool checkDotWait(const Op& op) {
    const Attr* pending = nullptr;
    if (!getAttr(op, "pending", Attr::Kind::Int, true, pending)) return false;
    if (pending->getInt() < 0) return fail(op, "attribute 'pending' must be >= 0, got " + pending->str());
    if (op.numOperands() == 0 || op.numOperands() != op.numResults())
      return fail(op, "takes one or more tiles and returns them: got " + std::to_string(op.numOperands()) +
                          " operands and " + std::to_string(op.numResults()) + " results");
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Type t = operandType(op, i);
      if (!t.isTile() || (t.element() != Type::f32() && t.element() != Type::i32()))
        return fail(op, "operand #" + std::to_string(i) + " must be a tile of f32 or i32 (a dot accumulator), got " +
                            t.str());
      if (op.result(i)->type() != t)
        return fail(op, "result #" + std::to_string(i) + " must have its operand's type " + t.str() + ", got " +
                            op.result(i)->type().str());
    }
    return true;
  }

  // ---- control flow

  bool checkRegionArgs(const Op& op, unsigned region, const std::vector<Type>& expected, const std::string& what) {
    std::vector<Type> actual = typesOf(op.region(region)->arguments());
    if (actual == expected) return true;
    return fail(op, "region #" + std::to_string(region) + " must take " + std::to_string(expected.size()) +
                        " argument" + (expected.size() == 1 ? "" : "s") + " (" + what + ") of types " +
                        typeList(expected) + ", got " + typeList(actual));
  }

  // The region's yield (if it has one; a missing terminator is reported by the walk) yields `expected`.
  bool checkYield(const Op& op, unsigned region, const std::vector<Type>& expected, const std::string& what) {
    const Op* y = op.region(region)->back();
    if (!y || !y->is(OpKind::Yield)) return true;
    std::vector<Type> actual = typesOf(y->operands());
    if (actual == expected) return true;
    return fail(*y, "in region #" + std::to_string(region) + " of '" + op.name() + "' must yield " + what + " " +
                        typeList(expected) + ", got " + typeList(actual));
  }

  std::vector<Type> resultTypes(const Op& op) const { return typesOf(op.results()); }

  bool checkFor(const Op& op) {
    const Attr* tiles;  // make-persistent's tile loop
    if (!getAttr(op, kPersistentTilesAttr, Attr::Kind::Bool, false, tiles)) return false;
    // A loop in the tile loop whose iterations are counted over the program: which of the tile loop's carried
    // values holds its iterations in earlier tiles (transforms/analysis/ProgramIterations.h).
    const Attr* base;
    if (!getAttr(op, "iteration_base", Attr::Kind::Int, false, base)) return false;
    if (base) {
      const Op* parent = op.parentOp();
      // A ping-pong consumer group's tile is an `if` in the tile loop (transforms/PingPongConsumers.cpp).
      if (parent && parent->is(OpKind::If) && parent->parentOp() && parent->parentOp()->hasAttr(kPersistentTilesAttr))
        parent = parent->parentOp();
      if (!parent || !parent->hasAttr(kPersistentTilesAttr))
        return fail(op, "has attribute 'iteration_base' but is not directly in a persistent kernel's tile loop (or "
                        "in a ping-pong consumer group's tile)");
      if (base->getInt() < 0 || base->getInt() >= static_cast<int64_t>(parent->numResults()) ||
          parent->result(static_cast<unsigned>(base->getInt()))->type() != Type::i32())
        return fail(op, "attribute 'iteration_base' = " + std::to_string(base->getInt()) +
                            " names no i32 value the tile loop carries");
    }
    Type lb = operandType(op, 0), ub = operandType(op, 1), step = operandType(op, 2);
    if (!lb.isSigned() || lb.isTile() || ub != lb || step != lb)
      return fail(op, "lower bound, upper bound and step must be scalars of one signed integer type, got " + lb.str() +
                          ", " + ub.str() + " and " + step.str());
    std::vector<Type> carried = resultTypes(op);
    for (unsigned i = 0; i < carried.size(); ++i)
      if (operandType(op, 3 + i) != carried[i])
        return fail(op, "result #" + std::to_string(i) + " must have its initial value's type " +
                            operandType(op, 3 + i).str() + ", got " + carried[i].str());
    std::vector<Type> argTypes{lb};
    argTypes.insert(argTypes.end(), carried.begin(), carried.end());
    if (!checkRegionArgs(op, 0, argTypes, "the induction variable, then the carried values")) return false;
    return checkYield(op, 0, carried, "the carried types");
  }

  bool checkIf(const Op& op) {
    Type cond = operandType(op, 0);
    if (cond != Type::i1()) return fail(op, "condition must be an i1 scalar, got " + cond.str());
    std::vector<Type> results = resultTypes(op);
    bool ok = true;
    for (unsigned r = 0; r < 2; ++r) ok = checkRegionArgs(op, r, {}, r == 0 ? "then" : "else") && ok;
    if (!ok) return false;
    for (unsigned r = 0; r < 2; ++r) ok = checkYield(op, r, results, "the result types") && ok;
    return ok;
  }

  bool checkWhile(const Op& op) {
    std::vector<Type> carried = resultTypes(op);
    for (unsigned i = 0; i < carried.size(); ++i)
      if (operandType(op, i) != carried[i])
        return fail(op, "result #" + std::to_string(i) + " must have its initial value's type " +
                            operandType(op, i).str() + ", got " + carried[i].str());
    if (!checkRegionArgs(op, 0, carried, "the carried values") ||
        !checkRegionArgs(op, 1, carried, "the carried values"))
      return false;
    bool ok = checkYield(op, 0, {Type::i1()}, "one i1 scalar condition");
    return checkYield(op, 1, carried, "the carried types") && ok;
  }

  // ---- debugging and hints

  bool checkDebugPrint(const Op& op) {
    const Attr* prefix = nullptr;
    return getAttr(op, "prefix", Attr::Kind::String, true, prefix);
  }

  bool checkDeviceAssert(const Op& op) {
    const Attr* msg = nullptr;
    if (!getAttr(op, "msg", Attr::Kind::String, true, msg)) return false;
    Type cond = operandType(op, 0);
    if (!cond.isBool()) return fail(op, "condition must be i1 (scalar or tile), got " + cond.str());
    return true;
  }

  // ---- layouts

  bool checkConvertLayout(const Op& op) {
    Type in = operandType(op, 0), out = resultType(op);
    if (!in.isTile()) return fail(op, "operand must be a tile, got " + in.str());
    if (out.shape() != in.shape() || out.element() != in.element())
      return fail(op, "result must keep the operand's shape and element type (" +
                          shapedTypeStr(in.shape(), in.element()) + "), got " + out.str());
    for (const char* key : {"smem_offset", "smem_bytes"}) {
      const Attr* a = nullptr;
      if (!getAttr(op, key, Attr::Kind::Int, false, a)) return false;
      if (a && a->getInt() < 0)
        return fail(op, std::string("attribute '") + key + "' must not be negative, got " + a->str());
    }
    // The exchange buffer's pad and swizzle (allocate-shared-memory; transforms/analysis/SharedScratch.h).
    const Attr* pad = nullptr;
    if (!getAttr(op, "exchange_pad", Attr::Kind::Int, false, pad)) return false;
    if (pad && (pad->getInt() < 0 || pad->getInt() % 4 != 0 || pad->getInt() > 128))
      return fail(op, "attribute 'exchange_pad' must be a multiple of 4 bytes from 0 to 128, got " + pad->str());
    if (op.attrs().count("exchange_swizzle")) {
      const Attr& swizzle = op.attrs().at("exchange_swizzle");
      auto powerOfTwo = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
      std::vector<int64_t> v;
      if (swizzle.isArray())
        for (const Attr& e : swizzle.getArray()) v.push_back(e.isInt() ? e.getInt() : 0);
      if (!pad || v.size() != 2 || v[0] < 2 || !powerOfTwo(v[0]) || v[1] < 32 || !powerOfTwo(v[1]))
        return fail(op, "attribute 'exchange_swizzle' must be [phases, stride bytes] (powers of two, phases >= 2, "
                        "stride >= 32) beside an 'exchange_pad', got " + swizzle.str());
    }
    return true;
  }

  bool checkHint(const Op& op) {
    Type t = operandType(op, 0);
    if (resultType(op) != t)
      return fail(op, "result type must be " + t.str() + " (the operand's), got " + resultType(op).str());
    for (const char* key : {"multiple_of", "max_contiguous", "max_constancy"}) {
      auto it = op.attrs().find(key);
      if (it == op.attrs().end()) continue;
      const Attr& a = it->second;
      std::vector<int64_t> values;
      if (t.isScalar()) {
        if (!a.isInt())
          return fail(op, std::string("attribute '") + key + "' must be an int for a scalar, got " + a.str());
        values.push_back(a.getInt());
      } else {
        bool ints = a.isArray() &&
                    std::all_of(a.getArray().begin(), a.getArray().end(), [](const Attr& e) { return e.isInt(); });
        if (!ints || static_cast<int>(a.getArray().size()) != t.rank())
          return fail(op, std::string("attribute '") + key + "' must be an array of " + std::to_string(t.rank()) +
                              " ints (one per dimension of " + t.str() + "), got " + a.str());
        values = a.getIntArray();
      }
      for (int64_t v : values)
        if (v < 1) return fail(op, std::string("attribute '") + key + "' entries must be positive, got " + a.str());
    }
    return true;
  }

  bool stopAtFirst_;
  std::vector<Error> errors_;
  std::unordered_map<Type, std::optional<std::string>, TypeHash> typeProblems_;
  std::vector<Scope> scopes_;
  const Function* function_ = nullptr;
};

}  // namespace

std::vector<Error> verifyAll(const Function& f) {
  Verifier v(/*stopAtFirst=*/false);
  v.verifyFunction(f);
  return v.takeErrors();
}

void verify(const Function& f) {
  Verifier v(/*stopAtFirst=*/true);
  v.verifyFunction(f);
}

void verify(const Module& m) {
  std::set<std::string> names;
  for (const auto& f : m.functions()) {
    if (!names.insert(f->name()).second) throw Error("duplicate function @" + f->name(), f->loc());
    verify(*f);
  }
}

}  // namespace tessera::ir
