// The emulator's mbarriers and TMA (cp.async.bulk.tensor) on hand-written kernels: the tensor map's encoding
// rules, boxes of 1 to 5 dimensions landing with zeros outside the tensor, element strides and the 32/64/128-byte
// swizzles (expected layouts written row by row from the CUDA programming guide's description, not with the
// emulator's bit formula), phases and parities over a two-stage pipeline, and what the checks report: data read
// before its phase completed, a buffer refilled while other threads still read it, a phase that can never
// complete (a hang naming the thread and line), barriers used before mbarrier.init.
#include <cstring>
#include <numeric>

#include "SimRuntimeTestUtil.h"
#include "jit/sim/runtime/Mbarriers.h"
#include "jit/sim/runtime/TensorMap.h"

namespace {

using namespace simtest;

// ---- the tensor map's encoding

TensorMapFields matrixMap(uint64_t address, uint64_t rows, uint64_t cols, uint32_t elementBytes, uint32_t boxRows,
                          uint32_t boxCols, uint32_t swizzle) {
  TensorMapFields f;
  f.rank = 2;
  f.elementBytes = elementBytes;
  f.globalAddress = address;
  f.dims = {cols, rows};
  f.strides = {0, cols * elementBytes};
  f.box = {boxCols, boxRows};
  f.swizzleBytes = swizzle;
  return f;
}

TEST(SimTensorMap, EncodesDecodesAndChecksTheDriverRules) {
  TensorMapFields f = matrixMap(0x10000, 40, 72, 2, 16, 64, 128);
  ASSERT_EQ(tensorMapError(f), "");
  auto bytes = encodeTensorMap(f);
  EXPECT_EQ(decodeTensorMap(bytes.data()), f);
  EXPECT_EQ(f.boxBytes(), 16u * 64 * 2);

  auto error = [&](auto edit) {
    TensorMapFields g = f;
    edit(g);
    return tensorMapError(g);
  };
  EXPECT_EQ(error([](TensorMapFields& g) { g.rank = 6; }), "rank 6; a tensor map has 1 to 5 dimensions");
  EXPECT_EQ(error([](TensorMapFields& g) { g.elementBytes = 3; }), "elements of 3 bytes; 1, 2, 4 or 8");
  EXPECT_EQ(error([](TensorMapFields& g) { g.globalAddress += 8; }), "the global address is not 16-byte aligned");
  EXPECT_EQ(error([](TensorMapFields& g) { g.box[1] = 300; }), "box[1] is 300; 1 to 256");
  EXPECT_EQ(error([](TensorMapFields& g) { g.elementStrides[0] = 9; }), "element stride[0] is 9; 1 to 8");
  EXPECT_EQ(error([](TensorMapFields& g) { g.strides[1] = 136; }),
            "stride[1] is 136 bytes; a multiple of 16 below 2^40, at least the 144 bytes of the dimensions inside it");
  EXPECT_EQ(error([](TensorMapFields& g) { g.box[0] = 12; }), "the box's inner dimension is 24 bytes; a multiple of 16");
  EXPECT_EQ(error([](TensorMapFields& g) { g.swizzleBytes = 64; }),
            "the box's inner dimension is 128 bytes, wider than the 64-byte swizzle");
  EXPECT_EQ(error([](TensorMapFields& g) { g.swizzleBytes = 16; }), "swizzle of 16 bytes; 0, 32, 64 or 128");
  EXPECT_EQ(error([](TensorMapFields& g) { g.dims[0] = 0; }), "shape[0] is 0; 1 to 2^32");

  std::array<std::byte, kTensorMapBytes> garbage{};
  EXPECT_FALSE(decodeTensorMap(garbage.data()));
}

TEST(SimMbarriers, PhasesCompleteOnArrivalsAndTransactionBytes) {
  Mbarriers barriers;
  Mbarrier& m = barriers.init(64, 2);
  EXPECT_FALSE(m.parityCompleted(0));  // phase 0 runs
  EXPECT_TRUE(m.parityCompleted(1));   // "the phase before" phase 0 counts as completed
  m.tx -= 256;                         // a copy completing before its expect_tx
  m.pending -= 1;
  m.tx += 256;
  EXPECT_FALSE(m.complete());  // one arrival missing
  m.pending -= 1;
  ASSERT_TRUE(m.complete());
  barriers.addWaiter({7, 64, 0, 3});
  barriers.addWaiter({8, 64, 1, 3});
  m.advance();
  EXPECT_EQ(m.phase, 1u);
  EXPECT_EQ(m.pending, 2u);
  EXPECT_EQ(barriers.takeSatisfiedWaiters(m), std::vector<uint32_t>{7});
  ASSERT_EQ(barriers.waiters().size(), 1u);
  EXPECT_EQ(barriers.waiters()[0].thread, 8u);
  EXPECT_EQ(barriers.find(64), &m);
  EXPECT_EQ(barriers.find(72), nullptr);
}

// ---- kernels: thread 0 initializes the barrier at shared offset 0 and issues the copy into shared offset 1024;
// every thread waits and copies the box's bytes out.

enum Sites : uint32_t { kInit, kArrive, kWait, kCopy, kBar, kSLoad, kGStore };
SiteTable mbarrierSites() {
  return {syncSite(SiteKind::Mbarrier, "load", 50),        syncSite(SiteKind::Mbarrier, "load", 51),
          syncSite(SiteKind::Mbarrier, "load", 52),        syncSite(SiteKind::BulkTensorCopy, "load", 53),
          syncSite(SiteKind::Barrier, "load", 54),         site(SiteKind::Load, AddressSpace::Shared, 4, "dot", 55),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 56)};
}
constexpr uint32_t kBox = 1024;
constexpr uint32_t kThreads = 128;

struct BoxLaunch {
  std::array<std::byte, kTensorMapBytes> map;
  std::array<int32_t, 5> coordinates{};
  uint32_t rank = 0, boxBytes = 0, expectTx = 0;
  bool wait = true;
};
BoxLaunch gBox;  // the tests run one host thread

void loadBox(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0);
  const uint64_t barrier = addr(shared<uint64_t>(0));
  if (tid == 0) __tsim_mbarrier_init(barrier, 1, kInit);
  __tsim_barrier(kBar);
  if (tid == 0) {
    __tsim_mbarrier_arrive(barrier, 1, gBox.expectTx, kArrive);
    __tsim_bulk_tensor_copy(addr(shared<std::byte>(kBox)), gBox.map.data(), gBox.coordinates.data(), gBox.rank,
                            barrier, kCopy);
  }
  if (gBox.wait) EXPECT_EQ(__tsim_mbarrier_try_wait_parity(barrier, 0, kWait), 1u);
  for (uint32_t word = tid; word < gBox.boxBytes / 4; word += kThreads)
    store(out + word, load<uint32_t>(shared<uint32_t>(kBox / 4 + word), kSLoad), kGStore);
}

// What lands: the box element by element (dimension 0 fastest, ceil(box / stride) per dimension), zero outside
// the tensor; with a swizzle span S equal to the box's row bytes, 16-byte chunk j of row r moves to chunk
// j ^ phase, where phase advances every 128 bytes of rows and cycles through S / 16 values.
std::vector<std::byte> expectedBox(const TensorMapFields& f, const std::array<int32_t, 5>& c) {
  std::array<uint32_t, 5> n{1, 1, 1, 1, 1};
  for (uint32_t d = 0; d < f.rank; ++d) n[d] = f.traversed(d);
  std::vector<std::byte> box(f.boxBytes());
  const uint32_t e = f.elementBytes, rowBytes = n[0] * e;
  uint64_t linear = 0;
  for (uint32_t i4 = 0; i4 < n[4]; ++i4)
    for (uint32_t i3 = 0; i3 < n[3]; ++i3)
      for (uint32_t i2 = 0; i2 < n[2]; ++i2)
        for (uint32_t i1 = 0; i1 < n[1]; ++i1)
          for (uint32_t i0 = 0; i0 < n[0]; ++i0, linear += e) {
            const uint32_t index[5] = {i0, i1, i2, i3, i4};
            bool inside = true;
            uint64_t address = f.globalAddress;
            for (uint32_t d = 0; d < f.rank; ++d) {
              const int64_t x = c[d] + int64_t{index[d]} * f.elementStrides[d];
              inside = inside && x >= 0 && x < static_cast<int64_t>(f.dims[d]);
              address += x * (d == 0 ? e : f.strides[d]);
            }
            uint64_t at = linear;
            if (f.swizzleBytes) {
              EXPECT_EQ(rowBytes, f.swizzleBytes) << "the expectation assumes rows as wide as the swizzle";
              const uint64_t row = linear / rowBytes, chunk = linear % rowBytes / 16;
              const uint64_t phase = row / (128 / rowBytes) % (f.swizzleBytes / 16);
              at = row * rowBytes + (chunk ^ phase) * 16 + linear % 16;
            }
            if (inside) std::memcpy(&box[at], reinterpret_cast<const void*>(address), e);
          }
  return box;
}

Report launchBox(const TensorMapFields& f, const std::array<int32_t, 5>& coordinates, const MemoryRange& tensor,
                 std::vector<uint32_t>& out, uint32_t extraTx = 0, bool wait = true) {
  EXPECT_EQ(tensorMapError(f), "");
  gBox.map = encodeTensorMap(f);
  gBox.coordinates = coordinates;
  gBox.rank = f.rank;
  gBox.boxBytes = static_cast<uint32_t>(f.boxBytes());
  gBox.expectTx = gBox.boxBytes + extraTx;
  gBox.wait = wait;
  out.assign(gBox.boxBytes / 4, 0xDEADBEEF);
  void* params[] = {out.data()};
  return launch(program("tma_box", kThreads / 32, kBox + gBox.boxBytes + 128, mbarrierSites(), &loadBox), {1, 1, 1},
                params, config({tensor, range(out)}));
}

template <class T>
std::vector<T> iota(size_t n) {
  std::vector<T> v(n);
  std::iota(v.begin(), v.end(), T(1));
  return v;
}

struct BoxCase {
  const char* name;
  uint32_t elementBytes;
  std::vector<uint64_t> dims;
  std::vector<uint32_t> box, elementStrides;
  std::array<int32_t, 5> coordinates;
  uint32_t swizzle;
};

class SimTmaBoxes : public ::testing::TestWithParam<BoxCase> {};

TEST_P(SimTmaBoxes, LandWithZerosOutsideTheTensor) {
  const BoxCase& c = GetParam();
  uint64_t elements = 1;
  for (uint64_t d : c.dims) elements *= d;
  std::vector<uint16_t> tensor16 = iota<uint16_t>(elements);
  std::vector<uint32_t> tensor32 = iota<uint32_t>(elements);
  alignas(16) static std::byte storage[1 << 16];
  const size_t bytes = elements * c.elementBytes;
  ASSERT_LE(bytes, sizeof storage);
  std::memcpy(storage, c.elementBytes == 2 ? static_cast<void*>(tensor16.data()) : tensor32.data(), bytes);
  TensorMapFields f;
  f.rank = static_cast<uint32_t>(c.dims.size());
  f.elementBytes = c.elementBytes;
  f.globalAddress = addr(storage);
  uint64_t stride = c.elementBytes;
  for (uint32_t d = 0; d < f.rank; ++d) {
    f.dims[d] = c.dims[d];
    f.strides[d] = d == 0 ? 0 : stride;
    stride *= c.dims[d];
    f.box[d] = c.box[d];
    f.elementStrides[d] = c.elementStrides.empty() ? 1 : c.elementStrides[d];
  }
  f.swizzleBytes = c.swizzle;
  std::vector<uint32_t> out;
  Report r = launchBox(f, c.coordinates, {addr(storage), bytes}, out);
  EXPECT_FALSE(r.failed()) << r.str();
  std::vector<std::byte> expected = expectedBox(f, c.coordinates);
  ASSERT_EQ(out.size() * 4, expected.size());
  EXPECT_EQ(std::memcmp(out.data(), expected.data(), expected.size()), 0);
  size_t zeros = 0;
  for (std::byte b : expected) zeros += b == std::byte{0};
  EXPECT_GT(zeros, 0u) << "each case reaches outside its tensor";
}

INSTANTIATE_TEST_SUITE_P(
    Boxes, SimTmaBoxes,
    ::testing::Values(
        BoxCase{"f16_128B_swizzle_ragged_corner", 2, {72, 40}, {64, 16}, {}, {32, 30}, 128},
        BoxCase{"f16_64B_swizzle_negative_start", 2, {48, 20}, {32, 8}, {}, {-8, 4}, 64},
        BoxCase{"f16_32B_swizzle", 2, {40, 24}, {16, 8}, {}, {32, 17}, 32},
        BoxCase{"f32_1d", 4, {100}, {32}, {}, {80}, 0},
        BoxCase{"f32_3d_element_strides", 4, {8, 6, 4}, {4, 3, 2}, {1, 2, 1}, {6, 1, 3}, 0},
        BoxCase{"f32_4d", 4, {8, 3, 2, 2}, {4, 2, 2, 2}, {}, {0, 2, 1, 0}, 0},
        BoxCase{"f32_5d", 4, {4, 2, 2, 2, 3}, {4, 1, 2, 1, 2}, {}, {0, 1, 0, 1, 2}, 0}),
    [](const ::testing::TestParamInfo<BoxCase>& info) { return std::string(info.param.name); });

struct SmallMatrix {
  alignas(16) std::array<uint16_t, 64 * 32> data;
  SmallMatrix() { std::iota(data.begin(), data.end(), uint16_t(1)); }
  TensorMapFields map() const { return matrixMap(addr(data.data()), 32, 64, 2, 8, 64, 128); }
  MemoryRange range() const { return {addr(data.data()), sizeof data}; }
};

TEST(SimTma, ReadingTheBoxBeforeItsPhaseCompletesIsReported) {
  SmallMatrix m;
  std::vector<uint32_t> out;
  Report r = launchBox(m.map(), {0, 0}, m.range(), out, 0, /*wait=*/false);
  // The last thread at the barrier goes on first and reads before thread 0 issues the copy (an uninitialized
  // read the copy then races with); every other thread reads its two words while the copy is in flight.
  EXPECT_EQ(r.findingCount(FindingKind::PendingAsyncCopyRead), 2 * (kThreads - 1)) << r.str();
  const Finding* f = firstFinding(r, FindingKind::PendingAsyncCopyRead);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->line, 55u);
  EXPECT_EQ(r.findingCount(FindingKind::UninitializedSharedRead), 2u);
}

TEST(SimTma, APhaseThatNeverCompletesIsAHangNamingEachWaiter) {
  SmallMatrix m;
  std::vector<uint32_t> out;
  Report r = launchBox(m.map(), {0, 0}, m.range(), out, /*extraTx=*/16);  // expects 16 bytes no copy brings
  EXPECT_EQ(r.findingCount(FindingKind::IncompleteMbarrierWait), kThreads) << r.str();
  const Finding* f = firstFinding(r, FindingKind::IncompleteMbarrierWait);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kernel, "tma_box");
  EXPECT_TRUE(f->hasThread);
  EXPECT_EQ(f->line, 52u);
  EXPECT_EQ(f->message,
            "waits for the phase of parity 0 of the mbarrier at shared offset 0, which never completes (phase 0: 0 of 1 "
            "arrivals and 16 transaction bytes pending)");
}

// ---- a two-stage pipeline: iteration i uses buffer and barrier i % 2 and waits on parity (i / 2) % 2; thread 0
// refills a buffer after the barrier that follows every thread's read of it.
constexpr uint32_t kIterations = 6;
constexpr uint32_t kStageBytes = 8 * 128;  // an 8 x 64 f16 box

void pipeline(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0);
  auto barrierOf = [](uint32_t stage) { return addr(shared<uint64_t>(stage)); };
  auto bufferOf = [](uint32_t stage) { return addr(shared<std::byte>(kBox + stage * kStageBytes)); };
  auto issue = [&](uint32_t i) {
    std::array<int32_t, 5> at{0, static_cast<int32_t>(8 * i)};
    __tsim_mbarrier_arrive(barrierOf(i % 2), 1, kStageBytes, kArrive);
    __tsim_bulk_tensor_copy(bufferOf(i % 2), gBox.map.data(), at.data(), 2, barrierOf(i % 2), kCopy);
  };
  if (tid == 0) {
    __tsim_mbarrier_init(barrierOf(0), 1, kInit);
    __tsim_mbarrier_init(barrierOf(1), 1, kInit);
  }
  __tsim_barrier(kBar);
  if (tid == 0) issue(0), issue(1);
  for (uint32_t i = 0; i < kIterations; ++i) {
    __tsim_mbarrier_try_wait_parity(barrierOf(i % 2), (i / 2) % 2, kWait);
    const uint32_t* words = reinterpret_cast<const uint32_t*>(bufferOf(i % 2));
    for (uint32_t word = tid; word < kStageBytes / 4; word += kThreads)
      store(out + i * kStageBytes / 4 + word, load<uint32_t>(words + word, kSLoad), kGStore);
    __tsim_barrier(kBar);
    if (tid == 0 && i + 2 < kIterations) issue(i + 2);
  }
}

TEST(SimTma, TwoStagePipelineAlternatesParities) {
  alignas(16) static std::array<uint16_t, 64 * 8 * kIterations> tensor;
  std::iota(tensor.begin(), tensor.end(), uint16_t(1));
  TensorMapFields f = matrixMap(addr(tensor.data()), 8 * kIterations, 64, 2, 8, 64, 128);
  gBox.map = encodeTensorMap(f);
  std::vector<uint32_t> out(kIterations * kStageBytes / 4);
  void* params[] = {out.data()};
  Report r = launch(program("pipeline", kThreads / 32, kBox + 2 * kStageBytes, mbarrierSites(), &pipeline), {1, 1, 1},
                    params, config({{addr(tensor.data()), sizeof tensor}, range(out)}));
  EXPECT_FALSE(r.failed()) << r.str();
  for (uint32_t i = 0; i < kIterations; ++i) {
    std::vector<std::byte> expected = expectedBox(f, {0, static_cast<int32_t>(8 * i)});
    EXPECT_EQ(std::memcmp(out.data() + i * kStageBytes / 4, expected.data(), kStageBytes), 0) << "iteration " << i;
  }
}

// Every thread writes its word of a buffer and reads its neighbour's; then one thread refills the buffer by TMA,
// after a barrier (kBarrierFirst) or while the others' reads are unordered with it.
template <bool kBarrierFirst>
void refill(void**) {
  const uint32_t tid = __tsim_thread_id(0);
  const uint64_t barrier = addr(shared<uint64_t>(0));
  uint32_t* words = shared<uint32_t>(kBox / 4);
  if (tid == 0) __tsim_mbarrier_init(barrier, 1, kInit);
  store(words + tid, tid, kGStore);
  __tsim_barrier(kBar);
  (void)load<uint32_t>(words + (tid + 1) % kThreads, kSLoad);
  if (kBarrierFirst) __tsim_barrier(kBar);
  if (tid == kThreads - 2) {  // the last thread to run after the barrier: the others have read by then
    __tsim_mbarrier_arrive(barrier, 1, kStageBytes, kArrive);
    std::array<int32_t, 5> at{};
    __tsim_bulk_tensor_copy(addr(words), gBox.map.data(), at.data(), 2, barrier, kCopy);
  }
  __tsim_mbarrier_try_wait_parity(barrier, 0, kWait);
}

TEST(SimTma, RefillingABufferOthersReadUnorderedIsARace) {
  SmallMatrix m;
  gBox.map = encodeTensorMap(m.map());
  SiteTable sites = mbarrierSites();
  sites[kGStore] = site(SiteKind::Store, AddressSpace::Shared, 4, "store", 56);
  auto run = [&](void (*kernel)(void**)) {
    return launch(program("refill", kThreads / 32, kBox + kStageBytes, sites, kernel), {1, 1, 1}, nullptr,
                  config({m.range()}));
  };
  Report ordered = run(&refill<true>);
  EXPECT_FALSE(ordered.failed()) << ordered.str();
  Report racy = run(&refill<false>);
  ASSERT_GT(racy.findingCount(FindingKind::SharedRace), 0u) << racy.str();
  const Finding* race = firstFinding(racy, FindingKind::SharedRace);
  EXPECT_EQ(race->line, 53u);
  EXPECT_EQ(race->lane, kThreads - 2 - 96);
  EXPECT_EQ(racy.findingCount(), racy.findingCount(FindingKind::SharedRace));
}

void arriveWithoutInit(void**) {
  if (__tsim_thread_id(0) == 0) __tsim_mbarrier_arrive(addr(shared<uint64_t>(1)), 1, 0, kArrive);
}

void arriveTooOften(void**) {
  const uint64_t barrier = addr(shared<uint64_t>(0));
  if (__tsim_thread_id(0) == 0) {
    __tsim_mbarrier_init(barrier, 2, kInit);
    __tsim_mbarrier_arrive(barrier, 3, 0, kArrive);
  }
}

TEST(SimTma, BarriersUsedBeforeInitOrOverArrivedAreInvalid) {
  Report r = launch(program("no_init", 1, 64, mbarrierSites(), &arriveWithoutInit), {1, 1, 1}, nullptr, config({}));
  ASSERT_EQ(r.findingCount(FindingKind::InvalidCall), 1u) << r.str();
  EXPECT_EQ(firstFinding(r, FindingKind::InvalidCall)->message,
            "the mbarrier at shared offset 8 is used before mbarrier.init in this program");
  Report over = launch(program("over", 1, 64, mbarrierSites(), &arriveTooOften), {1, 1, 1}, nullptr, config({}));
  ASSERT_EQ(over.findingCount(FindingKind::InvalidCall), 1u) << over.str();
  EXPECT_EQ(firstFinding(over, FindingKind::InvalidCall)->message,
            "arrives 3 times on the mbarrier at shared offset 0, in phase 0: 2 of 2 arrivals and 0 transaction bytes "
            "pending");
}

}  // namespace
