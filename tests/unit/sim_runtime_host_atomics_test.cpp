// The kernel's atomics as host atomics (jit/sim/runtime/HostAtomics.h): every operation and width, f16
// rounding, and exact totals under contention from several host threads.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <thread>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/HostAtomics.h"

namespace tessera::sim {
namespace {

TEST(SimRuntimeHostAtomics, IntegerOperationsReturnTheOldValue) {
  uint32_t v = 10;
  EXPECT_EQ(*hostAtomicRmw(kAtomicAdd, &v, 5, 4), 10u);
  EXPECT_EQ(*hostAtomicRmw(kAtomicSub, &v, 3, 4), 15u);
  EXPECT_EQ(*hostAtomicRmw(kAtomicAnd, &v, 0x6, 4), 12u);
  EXPECT_EQ(*hostAtomicRmw(kAtomicOr, &v, 0x9, 4), 4u);
  EXPECT_EQ(*hostAtomicRmw(kAtomicXor, &v, 0xF, 4), 13u);
  EXPECT_EQ(*hostAtomicRmw(kAtomicXchg, &v, 77, 4), 2u);
  EXPECT_EQ(v, 77u);
  // Signed and unsigned max/min differ on negative numbers.
  int32_t s = -5;
  hostAtomicRmw(kAtomicMax, &s, static_cast<uint32_t>(-9), 4);
  EXPECT_EQ(s, -5);
  hostAtomicRmw(kAtomicUMax, &s, static_cast<uint32_t>(-9), 4);
  EXPECT_EQ(s, -5);  // 0xFFFFFFFB > 0xFFFFFFF7
  hostAtomicRmw(kAtomicMin, &s, 3, 4);
  EXPECT_EQ(s, -5);
  hostAtomicRmw(kAtomicUMin, &s, 3, 4);
  EXPECT_EQ(s, 3);
  int8_t b = -1;
  hostAtomicRmw(kAtomicMax, &b, 0x7F, 1);
  EXPECT_EQ(b, 127);
  uint64_t w = uint64_t{1} << 40;
  EXPECT_EQ(*hostAtomicRmw(kAtomicAdd, &w, 1, 8), uint64_t{1} << 40);
  EXPECT_EQ(w, (uint64_t{1} << 40) + 1);
}

TEST(SimRuntimeHostAtomics, FloatOperationsOnEveryWidth) {
  float f = 1.5f;
  hostAtomicRmw(kAtomicFAdd, &f, std::bit_cast<uint32_t>(2.25f), 4);
  EXPECT_EQ(f, 3.75f);
  hostAtomicRmw(kAtomicFMax, &f, std::bit_cast<uint32_t>(std::nanf("")), 4);
  EXPECT_EQ(f, 3.75f);  // max with NaN keeps the number
  hostAtomicRmw(kAtomicFMin, &f, std::bit_cast<uint32_t>(-1.0f), 4);
  EXPECT_EQ(f, -1.0f);
  double d = 0.5;
  hostAtomicRmw(kAtomicFAdd, &d, std::bit_cast<uint64_t>(0.25), 8);
  EXPECT_EQ(d, 0.75);
  uint16_t h = ir::encodeF16(1.0);
  hostAtomicRmw(kAtomicFAdd, &h, ir::encodeF16(0.5), 2);
  EXPECT_EQ(ir::decodeF16(h), 1.5);
  h = ir::encodeF16(2048.0);  // f16 spacing is 2 here: 2049 is a tie and rounds to the even 2048, 2051 up to 2052
  hostAtomicRmw(kAtomicFAdd, &h, ir::encodeF16(1.0), 2);
  EXPECT_EQ(ir::decodeF16(h), 2048.0);
  h = ir::encodeF16(2050.0);
  hostAtomicRmw(kAtomicFAdd, &h, ir::encodeF16(1.0), 2);
  EXPECT_EQ(ir::decodeF16(h), 2052.0);
  h = ir::encodeF16(65504.0);  // past the largest half: infinity
  hostAtomicRmw(kAtomicFAdd, &h, ir::encodeF16(32.0), 2);
  EXPECT_EQ(h, 0x7C00);
  uint8_t byte = 0;
  EXPECT_FALSE(hostAtomicRmw(kAtomicFAdd, &byte, 1, 1).has_value());
  EXPECT_FALSE(hostAtomicRmw(99, &f, 1, 4).has_value());
  EXPECT_FALSE(hostAtomicRmw(kAtomicAdd, &f, 1, 3).has_value());
}

TEST(SimRuntimeHostAtomics, CompareAndSwap) {
  uint16_t v = 7;
  EXPECT_EQ(*hostAtomicCas(&v, 8, 9, 2), 7u);  // mismatch: unchanged
  EXPECT_EQ(v, 7u);
  EXPECT_EQ(*hostAtomicCas(&v, 7, 9, 2), 7u);
  EXPECT_EQ(v, 9u);
  EXPECT_FALSE(hostAtomicCas(&v, 0, 0, 16).has_value());
}

TEST(SimRuntimeHostAtomics, ContendedTotalsAreExact) {
  uint32_t counter = 0;
  float sum = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        hostAtomicRmw(kAtomicAdd, &counter, 1, 4);
        hostAtomicRmw(kAtomicFAdd, &sum, std::bit_cast<uint32_t>(1.0f), 4);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter, 40000u);
  EXPECT_EQ(sum, 40000.0f);
}

}  // namespace
}  // namespace tessera::sim
