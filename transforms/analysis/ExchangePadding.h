// The row pad of a layout conversion's exchange buffer (SharedScratch.h), chosen so that writing the source layout
// and reading the destination layout cost the fewest shared-memory wavefronts.
//
// The model is the one both targets' shared memories follow (and the emulator counts, jit/sim AccessCost.h):
// 32 banks of 4 bytes; a warp's request splits by lane into phases of 128 bytes (32 lanes for accesses of up to
// 4 bytes, 16 for 8-byte and 8 for 16-byte ones); a phase costs as many wavefronts as the most distinct 4-byte
// words one bank must deliver. Each thread's registers that hold consecutive elements of a buffer row are one
// access as wide as LLVM's load/store vectorizer makes them: up to 16 bytes, as far as the row pitch keeps them
// aligned. The pad changes both the banks rows start in and how wide the accesses can be; e.g. the f32 mma.sync
// accumulator (pairs of columns, 8 rows per warp) written to a buffer that threads read 4 columns at a time is
// conflict-free with a 32-byte pad (8-byte writes, 16-byte reads) and 4-way conflicted with the 4-byte one.
//
// Cost: warp 0's accesses only (other warps repeat its pattern on other rows), for each candidate pad: linear in
// the registers per thread times the warp size.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/Layout.h"
#include "ir/LinearLayout.h"

namespace tessera::transforms {

// Wavefronts of warp 0 writing or reading each element `layout` (input dims register, lane, warp; onto the
// buffer's coordinates) gives a thread, once, in a row-padded buffer of `shape` with rows of `pitchBytes` and
// elements of `elementBytes`. A model to rank pads by: the emulator counts what the lowering and LLVM actually
// emit, which can differ for layouts that replicate elements (LLVM merges and drops some of their accesses).
int64_t exchangeWavefronts(const ir::LinearLayout& layout, const std::vector<int64_t>& shape, int64_t elementBytes,
                           int64_t pitchBytes);

// The pad in bytes (a multiple of max(4, elementBytes), at most 128) minimizing the wavefronts of writing `src`
// and reading `dst`; `preferred` (the default pad) wins ties, then the smallest pad.
int64_t leastConflictingPadBytes(const ir::LinearLayout& src, const ir::LinearLayout& dst,
                                 const std::vector<int64_t>& shape, int64_t elementBytes, int64_t preferred);

}  // namespace tessera::transforms
