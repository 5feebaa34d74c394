// A host reference for the DSL's random numbers (frontend/tessera/Random.h), written from the algorithm's
// description (Salmon et al., SC 2011) and checked against Random123's published known-answer vectors in
// frontend_random_test.cpp.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace tessera::random_reference {

template <class Word>
std::array<Word, 4> philoxReference(std::array<Word, 4> c, std::array<Word, 2> k, int rounds = 10) {
  constexpr bool wide = sizeof(Word) == 8;
  const Word multiplierA = wide ? Word(0xD2E7470EE14C6C93ull) : Word(0xD2511F53u);
  const Word multiplierB = wide ? Word(0xCA5A826395121157ull) : Word(0xCD9E8D57u);
  const Word weylA = wide ? Word(0x9E3779B97F4A7C15ull) : Word(0x9E3779B9u);
  const Word weylB = wide ? Word(0xBB67AE8584CAA73Bull) : Word(0xBB67AE85u);
  using Wide = std::conditional_t<wide, unsigned __int128, uint64_t>;
  constexpr int bits = 8 * sizeof(Word);
  for (int r = 0; r < rounds; ++r) {
    const Wide productA = Wide(multiplierA) * c[0], productB = Wide(multiplierB) * c[2];
    const Word hiA = Word(productA >> bits), loA = Word(productA), hiB = Word(productB >> bits), loB = Word(productB);
    c = {Word(hiB ^ c[1] ^ k[0]), loB, Word(hiA ^ c[3] ^ k[1]), loA};
    k = {Word(k[0] + weylA), Word(k[1] + weylB)};
  }
  return c;
}

// Triton's key from a seed: (low, high) halves for 32-bit counters, (seed, 0) for 64-bit ones.
inline std::array<uint32_t, 4> randint4xReference(uint64_t seed, uint32_t offset, int rounds = 10) {
  return philoxReference<uint32_t>({offset, 0, 0, 0}, {uint32_t(seed), uint32_t(seed >> 32)}, rounds);
}
inline std::array<uint64_t, 4> randint4xReference64(uint64_t seed, uint64_t offset, int rounds = 10) {
  return philoxReference<uint64_t>({offset, 0, 0, 0}, {seed, 0}, rounds);
}

// Bits to [0, 1): negative (as signed) x folds to -x - 1 (= ~x), then times the f32 scale.
inline float uniformReference(uint32_t bits) {
  const int32_t x = static_cast<int32_t>(bits);
  return static_cast<float>(x < 0 ? ~x : x) * 4.6566127342e-10f;
}
inline float uniformReference64(uint64_t bits) {
  const int64_t x = static_cast<int64_t>(bits);
  return static_cast<float>(x < 0 ? ~x : x) * static_cast<float>(1.0842020432385337e-19);
}

// Box-Muller in double: the first normal of the pair.
inline double normalReference(float u1, float u2) {
  const double positive = std::fmax(1.0e-7, u1);
  return std::sqrt(-2.0 * std::log(positive)) * std::cos(6.283185307179586 * u2);
}

}  // namespace tessera::random_reference
