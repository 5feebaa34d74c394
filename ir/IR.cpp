#include "ir/IR.h"

#include <algorithm>
#include <cassert>

namespace tessera::ir {

// ---------------------------------------------------------------- Value

void Value::replaceAllUsesWith(Value* other) {
  if (other == this) return;
  // setOperand edits uses_, so work from a copy.
  std::vector<Use> uses = uses_;
  for (const Use& u : uses) u.user->setOperand(u.operandIndex, other);
}

static void removeUse(Value* v, Op* user, unsigned index) {
  auto& uses = const_cast<std::vector<Use>&>(v->uses());
  auto it = std::find(uses.begin(), uses.end(), Use{user, index});
  assert(it != uses.end() && "use list out of sync");
  uses.erase(it);
}

// ---------------------------------------------------------------- Block

Block::~Block() {
  // Destroy ops last-to-first so that uses disappear before the values they point at.
  for (auto& op : ops_) op->dropAllOperands();
  while (!ops_.empty()) ops_.pop_back();
}

Value* Block::addArgument(Type t) { return insertArgument(numArguments(), t); }

Value* Block::insertArgument(unsigned index, Type t) {
  args_.insert(args_.begin() + index, std::unique_ptr<Value>(new Value(t, nullptr, this, index)));
  for (unsigned i = index; i < args_.size(); ++i) args_[i]->index_ = i;
  return args_[index].get();
}

void Block::eraseArgument(unsigned index) {
  assert(!args_[index]->hasUses() && "erasing a block argument that still has uses");
  args_.erase(args_.begin() + index);
  for (unsigned i = index; i < args_.size(); ++i) args_[i]->index_ = i;
}

std::vector<Value*> Block::arguments() const {
  std::vector<Value*> out;
  for (auto& a : args_) out.push_back(a.get());
  return out;
}

Op* Block::terminator() const {
  Op* last = back();
  return last && last->info().has(kTerminator) ? last : nullptr;
}

Op* Block::append(std::unique_ptr<Op> op) { return insertBefore(nullptr, std::move(op)); }

Op* Block::insertBefore(Op* before, std::unique_ptr<Op> op) {
  assert(op->parent_ == nullptr && "op already in a block");
  op->parent_ = this;
  Op* raw = op.get();
  if (!before) {
    ops_.push_back(std::move(op));
  } else {
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const auto& p) { return p.get() == before; });
    assert(it != ops_.end() && "insertion point not in this block");
    ops_.insert(it, std::move(op));
  }
  return raw;
}

std::unique_ptr<Op> Block::remove(Op* op) {
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const auto& p) { return p.get() == op; });
  assert(it != ops_.end() && "op not in this block");
  std::unique_ptr<Op> owned = std::move(*it);
  ops_.erase(it);
  owned->parent_ = nullptr;
  return owned;
}

void Block::erase(Op* op) {
  for (unsigned i = 0; i < op->numResults(); ++i)
    assert(!op->result(i)->hasUses() && "erasing an op whose results are still used");
  std::unique_ptr<Op> owned = remove(op);
  owned->dropAllOperands();
}

Function* Block::parentFunction() const {
  const Block* b = this;
  while (b->parentOp_) b = b->parentOp_->parentBlock();
  return b ? b->function_ : nullptr;
}

// ---------------------------------------------------------------- Op

std::unique_ptr<Op> Op::create(OpKind kind, const std::vector<Value*>& operands,
                               const std::vector<Type>& resultTypes, AttrDict attrs, Location loc) {
  std::unique_ptr<Op> op(new Op(kind, std::move(loc)));
  for (Value* v : operands) op->addOperand(v);
  for (Type t : resultTypes) op->addResult(t);
  op->attrs_ = std::move(attrs);
  for (int i = 0; i < opInfo(kind).numRegions; ++i) {
    op->regions_.push_back(std::make_unique<Block>());
    op->regions_.back()->parentOp_ = op.get();
  }
  return op;
}

Op::~Op() {
  regions_.clear();  // nested ops first: they may use our results
  dropAllOperands();
}

void Op::setOperand(unsigned i, Value* v) {
  assert(v && "null operand");
  if (operands_[i] == v) return;
  removeUse(operands_[i], this, i);
  operands_[i] = v;
  v->uses_.push_back(Use{this, i});
}

void Op::addOperand(Value* v) {
  assert(v && "null operand");
  operands_.push_back(v);
  v->uses_.push_back(Use{this, static_cast<unsigned>(operands_.size() - 1)});
}

void Op::insertOperand(unsigned i, Value* v) {
  std::vector<Value*> vs = operands_;
  vs.insert(vs.begin() + i, v);
  setOperands(vs);
}

void Op::eraseOperand(unsigned i) {
  std::vector<Value*> vs = operands_;
  vs.erase(vs.begin() + i);
  setOperands(vs);
}

void Op::setOperands(const std::vector<Value*>& vs) {
  for (unsigned i = 0; i < operands_.size(); ++i) removeUse(operands_[i], this, i);
  operands_.clear();
  for (Value* v : vs) addOperand(v);
}

void Op::dropAllOperands() {
  for (unsigned i = 0; i < operands_.size(); ++i) removeUse(operands_[i], this, i);
  operands_.clear();
  for (auto& r : regions_)
    for (auto& op : r->ops_) op->dropAllOperands();
}

std::vector<Value*> Op::results() const {
  std::vector<Value*> out;
  for (auto& r : results_) out.push_back(r.get());
  return out;
}

Value* Op::addResult(Type t) {
  results_.push_back(std::unique_ptr<Value>(new Value(t, this, nullptr, static_cast<unsigned>(results_.size()))));
  return results_.back().get();
}

void Op::eraseResult(unsigned i) {
  assert(!results_[i]->hasUses() && "erasing a result that still has uses");
  results_.erase(results_.begin() + i);
  for (unsigned j = i; j < results_.size(); ++j) results_[j]->index_ = j;
}

const Attr& Op::attr(const std::string& k) const {
  auto it = attrs_.find(k);
  if (it == attrs_.end()) throw Error(std::string("'") + name() + "' is missing attribute '" + k + "'", loc_);
  return it->second;
}

Op* Op::parentOp() const { return parent_ ? parent_->parentOp() : nullptr; }

bool Op::isNestedIn(const Op& ancestor) const {
  for (const Op* p = parentOp(); p; p = p->parentOp())
    if (p == &ancestor) return true;
  return false;
}

void Op::walk(const std::function<void(Op*)>& fn) {
  fn(this);
  for (auto& r : regions_)
    for (auto& op : r->ops_) op->walk(fn);
}

std::unique_ptr<Op> Op::clone(std::unordered_map<const Value*, Value*>& mapping) const {
  std::vector<Value*> newOperands;
  for (Value* v : operands_) {
    auto it = mapping.find(v);
    newOperands.push_back(it == mapping.end() ? v : it->second);
  }
  std::vector<Type> types;
  for (auto& r : results_) types.push_back(r->type());
  std::unique_ptr<Op> copy = create(kind_, newOperands, types, attrs_, loc_);
  for (unsigned i = 0; i < results_.size(); ++i) {
    copy->result(i)->setNameHint(results_[i]->nameHint());
    mapping[results_[i].get()] = copy->result(i);
  }
  for (unsigned r = 0; r < regions_.size(); ++r) {
    Block* src = regions_[r].get();
    Block* dst = copy->region(r);
    for (Value* a : src->arguments()) {
      Value* na = dst->addArgument(a->type());
      na->setNameHint(a->nameHint());
      mapping[a] = na;
    }
    for (auto& op : src->ops_) dst->append(op->clone(mapping));
  }
  return copy;
}

std::string Op::describe() const {
  std::string s = std::string("'") + name() + "'";
  if (loc_.known()) s += " (" + loc_.str() + ")";
  return s;
}

// ---------------------------------------------------------------- Function / Module

Function::Function(std::string name, const std::vector<Type>& argTypes)
    : name_(std::move(name)), body_(std::make_unique<Block>()) {
  body_->function_ = this;
  for (Type t : argTypes) body_->addArgument(t);
  argAttrs_.resize(argTypes.size());
}

Block* programBody(const Function& f) {
  for (const auto& op : f.body()->ops())
    if (op->is(OpKind::For) && op->hasAttr(kPersistentTilesAttr)) return op->region(0);
  return f.body();
}

Value* Function::addArgument(Type t) {
  argAttrs_.emplace_back();
  return body_->addArgument(t);
}

std::vector<Type> Function::argumentTypes() const {
  std::vector<Type> out;
  for (Value* a : body_->arguments()) out.push_back(a->type());
  return out;
}

void Function::walk(const std::function<void(Op*)>& fn) {
  // Copy the list of top-level ops so fn may erase the op it is given (not its neighbours).
  std::vector<Op*> ops;
  for (auto& op : body_->ops()) ops.push_back(op.get());
  for (Op* op : ops) op->walk(fn);
}

std::unique_ptr<Function> Function::clone() const {
  auto f = std::make_unique<Function>(name_, argumentTypes());
  f->attrs_ = attrs_;
  f->argAttrs_ = argAttrs_;
  f->loc_ = loc_;
  std::unordered_map<const Value*, Value*> mapping;
  for (unsigned i = 0; i < numArguments(); ++i) {
    mapping[argument(i)] = f->argument(i);
    f->argument(i)->setNameHint(argument(i)->nameHint());
  }
  for (auto& op : body_->ops()) f->body()->append(op->clone(mapping));
  return f;
}

Function* Module::addFunction(std::unique_ptr<Function> f) {
  functions_.push_back(std::move(f));
  return functions_.back().get();
}

Function* Module::lookup(const std::string& name) const {
  for (auto& f : functions_)
    if (f->name() == name) return f.get();
  return nullptr;
}

std::unique_ptr<Module> Module::clone() const {
  auto m = std::make_unique<Module>();
  for (auto& f : functions_) m->addFunction(f->clone());
  return m;
}

}  // namespace tessera::ir
