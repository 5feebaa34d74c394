#include "backends/nvptx/MmaLinearLayouts.h"

#include "backends/nvptx/MmaFragments.h"
#include "ir/Error.h"
#include "ir/Layout.h"

namespace tessera::backends::nvptx {

namespace {

using ir::LinearLayout;
using Bases = std::vector<LinearLayout::Basis>;

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// A fragment over a rows x cols matrix (dim0 x dim1).
LinearLayout fragment(Bases registers, Bases lanes, Bases warps, int64_t rows, int64_t cols) {
  std::vector<LinearLayout::InDim> ins = {{ir::kRegisterDim, std::move(registers)}, {ir::kLaneDim, std::move(lanes)}};
  if (!warps.empty()) ins.push_back({ir::kWarpDim, std::move(warps)});
  return LinearLayout(std::move(ins), {{ir::tensorDimName(0), rows}, {ir::tensorDimName(1), cols}});
}

// The lanes of the mma.sync pattern: bits 0-1 (threadID_in_group) step the inner index by 2 and 4, bits 2-4
// (groupID) step the outer index by 1, 2, 4; `transposed` swaps which output dimension is which.
Bases quadLanes(bool transposed) {
  Bases lanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  if (transposed)
    for (LinearLayout::Basis& b : lanes) std::swap(b[0], b[1]);
  return lanes;
}

const Bases kWarpgroupWarps = {{16, 0}, {32, 0}};  // warp w of a warpgroup holds rows 16w..16w+15

}  // namespace

LinearLayout mmaAccumulatorFragment() { return fragment({{0, 1}, {8, 0}}, quadLanes(false), {}, kMmaM, kMmaN); }

LinearLayout mmaOperandAFragment() {
  return fragment({{0, 1}, {8, 0}, {0, 8}}, quadLanes(false), {}, kMmaM, mmaStepK(2));
}

LinearLayout mmaOperandBFragment() { return fragment({{1, 0}, {8, 0}}, quadLanes(true), {}, mmaStepK(2), kMmaN); }

LinearLayout ldmatrixFragment(int count, bool trans) {
  if (count != 1 && count != 2 && count != 4)
    throw Error("ldmatrix/stmatrix: .x" + std::to_string(count) + " does not exist (x1, x2 or x4)");
  // Output coordinates (matrix, row, col).
  Bases registers = {trans ? LinearLayout::Basis{0, 1, 0} : LinearLayout::Basis{0, 0, 1}};
  for (int m = 1; m < count; m *= 2) registers.push_back({m, 0, 0});
  Bases lanes;
  for (const LinearLayout::Basis& b : quadLanes(trans)) lanes.push_back({0, b[0], b[1]});
  return LinearLayout({{ir::kRegisterDim, registers}, {ir::kLaneDim, lanes}},
                      {{"matrix", count}, {"row", 8}, {"col", 8}});
}

LinearLayout ldmatrixAddresses(int count) {
  if (count != 1 && count != 2 && count != 4)
    throw Error("ldmatrix/stmatrix: .x" + std::to_string(count) + " does not exist (x1, x2 or x4)");
  Bases lanes = {{0, 1}, {0, 2}, {0, 4}, {count >= 2 ? 1 : 0, 0}, {count == 4 ? 2 : 0, 0}};
  return LinearLayout({{ir::kLaneDim, lanes}}, {{"matrix", count}, {"row", 8}});
}

LinearLayout wgmmaAccumulatorFragment(int64_t n) {
  if (!isPowerOfTwo(n) || n < 8 || n > 256)
    throw Error("wgmma accumulator: n = " + std::to_string(n) + " must be a power of two from 8 to 256");
  Bases registers = {{0, 1}, {8, 0}};
  for (int64_t col = 8; col < n; col *= 2) registers.push_back({0, col});
  return fragment(registers, quadLanes(false), kWarpgroupWarps, 64, n);
}

LinearLayout wgmmaOperandAFragment() {
  return fragment({{0, 1}, {8, 0}, {0, 8}}, quadLanes(false), kWarpgroupWarps, 64, 16);
}

LinearLayout nvmmaSharedLayout(const std::vector<int64_t>& shape, int contiguousDim, int64_t elementBytes,
                               int64_t swizzleBytes) {
  if (shape.size() != 2 || !isPowerOfTwo(shape[0]) || !isPowerOfTwo(shape[1]))
    throw Error("NVMMA shared layout: the tile must be 2-D with power-of-two sizes");
  if (contiguousDim != 0 && contiguousDim != 1) throw Error("NVMMA shared layout: the contiguous dimension is 0 or 1");
  if (elementBytes != 1 && elementBytes != 2 && elementBytes != 4 && elementBytes != 8)
    throw Error("NVMMA shared layout: elements of " + std::to_string(elementBytes) + " bytes are not supported");
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    throw Error("NVMMA shared layout: the swizzle is 32, 64 or 128 bytes, not " + std::to_string(swizzleBytes));
  const int c = contiguousDim, o = 1 - contiguousDim;
  const int64_t lineElements = swizzleBytes / elementBytes, chunkElements = 16 / elementBytes;
  const int64_t linesPerPhase = 128 / swizzleBytes, phases = swizzleBytes / 16;
  if (shape[o] < 8)
    throw Error("NVMMA shared layout: " + std::to_string(shape[o]) + " lines do not fill one swizzle atom of 8 lines");
  if (shape[c] < lineElements)
    throw Error("NVMMA shared layout: " + std::to_string(shape[c]) + " contiguous elements of " +
                std::to_string(elementBytes) + " bytes are shorter than the " + std::to_string(swizzleBytes) +
                "-byte swizzle");
  auto along = [](int dim, int64_t v) {
    LinearLayout::Basis b(2, 0);
    b[dim] = v;
    return b;
  };
  Bases offset;
  for (int64_t v = 1; v < lineElements; v *= 2) offset.push_back(along(c, v));
  for (int64_t line = 1; line < shape[o]; line *= 2) {
    LinearLayout::Basis b = along(o, line);
    b[c] = ((line / linesPerPhase) % phases) * chunkElements;
    offset.push_back(b);
  }
  for (int64_t v = lineElements; v < shape[c]; v *= 2) offset.push_back(along(c, v));
  return LinearLayout({{ir::kOffsetDim, offset}}, {{ir::tensorDimName(0), shape[0]}, {ir::tensorDimName(1), shape[1]}});
}

LinearLayout mmaStagingLayout(int64_t rows, int64_t rowLength, int64_t elementBytes) {
  MmaSwizzle s = mmaSwizzleFor(rowLength, elementBytes);
  return ir::Layout::shared(s.chunkElements, s.perPhase, s.maxPhase, {1, 0}).toLinear({rows, rowLength});
}

}  // namespace tessera::backends::nvptx
