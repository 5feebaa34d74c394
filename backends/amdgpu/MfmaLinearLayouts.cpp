#include "backends/amdgpu/MfmaLinearLayouts.h"


#include "backends/amdgpu/MfmaFragments.h"
#include "ir/Layout.h"

namespace tessera::backends::amdgpu {

namespace {

using ir::LinearLayout;
using Bases = std::vector<LinearLayout::Basis>;

// Register v and lane bits 4-5 step the K-like index (rows of D and B, columns of A) by 1, 2 and 4, 8; lane bits 0-3
// step the other index by 1, 2, 4, 8. `kIsDim0` says which output dimension is the K-like one.
LinearLayout fragment(bool kIsDim0) {
  auto at = [&](int64_t k, int64_t other) { return kIsDim0 ? LinearLayout::Basis{k, other} : LinearLayout::Basis{other, k}; };
  Bases registers = {at(1, 0), at(2, 0)};
  Bases lanes = {at(0, 1), at(0, 2), at(0, 4), at(0, 8), at(4, 0), at(8, 0)};
  return LinearLayout({{ir::kRegisterDim, registers}, {ir::kLaneDim, lanes}},
                      {{ir::tensorDimName(0), kMfmaM}, {ir::tensorDimName(1), kMfmaN}});
}

}  // namespace

LinearLayout mfmaAccumulatorFragment() { return fragment(/*kIsDim0=*/true); }
LinearLayout mfmaOperandAFragment() { return fragment(/*kIsDim0=*/false); }
LinearLayout mfmaOperandBFragment() { return fragment(/*kIsDim0=*/true); }

}  // namespace tessera::backends::amdgpu
