// The shared-memory scratch of each op: whether it needs any, how much, and how it is laid out. Both sides of
// the contract below call these functions: `allocate-shared-memory` for the sizes it reserves, the lowering
// (backends/common) for the sizes it asks for and the offsets it reads and writes. A change to a scratch layout
// is made here, once. Nothing here is target-specific (the warp size and warp count come from the layouts and
// PassOptions).
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
// ## Scratch rules (scratchBytes), per op
//
// B(T) is the in-memory size of an element (ir::Type::storageBytes: i1 and fp8 1, pointers 8, others bit width
// / 8). alignTo(x, 16) rounds up to a multiple of 16 (alignToShared). Every size below is a multiple of 16.
//
// * Exchanges: convert_layout, broadcast, expand_dims, reshape, trans, cat, join, split. The op moves elements
//   between threads. When every thread already holds the elements its result registers need, at register indices
//   that are the same in every thread ("remappable in registers", see canRemapInRegisters), it needs no scratch;
//   nor does a convert_layout that warp shuffles can do (ir/LayoutConversion.h, exchangeNeedsSharedMemory).
//   Otherwise the elements go through one *exchange buffer* (ExchangeBuffer) of shape exchangeBufferShape(op)
//   (the operand's shape; for cat and join the result's shape) and element size B = B(element type), laid out
//   row-padded:
//       rows = product of all dimensions but the last (1 for rank 1), rowLength = last dimension,
//       pad  = max(4, B) bytes at the end of every row (convert_layout: see below), pitch = rowLength * B + pad,
//       byte offset of buffer coordinates c = row(c) * pitch + c[last] * B,  row(c) = row-major index of c
//                                             without its last coordinate,
//       scratchBytes = alignTo(rows * pitch, 16).
//   When that is more than PassOptions::maxSharedBytes (a limit is set), the exchange runs in *rounds* of
//   R rows (R = the largest power of two with alignTo(R * pitch, 16) <= the limit; ExchangeBuffer::rowsPerRound):
//   scratchBytes = alignTo(R * pitch, 16), and round k moves buffer rows [k * R, (k + 1) * R), row r at
//   scratch row r - k * R. Each round is a write phase, a barrier, a read phase; a barrier separates rounds.
//   allocate-shared-memory halves R further (smem_bytes = alignTo(R * pitch, 16)) where the buffers living beside
//   the exchange leave it less than that and the kernel would not fit otherwise. The lowering derives R from the
//   op's smem_bytes with the same function. If not even one row fits, the whole buffer is reserved (and the
//   target reports the kernel's shared memory as too large).
//   The pad shifts each row by one bank (4-byte word; 8-byte elements by 8 bytes to keep them aligned), so threads
//   reading a column of a transposed tile hit distinct banks. A convert_layout between distributed layouts pads
//   by whatever multiple of max(4, B) up to 128 bytes makes writing its source and reading its destination
//   cheapest in shared-memory wavefronts, max(4, B) when nothing is cheaper, or, when an XOR swizzle of the
//   unpadded buffer's 16-byte chunks is cheaper still, swizzles (ExchangeSwizzle below;
//   analysis/ExchangeConflicts.h). allocate-shared-memory records that choice on the op (`exchange_pad`,
//   `exchange_swizzle`: recordExchangeChoice), and exchangeBufferOf reads it back rather than searching again. A round then holds whole swizzle blocks (else the lowering leaves the rows
//   unswizzled). (The unpadded row-major index `linear(c) * B` also fits in these bytes, for lowerings that do
//   not pad.)
// * reduce: only when the reduced axis spans several warps (some warp-id bit moves the input's coordinate along
//   `axis`; P = 2^(number of such bits) = the warps holding distinct partials of one output element). One slot per
//   warp position per output element per operand, in OperandAreas of E * P slots (E = max(1, result elements)):
//   slot (output element e in row-major order, warp position p) is element e * P + p of operand i's area.
//   0 when P = 1 (shuffles suffice).
// * scan: always, sized for the lowering's serial fallback (each thread scans whole lines in shared memory):
//   OperandAreas of N slots (N = elements), operand i's full tile row-major in its area. The parallel scan uses a
//   prefix of it: when warps split the axis, the warp totals, OperandAreas of L * H * P slots (L lines, H register
//   chunks per thread, P warp positions along the axis; L * H * P <= N); otherwise none.
// * dot: operand staging (DotStaging): A (M x K) row-major at 0, B (K x N) row-major at alignTo(M*K*B(A), 16);
//   scratchBytes = alignTo(M*K*B(A), 16) + alignTo(K*N*B(B), 16). Tensor-core lowerings permute elements within
//   these two ranges. An operand a local_load produces is not staged (its size counts as 0 above): the lowering
//   reads it from the local_load's shared buffer, which it accesses like the local_load. Nor is A when the dot is
//   marked `a_in_registers` (kDotAInRegisters): the target's lowering takes it from registers as they are.
// * atomic_rmw / atomic_cas whose result is used and whose pointer operand is replicated (a scalar pointer, or a
//   tile in which some element is held by more than one (thread, register)): the owners of each element
//   broadcast the old value through one slot per element: element e (row-major) at e * B(pointee);
//   scratchBytes = alignTo(max(1, elements) * B(pointee), 16) (atomicBroadcastBytes).
// * local_alloc: its shared buffer, every stage one after the other, each laid out by the buffer's shared layout
//   (element offsets of ir::Layout::sharedOffset): scratchBytes = alignTo(stages * elements per stage * B, 16)
//   (sharedBufferBytes). Unlike the scratch above it lives from the local_alloc to the buffer's last use, and only
//   async_copy (writes, landing at the async_wait that covers them) and local_load (reads) access it.
// * mbarrier_alloc: its barriers, 8 bytes each (kMbarrierBytes; the scratch alignment keeps them 8-aligned):
//   scratchBytes = alignTo(N * 8, 16) (mbarrierArrayBytes). It lives like a local_alloc's buffer, from the op to
//   the barriers' last use. The op's lowering initializes them and synchronizes every thread; async_tma_copy
//   (whose write to its buffer stage lands at the mbarrier_wait on its barrier, visible to every thread that waits)
//   and mbarrier_wait use them, which the barrier analysis does not count as shared-memory accesses.
// * desc_store (kept only where the target stores descriptor blocks with TMA: expand-descriptor-loads): the block,
//   as the tensor map's boxes land in shared memory (box j of the inner dimension j box-sizes in, each row-major,
//   swizzled as the map says): scratchBytes = alignTo(elements * B, 16) (descStoreStagingBytes), at a 1024-byte
//   boundary (the swizzle patterns' span, kTmaStagingAlignment). The lowering writes it, fences it for the async
//   proxy, synchronizes, and one thread stores it and waits until the stores have read it.
// * everything else (including debug_print and device_assert): 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/IR.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {

constexpr int64_t kSharedAlignment = 16;

inline int64_t alignToShared(int64_t bytes) {
  return (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
}

// ---- scratch layouts

// One area per operand of `op`, each of `slots` elements of that operand's element type, one after the other,
// every area starting 16-byte aligned (the layout of reduce and scan scratch).
struct OperandAreas {
  std::vector<int64_t> offsets;  // byte offset of operand i's area
  int64_t bytes = 0;             // the total, aligned
};
OperandAreas operandAreas(const ir::Op& op, int64_t slots);

// An XOR swizzle of the unpadded buffer's 16-byte chunks: the chunk at byte offset o is stored as chunk
// (o / 16) XOR ((o / strideBytes) % phases). Every bit it flips is below the bits it reads, so it is a bijection
// within each aligned block of `phases` chunks (a block may span several short rows), and linear over F2 in the
// offset's bits. strideBytes = k * rowBytes is the familiar "chunk XOR (row / k) % phases"; shorter strides also
// separate rows that share their banks (in 64-byte rows, rows 4 apart, which no permutation within a row can).
// Accesses of up to 16 aligned bytes stay whole. phases == 1: none; otherwise powers of two, strideBytes >= 32.
struct ExchangeSwizzle {
  static constexpr int64_t kChunkBytes = 16;
  int64_t phases = 1, strideBytes = 0;
  int64_t blockBytes() const { return phases * kChunkBytes; }
  // Where the byte at unswizzled offset `offset` is stored.
  int64_t apply(int64_t offset) const {
    return phases == 1 ? offset : offset ^ (offset / strideBytes % phases * kChunkBytes);
  }
  bool operator==(const ExchangeSwizzle&) const = default;
};

// The row-padded (or swizzled) exchange buffer of `shape` (see the rule above).
struct ExchangeBuffer {
  std::vector<int64_t> shape;
  int64_t elementBytes = 1;
  std::optional<int64_t> padBytes = std::nullopt;  // a multiple of max(4, B); unset: defaultPadBytes
  ExchangeSwizzle swizzle{};

  static int64_t defaultPadBytes(int64_t elementBytes) { return std::max<int64_t>(4, elementBytes); }
  int64_t rows() const;
  int64_t rowLength() const { return shape.empty() ? 1 : shape.back(); }
  int64_t pitchBytes() const { return rowLength() * elementBytes + padBytes.value_or(defaultPadBytes(elementBytes)); }
  // The pitch in elements: the pad is a whole number of B-byte elements (B is 1, 2, 4 or 8).
  int64_t pitchElements() const { return pitchBytes() / elementBytes; }
  int64_t bytes() const { return alignToShared(rows() * pitchBytes()); }
  // Scratch for `rowsPerRound` rows at a time.
  int64_t roundBytes(int64_t rowsPerRound) const { return alignToShared(rowsPerRound * pitchBytes()); }
  // Rows per round within `scratchBytes`: all of them when bytes() fits, else the largest power of two whose
  // roundBytes fit; 0 when not even one row fits.
  int64_t rowsPerRound(int64_t scratchBytes) const;
  // Byte offset of buffer coordinates `coords`; throws tessera::Error if their rank is not the shape's.
  int64_t byteOffset(const std::vector<int64_t>& coords) const;
  // Rows of one swizzle block (the swizzle moves elements only within them): 1 when a block fits in a row.
  int64_t swizzleBlockRows() const;
  int64_t chunkElements() const { return ExchangeSwizzle::kChunkBytes / elementBytes; }
};

// The pad or swizzle allocate-shared-memory chose for a convert_layout's exchange buffer (rows > 1), recorded on the
// op so that IR dumps show it and the lowering does not search again: `exchange_pad` (bytes at the end of every row;
// 0 with a swizzle) and, when swizzled, `exchange_swizzle = [phases, strideBytes]` (ExchangeSwizzle).
inline constexpr const char* kExchangePad = "exchange_pad";
inline constexpr const char* kExchangeSwizzle = "exchange_swizzle";
// Records exchangeBufferOf(op)'s pad and swizzle on a convert_layout whose buffer has more than one row.
void recordExchangeChoice(ir::Op& op);

bool isExchangeOp(const ir::Op& op);
// Shape of the exchange buffer of an exchange op (the operand's shape; cat/join: the result's).
std::vector<int64_t> exchangeBufferShape(const ir::Op& op);
// The exchange buffer of an exchange op: exchangeBufferShape(op), the result's element type.
ExchangeBuffer exchangeBufferOf(const ir::Op& op);

// reduce scratch when `warpParts` (P) warp positions hold partials of each output element.
OperandAreas reduceScratch(const ir::Op& reduce, int64_t warpParts);
// scan scratch: every operand's whole tile.
OperandAreas scanScratch(const ir::Op& scan);

// The dot attribute (bool) saying that the target's lowering takes A straight from registers, in the layout it has
// (assign-layouts sets it where LayoutPolicy::dotOperandARegisterLayout asks for it).
inline constexpr const char* kDotAInRegisters = "a_in_registers";
bool dotTakesAInRegisters(const ir::Op& dot);

// dot operand staging: A (M x K) row-major at byte 0, B (K x N) row-major at bOffset; an operand read from a
// shared buffer (dotOperandBuffer), or A taken from registers (dotTakesAInRegisters), is not staged.
struct DotStaging {
  bool stagesA = true, stagesB = true;
  int64_t bOffset = 0;
  int64_t bytes = 0;  // the total
};
DotStaging dotStaging(const ir::Op& dot);
// The local_load producing operand #index of `dot`, whose shared buffer the dot's lowering reads; null when the
// operand is staged.
const ir::Op* dotOperandBuffer(const ir::Op& dot, unsigned index);
// Whether every use of `localLoad`'s tile is a dot operand that the dot reads from the load's buffer
// (dotOperandBuffer, and not an A the dot takes in registers): then no thread needs the tile's registers, and the
// lowering loads none (a 128x128x64 matmul's two loads were 40% of its lowered LLVM IR, all of it dead).
bool onlyDotsReadBufferOf(const ir::Op& localLoad);

// A shared buffer's bytes (smem<...>: all its stages).
int64_t sharedBufferBytes(ir::Type buffer);
// An mbarrier array's bytes (mbarriers<N>).
inline constexpr int64_t kMbarrierBytes = 8;
int64_t mbarrierArrayBytes(ir::Type barriers);
// desc_store's staging of its block for a TMA store, and the alignment its offset needs.
int64_t descStoreStagingBytes(const ir::Op& store);
inline constexpr int64_t kTmaStagingAlignment = 1024;

// atomic_rmw / atomic_cas: one slot per element of the pointer operand for broadcasting the old values.
int64_t atomicBroadcastBytes(const ir::Op& atomic);

// ---- which ops need scratch (these decisions read the layouts)

// Whether the exchange op can be lowered by renaming registers: for every result, each register is, in every
// thread, an element that thread holds in an operand at a register index independent of the thread. Throws
// tessera::Error if a tile operand or result has no distributed layout, or its layout's thread counts differ from
// `options`.
bool canRemapInRegisters(const ir::Op& op, const PassOptions& options);
// Whether the exchange op goes through its exchange buffer: convert_layout unless ir::planConversion finds a
// register permutation or warp shuffles, the other exchanges unless they can remap in registers.
bool exchangeNeedsSharedMemory(const ir::Op& op, const PassOptions& options);

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

}  // namespace tessera::transforms
