#include "tessera/Random.h"

#include <cstdint>

#include "tessera/Language.h"
#include "tessera/Promotion.h"

namespace tessera {

using detail::fail;
using detail::typeOf;
using ir::ScalarKind;
using ir::Type;

namespace {

// Philox's multipliers and key increments (Random123), for 32- and 64-bit words.
struct PhiloxConstants {
  uint64_t roundA, roundB, keyA, keyB;
};
constexpr PhiloxConstants kPhilox32{0xD2511F53u, 0xCD9E8D57u, 0x9E3779B9u, 0xBB67AE85u};
constexpr PhiloxConstants kPhilox64{0xD2E7470EE14C6C93ul, 0xCA5A826395121157ul, 0x9E3779B97F4A7C15ul,
                                    0xBB67AE8584CAA73Bul};

// The bit width of an integer operand that counts or offsets (32 or 64); `what` names it in errors.
int counterWidth(const TArg& x, const char* fn, const char* what, const SourceLoc& loc) {
  Type t = typeOf(x);
  if (!t.isInt() || t.isBool() || (t.bitWidth() != 32 && t.bitWidth() != 64))
    fail(std::string("'") + fn + "': " + what + " must be a 32- or 64-bit integer tile or scalar (i32, u32, i64 or " +
             "u64), got " + t.str(),
         loc);
  return t.bitWidth();
}

// `x` as the unsigned type `word` (signed integers of that width reinterpreted; literals taking it).
Tensor asWord(const TArg& x, Type word, const SourceLoc& loc) {
  if (x.kind() != TArg::Kind::Tensor) return detail::materialize(x, word, typeOf(x).shape(), loc);
  const Tensor& t = *x.tensor();
  return t.dtype() == word ? t : bitcast(t, word, loc);
}

std::array<Tensor, 4> philoxRounds(const char* fn, const TArg& seed, const std::array<const TArg*, 4>& counters,
                                   int rounds, const SourceLoc& loc) {
  if (rounds < 1) fail(std::string("'") + fn + "': n_rounds must be at least 1, got " + std::to_string(rounds), loc);
  Type seedType = typeOf(seed);
  if (!seedType.isInt() || seedType.isBool())
    fail(std::string("'") + fn + "': the seed must be an integer, got " + seedType.str(), loc);
  // The width comes from the counters that are tiles (literals adopt it); all literals count as i32, as in Triton.
  int width = 0;
  for (const TArg* c : counters) {
    if (c->kind() != TArg::Kind::Tensor) continue;
    int w = counterWidth(*c, fn, "the counters", loc);
    if (width && w != width)
      fail(std::string("'") + fn + "': the counters must all be 32-bit or all 64-bit integers, got " +
               std::to_string(width) + "- and " + std::to_string(w) + "-bit ones",
           loc);
    width = w;
  }
  if (!width) width = 32;
  const Type word = width == 32 ? Type::scalar(ScalarKind::U32) : Type::scalar(ScalarKind::U64);
  const PhiloxConstants& k = width == 32 ? kPhilox32 : kPhilox64;

  std::array<Tensor, 4> c;
  for (int i = 0; i < 4; ++i) c[i] = asWord(*counters[i], word, loc);
  Tensor seed64 = detail::materialize(seed, Type::scalar(ScalarKind::U64), seedType.shape(), loc);
  Tensor k0, k1;
  if (width == 32) {
    k0 = cast(TArg(seed64, loc) & TArg(0xFFFFFFFFul, loc), word, loc);
    k1 = cast(TArg(seed64, loc) >> TArg(32, loc), word, loc);
  } else {
    k0 = seed64;
    k1 = detail::materialize(TArg(0, loc), word, seedType.shape(), loc);
  }
  for (int r = 0; r < rounds; ++r) {
    Tensor hiB = umulhi(TArg(k.roundB, loc), c[2], loc), hiA = umulhi(TArg(k.roundA, loc), c[0], loc);
    Tensor loB = TArg(k.roundB, loc) * TArg(c[2], loc), loA = TArg(k.roundA, loc) * TArg(c[0], loc);
    Tensor x0 = TArg(hiB, loc) ^ TArg(c[1], loc);
    Tensor x2 = TArg(hiA, loc) ^ TArg(c[3], loc);
    c[0] = TArg(x0, loc) ^ TArg(k0, loc);
    c[2] = TArg(x2, loc) ^ TArg(k1, loc);
    c[1] = loB;
    c[3] = loA;
    if (r + 1 < rounds) {  // the last round's raised key is never used
      k0 = TArg(k0, loc) + TArg(k.keyA, loc);
      k1 = TArg(k1, loc) + TArg(k.keyB, loc);
    }
  }
  return c;
}

std::array<Tensor, 4> randint4xNamed(const char* fn, const TArg& seed, const TArg& offset, int rounds,
                                     const SourceLoc& loc) {
  counterWidth(offset, fn, "the offset", loc);
  const TArg zero(0, loc);
  return philoxRounds(fn, seed, {&offset, &zero, &zero, &zero}, rounds, loc);
}

Tensor uniformNamed(const char* fn, const TArg& x, const SourceLoc& loc) {
  const int width = counterWidth(x, fn, "the random bits", loc);
  const Type unsignedWord = Type::scalar(width == 32 ? ScalarKind::U32 : ScalarKind::U64);
  const Type signedWord = Type::scalar(width == 32 ? ScalarKind::I32 : ScalarKind::I64);
  Tensor bits = typeOf(x).isUnsigned() || x.kind() != TArg::Kind::Tensor
                    ? bitcast(detail::materialize(x, unsignedWord, typeOf(x).shape(), loc), signedWord, loc)
                    : *x.tensor();
  // Folding the negative half onto the positive one keeps every value below 2^31 (2^63); the scale, just under
  // 2^-31 (2^-63) in f32, then keeps the largest below 1.
  Tensor folded = where(TArg(bits, loc) < TArg(0, loc), -TArg(bits, loc) - TArg(1, loc), bits, loc);
  return TArg(folded, loc) * TArg(width == 32 ? 4.6566127342e-10 : 1.0842020432385337e-19, loc);
}

std::array<Tensor, 4> uniform4xNamed(const char* fn, const TArg& seed, const TArg& offset, int rounds,
                                     const SourceLoc& loc) {
  std::array<Tensor, 4> bits = randint4xNamed(fn, seed, offset, rounds, loc);
  for (Tensor& b : bits) b = uniformNamed(fn, b, loc);
  return bits;
}

// Box-Muller: two uniform draws to two independent standard normals.
std::array<Tensor, 2> pairToNormal(const Tensor& u1, const Tensor& u2, const SourceLoc& loc) {
  Tensor positive = maximum(TArg(1.0e-7, loc), u1, loc);  // log(0) would be -inf
  Tensor theta = TArg(6.283185307179586, loc) * TArg(u2, loc);
  Tensor radius = sqrt(TArg(-2.0, loc) * TArg(log(positive, loc), loc), loc);
  return {TArg(radius, loc) * TArg(cos(theta, loc), loc), TArg(radius, loc) * TArg(sin(theta, loc), loc)};
}

}  // namespace

std::array<Tensor, 4> philox(const TArg& seed, const TArg& c0, const TArg& c1, const TArg& c2, const TArg& c3,
                             int n_rounds, SourceLoc loc) {
  return philoxRounds("philox", seed, {&c0, &c1, &c2, &c3}, n_rounds, loc);
}

std::array<Tensor, 4> randint4x(const TArg& seed, const TArg& offset, int n_rounds, SourceLoc loc) {
  return randint4xNamed("randint4x", seed, offset, n_rounds, loc);
}

Tensor randint(const TArg& seed, const TArg& offset, int n_rounds, SourceLoc loc) {
  return randint4xNamed("randint", seed, offset, n_rounds, loc)[0];
}

Tensor uint_to_uniform_float(const TArg& x, SourceLoc loc) { return uniformNamed("uint_to_uniform_float", x, loc); }

Tensor rand(const TArg& seed, const TArg& offset, int n_rounds, SourceLoc loc) {
  return uniformNamed("rand", randint4xNamed("rand", seed, offset, n_rounds, loc)[0], loc);
}

std::array<Tensor, 4> rand4x(const TArg& seed, const TArg& offset, int n_rounds, SourceLoc loc) {
  return uniform4xNamed("rand4x", seed, offset, n_rounds, loc);
}

Tensor randn(const TArg& seed, const TArg& offset, int n_rounds, SourceLoc loc) {
  std::array<Tensor, 4> bits = randint4xNamed("randn", seed, offset, n_rounds, loc);
  return pairToNormal(uniformNamed("randn", bits[0], loc), uniformNamed("randn", bits[1], loc), loc)[0];
}

std::array<Tensor, 4> randn4x(const TArg& seed, const TArg& offset, int n_rounds, SourceLoc loc) {
  std::array<Tensor, 4> u = uniform4xNamed("randn4x", seed, offset, n_rounds, loc);
  auto [n1, n2] = pairToNormal(u[0], u[1], loc);
  auto [n3, n4] = pairToNormal(u[2], u[3], loc);
  return {n1, n2, n3, n4};
}

}  // namespace tessera
