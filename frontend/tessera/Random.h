// Counter-based random numbers in kernels: Philox (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011), drawn as Triton's tl.randint / tl.rand / tl.randn draw them: the same key from the
// seed, the same counter from the offset and the same conversions, so a kernel ported from Triton (a dropout mask,
// say) draws the same numbers. Each element's numbers depend only on (seed, its offset): no state, the same on
// every target, in the interpreter, in eager mode and in the emulator.
//
// 32-bit offsets (i32, u32) run Philox4x32 with the key (seed's low 32 bits, its high 32 bits); 64-bit offsets
// (i64, u64) run Philox4x64 with the key (seed, 0). The seed is an integer (a kernel parameter, usually), taken as
// u64 (a signed seed extends by its sign); the counter is (offset, 0, 0, 0). Ten rounds by default (n_rounds,
// a compile-time int: fewer are faster and weaker; Random123 recommends no fewer than 7 for 4x32).
#pragma once

#include <array>

#include "tessera/Tensor.h"

namespace tessera {

inline constexpr int kPhiloxRounds = 10;

// Philox's four output words (u32 or u64, as wide as the counters) for the counter (c0, c1, c2, c3), each an
// integer tile or scalar of one width (they broadcast together), under the key made from `seed` as above.
std::array<Tensor, 4> philox(const TArg& seed, const TArg& c0, const TArg& c1, const TArg& c2, const TArg& c3,
                             int n_rounds = kPhiloxRounds, SourceLoc loc = SourceLoc::current());
// The four words for the counter (offset, 0, 0, 0), unsigned, the shape of `offset`; randint is the first.
std::array<Tensor, 4> randint4x(const TArg& seed, const TArg& offset, int n_rounds = kPhiloxRounds,
                                SourceLoc loc = SourceLoc::current());
Tensor randint(const TArg& seed, const TArg& offset, int n_rounds = kPhiloxRounds,
               SourceLoc loc = SourceLoc::current());
// An integer of random bits to an f32 in [0, 1): read as signed, a negative x becomes -x - 1, and the result is
// that times 2^-31 (32-bit x; 2^-63 for 64-bit x) rounded down a hair, so that the largest is below 1.
Tensor uint_to_uniform_float(const TArg& x, SourceLoc loc = SourceLoc::current());
// Uniform f32 in [0, 1): from randint, or from each of randint4x's words.
Tensor rand(const TArg& seed, const TArg& offset, int n_rounds = kPhiloxRounds, SourceLoc loc = SourceLoc::current());
std::array<Tensor, 4> rand4x(const TArg& seed, const TArg& offset, int n_rounds = kPhiloxRounds,
                             SourceLoc loc = SourceLoc::current());
// Standard normal f32 by Box-Muller: randn from the first two words of randint4x, randn4x two pairs from all four.
Tensor randn(const TArg& seed, const TArg& offset, int n_rounds = kPhiloxRounds, SourceLoc loc = SourceLoc::current());
std::array<Tensor, 4> randn4x(const TArg& seed, const TArg& offset, int n_rounds = kPhiloxRounds,
                              SourceLoc loc = SourceLoc::current());

}  // namespace tessera
