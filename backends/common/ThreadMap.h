// The per-thread view of a distributed layout over one tile shape, in the form code generation needs.
//
// Every distributed layout is linear over the bits of (register, lane, warp) (ir/LinearLayout.h): the coordinates
// of register r in thread (warp, lane) are
//     regCoords[r]  XOR  (XOR of laneBases[i] over set bits i of lane)  XOR  (XOR of warpBases[j] over set bits j of warp)
// per dimension. ThreadMap::build takes the bases from the layout's linear form (ir::Layout::toLinear), so the
// lowering never re-implements a layout's definition and never enumerates a tile's elements. Lane and warp bits
// that only replicate data (the free variables of the linear form) are clear in the owner of an element, the
// thread allowed to write it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/Layout.h"
#include "ir/LinearLayout.h"

namespace tessera::backends {

using Coords = std::vector<int64_t>;

struct ThreadMap {
  std::vector<int64_t> shape;          // empty for scalars (one register, fully replicated)
  std::vector<Coords> regCoords;       // per register, at thread (0, 0)
  std::vector<bool> regOwner;          // false for a register duplicating an earlier one of the same thread
  std::vector<int64_t> regFirst;       // the first register of the thread holding the same element (r if none)
  std::vector<Coords> laneBases;       // per lane bit
  std::vector<Coords> warpBases;       // per warp bit
  int64_t warpSize = 1;
  int64_t numWarps = 1;
  uint64_t laneFreeMask = 0;           // lane bits that only replicate: an owner has them all clear
  uint64_t warpFreeMask = 0;           // warp bits likewise
  ir::LinearLayout linear;             // the layout's linear form over `shape` (none for scalars)

  int64_t numRegs() const { return static_cast<int64_t>(regCoords.size()); }
  int rank() const { return static_cast<int>(shape.size()); }
  uint64_t replicatedLaneMask() const { return laneFreeMask; }
  uint64_t replicatedWarpMask() const { return warpFreeMask; }
  // Coordinates of register `reg` in thread (warp, lane), from the linear form.
  Coords coordsOf(int64_t reg, int64_t warp, int64_t lane) const;
  // Row-major linear index of `c` in `shape`.
  int64_t linearIndex(const Coords& c) const;
  // The dimension along which register r+1 follows register r, and the longest power-of-two run of registers that
  // are consecutive along it (aligned, and not broken by the thread part); {0, 1} when there is none.
  std::pair<int, int64_t> registerRuns() const;

  // The map of `type` (a tile with a distributed layout, or a scalar). Throws tessera::Error naming `what` if
  // the tile has no distributed layout for this kernel's warps.
  static ThreadMap of(ir::Type type, int64_t numWarps, int64_t warpSize, const std::string& what);
  static ThreadMap build(const ir::Layout& layout, const std::vector<int64_t>& shape, const std::string& what);
  static ThreadMap scalar(int64_t numWarps, int64_t warpSize);
};

Coords xorCoords(const Coords& a, const Coords& b);
bool isZero(const Coords& c);
// `c` without dimension `dim` (the coordinates of a reduction's result).
Coords dropDim(const Coords& c, int dim);

}  // namespace tessera::backends
