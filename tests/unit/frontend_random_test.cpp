// The DSL's random numbers (tessera/Random.h): Philox against Random123's known-answer vectors, Triton's seeds,
// offsets and conversions against a host reference, in the interpreter and in eager mode, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "PhiloxReference.h"
#include "backends/interpreter/Interpreter.h"
#include "tessera/tessera.h"

using namespace tessera;
using interp::Buffer;
using random_reference::normalReference;
using random_reference::philoxReference;
using random_reference::randint4xReference;
using random_reference::randint4xReference64;
using random_reference::uniformReference;
using random_reference::uniformReference64;

namespace {

int g_line = 0;  // set by a kernel to the line of the DSL call expected to fail

template <class T> Buffer buffer(std::vector<T>& v) { return Buffer{v.data(), v.size() * sizeof(T)}; }

// Random123's known-answer vectors for Philox4x32-10 (counter, key, result).
struct Kat32 {
  std::array<uint32_t, 4> counter;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> result;
};
const Kat32 kKats32[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// A tile of 4 lanes: lane i runs Philox on counters[4 * w + i] (word w) with the key seeds[i].
void philoxLanes(Ptr<u32> counters, Ptr<u64> seeds, Ptr<u32> out) {
  Tensor lanes = arange(0, 4);
  Tensor seed = load(seeds + lanes);
  std::array<Tensor, 4> words =
      philox(seed, load(counters + lanes), load(counters + 4 + lanes), load(counters + 8 + lanes),
             load(counters + 12 + lanes));
  for (int w = 0; w < 4; ++w) store(out + 4 * w + lanes, words[w]);
}

}  // namespace

TEST(Random, TheHostReferenceMatchesRandom123sKnownAnswers) {
  for (const Kat32& kat : kKats32) EXPECT_EQ(philoxReference<uint32_t>(kat.counter, kat.key), kat.result);
  EXPECT_EQ(philoxReference<uint64_t>({0, 0, 0, 0}, {0, 0}),
            (std::array<uint64_t, 4>{0x16554d9eca36314c, 0xdb20fe9d672d0fdc, 0xd7e772cee186176b, 0x7e68b68aec7ba23b}));
  const uint64_t ones = ~uint64_t{0};
  EXPECT_EQ(philoxReference<uint64_t>({ones, ones, ones, ones}, {ones, ones}),
            (std::array<uint64_t, 4>{0x87b092c3013fe90b, 0x438c3c67be8d0224, 0x9cc7d7c69cd777b6, 0xa09caebf594f0ba0}));
}

TEST(Random, Philox4x32MatchesRandom123sKnownAnswers) {
  KernelDef k = kernel("philox_lanes", philoxLanes, {"counters", "seeds", "out"});
  std::vector<uint32_t> counters(16, 0);
  std::vector<uint64_t> seeds(4, 0);
  for (int lane = 0; lane < 3; ++lane) {
    for (int w = 0; w < 4; ++w) counters[4 * w + lane] = kKats32[lane].counter[w];
    seeds[lane] = uint64_t{kKats32[lane].key[1]} << 32 | kKats32[lane].key[0];  // the key is (low, high)
  }
  std::vector<uint32_t> out(16, 0), eager(16, 0);
  k.runInterpreter({1, 1, 1}, {buffer(counters), buffer(seeds), buffer(out)}, {});
  k.runEager({1, 1, 1}, {buffer(counters), buffer(seeds), buffer(eager)}, {});
  EXPECT_EQ(eager, out) << "eager mode differs from the interpreter";
  for (int lane = 0; lane < 3; ++lane)
    for (int w = 0; w < 4; ++w)
      EXPECT_EQ(out[4 * w + lane], kKats32[lane].result[w]) << "vector " << lane << " word " << w;
}

TEST(Random, RandintOfI32OffsetsAndASignedSeedIsTritonsStream) {
  // A negative i32 seed extends by its sign to the u64 seed, whose halves are the key; negative offsets are their
  // bits as the counter.
  KernelDef k = kernel("randint_i32", +[](Ptr<u32> out, Int seed, Int base, Const<int> ROUNDS) {
    Tensor offsets = base + arange(0, 256);
    std::array<Tensor, 4> words = randint4x(seed, offsets, ROUNDS);
    for (int w = 0; w < 4; ++w) store(out + w * 256 + arange(0, 256), words[w]);
    store(out + 1024 + arange(0, 256), randint(seed, offsets, ROUNDS));
  }, {"out", "seed", "base", "ROUNDS"});
  for (int64_t seed : {int64_t{0}, int64_t{42}, int64_t{-7}, int64_t{std::numeric_limits<int32_t>::min()}})
    for (int rounds : {10, 7}) {
      const int32_t base = -100;
      std::vector<uint32_t> out(1280, 0);
      k.runInterpreter({1, 1, 1}, {buffer(out), seed, int64_t{base}}, {{"ROUNDS", rounds}});
      for (int i = 0; i < 256; ++i) {
        std::array<uint32_t, 4> want =
            randint4xReference(static_cast<uint64_t>(seed), static_cast<uint32_t>(base + i), rounds);
        for (int w = 0; w < 4; ++w) ASSERT_EQ(out[w * 256 + i], want[w]) << "seed " << seed << " offset " << base + i;
        ASSERT_EQ(out[1024 + i], want[0]);
      }
    }
}

TEST(Random, RandintOfI64OffsetsRunsPhilox4x64WithTheSeedAsTheKey) {
  KernelDef k = kernel("randint_i64", +[](Ptr<u64> out, Long seed, Long base) {
    Tensor offsets = base + cast<i64>(arange(0, 64));
    std::array<Tensor, 4> words = randint4x(seed, offsets);
    for (int w = 0; w < 4; ++w) store(out + w * 64 + arange(0, 64), words[w]);
  }, {"out", "seed", "base"});
  const int64_t seed = -0x123456789ab, base = int64_t{1} << 40;
  std::vector<uint64_t> out(256, 0);
  k.runInterpreter({1, 1, 1}, {buffer(out), seed, base}, {});
  for (int i = 0; i < 64; ++i) {
    std::array<uint64_t, 4> want = randint4xReference64(static_cast<uint64_t>(seed), static_cast<uint64_t>(base + i));
    for (int w = 0; w < 4; ++w) ASSERT_EQ(out[w * 64 + i], want[w]) << "offset " << base + i << " word " << w;
  }
}

TEST(Random, UniformFloatsLieInZeroOneAndFoldTheSignedHalf) {
  KernelDef k = kernel("uniform", +[](Ptr<u32> bits, Ptr<u64> bits64, Ptr<f32> out, Ptr<f32> out64) {
    Tensor lanes = arange(0, 8);
    store(out + lanes, uint_to_uniform_float(load(bits + lanes)));
    store(out64 + lanes, uint_to_uniform_float(load(bits64 + lanes)));
  }, {"bits", "bits64", "out", "out64"});
  std::vector<uint32_t> bits{0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0x40000000};
  std::vector<uint64_t> bits64{0, 1, 0x7fffffffffffffff, 0x8000000000000000, ~uint64_t{0}, 0x4000000000000000, 3, 5};
  std::vector<float> out(8, NAN), out64(8, NAN), eager(8, NAN), eager64(8, NAN);
  k.runInterpreter({1, 1, 1}, {buffer(bits), buffer(bits64), buffer(out), buffer(out64)}, {});
  k.runEager({1, 1, 1}, {buffer(bits), buffer(bits64), buffer(eager), buffer(eager64)}, {});
  EXPECT_EQ(eager, out) << "eager mode differs from the interpreter";
  EXPECT_EQ(eager64, out64) << "eager mode differs from the interpreter";
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i], uniformReference(bits[i])) << "bits " << bits[i];
    EXPECT_EQ(out64[i], uniformReference64(bits64[i])) << "bits " << bits64[i];
    EXPECT_GE(out[i], 0.0f);
    EXPECT_LT(out[i], 1.0f);
    EXPECT_LT(out64[i], 1.0f);
  }
  // The extremes: all ones (-1) folds to 0; the largest magnitudes reach 1 - 2^-24, below 1.
  EXPECT_EQ(out[5], 0.0f);
  EXPECT_EQ(out[3], 1.0f - 0x1p-24f);
  EXPECT_EQ(out[4], 1.0f - 0x1p-24f);
}

TEST(Random, RandAndRandnFollowTheReferenceAndTheirDistributions) {
  constexpr int kBlock = 4096;
  KernelDef k = kernel("rand_randn", +[](Ptr<f32> uniform, Ptr<f32> normal, Ptr<f32> normal4, Int seed) {
    Tensor offsets = program_id(0) * kBlock + arange(0, kBlock);
    store(uniform + offsets, rand(seed, offsets));
    store(normal + offsets, randn(seed, offsets));
    std::array<Tensor, 4> n4 = randn4x(seed, offsets);
    for (int w = 0; w < 4; ++w) store(normal4 + w * 4 * kBlock + offsets, n4[w]);
  }, {"uniform", "normal", "normal4", "seed"});
  const int programs = 4, n = programs * kBlock;
  const int64_t seed = 1234;
  std::vector<float> uniform(n, NAN), normal(n, NAN), normal4(4 * n, NAN);
  k.runInterpreter({programs, 1, 1}, {buffer(uniform), buffer(normal), buffer(normal4), seed}, {});
  double sum = 0, sumSquares = 0, usum = 0;
  for (int i = 0; i < n; ++i) {
    std::array<uint32_t, 4> bits = randint4xReference(seed, static_cast<uint32_t>(i));
    ASSERT_EQ(uniform[i], uniformReference(bits[0])) << "offset " << i;
    ASSERT_NEAR(normal[i], normalReference(uniformReference(bits[0]), uniformReference(bits[1])), 1e-5) << i;
    // randn4x: (n1, n2) from words 0 and 1, (n3, n4) from words 2 and 3; n1 is randn.
    ASSERT_EQ(normal4[i], normal[i]);
    ASSERT_NEAR(normal4[2 * n + i], normalReference(uniformReference(bits[2]), uniformReference(bits[3])), 1e-5) << i;
    usum += uniform[i];
    for (int w = 0; w < 4; ++w) {
      sum += normal4[w * n + i];
      sumSquares += double(normal4[w * n + i]) * normal4[w * n + i];
    }
  }
  // 4 x 16384 normals: the mean's standard error is 1/256, the variance's about 1/180.
  EXPECT_NEAR(sum / (4 * n), 0.0, 0.02);
  EXPECT_NEAR(sumSquares / (4 * n), 1.0, 0.03);
  EXPECT_NEAR(usum / n, 0.5, 0.01);
  // n2 is the sine of the same pair: n1^2 + n2^2 = -2 log u1.
  std::array<uint32_t, 4> bits = randint4xReference(seed, 7);
  EXPECT_NEAR(double(normal4[7]) * normal4[7] + double(normal4[n + 7]) * normal4[n + 7],
              -2.0 * std::log(std::fmax(1e-7, uniformReference(bits[0]))), 1e-4);
}

TEST(Random, MisuseNamesTheFunctionAndTheAuthorsLine) {
  auto expectError = [](KernelDef k, const std::string& substring) {
    try {
      k.trace({});
      ADD_FAILURE() << "expected an error containing '" << substring << "'";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(substring), std::string::npos) << e.what();
      EXPECT_EQ(e.location().line, static_cast<unsigned>(g_line)) << e.what();
      EXPECT_NE(e.location().file.find("frontend_random_test.cpp"), std::string::npos) << e.what();
    }
  };
  expectError(kernel("float_offset", +[](Ptr<f32> out, Int seed) {
    Tensor x = cast<f32>(arange(0, 16));
    g_line = __LINE__ + 1;
    store(out + arange(0, 16), rand(seed, x));
  }, {"out", "seed"}),
              "'rand': the offset must be a 32- or 64-bit integer tile or scalar (i32, u32, i64 or u64), got "
              "tile<16xf32>");
  expectError(kernel("narrow_offset", +[](Ptr<u32> out, Int seed) {
    Tensor x = cast<i16>(arange(0, 16));
    g_line = __LINE__ + 1;
    store(out + arange(0, 16), randint(seed, x));
  }, {"out", "seed"}), "'randint': the offset must be a 32- or 64-bit integer");
  expectError(kernel("float_seed", +[](Ptr<f32> out, Float seed) {
    g_line = __LINE__ + 1;
    store(out + arange(0, 16), randn(seed, arange(0, 16)));
  }, {"out", "seed"}), "'randn': the seed must be an integer, got f32");
  expectError(kernel("mixed_widths", +[](Ptr<u32> out, Int seed) {
    Tensor c = arange(0, 16);
    g_line = __LINE__ + 1;
    std::array<Tensor, 4> w = philox(seed, c, cast<i64>(c), 0, 0);
  }, {"out", "seed"}), "'philox': the counters must all be 32-bit or all 64-bit integers, got 32- and 64-bit ones");
  expectError(kernel("no_rounds", +[](Ptr<u32> out, Int seed) {
    g_line = __LINE__ + 1;
    store(out + arange(0, 16), randint(seed, arange(0, 16), 0));
  }, {"out", "seed"}), "'randint': n_rounds must be at least 1, got 0");
  expectError(kernel("float_bits", +[](Ptr<f32> out) {
    g_line = __LINE__ + 1;
    store(out + arange(0, 16), uint_to_uniform_float(cast<f32>(arange(0, 16))));
  }, {"out"}), "'uint_to_uniform_float': the random bits must be a 32- or 64-bit integer");
}

TEST(Random, DrawsInsideTracedLoopsAndBranches) {
  // rand's rounds reassign their own variables; inside a traced loop body and a branch that must stay local.
  KernelDef k = kernel("loop_draws", +[](Ptr<f32> out, Int seed, Int flip) {
    Tensor lanes = arange(0, 64);
    Tensor acc = zeros<f32>({64});
    for (Tensor i : range(0, 3)) acc += rand(seed, lanes + i * 64);
    if_(flip != 0, [&] { acc = acc + randn(seed, lanes); });
    store(out + lanes, acc);
  }, {"out", "seed", "flip"});
  for (int64_t flip : {0, 1}) {
    std::vector<float> out(64, NAN), eager(64, NAN);
    k.runInterpreter({1, 1, 1}, {buffer(out), int64_t{99}, flip}, {});
    k.runEager({1, 1, 1}, {buffer(eager), int64_t{99}, flip}, {});
    EXPECT_EQ(eager, out);
    for (int i = 0; i < 64; ++i) {
      float want = 0;
      for (int j = 0; j < 3; ++j)
        want += uniformReference(randint4xReference(99, static_cast<uint32_t>(i + 64 * j))[0]);
      if (flip) {
        std::array<uint32_t, 4> bits = randint4xReference(99, static_cast<uint32_t>(i));
        want += static_cast<float>(normalReference(uniformReference(bits[0]), uniformReference(bits[1])));
      }
      EXPECT_NEAR(out[i], want, 1e-5) << "lane " << i << " flip " << flip;
    }
  }
}
