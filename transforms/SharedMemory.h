// Shared memory: the scratch each op's lowering needs, how that scratch is laid out, and the interval
// allocator the `allocate-shared-memory` pass uses. The backends read these rules; nothing here is
// target-specific (the warp size and warp count come from the layouts and PassOptions).
//
// ## Contract between the passes and the lowering
//
// * `allocate-shared-memory` sets `smem_offset` and `smem_bytes` (ints, bytes from the start of the kernel's
//   dynamic shared memory) on every op with `scratchBytes(op) > 0`, and `smem_bytes` (the total) on the function.
//   Offsets and sizes are multiples of 16. Ops that need no scratch carry neither attribute.
// * An op's scratch is live only while the op runs. Its lowering accesses it as: a write phase, a barrier, a read
//   phase. The lowering emits that internal barrier itself (scan's serial fallback, which scans in place between
//   its write and read phases, emits one after the scan too; an atomic's broadcast may emit one before its write).
// * `insert-barriers` inserts `barrier` ops *between* ops: before an op that accesses bytes written since the last
//   barrier, or that writes bytes read since the last barrier. For that analysis an op with scratch both reads and
//   writes all of [smem_offset, smem_offset + smem_bytes); its internal barriers are private to it and are not
//   relied on to order other ops' accesses. Loads, stores and atomics through `ptr<T, 3>` pointers read/write an
//   unknown part of shared memory (treated as all of it).
//
// ## Scratch rules (scratchBytes), per op. B(T) is the in-memory size of an element
// (ir::Type::storageBytes: i1 and fp8 1, pointers 8, others bit width / 8). alignTo(x, 16) rounds up to a multiple of 16. Every result below is a multiple of 16.
//
// * Exchanges: convert_layout, broadcast, expand_dims, reshape, trans, cat, join, split. The op moves elements
//   between threads. When every thread already holds the elements its result registers need, at register indices
//   that are the same in every thread ("remappable in registers", see canRemapInRegisters), it needs no scratch.
//   Otherwise the elements go through one *exchange buffer* of shape exchangeBufferShape(op) (the operand's shape;
//   for cat and join the result's shape) and element size B = B(element type), laid out row-padded:
//       rows = product of all dimensions but the last (1 for rank 1), rowLength = last dimension,
//       pad  = max(4, B) bytes at the end of every row, pitch = rowLength * B + pad,
//       byte offset of buffer coordinates c = row(c) * pitch + c[last] * B,  row(c) = row-major index of c
//                                             without its last coordinate,
//       scratchBytes = alignTo(rows * pitch, 16).
//   The pad shifts each row by one bank (4-byte word; 8-byte elements by 8 bytes to keep them aligned), so threads
//   reading a column of a transposed tile hit distinct banks. exchangeByteOffset() computes the offset. (The
//   unpadded row-major index `linear(c) * B` also fits in these bytes, for lowerings that do not pad.)
// * reduce: only when the reduced axis spans several warps (some warp-id bit moves the input's coordinate along
//   `axis`; P = 2^(number of such bits) = the warps holding distinct partials of one output element). One slot per
//   warp position per output element per operand: operand i's area starts at
//       base_i = alignTo(base_{i-1} + E * P * B(input_{i-1}), 16),  base_0 = 0,  E = max(1, result elements),
//   slot (output element e in row-major order, warp position p) at base_i + (e * P + p) * B(input_i);
//   scratchBytes = alignTo(base_{n-1} + E * P * B(input_{n-1}), 16). 0 when P = 1 (shuffles suffice).
// * scan: always, sized for the lowering's serial fallback (each thread scans whole lines in shared memory):
//   operand i's full tile, row-major, at base_i = alignTo(base_{i-1} + N * B(input_{i-1}), 16), N = elements;
//   scratchBytes = alignTo(sum, 16). The parallel scan uses a prefix of it: when warps split the axis, the
//   warp totals, L * H * P slots per operand (L lines, H register chunks per thread, P warp positions along
//   the axis; L * H * P <= N) packed the same way; otherwise none.
// * dot: operand staging: A (M x K) row-major at 0, B (K x N) row-major at alignTo(M*K*B(A), 16);
//   scratchBytes = alignTo(M*K*B(A), 16) + alignTo(K*N*B(B), 16).
// * atomic_rmw / atomic_cas whose result is used and whose pointer operand is replicated (a scalar pointer, or a
//   tile in which some element is held by more than one (thread, register)): the owners of each element
//   broadcast the old value through one slot per element: element e (row-major) at e * B(pointee);
//   scratchBytes = alignTo(max(1, elements) * B(pointee), 16).
// * everything else (including debug_print and device_assert): 0.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/IR.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {

constexpr int64_t kSharedAlignment = 16;

inline int64_t alignToShared(int64_t bytes) {
  return (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
}

// ---- exchanges
bool isExchangeOp(const ir::Op& op);
// Shape of the exchange buffer of an exchange op (the operand's shape; cat/join: the result's).
std::vector<int64_t> exchangeBufferShape(const ir::Op& op);
// Byte offset of buffer coordinates `coords` in a row-padded exchange buffer (see the rule above).
int64_t exchangeByteOffset(const std::vector<int64_t>& bufferShape, int64_t elementBytes,
                           const std::vector<int64_t>& coords);
int64_t exchangeBufferBytes(const std::vector<int64_t>& bufferShape, int64_t elementBytes);
// Whether the exchange op can be lowered by renaming registers: for every result, each register is, in every
// thread, an element that thread holds in an operand at a register index independent of the thread. Throws
// tessera::Error if a tile operand or result has no distributed layout, or its layout's thread counts differ from
// `options`.
bool canRemapInRegisters(const ir::Op& op, const PassOptions& options);

// Warp positions holding distinct partials of one output element of `reduce` (1: no cross-warp step).
int64_t reduceWarpParts(const ir::Op& reduce, const PassOptions& options);

// The scratch `op` needs (0 if none), per the rules above. Throws tessera::Error (naming the op) on a tile without
// a usable layout where the rule needs one.
int64_t scratchBytes(const ir::Op& op, const PassOptions& options);

// The scratch range an op was given by allocate-shared-memory (its smem_offset/smem_bytes), if any. Throws
// tessera::Error if only one of the two is present, or either is not a non-negative int.
struct SharedRange {
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t end() const { return offset + bytes; }
};
std::optional<SharedRange> scratchRangeOf(const ir::Op& op);

// ---- liveness over a linear numbering of ops
// Every op of a function gets a number in pre-order (an op before the ops of its regions); a region-holding op
// also has an end number, after all its nested ops. A buffer is live over an inclusive interval of numbers.
struct LiveInterval {
  int64_t start = 0;
  int64_t end = 0;  // inclusive
  bool overlaps(const LiveInterval& o) const { return start <= o.end && o.start <= end; }
};

class OpNumbering {
 public:
  explicit OpNumbering(ir::Function& f);
  int64_t start(const ir::Op* op) const;  // throws tessera::Error for an op not in the function
  int64_t end(const ir::Op* op) const;    // == start for ops without regions
  // The interval over which `v` is live: from its definition (a block argument: its owner's start) to its last
  // use; a use inside a loop (for/while) that does not contain the definition extends it to the loop's end,
  // since the value must survive the back edge.
  LiveInterval valueInterval(const ir::Value* v) const;
  // An op's scratch: live only while the op runs.
  LiveInterval scratchInterval(const ir::Op* op) const { return {start(op), end(op)}; }

 private:
  void number(ir::Block& block);
  std::unordered_map<const ir::Op*, std::pair<int64_t, int64_t>> numbers_;
  int64_t next_ = 0;
};

// ---- offset assignment
struct SharedBuffer {
  int64_t bytes = 0;  // rounded up to 16 when placed
  LiveInterval live;
  int64_t offset = -1;  // set by assignSharedOffsets
};
// Gives every buffer a 16-byte-aligned offset such that buffers with overlapping live intervals never share a
// byte; buffers with disjoint intervals may reuse bytes. Largest buffers are placed first, each at the lowest
// offset that fits between the buffers already placed whose intervals overlap its own. Returns the total (the
// highest end, a multiple of 16; 0 for no buffers).
int64_t assignSharedOffsets(std::vector<SharedBuffer>& buffers);

}  // namespace tessera::transforms
