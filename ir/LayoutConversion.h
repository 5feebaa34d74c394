// How a layout conversion moves a tile's elements, decided from the two layouts' linear forms (docs/Layouts.md,
// "Conversions"): the cheapest of
//   * a register permutation: every thread already holds the elements it needs, each at a register index that is
//     the same in every thread (the lane and warp bases agree, the destination's registers span no more than the
//     source's);
//   * warp shuffles: every element a thread needs is held in its own warp (the warp bases agree), and the source
//     register of each destination register is the same in every lane, so one indexed shuffle per destination
//     register moves it (the source lane is an affine function of the reading lane);
//   * shared memory otherwise.
// Everything is computed on the bases (ir/LinearLayout.h): the plan costs time linear in the registers per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/LinearLayout.h"

namespace tessera::ir {

enum class ConversionKind { RegisterPermutation, WarpShuffle, SharedMemory };

const char* conversionKindName(ConversionKind kind);

struct ConversionPlan {
  ConversionKind kind = ConversionKind::SharedMemory;
  // RegisterPermutation and WarpShuffle: per destination register, the source register holding its element (in
  // this thread, or in the lane below).
  std::vector<int64_t> sourceRegister;
  // WarpShuffle: destination register r of lane l reads lane  sourceLane[r] XOR (XOR of laneMap[i] over the set
  // bits i of l).
  std::vector<int64_t> sourceLane;
  std::vector<int64_t> laneMap;

  // The lane destination register `reg` of lane `lane` reads (WarpShuffle).
  int64_t sourceLaneOf(int64_t reg, int64_t lane) const;
};

// The plan converting a tile from `src` to `dst`: both distributed linear layouts (input dimensions register,
// lane, warp of the same sizes but registers) onto the same tensor dimensions. Throws tessera::Error otherwise.
ConversionPlan planConversion(const LinearLayout& src, const LinearLayout& dst);

}  // namespace tessera::ir
