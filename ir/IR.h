// The tile IR's structure: a Module holds Functions (kernels); a Function has a body Block whose arguments
// are the kernel parameters; a Block holds an ordered list of Ops; an Op has operands (Values), results
// (Values it owns), attributes, and regions (each region is exactly one Block: control flow is structured).
//
// Ownership: Module -> Function -> Block -> Op -> (result Values, region Blocks). Block arguments are owned by
// their Block. Every Value keeps its list of uses, so replaceAllUsesWith and "is this dead" are O(uses).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/Attributes.h"
#include "ir/Error.h"
#include "ir/OpInfo.h"
#include "ir/Types.h"

namespace tessera::ir {

class Op;
class Block;
class Function;

struct Use {
  Op* user;
  unsigned operandIndex;
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  Type type() const { return type_; }
  void setType(Type t) { type_ = t; }

  Op* definingOp() const { return definingOp_; }  // null for block arguments
  Block* ownerBlock() const { return ownerBlock_; }  // set for block arguments only
  bool isBlockArg() const { return ownerBlock_ != nullptr; }
  unsigned index() const { return index_; }  // result number or argument number

  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  void replaceAllUsesWith(Value* other);

  // Optional name used by the printer ("%acc" instead of "%12"); purely cosmetic.
  const std::string& nameHint() const { return nameHint_; }
  void setNameHint(std::string n) { nameHint_ = std::move(n); }

 private:
  friend class Op;
  friend class Block;
  Value(Type t, Op* def, Block* owner, unsigned index) : type_(t), definingOp_(def), ownerBlock_(owner), index_(index) {}
  Type type_;
  Op* definingOp_;
  Block* ownerBlock_;
  unsigned index_;
  std::vector<Use> uses_;
  std::string nameHint_;
};

class Block {
 public:
  using OpList = std::list<std::unique_ptr<Op>>;
  using iterator = OpList::iterator;

  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block();

  // Arguments.
  Value* addArgument(Type t);
  Value* insertArgument(unsigned index, Type t);
  void eraseArgument(unsigned index);  // must have no uses
  unsigned numArguments() const { return static_cast<unsigned>(args_.size()); }
  Value* argument(unsigned i) const { return args_[i].get(); }
  std::vector<Value*> arguments() const;

  // Ops.
  OpList& ops() { return ops_; }
  const OpList& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  Op* front() const { return ops_.empty() ? nullptr : ops_.front().get(); }
  Op* back() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  Op* terminator() const;  // last op if it is a terminator, else null

  Op* append(std::unique_ptr<Op> op);
  Op* insertBefore(Op* before, std::unique_ptr<Op> op);  // before == null appends
  std::unique_ptr<Op> remove(Op* op);  // unlinks, keeps operands' uses
  void erase(Op* op);                  // drops operands' uses and destroys (results must be unused)

  Op* parentOp() const { return parentOp_; }        // null for a function body
  Function* parentFunction() const;                 // the enclosing function, through any nesting

 private:
  friend class Op;
  friend class Function;
  std::vector<std::unique_ptr<Value>> args_;
  OpList ops_;
  Op* parentOp_ = nullptr;
  Function* function_ = nullptr;  // set on function bodies only
};

class Op {
 public:
  // Creates a detached op. Regions are created empty (each with one Block, no arguments).
  static std::unique_ptr<Op> create(OpKind kind, const std::vector<Value*>& operands,
                                    const std::vector<Type>& resultTypes, AttrDict attrs = {},
                                    Location loc = {});
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;
  ~Op();

  OpKind kind() const { return kind_; }
  const OpInfo& info() const { return opInfo(kind_); }
  const char* name() const { return opName(kind_); }
  bool is(OpKind k) const { return kind_ == k; }

  // Operands.
  unsigned numOperands() const { return static_cast<unsigned>(operands_.size()); }
  Value* operand(unsigned i) const { return operands_[i]; }
  const std::vector<Value*>& operands() const { return operands_; }
  void setOperand(unsigned i, Value* v);
  void addOperand(Value* v);
  void insertOperand(unsigned i, Value* v);
  void eraseOperand(unsigned i);
  void setOperands(const std::vector<Value*>& vs);
  void dropAllOperands();  // also recursively inside regions

  // Results.
  unsigned numResults() const { return static_cast<unsigned>(results_.size()); }
  Value* result(unsigned i = 0) const { return results_[i].get(); }
  std::vector<Value*> results() const;
  Value* addResult(Type t);
  void eraseResult(unsigned i);  // must have no uses

  // Attributes.
  const AttrDict& attrs() const { return attrs_; }
  AttrDict& attrs() { return attrs_; }
  bool hasAttr(const std::string& k) const { return attrs_.count(k) != 0; }
  const Attr& attr(const std::string& k) const;  // throws tessera::Error naming the op if missing
  void setAttr(const std::string& k, Attr a) { attrs_[k] = std::move(a); }
  int64_t intAttr(const std::string& k) const { return attr(k).getInt(); }
  const std::string& stringAttr(const std::string& k) const { return attr(k).getString(); }

  // Regions.
  unsigned numRegions() const { return static_cast<unsigned>(regions_.size()); }
  Block* region(unsigned i) const { return regions_[i].get(); }

  Block* parentBlock() const { return parent_; }
  Op* parentOp() const;  // enclosing op, null at function level
  bool isNestedIn(const Op& ancestor) const;  // in one of ancestor's regions, at any depth
  const Location& loc() const { return loc_; }
  void setLoc(Location l) { loc_ = std::move(l); }

  // Walks this op and everything nested in it, pre-order (op before its regions' ops).
  void walk(const std::function<void(Op*)>& fn);

  // Deep copy. `mapping` maps old values to new ones; values not in it are used as-is (outer values).
  std::unique_ptr<Op> clone(std::unordered_map<const Value*, Value*>& mapping) const;

  // "op name (file:line:col)" for error messages.
  std::string describe() const;

 private:
  friend class Block;
  Op(OpKind kind, Location loc) : kind_(kind), loc_(std::move(loc)) {}
  OpKind kind_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrDict attrs_;
  std::vector<std::unique_ptr<Block>> regions_;
  Block* parent_ = nullptr;
  Location loc_;
};

// A persistent kernel (transforms/MakePersistent.cpp): the function attribute `persistent = true` says its last
// three arguments are the launch grid (i32 x, y, z) and its body loops over the grid's tiles in a `for` marked
// `persistent_tiles = true`.
inline constexpr const char* kPersistentAttr = "persistent";
inline constexpr const char* kPersistentTilesAttr = "persistent_tiles";

class Function {
 public:
  Function(std::string name, const std::vector<Type>& argTypes);
  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  Block* body() const { return body_.get(); }
  unsigned numArguments() const { return body_->numArguments(); }
  Value* argument(unsigned i) const { return body_->argument(i); }
  // Appends an argument (with no attributes); a pass that changes the signature (make-persistent) uses it.
  Value* addArgument(Type t);
  std::vector<Type> argumentTypes() const;
  // Per-argument attributes, e.g. {divisibility = 16} from JIT specialization; printed after the type.
  AttrDict& argAttrs(unsigned i) { return argAttrs_[i]; }
  const AttrDict& argAttrs(unsigned i) const { return argAttrs_[i]; }

  // Function-level attributes (e.g. the constants a kernel was specialized with).
  const AttrDict& attrs() const { return attrs_; }
  AttrDict& attrs() { return attrs_; }
  void walk(const std::function<void(Op*)>& fn);  // pre-order over every op
  std::unique_ptr<Function> clone() const;

  const Location& loc() const { return loc_; }
  void setLoc(Location l) { loc_ = std::move(l); }

 private:
  std::string name_;
  std::unique_ptr<Block> body_;
  AttrDict attrs_;
  std::vector<AttrDict> argAttrs_;
  Location loc_;
};

// What one program runs, once: the function's body, or a persistent kernel's tile loop body (each tile is what a
// program did before). Passes that place per-program setup (shared buffers) put it here.
Block* programBody(const Function& f);

class Module {
 public:
  Function* addFunction(std::unique_ptr<Function> f);
  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  Function* lookup(const std::string& name) const;
  std::unique_ptr<Module> clone() const;

 private:
  std::vector<std::unique_ptr<Function>> functions_;
};

}  // namespace tessera::ir
