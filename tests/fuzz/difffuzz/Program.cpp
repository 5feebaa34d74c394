#include "tests/fuzz/difffuzz/Program.h"

#include <algorithm>

namespace tessera::fuzz {

std::vector<int64_t> shapeOf(const Program& p, const ValueType& t) {
  std::vector<int64_t> shape;
  for (int d : t.log2Shape) shape.push_back(int64_t(1) << std::max(0, d - p.shrink));
  return shape;
}

int64_t elementsOf(const Program& p, const ValueType& t) {
  int64_t n = 1;
  for (int64_t d : shapeOf(p, t)) n *= d;
  return n;
}

namespace {
size_t live(const std::vector<Stmt>& body) {
  size_t n = 0;
  for (const Stmt& s : body)
    if (!s.deleted) n += 1 + live(s.body) + live(s.orelse);
  return n;
}
}  // namespace

size_t liveStatements(const Program& p) { return live(p.body); }

}  // namespace tessera::fuzz
