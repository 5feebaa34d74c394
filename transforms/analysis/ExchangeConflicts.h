// The row pad or XOR swizzle of a layout conversion's exchange buffer (SharedScratch.h), chosen so that writing
// the source layout and reading the destination layout cost the fewest shared-memory wavefronts.
//
// The model is the one both targets' shared memories follow (and the emulator counts, jit/sim AccessCost.h):
// 32 banks of 4 bytes; a warp's request splits by lane into phases of 128 bytes (32 lanes for accesses of up to
// 4 bytes, 16 for 8-byte and 8 for 16-byte ones); a phase costs as many wavefronts as the most distinct 4-byte
// words one bank must deliver. Each thread's registers that hold consecutive elements of a buffer row are one
// access as wide as LLVM's load/store vectorizer makes them: up to 16 bytes, as far as the row pitch keeps them
// aligned. The pad changes both the banks rows start in and how wide the accesses can be; e.g. the f32 mma.sync
// accumulator (pairs of columns, 8 rows per warp) written to a buffer that threads read 4 columns at a time is
// conflict-free with a 32-byte pad (8-byte writes, 16-byte reads) and 4-way conflicted with the 4-byte one.
// Some pairs no pad serves: a 16x16 f32 accumulator of one warp (4 rows of 32 bytes per write phase, 2 rows of
// 64 bytes per read phase) needs rows 32 bytes apart in banks for the writes and 64 for the reads. An XOR swizzle
// of 16-byte chunks (ExchangeSwizzle) moves each row's chunks to other banks without spreading the rows, and
// keeps every access of up to 16 bytes whole.
//
// Cost: warp 0's accesses only (other warps repeat its pattern on other rows), for each candidate: linear in
// the registers per thread times the warp size.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/Layout.h"
#include "ir/LinearLayout.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {

// Wavefronts of warp 0 writing or reading each element `layout` (input dims register, lane, warp; onto the
// buffer's coordinates) gives a thread, once, in `buffer`. A model to rank pads and swizzles by: the emulator
// counts what the lowering and LLVM actually emit, which can differ for layouts that replicate elements (LLVM
// merges and drops some of their accesses).
int64_t exchangeWavefronts(const ir::LinearLayout& layout, const ExchangeBuffer& buffer);

// Wavefronts of warp 0 accessing each element `layout` gives a thread, once, in a buffer of `shared` layout (#shared
// or #linear_shared over `shape`), `perAccess` consecutive registers (of `elementBytes` each) at a time: how
// stage-copies-in-registers compares the ways its lanes can store a copy.
int64_t sharedBufferWavefronts(const ir::LinearLayout& layout, const ir::Layout& shared,
                               const std::vector<int64_t>& shape, int64_t elementBytes, int64_t perAccess);

// `buffer` (its shape and element size) with the pad or swizzle minimizing the wavefronts of writing `src` and
// reading `dst`. The candidates, in order of preference when they cost the same: the default one-bank pad, every
// other pad (a multiple of max(4, elementBytes), at most 128 bytes) unswizzled, then unpadded rows swizzled.
ExchangeBuffer leastConflictingExchange(const ir::LinearLayout& src, const ir::LinearLayout& dst, ExchangeBuffer buffer);

}  // namespace tessera::transforms
