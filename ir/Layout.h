// Layouts: how a tile's elements are spread over the threads of a program (distributed layouts) or laid out
// in shared memory (shared layouts). A tile type carries its layout as its encoding attribute, e.g.
//   tile<128x64xf32, #blocked{order = [1, 0], spt = [1, 4], tpw = [2, 16], wpc = [4, 1]}>
// Layouts are target-independent: the warp size (32 on NVIDIA, 64 on AMD) and the number of warps are
// parameters. docs/Layouts.md describes the model.
//
// Distributed layouts map (warp, lane, register) -> element coordinates. A thread's registers hold the
// elements it owns; when the layout covers more than the tile, several threads hold the same element
// (replication), and only one of them (the owner) may write it to memory.
//
// Every layout over a concrete tile shape is a linear layout over F2 (ir/LinearLayout.h, toLinear): distributed
// layouts from the bits of (register, lane, warp), shared layouts from the bits of the element offset. Blocked,
// slice and shared layouts are readable sugar; #linear and #linear_shared spell any linear layout directly.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/Attributes.h"
#include "ir/LinearLayout.h"
#include "ir/Types.h"

namespace tessera::ir {

// The input dimensions of the linear form of a layout, and the names of a tile's dimensions as its outputs.
inline constexpr const char* kRegisterDim = "register";
inline constexpr const char* kLaneDim = "lane";
inline constexpr const char* kWarpDim = "warp";
inline constexpr const char* kOffsetDim = "offset";
std::string tensorDimName(int d);  // "dim0", "dim1", ...
std::vector<std::string> tensorDimNames(int rank);

class Layout {
 public:
  enum class Kind { Blocked, Slice, Shared, Linear, LinearShared };

  // Blocked: each thread holds sizePerThread[d] consecutive elements along d; threadsPerWarp[d] lanes and
  // warpsPerCTA[d] warps tile dimension d; `order` lists dimensions fastest-varying first (for registers,
  // lanes and warps alike). products: threadsPerWarp = warp size, warpsPerCTA = number of warps.
  static Layout blocked(std::vector<int64_t> sizePerThread, std::vector<int64_t> threadsPerWarp,
                        std::vector<int64_t> warpsPerCTA, std::vector<int64_t> order);
  // Slice: the parent layout with dimension `dim` removed (what a reduction over `dim` produces, and what
  // expand_dims at `dim` consumes).
  static Layout slice(int dim, const Layout& parent);
  // Shared: row-major in `order` (fastest first), XOR-swizzled in groups of `vec` elements: row r's vector
  // index is xor'ed with (r / perPhase) % maxPhase, to avoid bank conflicts. vec=1, perPhase=1, maxPhase=1 is
  // the unswizzled layout.
  static Layout shared(int64_t vec, int64_t perPhase, int64_t maxPhase, std::vector<int64_t> order);
  // Linear: a distributed layout given by its linear form over one tile shape: input dimensions register, lane
  // and warp (in that order) onto dim0..dim{r-1}, reaching every element. Spelled
  //   #linear{lane = [[0, 1], ...], register = [[1, 0], ...], warp = [...]}
  // (one basis per input bit; the output sizes, i.e. the tile's shape, are the smallest the bases reach).
  static Layout linear(LinearLayout layout);
  // LinearShared: a shared layout given by its linear form: input dimension offset (the element offset) onto
  // dim0..dim{r-1}, bijective. Spelled #linear_shared{offset = [[0, 1], ...]}.
  static Layout linearShared(LinearLayout layout);

  // Encoding attribute <-> Layout. fromAttr throws tessera::Error on a malformed or unknown layout attribute.
  Attr toAttr() const;
  static Layout fromAttr(const Attr& a);
  static std::optional<Layout> ofType(Type t);  // the tile type's layout, if it has one
  Type apply(Type tile) const;                  // the tile type with this layout as its encoding

  Kind kind() const { return kind_; }
  bool isDistributed() const { return kind_ == Kind::Blocked || kind_ == Kind::Slice || kind_ == Kind::Linear; }
  int rank() const;
  bool operator==(const Layout& o) const;
  bool operator!=(const Layout& o) const { return !(*this == o); }
  std::string str() const { return toAttr().str(); }

  // Blocked fields (kind Blocked).
  const std::vector<int64_t>& sizePerThread() const { return spt_; }
  const std::vector<int64_t>& threadsPerWarp() const { return tpw_; }
  const std::vector<int64_t>& warpsPerCTA() const { return wpc_; }
  const std::vector<int64_t>& order() const { return order_; }  // also for Shared
  // Slice fields.
  int sliceDim() const { return sliceDim_; }
  const Layout& parent() const { return *parent_; }
  // Shared fields.
  int64_t vec() const { return vec_; }
  int64_t perPhase() const { return perPhase_; }
  int64_t maxPhase() const { return maxPhase_; }
  // Linear and LinearShared: the layout itself.
  const LinearLayout& linearLayout() const;

  // This layout over a tile of `shape` as a linear layout, exactly: distributed layouts from (register, lane, warp),
  // shared ones from offset, onto dim0..dim{r-1} (sizes: `shape`). Costs O(rank + log2 of the sizes), whatever
  // the number of elements.
  LinearLayout toLinear(const std::vector<int64_t>& shape) const;
  // Throws tessera::Error unless this layout can lay out a tile of `shape`: the rank matches, and a linear layout
  // (or a slice of one) is over exactly that shape.
  void requireShape(const std::vector<int64_t>& shape) const;

  // ---- distributed layouts over a concrete tile shape
  int64_t warpSize() const;  // product of threadsPerWarp (through slices)
  int64_t numWarps() const;  // product of warpsPerCTA
  // Registers each thread holds for a tile of `shape`.
  int64_t registersPerThread(const std::vector<int64_t>& shape) const;
  // Coordinates of the element in register `reg` of thread (warp, lane).
  std::vector<int64_t> coords(const std::vector<int64_t>& shape, int64_t warp, int64_t lane, int64_t reg) const;
  // Whether (warp, lane) is the owner of the element in register `reg`: the lowest-numbered thread (warp-major,
  // then lane) holding it. Stores and atomics from non-owners must be masked off.
  bool isOwner(const std::vector<int64_t>& shape, int64_t warp, int64_t lane, int64_t reg) const;

  // ---- shared layouts
  // Element offset (in elements, not bytes) of `coords` within a shared buffer of `shape`.
  int64_t sharedOffset(const std::vector<int64_t>& shape, const std::vector<int64_t>& coords) const;

 private:
  Kind kind_ = Kind::Blocked;
  std::vector<int64_t> spt_, tpw_, wpc_, order_;
  int sliceDim_ = 0;
  std::shared_ptr<const Layout> parent_;
  int64_t vec_ = 1, perPhase_ = 1, maxPhase_ = 1;
  std::shared_ptr<const LinearLayout> linear_;
};

// The blocked layout layout-assignment starts from for a tile of `shape`: `elemsPerThread` consecutive
// elements per thread along the fastest dimension (`order[0]`), lanes then warps spread fastest-first.
Layout defaultBlockedLayout(const std::vector<int64_t>& shape, int64_t numWarps, int64_t warpSize,
                            int64_t elemsPerThread = 1, std::vector<int64_t> order = {});

}  // namespace tessera::ir
