// The emulator's counters through whole launches: coalescing (sectors per request, efficiency), bank conflicts,
// barriers, warp instructions by class, the per-op rows and the text table. Expected numbers are computed by
// hand in the comments.
#include <numeric>
#include <sstream>

#include "SimRuntimeTestUtil.h"

namespace {

using namespace simtest;

enum CopySite : uint32_t { kLoad, kStore };
SiteTable copySites(uint32_t bytes) {
  return {site(SiteKind::Load, AddressSpace::Global, bytes, "load", 10, bytes),
          site(SiteKind::Store, AddressSpace::Global, bytes, "store", 11, bytes)};
}

struct alignas(16) Float4 {
  float v[4];
};

void copyVectorized(void** params) {
  const Float4* in = static_cast<const Float4*>(params[0]);
  Float4* out = static_cast<Float4*>(params[1]);
  uint32_t i = __tsim_program_id(0) * __tsim_threads_per_program(0) + __tsim_thread_id(0);
  store(out + i, load<Float4>(in + i, kLoad), kStore);
}

TEST(SimRuntimeCounters, SixteenBytesPerLaneContiguousCopyIsFullyEfficient) {
  // 2 programs x 4 warps x 32 lanes, 16 bytes each: a warp request covers 512 contiguous bytes = 16 sectors.
  alignas(128) static Float4 in[256], out[256];
  void* params[] = {in, out};
  Report r = launch(program("copy16", 4, 0, copySites(16), &copyVectorized), {2, 1, 1}, params,
                    config({{addr(in), sizeof in}, {addr(out), sizeof out}}));
  ASSERT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(r.total.globalLoad.requests, 8u);
  EXPECT_EQ(r.total.globalLoad.sectors, 8u * 16);
  EXPECT_EQ(r.total.globalLoad.requestedBytes, 8u * 512);
  EXPECT_DOUBLE_EQ(r.total.globalLoadEfficiency(), 1.0);
  EXPECT_DOUBLE_EQ(r.total.globalLoad.sectorsPerRequest(), 16.0);
  EXPECT_DOUBLE_EQ(r.total.globalStoreEfficiency(), 1.0);
  EXPECT_EQ(r.total.globalAccessWidths[accessWidthClass(16)], 512u);  // 256 loads + 256 stores
  EXPECT_EQ(r.total.instructions(InstructionClass::GlobalLoad), 8u);
  EXPECT_EQ(r.total.instructions(InstructionClass::GlobalStore), 8u);
}

void copyScalar(void** params) {
  const float* in = static_cast<const float*>(params[0]);
  float* out = static_cast<float*>(params[1]);
  uint32_t i = __tsim_thread_id(0);
  store(out + i, load<float>(in + i, kLoad), kStore);
}

TEST(SimRuntimeCounters, FourBytesPerLaneIsFourSectorsPerRequestWhenAligned) {
  // 32 x 4 bytes = 128 bytes: 4 sectors from a 32-byte boundary; 16 bytes off it, the same bytes straddle 5.
  alignas(128) static float in[64], out[64];
  for (uint32_t offset : {0u, 4u}) {
    void* params[] = {in + offset, out};
    Report r = launch(program("copy4", 1, 0, copySites(4), &copyScalar), {1, 1, 1}, params,
                      config({{addr(in), sizeof in}, {addr(out), sizeof out}}));
    EXPECT_EQ(r.total.globalLoad.sectors, offset ? 5u : 4u);
    EXPECT_DOUBLE_EQ(r.total.globalLoadEfficiency(), offset ? 128.0 / 160 : 1.0);
  }
}

enum TileSite : uint32_t { kColumnLoad, kRowLoad };
void readTileByColumnsThenRows(void** params) {
  const float* tile = static_cast<const float*>(params[0]);  // 32 x 32, row-major
  uint32_t lane = __tsim_lane_id();
  for (uint32_t c = 0; c < 32; ++c) (void)load<float>(tile + lane * 32 + c, kColumnLoad);  // lane = row
  for (uint32_t row = 0; row < 32; ++row) (void)load<float>(tile + row * 32 + lane, kRowLoad);
}

TEST(SimRuntimeCounters, ColumnOrderAccessOfARowMajorTileLosesSevenEighths) {
  // Column order: each request has 32 lanes 128 bytes apart, one sector each for 4 useful bytes:
  // 32 requests x 32 sectors, 128 of 1024 bytes used: efficiency 0.125. Row order: 4 sectors per request, 1.0.
  alignas(128) static float tile[32 * 32];
  void* params[] = {tile};
  SiteTable sites = {site(SiteKind::Load, AddressSpace::Global, 4, "load", 20),
                     site(SiteKind::Load, AddressSpace::Global, 4, "load", 21)};
  Report r = launch(program("columns", 1, 0, sites, &readTileByColumnsThenRows), {1, 1, 1}, params,
                    config({{addr(tile), sizeof tile}}));
  ASSERT_EQ(r.ops.size(), 2u);
  const Counters& columns = r.ops[0].counters;
  EXPECT_EQ(r.ops[0].line, 20u);
  EXPECT_EQ(columns.globalLoad.requests, 32u);
  EXPECT_EQ(columns.globalLoad.sectors, 32u * 32);
  EXPECT_DOUBLE_EQ(columns.globalLoadEfficiency(), 0.125);
  const Counters& rows = r.ops[1].counters;
  EXPECT_EQ(rows.globalLoad.sectors, 32u * 4);
  EXPECT_DOUBLE_EQ(rows.globalLoadEfficiency(), 1.0);
  // The launch: (32 * 128) / ((1024 + 128) * 32) bytes.
  EXPECT_DOUBLE_EQ(r.total.globalLoadEfficiency(), 8192.0 / (1152.0 * 32));
}

enum BankSite : uint32_t { kFill, kBarrier, kColumn, kRow };
void sharedColumnAndRow(void**) {
  uint32_t lane = __tsim_lane_id();
  for (uint32_t c = 0; c < 32; ++c) store(shared<float>(lane * 32 + c), 1.0f, kFill);  // lane fills row `lane`
  __tsim_barrier(kBarrier);
  (void)load<float>(shared<float>(lane * 32 + 5), kColumn);  // column 5: every lane in bank 5
  (void)load<float>(shared<float>(5 * 32 + lane), kRow);     // row 5: 32 banks
}

TEST(SimRuntimeCounters, SharedColumnReadIsA32WayBankConflictAndARowIsNone) {
  SiteTable sites = {site(SiteKind::Store, AddressSpace::Shared, 4, "store", 30), syncSite(SiteKind::Barrier, "barrier", 31),
                     site(SiteKind::Load, AddressSpace::Shared, 4, "load", 32),
                     site(SiteKind::Load, AddressSpace::Shared, 4, "load", 33)};
  Report r = launch(program("banks", 1, 32 * 32 * 4, sites, &sharedColumnAndRow), {1, 1, 1}, nullptr, config({}));
  ASSERT_FALSE(r.failed()) << r.str();
  ASSERT_EQ(r.ops.size(), 4u);
  // The fill: request c has lane l at word 32 l + c: all in bank c: 32-way, 31 extra each, 32 requests.
  EXPECT_EQ(r.ops[0].counters.sharedStore.requests, 32u);
  EXPECT_EQ(r.ops[0].counters.sharedStore.bankConflicts, 32u * 31);
  EXPECT_EQ(r.ops[2].counters.sharedLoad.requests, 1u);
  EXPECT_EQ(r.ops[2].counters.sharedLoad.wavefronts, 32u);
  EXPECT_EQ(r.ops[2].counters.sharedBankConflicts(), 31u);
  EXPECT_EQ(r.ops[3].counters.sharedBankConflicts(), 0u);
  EXPECT_EQ(r.ops[3].counters.sharedLoad.wavefronts, 1u);
  EXPECT_EQ(r.total.sharedBankConflicts(), 32u * 31 + 31);
  EXPECT_EQ(r.total.barriers, 1u);
  EXPECT_EQ(r.ops[1].counters.barriers, 1u);
}

void longLoopWithoutBarriers(void** params) {
  const float* in = static_cast<const float*>(params[0]);
  uint32_t lane = __tsim_lane_id(), warp = __tsim_warp_id();
  for (uint32_t i = 0; i < 200; ++i) (void)load<float>(in + (warp * 200 + i) * 32 + lane, kLoad);
}

TEST(SimRuntimeCounters, LanesFarApartStillMatchIntoWholeRequests) {
  // Lane 0 runs its 200 iterations before lane 1 starts; the tracker makes lanes more than 64 executions ahead
  // wait, so every request still has all 32 lanes: 2 warps x 200 requests of 4 sectors.
  alignas(128) static float in[2 * 200 * 32];
  void* params[] = {in};
  Report r = launch(program("loop", 2, 0, copySites(4), &longLoopWithoutBarriers), {1, 1, 1}, params,
                    config({{addr(in), sizeof in}}));
  EXPECT_EQ(r.total.globalLoad.requests, 400u);
  EXPECT_EQ(r.total.globalLoad.sectors, 1600u);
  EXPECT_DOUBLE_EQ(r.total.globalLoadEfficiency(), 1.0);
}

void halfTheLanesLoad(void** params) {
  const float* in = static_cast<const float*>(params[0]);
  uint32_t lane = __tsim_lane_id();
  if (lane % 2 == 0) (void)load<float>(in + lane, kLoad);
}

TEST(SimRuntimeCounters, DivergentRequestsCountTheirActiveLanes) {
  // Lanes 0, 2, ..., 30 read 4 bytes each, 8 bytes apart: one request, 64 of the 128 bytes in 4 sectors.
  alignas(128) static float in[32];
  void* params[] = {in};
  Report r = launch(program("half", 1, 0, copySites(4), &halfTheLanesLoad), {1, 1, 1}, params,
                    config({{addr(in), sizeof in}}));
  EXPECT_EQ(r.total.globalLoad.requests, 1u);
  EXPECT_EQ(r.total.globalLoad.sectors, 4u);
  EXPECT_DOUBLE_EQ(r.total.globalLoadEfficiency(), 0.5);
}

enum AsyncSite : uint32_t { kCopy, kCommit, kWait };
void asyncCopyTile(void** params) {
  const Float4* in = static_cast<const Float4*>(params[0]);
  uint32_t tid = __tsim_thread_id(0);
  // Lane l copies 16 bytes to shared offset 128 * l: the global side is contiguous, the shared side puts 8
  // lanes of a phase 128 bytes apart (banks 0-3 each): 8 wavefronts per phase, 4 phases, 28 extra.
  __tsim_cp_async(addr(shared<Float4>(8 * tid)), addr(in + tid), 16, 16, kCopy);
  __tsim_cp_async_commit(kCommit);
  __tsim_cp_async_wait(0, kWait);
}

TEST(SimRuntimeCounters, AsyncCopiesCountTheirGlobalReadAndSharedWrite) {
  alignas(128) static Float4 in[32];
  void* params[] = {in};
  SiteTable sites = {site(SiteKind::CpAsync, AddressSpace::Shared, 16, "async_copy", 40),
                     syncSite(SiteKind::CpAsyncCommit, "async_copy", 40), syncSite(SiteKind::CpAsyncWait, "async_copy", 40)};
  Report r = launch(program("cpasync", 1, 32 * 128, sites, &asyncCopyTile), {1, 1, 1}, params,
                    config({{addr(in), sizeof in}}));
  ASSERT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(r.total.globalLoad.requests, 1u);
  EXPECT_EQ(r.total.globalLoad.requestedBytes, 512u);
  EXPECT_DOUBLE_EQ(r.total.globalLoadEfficiency(), 1.0);
  EXPECT_EQ(r.total.sharedStore.requests, 1u);
  EXPECT_EQ(r.total.sharedStore.bankConflicts, 28u);
  EXPECT_EQ(r.total.instructions(InstructionClass::CpAsync), 1u);
  ASSERT_EQ(r.ops.size(), 1u);  // three sites, one op at one location
}

using Tokens = std::vector<std::string>;
// The whitespace-separated fields of the table row that starts with `first`.
Tokens rowOf(const std::string& table, const std::string& first) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    Tokens tokens;
    for (std::string t; fields >> t;) tokens.push_back(t);
    if (!tokens.empty() && tokens[0] == first) return tokens;
  }
  return {};
}

TEST(SimRuntimeCounters, TextTableHasARowPerOpAndTotals) {
  alignas(128) static float tile[32 * 32];
  void* params[] = {tile};
  SiteTable sites = {site(SiteKind::Load, AddressSpace::Global, 4, "load", 20),
                     site(SiteKind::Load, AddressSpace::Global, 4, "transpose", 21)};
  Report r = launch(program("columns", 1, 0, sites, &readTileByColumnsThenRows), {1, 1, 1}, params,
                    config({{addr(tile), sizeof tile}}));
  std::string table = r.countersTable();
  EXPECT_NE(table.find("sim counters for columns, grid (1, 1, 1)"), std::string::npos) << table;
  EXPECT_NE(table.find("sect/req"), std::string::npos);
  // Columns: op, location, global load requests, sectors per request, efficiency, then stores and the rest.
  // The column op: 32 requests of 32 sectors, efficiency 0.125; the launch: 64 requests, (1024 + 128) / 64
  // sectors each, 8192 / 36864 = 0.222.
  EXPECT_EQ(rowOf(table, "load"), (Tokens{"load", "kernels.py:20:1", "32", "32.00", "0.125", "0", "0.00", "-", "0",
                                          "0", "0", "0", "0"}))
      << table;
  EXPECT_EQ(rowOf(table, "transpose"), (Tokens{"transpose", "kernels.py:21:1", "32", "4.00", "1.000", "0", "0.00",
                                               "-", "0", "0", "0", "0", "0"}));
  EXPECT_EQ(rowOf(table, "total"), (Tokens{"total", "64", "18.00", "0.222", "0", "0.00", "-", "0", "0", "0", "0", "0"}));
  EXPECT_NE(table.find("warp instructions: global load 64"), std::string::npos) << table;
  EXPECT_NE(table.find("global lane accesses by width: 4B 2048"), std::string::npos) << table;
  EXPECT_EQ(r.str(), table);  // no findings
}

}  // namespace
