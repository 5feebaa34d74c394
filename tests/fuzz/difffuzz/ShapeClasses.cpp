#include "tests/fuzz/difffuzz/ShapeClasses.h"

#include <map>
#include <numeric>
#include <tuple>

namespace tessera::fuzz {

namespace {

// Union-find over every stored dimension of the statements.
class Classes {
 public:
  explicit Classes(const std::vector<Stmt*>& statements) {
    for (size_t i = 0; i < statements.size(); ++i) {
      add(i, -1, statements[i]->type);
      const std::vector<ValueType>& operands = statements[i]->argTypes;
      for (size_t j = 0; j < operands.size(); ++j) add(i, static_cast<int>(j), operands[j]);
    }
    parent_.resize(refs_.size());
    std::iota(parent_.begin(), parent_.end(), 0);
  }

  // Ties `axis` of operand `a` (-1: the result) of statement `i` to `axisB` of operand `b` of statement `j`.
  void tie(size_t i, int a, size_t axis, size_t j, int b, size_t axisB) {
    auto x = ids_.find({i, a, axis}), y = ids_.find({j, b, axisB});
    if (x == ids_.end() || y == ids_.end()) return;  // a rank the kind does not expect: nothing to keep equal
    parent_[find(x->second)] = find(y->second);
  }
  // Ties every axis of two types of the same rank.
  void tieAll(size_t i, int a, size_t j, int b, size_t rank) {
    for (size_t axis = 0; axis < rank; ++axis) tie(i, a, axis, j, b, axis);
  }

  std::vector<DimClass> result() {
    std::map<size_t, DimClass> byRoot;
    for (size_t k = 0; k < refs_.size(); ++k) byRoot[find(k)].push_back(refs_[k]);
    std::vector<DimClass> out;
    for (auto& [root, members] : byRoot) out.push_back(std::move(members));
    return out;
  }

 private:
  void add(size_t statement, int operand, const ValueType& t) {
    for (size_t axis = 0; axis < t.log2Shape.size(); ++axis) {
      ids_[{statement, operand, axis}] = refs_.size();
      refs_.push_back({statement, operand, axis});
    }
  }
  size_t find(size_t k) {
    while (parent_[k] != k) k = parent_[k] = parent_[parent_[k]];
    return k;
  }

  std::vector<DimRef> refs_;
  std::map<std::tuple<size_t, int, size_t>, size_t> ids_;
  std::vector<size_t> parent_;
};

bool sameShapeAsOperands(StmtKind k) {
  switch (k) {
    case StmtKind::Unary:
    case StmtKind::Binary:
    case StmtKind::Compare:
    case StmtKind::Select:
    case StmtKind::Fma:
    case StmtKind::Cast:
    case StmtKind::Bitcast:
    case StmtKind::JoinSplit:
    case StmtKind::Scan:
    case StmtKind::Store:
    case StmtKind::Atomic:
    case StmtKind::AtomicCas:
    case StmtKind::Assign:
    case StmtKind::Assert:
    case StmtKind::DebugPrint:
    case StmtKind::Cat:  // its first dimension is one more than its operands': equal steps keep that
      return true;
    default:
      return false;
  }
}

// What each kind requires between its result's dimensions and its operands'.
void tieOperands(Classes& c, size_t i, const Stmt& s) {
  const size_t rank = s.type.log2Shape.size();
  if (sameShapeAsOperands(s.kind)) {
    for (size_t j = 0; j < s.args.size(); ++j) c.tieAll(i, -1, i, static_cast<int>(j), rank);
    return;
  }
  const auto axis = static_cast<size_t>(s.axis);
  switch (s.kind) {
    case StmtKind::Broadcast:  // the operand is the result without dimension `axis`
      for (size_t a = 0; a + 1 < rank; ++a) c.tie(i, 0, a, i, -1, a < axis ? a : a + 1);
      return;
    case StmtKind::Reduce:  // the result is the operand without dimension `axis`
      for (size_t a = 0; a < rank; ++a) c.tie(i, -1, a, i, 0, a < axis ? a : a + 1);
      return;
    case StmtKind::Permute:
      for (size_t a = 0; a < s.order.size(); ++a) c.tie(i, -1, a, i, 0, static_cast<size_t>(s.order[a]));
      return;
    case StmtKind::Dot:  // [M, K] x [K, N] + [M, N] -> [M, N]
      c.tie(i, 0, 0, i, 2, 0);
      c.tie(i, 0, 1, i, 1, 0);
      c.tie(i, 1, 1, i, 2, 1);
      c.tieAll(i, -1, i, 2, 2);
      return;
    default:  // loads, constants and indices take any shape; a reshape only keeps its element count
      return;
  }
}

}  // namespace

std::vector<DimClass> dimensionClasses(const std::vector<Stmt*>& statements) {
  Classes c(statements);
  // A slot's definitions (assignments included) and every use of it record one type.
  std::map<int, std::vector<size_t>> definitions;
  for (size_t i = 0; i < statements.size(); ++i)
    if (statements[i]->result >= 0) definitions[statements[i]->result].push_back(i);
  for (size_t i = 0; i < statements.size(); ++i) {
    const Stmt& s = *statements[i];
    tieOperands(c, i, s);
    for (size_t j = 0; j < s.args.size(); ++j)
      for (size_t d : definitions[s.args[j]]) c.tieAll(i, static_cast<int>(j), d, -1, s.argTypes[j].log2Shape.size());
  }
  for (const auto& [slot, defs] : definitions)
    for (size_t d : defs) c.tieAll(defs.front(), -1, d, -1, statements[d]->type.log2Shape.size());
  return c.result();
}

int& dimension(const std::vector<Stmt*>& statements, const DimRef& r) {
  Stmt& s = *statements.at(r.statement);
  ValueType& t = r.operand < 0 ? s.type : s.argTypes.at(static_cast<size_t>(r.operand));
  return t.log2Shape.at(r.axis);
}

bool reshapesKeepSizes(const std::vector<Stmt*>& statements) {
  for (const Stmt* s : statements) {
    if (s->kind != StmtKind::Reshape) continue;
    const std::vector<int>& from = s->argTypes.at(0).log2Shape;
    if (std::accumulate(from.begin(), from.end(), 0) !=
        std::accumulate(s->type.log2Shape.begin(), s->type.log2Shape.end(), 0))
      return false;
  }
  return true;
}

}  // namespace tessera::fuzz
