// Per-op semantics of the TMA ops on the interpreter (docs/IR.md "TMA copies and mbarriers"): async_tma_copy lands
// the descriptor's block in its stage at once, as desc_load reads it (zeros outside the tensor), unless its
// predicate is false, when the stage keeps what it held; mbarrier_alloc and mbarrier_wait only make handles.
// warp_specialize runs its producer region, then its consumers' (once per consumer group, consumer_group
// naming the group); mbarrier_arrive, turn_wait and turn_pass do nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "ir/Parser.h"

namespace tessera {
namespace {

// Stage 0 gets the block at (%m, %k) (issued); stage 1 the block at (0, 0), but predicated off. out0 and out1 get
// the two stages, out2 the desc_load of the block at (%m, %k).
constexpr const char* kProgram = R"(
func @tma(%d: tensordesc<4x8xf32>, %out0: ptr<f32>, %out1: ptr<f32>, %out2: ptr<f32>, %m: i32, %k: i32) {
  %bars = mbarrier_alloc : mbarriers<2>
  %buf = local_alloc : smem<2x4x8xf32, #shared{max_phase = 1, order = [1, 0], per_phase = 1, vec = 1}>
  %s0 = constant {value = 0} : i32
  %s1 = constant {value = 1} : i32
  %zero = constant {value = 0} : i32
  %on = constant {value = true} : i1
  %off = constant {value = false} : i1
  %t0 = async_tma_copy %d, %m, %k, %buf, %s0, %bars, %on : async_token
  %t1 = async_tma_copy %d, %zero, %zero, %buf, %s1, %bars, %off : async_token
  %w0 = mbarrier_wait %bars, %s0, %zero, %t0 : async_token
  %w1 = mbarrier_wait %bars, %s1, %zero, %t1 : async_token
  %x0 = local_load %buf, %s0, %w0 : tile<4x8xf32>
  %x1 = local_load %buf, %s1, %w1 : tile<4x8xf32>
  %x2 = desc_load %d, %m, %k : tile<4x8xf32>
  %i = arange {end = 32, start = 0} : tile<32xi32>
  %p0 = splat %out0 : tile<32xptr<f32>>
  %p1 = splat %out1 : tile<32xptr<f32>>
  %p2 = splat %out2 : tile<32xptr<f32>>
  %q0 = addptr %p0, %i : tile<32xptr<f32>>
  %q1 = addptr %p1, %i : tile<32xptr<f32>>
  %q2 = addptr %p2, %i : tile<32xptr<f32>>
  %f0 = reshape %x0 : tile<32xf32>
  %f1 = reshape %x1 : tile<32xf32>
  %f2 = reshape %x2 : tile<32xf32>
  store %q0, %f0
  store %q1, %f1
  store %q2, %f2
  return
}
)";

TEST(TmaOpsTest, ACopyLandsTheDescriptorBlockUnlessPredicatedOff) {
  std::unique_ptr<ir::Module> m = ir::parseModule(kProgram);
  std::vector<float> tensor(10 * 12);  // a 10 x 9 tensor, rows 12 elements apart
  for (size_t i = 0; i < tensor.size(); ++i) tensor[i] = static_cast<float>(i) + 0.5f;
  const interp::TensorDesc desc{{tensor.data(), tensor.size() * 4}, {10, 9}, {12, 1}, {4, 8}};
  for (auto [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {8, 4}, {-2, -3}}) {
    std::vector<float> out0(32, -1), out1(32, -1), out2(32, -1);
    interp::run(*m->functions()[0],
                {desc, interp::Buffer{out0.data(), 128}, interp::Buffer{out1.data(), 128},
                 interp::Buffer{out2.data(), 128}, row, col},
                {1, 1, 1});
    EXPECT_EQ(out0, out2) << "the copied block differs from desc_load's at (" << row << ", " << col << ")";
    EXPECT_EQ(out1, std::vector<float>(32, 0.0f)) << "a predicated-off copy wrote its stage";
    const float corner = row >= 0 && col >= 0 ? tensor[row * 12 + col] : 0.0f;
    EXPECT_EQ(out0[0], corner);
  }
}

// The producer copies the block at (%m, %k) into stage 1; the consumers wait for it, read it in their turns, hand
// the stage back and store it.
constexpr const char* kWarpSpecialized = R"(
func @ws(%d: tensordesc<4x8xf32>, %out: ptr<f32>, %m: i32, %k: i32) {
  %full = mbarrier_alloc : mbarriers<2>
  %empty = mbarrier_alloc {arrivals = 128} : mbarriers<2>
  %buf = local_alloc : smem<2x4x8xf32, #shared{max_phase = 1, order = [1, 0], per_phase = 1, vec = 1}>
  warp_specialize {consumer_registers = 256, producer_registers = 40, producer_warps = 4} {
    %s = constant {value = 1} : i32
    %released = constant {value = 1} : i32
    %w = mbarrier_wait %empty, %s, %released : async_token
    %t = async_tma_copy %d, %m, %k, %buf, %s, %full : async_token
    yield
  } {
    %read = constant {value = 1} : i32
    %parity = constant {value = 0} : i32
    %r = mbarrier_wait %full, %read, %parity : async_token
    turn_pass {groups = 2, only_group = 1}
    turn_wait {groups = 2}
    %x = local_load %buf, %read, %r : tile<4x8xf32>
    turn_pass {groups = 2}
    turn_wait {groups = 2, only_group = 0}
    mbarrier_arrive %empty, %read
    %i = arange {end = 32, start = 0} : tile<32xi32>
    %p = splat %out : tile<32xptr<f32>>
    %q = addptr %p, %i : tile<32xptr<f32>>
    %f = reshape %x : tile<32xf32>
    store %q, %f
    yield
  }
  return
}
)";

TEST(TmaOpsTest, WarpSpecializeRunsTheProducerThenTheConsumers) {
  std::unique_ptr<ir::Module> m = ir::parseModule(kWarpSpecialized);
  std::vector<float> tensor(10 * 12);
  for (size_t i = 0; i < tensor.size(); ++i) tensor[i] = static_cast<float>(i) + 0.5f;
  const interp::TensorDesc desc{{tensor.data(), tensor.size() * 4}, {10, 9}, {12, 1}, {4, 8}};
  std::vector<float> out(32, -1);
  interp::run(*m->functions()[0], {desc, interp::Buffer{out.data(), 128}, int64_t{4}, int64_t{1}}, {1, 1, 1});
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      const float expected = 4 + r < 10 && 1 + c < 9 ? tensor[(4 + r) * 12 + 1 + c] : 0.0f;
      EXPECT_EQ(out[r * 8 + c], expected) << r << ", " << c;
    }
}

// Two consumer groups (ping-pong-consumers) each store their group's number at out[group].
constexpr const char* kConsumerGroups = R"(
func @groups(%out: ptr<i32>) {
  warp_specialize {consumer_groups = 2, consumer_registers = 232, producer_registers = 40, producer_warps = 4} {
    yield
  } {
    %g = consumer_group : i32
    %p = addptr %out, %g : ptr<i32>
    %one = constant {value = 1} : i32
    %v = add %g, %one : i32
    store %p, %v
    yield
  }
  return
}
)";

TEST(TmaOpsTest, EachConsumerGroupRunsTheConsumerRegion) {
  std::unique_ptr<ir::Module> m = ir::parseModule(kConsumerGroups);
  std::vector<int32_t> out(3, 0);
  interp::run(*m->functions()[0], {interp::Buffer{out.data(), 12}}, {1, 1, 1});
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 0}));
}

}  // namespace
}  // namespace tessera
