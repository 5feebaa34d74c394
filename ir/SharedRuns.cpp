#include "ir/SharedRuns.h"

#include <algorithm>
#include <string>

#include "ir/LinearLayout.h"

namespace tessera::ir {

int64_t sharedRunAlong(const Layout& shared, const std::vector<int64_t>& shape, int dim) {
  if (shared.kind() == Layout::Kind::Shared) return dim == shared.order()[0] ? shared.vec() : 1;
  if (shared.kind() != Layout::Kind::LinearShared) return 1;
  const LinearLayout inverse = shared.toLinear(shape).invert();  // coordinates -> element offset
  const std::string name = tensorDimName(dim);
  int64_t run = 1;
  size_t runBits = 0;
  for (const LinearLayout::Basis& basis : inverse.inDim(name).bases) {
    if (basis[0] != run) break;
    run *= 2;
    ++runBits;
  }
  for (const LinearLayout::InDim& in : inverse.inDims())
    for (size_t i = in.name == name ? runBits : 0; i < in.bases.size(); ++i)
      if (const int64_t offset = in.bases[i][0]; offset != 0) run = std::min(run, offset & -offset);
  return run;
}

int sharedFastestDim(const Layout& shared, const std::vector<int64_t>& shape) {
  if (shared.kind() == Layout::Kind::Shared) return static_cast<int>(shared.order()[0]);
  const LinearLayout offsets = shared.toLinear(shape);
  const LinearLayout::Basis& first = offsets.inDim(kOffsetDim).bases.at(0);
  for (size_t d = 0; d < first.size(); ++d)
    if (first[d] != 0) return static_cast<int>(d);
  return 0;
}

}  // namespace tessera::ir
