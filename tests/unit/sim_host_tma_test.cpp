// A hand-written NVPTX module with an mbarrier and a TMA copy, rewritten for the host and run by the emulator's
// runtime: the intrinsics (mbarrier.init) and the inline asm of backends/nvptx/InlineAsmTable.h
// (arrive.expect_tx, try_wait.parity in a loop, cp.async.bulk.tensor.2d) reach the runtime with the shared
// addresses, the tensor map and the coordinates in the right places, and the box lands with zeros outside the
// tensor. A wait for more bytes than any copy brings is a hang.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "TmaTestKernel.h"
#include "jit/sim/HostJit.h"
#include "jit/sim/HostModule.h"
#include "jit/sim/RuntimeSymbols.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/TensorMap.h"

namespace tessera::testing {
namespace {

struct TmaRun {
  sim::Report report;
  std::vector<uint16_t> out;
};

constexpr uint32_t kRows = 20, kCols = 48, kBoxRows = 16, kBoxCols = 64;

TmaRun runTma(const std::vector<uint16_t>& tensor, int expectBytes, int x0, int y0) {
  sim::HostJit jit(sim::rewriteForHost(tmaModule(expectBytes, x0, y0), "tma.ll"), sim::runtimeSymbols());
  sim::TensorMapFields f;
  f.rank = 2;
  f.elementBytes = 2;
  f.globalAddress = reinterpret_cast<uint64_t>(tensor.data());
  f.dims = {kCols, kRows};
  f.strides = {0, kCols * 2};
  f.box = {kBoxCols, kBoxRows};
  EXPECT_EQ(sim::tensorMapError(f), "");
  alignas(64) std::array<std::byte, sim::kTensorMapBytes> map = sim::encodeTensorMap(f);
  TmaRun run;
  run.out.assign(kBoxRows * kBoxCols, 0xFFFF);
  void* desc = map.data();
  void* out = run.out.data();
  void* params[] = {&desc, &out};
  sim::Program p;
  p.kernel = jit.kernel();
  p.numWarps = 4;
  p.sharedBytes = 1024 + kBoxRows * kBoxCols * 2;
  p.sites = jit.sites();
  p.entry = jit.entry();
  sim::LaunchConfig config;
  config.threads = 1;
  config.allocations = {{f.globalAddress, tensor.size() * 2}, {reinterpret_cast<uint64_t>(out), run.out.size() * 2}};
  run.report = sim::launch(p, {1, 1, 1}, params, config);
  return run;
}

TEST(SimHostTma, AsmCopyLandsTheBoxWithZerosOutsideTheTensor) {
  static std::vector<uint16_t> tensor(kRows * kCols);  // malloc: 16-byte aligned, as a map needs
  std::iota(tensor.begin(), tensor.end(), uint16_t(1));
  TmaRun run = runTma(tensor, kBoxRows * kBoxCols * 2, -8, 4);
  EXPECT_FALSE(run.report.failed()) << run.report.str();
  for (uint32_t r = 0; r < kBoxRows; ++r)
    for (uint32_t c = 0; c < kBoxCols; ++c) {
      const int x = int(c) - 8, y = int(r) + 4;
      const uint16_t expected = x >= 0 && x < int(kCols) && y < int(kRows) ? tensor[y * kCols + x] : 0;
      ASSERT_EQ(run.out[r * kBoxCols + c], expected) << "row " << r << " column " << c;
    }
}

TEST(SimHostTma, ExpectingMoreBytesThanTheCopyBringsHangs) {
  static std::vector<uint16_t> tensor(kRows * kCols, 1);
  TmaRun run = runTma(tensor, kBoxRows * kBoxCols * 2 + 128, 0, 0);
  EXPECT_EQ(run.report.findingCount(sim::FindingKind::IncompleteMbarrierWait), 128u) << run.report.str();
  EXPECT_EQ(run.report.findingCount(), 128u) << run.report.str();
}

}  // namespace
}  // namespace tessera::testing
