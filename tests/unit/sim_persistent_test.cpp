// Persistent kernels (jit::LaunchOptions::persistent, transforms/MakePersistent.cpp) on the emulator: the launch
// starts the programs one emulated multiprocessor holds, each loops over several tiles of the grid, and what the
// kernel computes, and prints, is what the same kernel launched without persistence computes and prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

// Every program writes its ids and the grid's extents at its place in the grid, and prints its linear id.
void coordinates(Ptr<i32> out) {
  Tensor x = program_id(0), y = program_id(1), z = program_id(2);
  Tensor nx = num_programs(0), ny = num_programs(1), nz = num_programs(2);
  Tensor linear = (z * ny + y) * nx + x;
  store(out + linear * 6, x);
  store(out + linear * 6 + 1, y);
  store(out + linear * 6 + 2, z);
  store(out + linear * 6 + 3, nx);
  store(out + linear * 6 + 4, ny);
  store(out + linear * 6 + 5, nz);
  debug_print("linear", {linear});
}

struct Outcome {
  std::vector<int32_t> out;
  std::vector<std::string> printed;  // sorted: programs print in any order
  unsigned programs = 0;             // the grid the emulator ran
};

Outcome launch(const char* arch, bool persistent, const jit::LaunchGrid& grid) {
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  runtime.setMultiprocessors(1);  // 4 warps: at most 16 programs (2048 threads / 128)
  const int64_t tiles = grid[0] * grid[1] * grid[2];
  const size_t bytes = static_cast<size_t>(tiles) * 6 * 4;
  std::vector<int32_t> init(static_cast<size_t>(tiles) * 6, -1);
  jit::DeviceAddress d = runtime.allocate(bytes);
  runtime.copyToDevice(d, init.data(), bytes);
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel k(kernel("coordinates", coordinates, {"out"}), cache);
  jit::LaunchOptions options;
  options.runtime = &runtime;
  options.persistent = persistent;
  runtime.takeLastReport();
  k.launch(grid, {jit::KernelArg::pointer(d, bytes)}, {}, options);
  runtime.setMultiprocessors(0);
  Outcome r;
  r.out.resize(init.size());
  runtime.copyToHost(r.out.data(), d, bytes);
  runtime.release(d);
  std::optional<sim::Report> report = runtime.takeLastReport();
  EXPECT_TRUE(report.has_value());
  if (report) {
    std::istringstream lines(report->output);
    for (std::string line; std::getline(lines, line);) r.printed.push_back(line);
    std::sort(r.printed.begin(), r.printed.end());
    r.programs = report->grid[0] * report->grid[1] * report->grid[2];
  }
  return r;
}

class PersistentKernel : public ::testing::TestWithParam<const char*> {};

TEST_P(PersistentKernel, TilesSeeTheirOwnCoordinatesAndPrintWhatProgramsPrinted) {
  const jit::LaunchGrid grid{5, 4, 2};  // 40 tiles
  const Outcome plain = launch(GetParam(), false, grid);
  const Outcome persistent = launch(GetParam(), true, grid);
  EXPECT_EQ(plain.programs, 40u);
  EXPECT_GE(persistent.programs, 1u);
  EXPECT_LT(persistent.programs, 40u) << "every program loops over several tiles";
  for (int64_t z = 0, i = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x, ++i) {
        const std::vector<int32_t> want{int32_t(x), int32_t(y), int32_t(z), 5, 4, 2};
        const std::vector<int32_t> got(persistent.out.begin() + i * 6, persistent.out.begin() + i * 6 + 6);
        ASSERT_EQ(got, want) << "tile " << i;
      }
  EXPECT_EQ(persistent.out, plain.out);
  ASSERT_EQ(persistent.printed.size(), 40u);
  EXPECT_EQ(persistent.printed, plain.printed) << "lines are tagged with the tile's program ids";
}

INSTANTIATE_TEST_SUITE_P(Emulated, PersistentKernel, ::testing::Values("sm_80", "sm_90a", "gfx942"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace tessera
