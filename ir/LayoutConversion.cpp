#include "ir/LayoutConversion.h"

#include <bit>

#include "ir/Error.h"
#include "ir/Layout.h"

namespace tessera::ir {

namespace {

using Basis = LinearLayout::Basis;

const char* const kThreadDims[] = {kRegisterDim, kLaneDim, kWarpDim};

// Whether every basis is 0 in each of the components `parts`.
bool zeroIn(const std::vector<Basis>& bases, std::initializer_list<int> parts) {
  for (const Basis& b : bases)
    for (int p : parts)
      if (b[p] != 0) return false;
  return true;
}

// Per value v of an input dimension with these bases: component `part` of the image of v. Value v differs from v
// with its lowest set bit cleared by that bit's basis, so each value costs one XOR.
std::vector<int64_t> imagesOfValues(const std::vector<Basis>& bases, int part) {
  std::vector<int64_t> images(size_t(1) << bases.size(), 0);
  for (size_t v = 1; v < images.size(); ++v) images[v] = images[v & (v - 1)] ^ bases[std::countr_zero(v)][part];
  return images;
}

}  // namespace

const char* conversionKindName(ConversionKind kind) {
  switch (kind) {
    case ConversionKind::RegisterPermutation:
      return "register permutation";
    case ConversionKind::WarpShuffle:
      return "warp shuffle";
    case ConversionKind::SharedMemory:
      return "shared memory";
  }
  return "?";
}

int64_t ConversionPlan::sourceLaneOf(int64_t reg, int64_t lane) const {
  int64_t from = sourceLane[reg];
  for (size_t i = 0; i < laneMap.size(); ++i)
    if ((lane >> i) & 1) from ^= laneMap[i];
  return from;
}

ConversionPlan planConversion(const LinearLayout& src, const LinearLayout& dst) {
  for (const char* dim : kThreadDims)
    if (src.inDimIndex(dim) < 0 || dst.inDimIndex(dim) < 0)
      throw Error("layout conversion: " + src.str() + " -> " + dst.str() + ": both need input dimensions register, "
                  "lane and warp");
  if (src.inDimSize(kLaneDim) != dst.inDimSize(kLaneDim) || src.inDimSize(kWarpDim) != dst.inDimSize(kWarpDim))
    throw Error("layout conversion: " + src.str() + " -> " + dst.str() + ": different lane or warp counts");
  std::vector<std::string> order;
  for (const LinearLayout::OutDim& d : src.outDims()) order.push_back(d.name);
  const LinearLayout d = dst.transposeOuts(order);  // the tensor dimensions in the source's order
  // c: destination slot (register, lane, warp) -> the lowest source slot holding the same element.
  const LinearLayout c = d.invertAndCompose(src);
  const int reg = c.outDimIndex(kRegisterDim), lane = c.outDimIndex(kLaneDim), warp = c.outDimIndex(kWarpDim);
  const std::vector<Basis>& regs = c.inDim(kRegisterDim).bases;
  const std::vector<Basis>& lanes = c.inDim(kLaneDim).bases;

  ConversionPlan plan;
  // Lane and warp parts of an element's coordinates are XORed in the same way on both sides: a thread holds what
  // it needs exactly when each destination register's element is the image of source registers alone.
  const bool sameWarps = src.inDim(kWarpDim).bases == d.inDim(kWarpDim).bases;
  if (sameWarps && src.inDim(kLaneDim).bases == d.inDim(kLaneDim).bases && zeroIn(regs, {lane, warp})) {
    plan.kind = ConversionKind::RegisterPermutation;
    plan.sourceRegister = imagesOfValues(regs, reg);
    return plan;
  }
  // Within a warp: register r of lane l reads source register c(r) (no dependence on l, so one shuffle moves it)
  // from lane c(r) XOR c(l).
  if (sameWarps && zeroIn(regs, {warp}) && zeroIn(lanes, {reg, warp})) {
    plan.kind = ConversionKind::WarpShuffle;
    plan.sourceRegister = imagesOfValues(regs, reg);
    plan.sourceLane = imagesOfValues(regs, lane);
    for (const Basis& b : lanes) plan.laneMap.push_back(b[lane]);
  }
  return plan;
}

}  // namespace tessera::ir
