// The MFMA lowering of `dot` on AMDGPU (v_mfma_f32_16x16x16f16 / 16x16x16bf16_1k, v_mfma_i32_16x16x32_i8 on gfx942
// and v_mfma_i32_16x16x16i8 on gfx90a; wave64). No AMD GPU exists on
// any machine these tests run on, so nothing here executes on AMD hardware. Correctness is checked on the host:
//  * the index arithmetic (MfmaFragments.h) and the layout policy's accumulator layout against AMD's documented
//    register layout of these instructions, which this file encodes independently, through a simulation of a
//    whole dot (LDS staging, per-lane operand loads, MFMA semantics, accumulator registers) compared with A·B + C;
//  * the code objects (llvm-objdump-19 -d, llvm-readelf-19 --notes): v_mfma appears for f16/bf16 dots and the
//    tutorial matmul on gfx90a and gfx942, the i8 forms for i8 dots, none for f32 dots, and no private segment
//    (no spills).
// The lowering of laid-out dots to MFMA intrinsics (without the policy) is tests/lit/amdgpu/mfma-lowering.tir.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "AMDGPUTestUtil.h"
#include "backends/amdgpu/MfmaFragments.h"
#include "backends/amdgpu/MfmaLayoutPolicy.h"
#include "backends/amdgpu/MfmaLinearLayouts.h"
#include "backends/common/ThreadMap.h"
#include "ir/Layout.h"
#include "transforms/PassManager.h"
#include "tessera/kernels/matmul.h"

namespace tessera {
namespace {

using backends::Coords;
using backends::ThreadMap;
using namespace backends::amdgpu;
using namespace tessera::testing;

// ---- AMD's register layout of the MFMA instructions (wave64), written out here independently of the code under
// test. 16x16 blocks: with E = K / 4 operand items per lane (4 for v_mfma_f32_16x16x16{f16,bf16_1k} and
// v_mfma_i32_16x16x16i8, 8 for v_mfma_i32_16x16x32_i8), item i (0..E-1) of lane l's A operand is
// A[l % 16][E * (l / 16) + i], of its B operand B[E * (l / 16) + i][l % 16], and item i (0..3) of its C/D vector
// D[4 * (l / 16) + i][l % 16]. 32x32 blocks (v_mfma_f32_32x32x8{f16,bf16_1k}, K 8, E 4): A[l % 32][4 * (l / 32) + i],
// B[4 * (l / 32) + i][l % 32], and item i (0..15) of C/D D[8 * (i / 4) + 4 * (l / 32) + i % 4][l % 32].
struct RC {
  int64_t row, col;
};
RC amdAElement(int64_t lane, int item, int64_t E = 4, int64_t block = 16) {
  return {lane % block, E * (lane / block) + item};
}
RC amdBElement(int64_t lane, int item, int64_t E = 4, int64_t block = 16) {
  return {E * (lane / block) + item, lane % block};
}
RC amdDElement(int64_t lane, int item, int64_t block = 16) {
  if (block == 32) return {8 * (item / 4) + 4 * (lane / 32) + item % 4, lane % 32};
  return {4 * (lane / 16) + item, lane % 16};
}

using LaneVectors = std::vector<std::vector<double>>;  // [lane][item]

// The instruction's semantics: D = A * B + C over the block x block x K block (K = 64 E / block), operands as the
// lanes hold them.
LaneVectors simulateMfma(const LaneVectors& a, const LaneVectors& b, const LaneVectors& c, int64_t block = 16) {
  const int64_t E = static_cast<int64_t>(a.at(0).size()), K = 64 * E / block, items = block * block / 64;
  std::vector<std::vector<double>> A(block, std::vector<double>(K)), B(K, std::vector<double>(block)),
      C(block, std::vector<double>(block));
  for (int64_t l = 0; l < 64; ++l) {
    for (int i = 0; i < E; ++i) {
      RC ea = amdAElement(l, i, E, block), eb = amdBElement(l, i, E, block);
      A[ea.row][ea.col] = a[l][i];
      B[eb.row][eb.col] = b[l][i];
    }
    for (int i = 0; i < items; ++i) C[amdDElement(l, i, block).row][amdDElement(l, i, block).col] = c[l][i];
  }
  LaneVectors d(64, std::vector<double>(items));
  for (int64_t l = 0; l < 64; ++l)
    for (int i = 0; i < items; ++i) {
      RC e = amdDElement(l, i, block);
      double s = C[e.row][e.col];
      for (int k = 0; k < K; ++k) s += A[e.row][k] * B[k][e.col];
      d[l][i] = s;
    }
  return d;
}

// A dot kernel before layout assignment: loads a (M x K), b (K x N), c (M x N), stores dot(a, b, c) to c.
std::string layoutFreeDot(const std::string& in, int64_t M, int64_t N, int64_t K) {
  return dotKernel({.in = in, .acc = in == "i8" ? "i32" : "f32", .m = M, .n = N, .k = K});
}

const ir::Op* findDot(const ir::Module& m) {
  const ir::Op* dot = nullptr;
  m.functions().at(0)->walk([&](ir::Op* op) {
    if (!dot && op->is(ir::OpKind::Dot)) dot = op;
  });
  return dot;
}

transforms::PassOptions wave64(int numWarps, const std::string& arch = "") {
  transforms::PassOptions options;
  options.numWarps = numWarps;
  options.warpSize = 64;
  options.arch = arch;
  return options;
}

// The accumulator layout the AMDGPU policy gives this dot.
std::optional<ir::Layout> policyLayout(const std::string& in, int64_t M, int64_t N, int64_t K, int numWarps,
                                       const std::string& arch = "", int matrixInstrSize = 0) {
  std::unique_ptr<ir::Module> m = ir::parseModule(layoutFreeDot(in, M, N, K), "policy.tir");
  const ir::Op* dot = findDot(*m);
  if (!dot) throw Error("no dot in the test kernel");
  transforms::PassOptions options = wave64(numWarps, arch);
  options.matrixInstrSize = matrixInstrSize;
  AMDGPULayoutPolicy policy(options);
  std::optional<ir::Layout> result = policy.resultLayout(*dot, 0);
  EXPECT_EQ(result, policy.operandLayout(*dot, 2)) << "accumulator and result must share the layout";
  return result;
}

// Simulates the whole lowering of c + a·b with its accumulator in `layout`, with the documented MFMA semantics and
// lane layout, and compares every thread's every accumulator register with the exact result. A transposed plan
// hands the instruction B's vectors as its A operand and A's as its B (D^T = B^T A^T); with `aFromRegisters`, A's
// vectors are the registers of A laid out in `layout` too (a chained dot's P), found by A's own plan. The
// instruction's K is `stepK` and the inputs `elementBytes` wide (16 and 2: f16 / bf16; 32 or 16 and 1: i8; 8 and 2
// for a layout of 32x32 blocks: v_mfma_f32_32x32x8).
void simulateDotIn(const ir::Layout& layout, int64_t M, int64_t N, int64_t K, int numWarps, unsigned seed,
                   bool aFromRegisters = false, int64_t stepK = 16, int64_t elementBytes = 2) {
  SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " warps " +
               std::to_string(numWarps) + (aFromRegisters ? " A in registers" : "") + " instruction K " +
               std::to_string(stepK) + ", " + std::to_string(elementBytes) + "-byte inputs");
  ThreadMap acc = ThreadMap::build(layout, {M, N}, "sim");
  ASSERT_EQ(acc.warpSize, 64);
  std::optional<MfmaAccumulatorPlan> plan = planMfmaAccumulator(acc);
  ASSERT_TRUE(plan.has_value());
  const int64_t block = plan->block, E = mfmaOperandElements(stepK, block), items = mfmaAccumulatorRegisters(block);
  ThreadMap amap = ThreadMap::build(layout, {M, K}, "a");
  std::optional<MfmaAccumulatorPlan> aPlan;
  std::map<std::pair<int64_t, int64_t>, const MfmaFragment*> aVectors;  // (row, K step) -> A's registers
  if (aFromRegisters) {
    aPlan = planMfmaAccumulator(amap);
    ASSERT_TRUE(aPlan && aPlan->transposed && plan->transposed);
    for (const MfmaFragment& f : aPlan->fragments) aVectors[{f.row, f.col}] = &f;
  }

  // Small integers: every product and sum is exact in f16 or i8 inputs and f32 or i32 accumulation.
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<double> A(M * K), B(K * N), C(M * N);
  for (double& x : A) x = small(rng);
  for (double& x : B) x = small(rng);
  for (double& x : C) x = small(rng);

  // LDS (a shared buffer or the staging ranges): each a permutation of its portable-lowering range (no element
  // lost or written twice).
  const ir::Layout aLds = mfmaOperandLdsLayout(K, elementBytes, 0), bLds = mfmaOperandLdsLayout(K, elementBytes, 1);
  auto aIndex = [&](int64_t r, int64_t k) { return aLds.sharedOffset({M, K}, {r, k}); };
  auto bIndex = [&](int64_t k, int64_t c) { return bLds.sharedOffset({K, N}, {k, c}); };
  std::vector<double> aSmem(M * K, 0), bSmem(K * N, 0);
  std::set<int64_t> aSeen, bSeen;
  for (int64_t r = 0; r < M; ++r)
    for (int64_t k = 0; k < K; ++k) {
      int64_t i = aIndex(r, k);
      ASSERT_TRUE(i >= 0 && i < M * K && aSeen.insert(i).second);
      aSmem[i] = A[r * K + k];
    }
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < N; ++c) {
      int64_t i = bIndex(k, c);
      ASSERT_TRUE(i >= 0 && i < K * N && bSeen.insert(i).second);
      bSmem[i] = B[k * N + c];
    }

  std::set<std::pair<int64_t, int64_t>> covered;
  for (int64_t w = 0; w < numWarps; ++w) {
    Coords warpPart(2, 0);
    for (size_t j = 0; j < acc.warpBases.size(); ++j)
      if ((w >> j) & 1) warpPart = backends::xorCoords(warpPart, acc.warpBases[j]);
    // Per fragment: the lanes' C vectors from their accumulator registers.
    std::vector<LaneVectors> d(plan->fragments.size(), LaneVectors(64, std::vector<double>(items)));
    for (size_t f = 0; f < plan->fragments.size(); ++f)
      for (int64_t l = 0; l < 64; ++l)
        for (int i = 0; i < items; ++i) {
          Coords at = acc.coordsOf(plan->fragments[f].regs[i], w, l);
          d[f][l][i] = C.at(at[0] * N + at[1]);
        }
    for (int64_t k0 = 0; k0 < K; k0 += stepK)
      for (size_t f = 0; f < plan->fragments.size(); ++f) {
        LaneVectors a(64, std::vector<double>(E)), b(64, std::vector<double>(E));
        for (int64_t l = 0; l < 64; ++l) {
          MfmaOperandOrigin o = mfmaOperandOrigin(l, E, block);
          // One aligned load per operand: the vector's E elements are consecutive in LDS.
          const int64_t aAt = aIndex(warpPart[0] + plan->fragments[f].row + o.outer, k0 + o.k);
          const int64_t bAt = bIndex(k0 + o.k, warpPart[1] + plan->fragments[f].col + o.outer);
          ASSERT_EQ(aAt % E, 0);
          ASSERT_EQ(bAt % E, 0);
          for (int i = 0; i < E; ++i) {
            a[l][i] = aSmem.at(aAt + i);
            b[l][i] = bSmem.at(bAt + i);
          }
          if (aFromRegisters) {
            // A's block at (row, K origin) holds this K step's vector in registers 4 j .. 4 j + 3 (j: the step
            // within a 32-wide block; 0 for 16x16 blocks, one step each).
            auto it = aVectors.find({plan->fragments[f].row, k0 & ~(block - 1)});
            ASSERT_NE(it, aVectors.end());
            const int64_t first = (k0 % block) / stepK * 4;
            for (int i = 0; i < 4; ++i) {
              const Coords at = amap.coordsOf(it->second->regs[first + i], w, l);
              a[l][i] = A.at(at[0] * K + at[1]);
            }
          }
        }
        d[f] = plan->transposed ? simulateMfma(b, a, d[f], block) : simulateMfma(a, b, d[f], block);
      }
    // Every accumulator register of every lane holds (A·B + C) at its coordinates.
    ASSERT_EQ(static_cast<int64_t>(plan->regSlot.size()), acc.numRegs());
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < acc.numRegs(); ++r) {
        Coords at = acc.coordsOf(r, w, l);
        double expect = C[at[0] * N + at[1]];
        for (int64_t k = 0; k < K; ++k) expect += A[at[0] * K + k] * B[k * N + at[1]];
        const auto& [frag, slot] = plan->regSlot[r];
        ASSERT_EQ(d[frag][l][slot], expect) << "warp " << w << " lane " << l << " reg " << r;
        covered.insert({at[0], at[1]});
      }
  }
  EXPECT_EQ(static_cast<int64_t>(covered.size()), M * N) << "every output element is computed";
}

void simulateDot(int64_t M, int64_t N, int64_t K, int numWarps, unsigned seed, const std::string& in = "f16",
                 const std::string& arch = "", int matrixInstrSize = 0) {
  std::optional<ir::Layout> layout = policyLayout(in, M, N, K, numWarps, arch, matrixInstrSize);
  ASSERT_TRUE(layout.has_value());
  const bool i8 = in == "i8";
  const bool large = ThreadMap::build(*layout, {M, N}, "acc").laneBases.at(4) == Coords{0, 16};  // 32 lanes per row
  simulateDotIn(*layout, M, N, K, numWarps, seed, false, large ? 8 : i8 && arch == "gfx942" ? 32 : 16, i8 ? 1 : 2);
}

TEST(AMDGPUMfma, HostSimulationMatchesExactProduct) {
  unsigned seed = 1;
  for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
           {16, 16, 16, 1}, {32, 32, 16, 4}, {64, 64, 32, 4}, {64, 32, 64, 2}, {16, 64, 16, 8}, {128, 64, 32, 4},
           {32, 128, 64, 8}})
    simulateDot(M, N, K, static_cast<int>(warps), seed++);
}

// Asked for 32x32 instructions (matrixInstrSize 32): v_mfma_f32_32x32x8, 16 C/D registers per lane and block, K
// steps of 8, where M is a multiple of 32 and N of 32 per wave.
TEST(AMDGPUMfma, LargeBlockHostSimulationMatchesExactProduct) {
  unsigned seed = 30;
  for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
           {32, 32, 16, 1}, {64, 128, 32, 4}, {128, 128, 64, 4}, {32, 256, 16, 8}, {128, 256, 32, 8}})
    for (const char* in : {"f16", "bf16"}) {
      ASSERT_EQ(policyLayout(in, M, N, K, static_cast<int>(warps), "gfx942", 32),
                ir::Layout::blocked({4, 1}, {2, 32}, {1, static_cast<int>(warps)}, {1, 0}));
      simulateDot(M, N, K, static_cast<int>(warps), seed++, in, "gfx942", 32);
    }
}

// i8: v_mfma_i32_16x16x32_i8 on gfx942 (8 bytes per lane and operand), v_mfma_i32_16x16x16i8 on gfx90a (4).
TEST(AMDGPUMfma, I8HostSimulationMatchesExactProduct) {
  unsigned seed = 50;
  for (const char* arch : {"gfx942", "gfx90a"})
    for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
             {16, 16, 32, 1}, {64, 64, 64, 4}, {128, 128, 64, 8}, {32, 128, 128, 8}, {128, 64, 32, 4}})
      simulateDot(M, N, K, static_cast<int>(warps), seed++, "i8", arch);
}

// Chained dots' layout (MfmaLayoutPolicy.h): the transposed fragments, D^T = B^T A^T, with A from LDS (attention's
// Q K^T) and from registers in the same layout (P V).
TEST(AMDGPUMfma, TransposedFragmentsMatchExactProductWithAFromLdsOrRegisters) {
  unsigned seed = 100;
  for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
           {16, 16, 16, 1}, {64, 32, 64, 4}, {128, 64, 32, 8}, {128, 128, 64, 8}, {64, 64, 64, 4}})
    for (bool aFromRegisters : {false, true}) {
      const ir::Layout chained = ir::Layout::blocked({1, 4}, {16, 4}, {static_cast<int>(warps), 1}, {0, 1});
      simulateDotIn(chained, M, N, K, static_cast<int>(warps), seed++, aFromRegisters);
    }
}

// The same on 32x32x8 (matrixInstrSize 32): lane l holds row l % 32 and columns 8 j + 4 (l / 32) + {0..3} of each 32x32
// block, P's K steps of 8 being registers 4 j .. 4 j + 3 of its blocks.
TEST(AMDGPUMfma, LargeTransposedFragmentsMatchExactProductWithAFromLdsOrRegisters) {
  unsigned seed = 150;
  for (auto [M, N, K, warps] : std::vector<std::array<int64_t, 4>>{
           {32, 32, 32, 1}, {128, 64, 64, 4}, {64, 128, 32, 2}, {256, 128, 128, 8}})
    for (bool aFromRegisters : {false, true}) {
      const ir::Layout chained = ir::Layout::blocked({1, 4}, {32, 2}, {static_cast<int>(warps), 1}, {0, 1});
      simulateDotIn(chained, M, N, K, static_cast<int>(warps), seed++, aFromRegisters, /*stepK=*/8);
    }
}

// The bank model of gfx9 LDS (32 banks of 4 bytes; a ds_read_b64 is served 16 lanes at a time, a ds_read_b32 32):
// the lanes of one phase read 128 bytes, one 8-byte chunk of 16 consecutive rows (A's rows or B's columns) at one K
// offset (with 4-byte vectors, both halves of it); they must touch 32 distinct banks. For f16 / bf16 (8-byte
// vectors), gfx942's i8 (8) and gfx90a's i8 (4); with and without the row permutation B's buffers of short rows
// take (given their rows: `outer`).
TEST(AMDGPUMfma, OperandLdsLayoutsAreConflictFreeForTheOperandReads) {
  struct Form {
    int64_t stepK, elementBytes;
  };
  for (const Form form : {Form{16, 2}, Form{32, 1}, Form{16, 1}})
    for (int64_t K : {32, 64, 128, 256})
      for (unsigned index : {0u, 1u})
        for (int64_t outer : {0, 64, 256}) {
          SCOPED_TRACE("K " + std::to_string(K) + " operand " + std::to_string(index) + ", instruction K " +
                       std::to_string(form.stepK) + ", " + std::to_string(form.elementBytes) + "-byte inputs, " +
                       std::to_string(outer) + " rows");
          const ir::Layout lds = mfmaOperandLdsLayout(K, form.elementBytes, index, outer);
          const int64_t E = mfmaOperandElements(form.stepK), vectorBytes = E * form.elementBytes;
          const int64_t lanesPerPhase = 128 / vectorBytes;
          const int64_t outerSize = outer ? outer : 64;
          using Coords2 = std::vector<int64_t>;
          const Coords2 shape = index == 0 ? Coords2{outerSize, K} : Coords2{K, outerSize};
          auto byteOf = [&](int64_t row, int64_t k) {
            return form.elementBytes * lds.sharedOffset(shape, index == 0 ? Coords2{row, k} : Coords2{k, row});
          };
          for (int64_t block = 0; block < outerSize; block += 16)
            for (int64_t k0 = 0; k0 < K; k0 += form.stepK)
              for (int64_t phase = 0; phase < 64 / lanesPerPhase; ++phase) {
                std::set<int64_t> banks;
                for (int64_t lane = lanesPerPhase * phase; lane < lanesPerPhase * (phase + 1); ++lane) {
                  MfmaOperandOrigin o = mfmaOperandOrigin(lane, E);
                  const int64_t at = byteOf(block + o.outer, k0 + o.k);
                  ASSERT_EQ(at % vectorBytes, 0);
                  for (int64_t word = 0; word < vectorBytes / 4; ++word) banks.insert((at / 4 + word) % 32);
                }
                EXPECT_EQ(banks.size(), 32u) << "rows from " << block << ", k " << k0 << ", phase " << phase;
              }
        }
  // The permutation applies where it is meant to: B with rows of 64 bytes and enough of them.
  EXPECT_EQ(mfmaOperandLdsLayout(32, 2, 1, 64).kind(), ir::Layout::Kind::LinearShared);
  EXPECT_EQ(mfmaOperandLdsLayout(64, 1, 1, 64).kind(), ir::Layout::Kind::LinearShared);
  EXPECT_EQ(mfmaOperandLdsLayout(32, 2, 0, 64).kind(), ir::Layout::Kind::Shared);
  EXPECT_EQ(mfmaOperandLdsLayout(64, 2, 1, 64).kind(), ir::Layout::Kind::Shared);
}

TEST(AMDGPUMfma, PolicyAsksForOperandBuffersOnlyForMfmaDots) {
  auto sharedLayout = [](const std::string& in, int64_t M, int64_t N, int64_t K, unsigned index,
                         int64_t ldsBytes = 0, int stages = 3, bool inLoop = true) {
    std::unique_ptr<ir::Module> m = ir::parseModule(
        dotKernel({.in = in, .acc = in == "i8" ? "i32" : "f32", .m = M, .n = N, .k = K, .inLoop = inLoop}),
        "policy.tir");
    transforms::PassOptions options = wave64(4);
    options.maxSharedBytes = ldsBytes;
    options.numStages = stages;
    return AMDGPULayoutPolicy(options).dotOperandSharedLayout(*findDot(*m), index);
  };
  EXPECT_EQ(sharedLayout("f16", 64, 64, 32, 0), ir::Layout::shared(4, 2, 8, {1, 0}));
  EXPECT_EQ(sharedLayout("bf16", 64, 64, 64, 1), ir::Layout::shared(4, 1, 16, {0, 1}));
  EXPECT_EQ(sharedLayout("f16", 32, 16, 16, 1), ir::Layout::shared(4, 4, 4, {0, 1}));
  // i8: 8 elements make the 8-byte chunk (K = 32: 4 chunks a row, 4 rows a 128-byte line).
  EXPECT_EQ(sharedLayout("i8", 64, 64, 32, 0), ir::Layout::shared(8, 4, 4, {1, 0}));
  EXPECT_FALSE(sharedLayout("f32", 64, 64, 32, 0));
  EXPECT_FALSE(sharedLayout("f16", 64, 64, 8, 0));  // not a multiple of the 16x16x16 block
  EXPECT_FALSE(sharedLayout("f16", 64, 64, 32, 2));  // the accumulator stays in registers
  // Operands loaded in a loop, in 64 KiB of LDS: 3 stages of 128x32 A and 32x128 B (48 KiB) fit; of 128x64 and
  // 64x128 (96 KiB) not, but 2 (64 KiB) do, which pipeline-loops then takes; 2 stages of 128x64 and 64x256 (96 KiB)
  // do not, but one buffer each (48 KiB) does, which pipeline-loops fills an iteration ahead from registers; 128x128
  // and 128x256 (96 KiB in one stage) do not.
  EXPECT_TRUE(sharedLayout("f16", 128, 128, 32, 0, 65536, 3));
  EXPECT_TRUE(sharedLayout("f16", 128, 128, 64, 0, 65536, 3));
  EXPECT_TRUE(sharedLayout("f16", 128, 128, 64, 1, 65536, 2));
  EXPECT_TRUE(sharedLayout("f16", 128, 256, 64, 0, 65536, 3));
  EXPECT_TRUE(sharedLayout("f16", 128, 256, 64, 1, 65536, 2));
  EXPECT_TRUE(sharedLayout("f16", 128, 256, 64, 1, 65536, 1));
  EXPECT_FALSE(sharedLayout("f16", 128, 256, 128, 0, 65536, 3));
  EXPECT_FALSE(sharedLayout("f16", 128, 256, 128, 1, 65536, 1));
  // Loaded outside any loop, a buffer is copied once whatever num_stages says: 128x64 and 64x256 (48 KiB) fit, 128x128
  // and 128x256 (96 KiB) do not.
  EXPECT_TRUE(sharedLayout("f16", 128, 256, 64, 0, 65536, 3, /*inLoop=*/false));
  EXPECT_FALSE(sharedLayout("f16", 128, 256, 128, 0, 65536, 3, /*inLoop=*/false));
}

TEST(AMDGPUMfma, PolicyChoosesFragmentLayoutOnlyForMfmaDots) {
  EXPECT_EQ(policyLayout("f16", 64, 64, 32, 4), ir::Layout::blocked({4, 1}, {4, 16}, {1, 4}, {1, 0}));
  EXPECT_EQ(policyLayout("bf16", 32, 16, 16, 2), ir::Layout::blocked({4, 1}, {4, 16}, {1, 2}, {1, 0}));
  EXPECT_EQ(policyLayout("f32", 64, 64, 32, 4), ir::defaultBlockedLayout({64, 64}, 4, 64));
  // i8 with an i32 accumulator: the same C/D fragments, where K is a multiple of the arch's instruction (16 on
  // gfx90a, 32 on gfx942).
  for (const char* arch : {"gfx90a", "gfx942"})
    EXPECT_EQ(policyLayout("i8", 64, 64, 32, 4, arch), ir::Layout::blocked({4, 1}, {4, 16}, {1, 4}, {1, 0})) << arch;
  EXPECT_EQ(policyLayout("i8", 64, 64, 16, 4, "gfx90a"), ir::Layout::blocked({4, 1}, {4, 16}, {1, 4}, {1, 0}));
  EXPECT_EQ(policyLayout("i8", 64, 64, 16, 4, "gfx942"), ir::defaultBlockedLayout({64, 64}, 4, 64));
  // Shapes that are not multiples of the 16x16x16 block keep the default layout.
  EXPECT_EQ(policyLayout("f16", 64, 64, 8, 4), ir::defaultBlockedLayout({64, 64}, 4, 64));
  // Asked for 32x32 blocks: 16-bit dots whose M is a multiple of 32 and whose N gives each wave whole 32-column
  // blocks take them; the others keep 16x16 (i8, 16 rows, N 64 over 4 waves), as does the default (0) and 16.
  const ir::Layout large = ir::Layout::blocked({4, 1}, {2, 32}, {1, 4}, {1, 0});
  const ir::Layout small = ir::Layout::blocked({4, 1}, {4, 16}, {1, 4}, {1, 0});
  EXPECT_EQ(policyLayout("f16", 64, 128, 32, 4, "gfx942", 32), large);
  EXPECT_EQ(policyLayout("bf16", 32, 128, 16, 4, "gfx90a", 32), large);
  EXPECT_EQ(policyLayout("f16", 64, 128, 32, 4, "gfx942", 16), small);
  EXPECT_EQ(policyLayout("f16", 64, 128, 32, 4, "gfx942", 0), small);
  EXPECT_EQ(policyLayout("f16", 16, 128, 32, 4, "gfx942", 32), small);
  EXPECT_EQ(policyLayout("f16", 64, 64, 32, 4, "gfx942", 32), small);
  EXPECT_EQ(policyLayout("i8", 64, 128, 64, 4, "gfx942", 32), small);
}

TEST(AMDGPUMfma, PlanRejectsLayoutsThatAreNotFragments) {
  // The default wave64 layout, and the NVPTX mma layout on wave64, are not MFMA C/D fragments.
  EXPECT_FALSE(planMfmaAccumulator(ThreadMap::build(ir::defaultBlockedLayout({64, 64}, 4, 64), {64, 64}, "d")));
  EXPECT_FALSE(
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({1, 2}, {16, 4}, {1, 4}, {1, 0}), {64, 64}, "n")));
  // The fragment layout with warps along rows of 8 (not whole 16-row blocks).
  EXPECT_FALSE(
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({2, 1}, {4, 16}, {4, 1}, {1, 0}), {64, 64}, "h")));
  EXPECT_TRUE(
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({4, 1}, {4, 16}, {4, 1}, {1, 0}), {64, 64}, "r")));
  // Transposed: rows by the 16 lanes, 4 consecutive columns per register group; not with 2 columns per thread.
  std::optional<MfmaAccumulatorPlan> t =
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({1, 4}, {16, 4}, {4, 1}, {0, 1}), {64, 64}, "t"));
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->transposed);
  EXPECT_FALSE(
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({1, 2}, {16, 4}, {4, 1}, {0, 1}), {64, 64}, "u")));
  // 32x32 blocks: whole blocks per wave along N; not with the waves along rows of 8, nor with 2 rows per thread.
  std::optional<MfmaAccumulatorPlan> large =
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({4, 1}, {2, 32}, {1, 4}, {1, 0}), {64, 128}, "l"));
  ASSERT_TRUE(large.has_value());
  EXPECT_EQ(large->block, 32);
  EXPECT_EQ(large->fragments.size(), 2u);
  EXPECT_EQ(large->fragments.at(0).regs.size(), 16u);
  EXPECT_FALSE(
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({4, 1}, {2, 32}, {4, 1}, {1, 0}), {64, 128}, "w")));
  EXPECT_FALSE(
      planMfmaAccumulator(ThreadMap::build(ir::Layout::blocked({2, 1}, {2, 32}, {1, 4}, {1, 0}), {64, 128}, "s")));
}

// ---- the fragments as linear layouts (MfmaLinearLayouts.h), against the same register layout

TEST(AMDGPUMfma, LinearFragmentsFollowTheRegisterLayout) {
  ir::LinearLayout a = mfmaOperandAFragment(), b = mfmaOperandBFragment(), d = mfmaAccumulatorFragment();
  for (int64_t lane = 0; lane < 64; ++lane)
    for (int i = 0; i < 4; ++i) {
      RC ea = amdAElement(lane, i), eb = amdBElement(lane, i), ed = amdDElement(lane, i);
      EXPECT_EQ(a.apply({i, lane}), (Coords{ea.row, ea.col})) << "lane " << lane << " item " << i;
      EXPECT_EQ(b.apply({i, lane}), (Coords{eb.row, eb.col})) << "lane " << lane << " item " << i;
      EXPECT_EQ(d.apply({i, lane}), (Coords{ed.row, ed.col})) << "lane " << lane << " item " << i;
      // The operand vector MfmaDot.cpp loads starts where the fragment's item 0 is.
      MfmaOperandOrigin o = mfmaOperandOrigin(lane, 4);
      EXPECT_EQ(a.apply({0, lane}), (Coords{o.outer, o.k}));
      EXPECT_EQ(b.apply({0, lane}), (Coords{o.k, o.outer}));
    }
  EXPECT_TRUE(a.isInvertible() && b.isInvertible() && d.isInvertible());
  // Four consecutive items are four consecutive K indices: one vector load each.
  EXPECT_EQ(a.consecutiveAlong("register", "dim1"), 4);
  EXPECT_EQ(b.consecutiveAlong("register", "dim0"), 4);
}

TEST(AMDGPUMfma, PolicyAccumulatorRegistersAreMfmaFragments) {
  ir::LinearLayout frag = mfmaAccumulatorFragment();
  for (int warps : {1, 2, 4, 8}) {
    std::optional<ir::Layout> layout = policyLayout("f16", 64, 128, 32, warps);
    ASSERT_TRUE(layout.has_value());
    ThreadMap acc = ThreadMap::build(*layout, {64, 128}, "test");
    std::optional<MfmaAccumulatorPlan> plan = planMfmaAccumulator(acc);
    ASSERT_TRUE(plan.has_value());
    for (const MfmaFragment& f : plan->fragments)
      for (int v = 0; v < 4; ++v)
        for (int64_t lane = 0; lane < 64; ++lane) {
          Coords in = frag.apply({v, lane});
          EXPECT_EQ(acc.coordsOf(f.regs[v], 0, lane), (Coords{f.row + in[0], f.col + in[1]}));
        }
  }
}

// ---- code objects

// An f16 or bf16 dot of M x N x K at 4 waves on `arch` with `matrixInstrSize`: its LLVM IR calls `intrinsic` (the f16
// name; "bf16.1k" for bf16) and no other MFMA size, the code object has no spills and no scratch, and it holds
// `mfmas` instructions named `instruction` and `b64Reads` 8-byte LDS reads (one per operand vector; the backend
// pairs them into ds_read2_b64).
void expectMfmaDot(const char* in, const char* arch, int64_t M, int64_t N, int64_t K, int matrixInstrSize,
                   const std::string& intrinsic, const std::string& instruction, int mfmas, int b64Reads) {
  SCOPED_TRACE(std::string(in) + " " + arch + " " + intrinsic);
  jit::CompiledKernel k = compileTextForAmdgpu(layoutFreeDot(in, M, N, K), arch, 4, matrixInstrSize);
  const bool f16 = in == std::string("f16");
  EXPECT_NE(k.llvmIR.find(intrinsic + (f16 ? "f16" : "bf16.1k")), std::string::npos);
  const std::string other = intrinsic.find("32x32") != std::string::npos ? "mfma.f32.16x16x16" : "mfma.f32.32x32x8";
  EXPECT_EQ(k.llvmIR.find(other), std::string::npos);
  expectGoodCodeObject(k, arch, /*noSpills=*/true);
  EXPECT_EQ(readNotes(k.binary).privateSegmentBytes, 0);
  if (!haveLlvmTools()) GTEST_SKIP() << "llvm-objdump-19 not installed";
  const std::string dis = disassemble(k.binary);
  EXPECT_EQ(countOccurrences(dis, instruction), mfmas) << dis;
  EXPECT_EQ(countOccurrences(dis, "ds_read_b64") + 2 * countOccurrences(dis, "ds_read2_b64") +
                2 * countOccurrences(dis, "ds_read2st64_b64"),
            b64Reads)
      << dis;
}

// 64x64x32 at 4 waves: each wave 4 row blocks x 1 column block of 16x16, two K steps, per K step 4 A vectors and
// 1 B vector.
TEST(AMDGPUMfma, F16AndBf16DotsUseMfmaWithoutSpills) {
  for (const char* in : {"f16", "bf16"})
    for (const char* arch : kAmdArchs)
      expectMfmaDot(in, arch, 64, 64, 32, 0, "llvm.amdgcn.mfma.f32.16x16x16", "v_mfma_f32_16x16x16", 4 * 2,
                    (4 + 1) * 2);
}

// matrixInstrSize 32: 64x128x32 at 4 waves, each wave 2 row blocks x 1 column block of 32x32, in 4 K steps of 8, per K
// step 2 A vectors and 1 B vector.
TEST(AMDGPUMfma, LargeBlockDotsUse32x32MfmaWithoutSpills) {
  for (const char* in : {"f16", "bf16"})
    for (const char* arch : kAmdArchs)
      expectMfmaDot(in, arch, 64, 128, 32, 32, "llvm.amdgcn.mfma.f32.32x32x8", "v_mfma_f32_32x32x8", 2 * 4,
                    (2 + 1) * 4);
}

// The distinct values the MFMA calls of optimized LLVM IR take as their A and B operands, each with the line
// defining it.
std::map<std::string, std::string> mfmaOperandDefinitions(const std::string& ir) {
  std::map<std::string, std::string> definitionOf, operands;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find(" = ");
    if (line.rfind("  %", 0) == 0 && eq != std::string::npos) definitionOf[line.substr(2, eq - 2)] = line;
    const size_t call = line.find("@llvm.amdgcn.mfma.");
    if (call == std::string::npos || line.find("declare") != std::string::npos) continue;
    // (<type> %a, <type> %b, ...): the first two operands.
    std::istringstream args(line.substr(line.find('(', call) + 1));
    for (int i = 0; i < 2; ++i) {
      std::string arg;
      std::getline(args, arg, ',');
      const std::string name = arg.substr(arg.rfind(' ') + 1);
      operands[name] = definitionOf[name];
    }
  }
  return operands;
}

TEST(AMDGPUMfma, I8DotsUseIntegerMfmaWithoutSpills) {
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    const bool gfx942 = arch == std::string("gfx942");
    // 64x64x64 at 4 warps: each warp 4 row blocks x 1 column block; K steps of 32 (gfx942) or 16 (gfx90a).
    jit::CompiledKernel k = compileTextForAmdgpu(layoutFreeDot("i8", 64, 64, 64), arch, 4);
    EXPECT_NE(k.llvmIR.find(gfx942 ? "llvm.amdgcn.mfma.i32.16x16x32.i8" : "llvm.amdgcn.mfma.i32.16x16x16i8"),
              std::string::npos);
    expectGoodCodeObject(k, arch, /*noSpills=*/true);
    // Each operand vector (8 bytes of i8 on gfx942, 4 on gfx90a) is one LDS load: per K step 4 A vectors and 1 B.
    const int steps = gfx942 ? 2 : 4;
    const std::map<std::string, std::string> operands = mfmaOperandDefinitions(k.optimizedLLVMIR);
    EXPECT_EQ(static_cast<int>(operands.size()), (4 + 1) * steps);
    for (const auto& [name, definition] : operands)
      EXPECT_NE(definition.find(gfx942 ? "load i64, ptr addrspace(3)" : "load i32, ptr addrspace(3)"),
                std::string::npos)
          << name << ": " << definition;
    EXPECT_EQ(readNotes(k.binary).privateSegmentBytes, 0);
    if (!haveLlvmTools()) GTEST_SKIP() << "llvm-objdump-19 not installed";
    const std::string dis = disassemble(k.binary);
    EXPECT_EQ(countOccurrences(dis, gfx942 ? "v_mfma_i32_16x16x32_i8" : "v_mfma_i32_16x16x16i8"), 4 * steps) << dis;
  }
}

TEST(AMDGPUMfma, F32DotsDoNotUseMfma) {
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    jit::CompiledKernel k = compileTextForAmdgpu(layoutFreeDot("f32", 32, 32, 16), arch, 4);
    EXPECT_EQ(k.llvmIR.find("llvm.amdgcn.mfma"), std::string::npos);
    if (!haveLlvmTools()) GTEST_SKIP() << "llvm-objdump-19 not installed";
    EXPECT_EQ(disassemble(k.binary).find("v_mfma"), std::string::npos);
  }
}

// The tutorial matmul `kernel` traced at BM x BN x BK, its pointers 16-byte aligned.
std::unique_ptr<ir::Module> tracedMatmul(const KernelDef& kernel, int64_t BM, int64_t BN, int64_t BK) {
  std::unique_ptr<ir::Module> m = kernel.trace(Constants{{"BM", BM}, {"BN", BN}, {"BK", BK}, {"GROUP_M", 8}});
  ir::Function& f = *m->functions().at(0);
  for (unsigned i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->type().isPtr()) f.argAttrs(i)["divisibility"] = ir::Attr::integer(16);
  return m;
}

TEST(AMDGPUMfma, TutorialF16MatmulUsesMfma) {
  std::unique_ptr<ir::Module> m = tracedMatmul(tessera::kernels::matmul_kernel(), 64, 64, 32);
  const ir::Function& f = *m->functions().at(0);
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    jit::CompiledKernel k = compileForAmdgpu(f, arch, 4);
    EXPECT_NE(k.llvmIR.find("llvm.amdgcn.mfma.f32.16x16x16f16"), std::string::npos);
    expectGoodCodeObject(k, arch, /*noSpills=*/true);
    if (!haveLlvmTools()) GTEST_SKIP() << "llvm-objdump-19 not installed";
    EXPECT_EQ(countOccurrences(disassemble(k.binary), "v_mfma_f32_16x16x16"), 4 * 2);
  }
}

// The standard 128x128x64 matmul at 4 waves asked for 32x32 instructions: each wave 4 row blocks x 1 column block
// of 32x32 (its 32 columns), 8 K steps, without scratch.
TEST(AMDGPUMfma, TutorialF16MatmulUsesLargeMfmaWhenAsked) {
  std::unique_ptr<ir::Module> m = tracedMatmul(tessera::kernels::matmul_kernel(), 128, 128, 64);
  const ir::Function& f = *m->functions().at(0);
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    jit::CompiledKernel k = compileForAmdgpu(f, arch, 4, /*matrixInstrSize=*/32);
    EXPECT_NE(k.llvmIR.find("llvm.amdgcn.mfma.f32.32x32x8f16"), std::string::npos);
    expectGoodCodeObject(k, arch, /*noSpills=*/true);
    EXPECT_EQ(readNotes(k.binary).privateSegmentBytes, 0);
    if (!haveLlvmTools()) GTEST_SKIP() << "llvm-objdump-19 not installed";
    EXPECT_EQ(countOccurrences(disassemble(k.binary), "v_mfma_f32_32x32x8"), 4 * 8);
  }
}

// The i8 matmul at the standard 128x128x64 configuration, 8 waves: on FMAs it spilled 590 VGPRs (1240 bytes of
// scratch per work-item) on gfx942; on the integer MFMAs nothing spills.
TEST(AMDGPUMfma, TutorialI8MatmulUsesIntegerMfmaWithoutScratch) {
  std::unique_ptr<ir::Module> m = tracedMatmul(tessera::kernels::matmul_kernel_of<i8>("i8"), 128, 128, 64);
  const ir::Function& f = *m->functions().at(0);
  for (const char* arch : kAmdArchs) {
    SCOPED_TRACE(arch);
    jit::CompiledKernel k = compileForAmdgpu(f, arch, 8);
    expectGoodCodeObject(k, arch, /*noSpills=*/true);
    EXPECT_EQ(readNotes(k.binary).privateSegmentBytes, 0);
    if (!haveLlvmTools()) GTEST_SKIP() << "llvm-objdump-19 not installed";
    // The K loop's one dot: each wave 8 row blocks x 1 column block (the 8 waves side by side along N), in
    // 64 / 32 = 2 K steps on gfx942 and 64 / 16 = 4 on gfx90a.
    const bool gfx942 = arch == std::string("gfx942");
    const std::string dis = disassemble(k.binary);
    EXPECT_EQ(countOccurrences(dis, gfx942 ? "v_mfma_i32_16x16x32_i8" : "v_mfma_i32_16x16x16i8"), 8 * (gfx942 ? 2 : 4))
        << dis;
  }
}

}  // namespace
}  // namespace tessera
