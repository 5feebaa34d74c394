// Launches as a whole: programs of a 3-D grid in parallel on several host threads with exact atomic totals,
// results and findings that do not depend on the number of threads, printed output (CUDA vprintf and the AMD
// printf buffer), the AMD dispatch packet, wave64 ds_bpermute, warp matrix operations through the semantics
// interface, and clear errors for programs that cannot run.
#include <cstring>
#include <numeric>

#include "SimRuntimeTestUtil.h"
#include "ir/Error.h"
#include "jit/sim/runtime/WarpMatrixSemantics.h"

namespace {

using namespace simtest;

enum AtomicSite : uint32_t { kAdd, kFAdd, kMax, kIds, kSharedAdd, kSharedLoad, kBarrier, kSharedStore };
SiteTable atomicSites() {
  return {site(SiteKind::AtomicRMW, AddressSpace::Global, 4, "atomic_add", 10),
          site(SiteKind::AtomicRMW, AddressSpace::Global, 4, "atomic_add", 11),
          site(SiteKind::AtomicRMW, AddressSpace::Global, 4, "atomic_max", 12),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 13),
          site(SiteKind::AtomicRMW, AddressSpace::Shared, 4, "atomic_add", 14),
          site(SiteKind::Load, AddressSpace::Shared, 4, "load", 15),
          syncSite(SiteKind::Barrier, "barrier", 16),
          site(SiteKind::Store, AddressSpace::Shared, 4, "store", 17)};
}

void atomicsEverywhere(void** params) {
  uint32_t* counter = static_cast<uint32_t*>(params[0]);
  float* sum = static_cast<float*>(params[1]);
  uint32_t* maximum = static_cast<uint32_t*>(params[2]);
  uint32_t* ids = static_cast<uint32_t*>(params[3]);
  uint32_t* perProgram = static_cast<uint32_t*>(params[4]);
  uint32_t x = __tsim_program_id(0), y = __tsim_program_id(1), z = __tsim_program_id(2);
  uint32_t linear = x + __tsim_num_programs(0) * (y + __tsim_num_programs(1) * z);
  uint32_t tid = __tsim_thread_id(0);
  __tsim_atomic_rmw(kAtomicAdd, addr(counter), 1, 4, kAdd);
  float half = 0.5f;
  uint32_t bits;
  std::memcpy(&bits, &half, 4);
  __tsim_atomic_rmw(kAtomicFAdd, addr(sum), bits, 4, kFAdd);
  __tsim_atomic_rmw(kAtomicUMax, addr(maximum), linear, 4, kMax);
  // A shared histogram of 4 bins, then thread 0 publishes bin 1.
  if (tid < 4) store(shared<uint32_t>(tid), 0u, kSharedStore);
  __tsim_barrier(kBarrier);
  __tsim_atomic_rmw(kAtomicAdd, addr(shared<uint32_t>(tid % 4)), 1, 4, kSharedAdd);
  __tsim_barrier(kBarrier);
  if (tid == 0) {
    store(ids + 3 * linear, x, kIds);
    store(ids + 3 * linear + 1, y, kIds);
    store(ids + 3 * linear + 2, z, kIds);
    store(perProgram + linear, load<uint32_t>(shared<uint32_t>(1), kSharedLoad), kIds);
  }
}

struct AtomicData {
  static constexpr uint32_t kPrograms = 4 * 3 * 2;
  std::vector<uint32_t> counter = {0}, maximum = {0}, ids = std::vector<uint32_t>(3 * kPrograms),
                        perProgram = std::vector<uint32_t>(kPrograms);
  std::vector<float> sum = {0};
  void* params[5] = {counter.data(), sum.data(), maximum.data(), ids.data(), perProgram.data()};
  LaunchConfig config(unsigned threads) const {
    return simtest::config({range(counter), range(sum), range(maximum), range(ids), range(perProgram)}, threads);
  }
};

TEST(SimRuntimeLaunch, ParallelProgramsGiveExactAtomicTotals) {
  AtomicData d;
  Report r = launch(program("atomics", 4, 16, atomicSites(), &atomicsEverywhere), {4, 3, 2}, d.params, d.config(4));
  ASSERT_FALSE(r.failed()) << r.str();
  // 24 programs x 128 threads.
  EXPECT_EQ(d.counter[0], 3072u);
  EXPECT_EQ(d.sum[0], 1536.0f);
  EXPECT_EQ(d.maximum[0], 23u);
  for (uint32_t p = 0; p < AtomicData::kPrograms; ++p) {
    EXPECT_EQ(d.ids[3 * p], p % 4);
    EXPECT_EQ(d.ids[3 * p + 1], p / 4 % 3);
    EXPECT_EQ(d.ids[3 * p + 2], p / 12);
    EXPECT_EQ(d.perProgram[p], 32u);  // 128 threads over 4 bins
  }
  EXPECT_EQ(r.total.instructions(InstructionClass::GlobalAtomic), 24u * 4 * 3);
  EXPECT_EQ(r.total.instructions(InstructionClass::SharedAtomic), 24u * 4);
  EXPECT_EQ(r.total.barriers, 48u);
}

TEST(SimRuntimeLaunch, FindingsAndOutputDoNotDependOnTheNumberOfThreads) {
  // Every program races (no barrier between the shared stores and loads) and prints.
  auto kernel = [](void**) {
    uint32_t tid = __tsim_thread_id(0);
    store(shared<uint32_t>(tid), tid, kSharedStore);
    (void)load<uint32_t>(shared<uint32_t>((tid + 1) % 64), kSharedLoad);
    if (tid == 0) {
      uint32_t program = __tsim_program_id(0);
      __tsim_vprintf("program %u\n", &program, kIds);
    }
  };
  Program p = program("racy", 2, 256, atomicSites(), kernel);
  Report one = launch(p, {16, 1, 1}, nullptr, config({}, 1));
  Report many = launch(p, {16, 1, 1}, nullptr, config({}, 3));
  EXPECT_GT(one.findingCount(FindingKind::SharedRace), 0u);
  EXPECT_EQ(one.findingsText(), many.findingsText());
  EXPECT_EQ(one.findingCount(), many.findingCount());
  std::string expected;
  for (int i = 0; i < 16; ++i) expected += "program " + std::to_string(i) + "\n";
  EXPECT_EQ(one.output, expected);
  EXPECT_EQ(many.output, expected);
}

TEST(SimRuntimeLaunch, VprintfReadsCudasArgumentBufferAndEchoesOnRequest) {
  auto kernel = [](void**) {
    if (__tsim_thread_id(0) != 1) return;
    // CUDA's layout: each argument at its natural alignment (int at 0, double at 8, char* at 16, long at 24).
    struct {
      int32_t i;
      double d;
      const char* s;
      int64_t l;
    } args = {-7, 2.5, "tile", int64_t{1} << 40};
    __tsim_vprintf("%d %.2f %s %ld\n", &args, kIds);
  };
  LaunchConfig c = config({});
  c.echoOutput = true;
  testing::internal::CaptureStdout();
  Report r = launch(program("printer", 1, 0, atomicSites(), kernel), {1, 1, 1}, nullptr, c);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(r.output, "-7 2.50 tile 1099511627776\n");
  EXPECT_EQ(printed, r.output);
}

// ---- AMD: wave64 programs, the dispatch packet, the printf buffer, ds_bpermute
enum AmdSite : uint32_t { kPacketLoad, kBufferCas, kBufferStore, kBufferLoad, kPermute, kOutStore };
SiteTable amdSites() {
  return {site(SiteKind::Load, AddressSpace::Constant, 4, "program_id", 20),
          site(SiteKind::AtomicCAS, AddressSpace::Global, 4, "print", 21),
          site(SiteKind::Store, AddressSpace::Global, 4, "print", 21),
          site(SiteKind::Load, AddressSpace::Global, 4, "print", 21),
          syncSite(SiteKind::Bpermute, "reduce", 22),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 23)};
}

// What backends/amdgpu/PrintfBuffer.cpp emits: reserve a record with a CAS on the used-bytes counter, then
// write the format id and the arguments.
void amdPrintf(uint32_t id, const uint32_t* args, uint32_t count) {
  uint64_t buffer;
  const uint8_t* implicit = static_cast<const uint8_t*>(__tsim_implicitarg_ptr());
  __tsim_load(&buffer, addr(implicit + 24), 8, kPacketLoad);
  uint32_t recordBytes = 4 + 4 * count, used = load<uint32_t>(reinterpret_cast<void*>(buffer), kBufferLoad);
  for (;;) {
    uint32_t old = static_cast<uint32_t>(__tsim_atomic_cas(buffer, used, used + recordBytes, 4, kBufferCas));
    if (old == used) break;
    used = old;
  }
  uint64_t at = buffer + 8 + used;
  __tsim_store(at, &id, 4, kBufferStore);
  for (uint32_t i = 0; i < count; ++i) __tsim_store(at + 4 + 4 * i, &args[i], 4, kBufferStore);
}

void amdKernel(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint8_t* packet = static_cast<const uint8_t*>(__tsim_dispatch_ptr());
  uint16_t workgroupX;
  uint32_t gridX, gridY;
  __tsim_load(&workgroupX, addr(packet + 4), 2, kPacketLoad);
  __tsim_load(&gridX, addr(packet + 12), 4, kPacketLoad);
  __tsim_load(&gridY, addr(packet + 16), 4, kPacketLoad);
  uint32_t lane = __tsim_lane_id(), tid = __tsim_thread_id(0);
  // Reverse the wave: lane l reads lane 63 - l.
  uint32_t reversed = __tsim_bpermute(4 * (63 - lane), 1000 + lane, kPermute);
  store(out + tid, reversed, kOutStore);
  if (tid == 0 && __tsim_program_id(0) == 1 && __tsim_program_id(1) == 2) {
    uint32_t args[3] = {workgroupX, gridX, gridY};
    amdPrintf(1, args, 3);
  }
}

TEST(SimRuntimeLaunch, AmdWave64KernelReadsItsDispatchPacketAndPrintsThroughTheBuffer) {
  std::vector<uint32_t> out(128);
  void* params[] = {out.data()};
  Program p = program("amd", 2, 0, amdSites(), &amdKernel, 64);
  p.printfFormats = {"1:3:4:4:4:workgroup %u\\72 grid %u x %u\\n"};
  Report r = launch(p, {2, 3, 1}, params, config({range(out)}, 2));
  ASSERT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(r.output, "workgroup 128: grid 256 x 3\n");
  for (uint32_t t = 0; t < 128; ++t) EXPECT_EQ(out[t], 1000 + 63 - t % 64) << t;
  // The runtime's blocks are not the kernel's traffic.
  EXPECT_EQ(r.total.globalLoad.requests, 0u);
  EXPECT_EQ(r.total.globalStore.requests, 2u * 6);  // 2 waves x 6 programs
}

TEST(SimRuntimeLaunch, AmdPrintfRecordWithoutAFormatIsAFinding) {
  auto kernel = [](void**) {
    if (__tsim_thread_id(0) == 0) {
      uint32_t arg = 5;
      amdPrintf(7, &arg, 1);
    }
  };
  Program p = program("amd", 1, 0, amdSites(), kernel, 64);
  p.printfFormats = {"1:1:4:%d\\n"};
  Report r = launch(p, {1, 1, 1}, nullptr, config({}));
  ASSERT_EQ(r.findingCount(FindingKind::BadPrintfRecord), 1u);
  EXPECT_NE(r.findings[0].message.find("format id 7"), std::string::npos) << r.findings[0].message;
}

// ---- warp matrix operations through the semantics interface, with a fake that is easy to check by hand:
// "mma" kind 0 is d = a * b + c per lane (one register each); ldmatrix gives lane l register r = the first four
// bytes of row 8 r + l / 4, column pair l % 4 (the m8n8.b16 fragment of matrix r).
class FakeMatrix final : public WarpMatrixSemantics {
 public:
  std::optional<Shape> shape(uint32_t kind) const override {
    if (kind == 0) return Shape{32, 1, 1, 1};
    return std::nullopt;
  }
  void mma(uint32_t, std::span<const uint32_t> a, std::span<const uint32_t> b, std::span<const uint32_t> c,
           std::span<uint32_t> d) const override {
    for (size_t l = 0; l < d.size(); ++l) d[l] = a[l] * b[l] + c[l];
  }
  void ldmatrix(uint32_t matrices, bool, std::span<const uint64_t> rows, const RowRead& read,
                std::span<uint32_t> out) const override {
    uint8_t data[32][16];
    for (uint32_t r = 0; r < 8 * matrices; ++r) read(r, rows[r], 16, data[r]);
    for (uint32_t l = 0; l < 32; ++l)
      for (uint32_t m = 0; m < matrices; ++m) std::memcpy(&out[l * matrices + m], &data[8 * m + l / 4][4 * (l % 4)], 4);
  }
  // The inverse of ldmatrix above.
  void stmatrix(uint32_t matrices, bool, std::span<const uint64_t> rows, std::span<const uint32_t> in,
                const RowWrite& write) const override {
    uint8_t data[32][16];
    for (uint32_t l = 0; l < 32; ++l)
      for (uint32_t m = 0; m < matrices; ++m) std::memcpy(&data[8 * m + l / 4][4 * (l % 4)], &in[l * matrices + m], 4);
    for (uint32_t r = 0; r < 8 * matrices; ++r) write(r, rows[r], 16, data[r]);
  }
};

enum MatrixSite : uint32_t { kFill, kSync, kLdMatrix, kMma, kResult };
SiteTable matrixSites() {
  return {site(SiteKind::Store, AddressSpace::Shared, 4, "store", 30), syncSite(SiteKind::Barrier, "barrier", 31),
          site(SiteKind::LdMatrix, AddressSpace::Shared, 16, "dot", 32), syncSite(SiteKind::Mma, "dot", 32),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 33)};
}

template <uint32_t kRowStride>
void matrixKernel(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  uint32_t lane = __tsim_lane_id();
  // 32 rows of kRowStride bytes; word w of row r holds 100 r + w.
  for (uint32_t w = 0; w < 4; ++w) store(shared<uint32_t>((lane * kRowStride) / 4 + w), 100 * lane + w, kFill);
  __tsim_barrier(kSync);
  uint32_t regs[4];
  __tsim_ldmatrix(4, 0, addr(shared<uint8_t>(lane * kRowStride)), regs, kLdMatrix);
  uint32_t a = regs[0], b = 2, c = lane, d;
  __tsim_mma(0, &a, &b, &c, &d, kMma);
  store(out + lane, d, kResult);
  store(out + 32 + lane, regs[3], kResult);
}

TEST(SimRuntimeLaunch, WarpMatrixOperationsGoThroughTheSemanticsAndTheSharedChecks) {
  FakeMatrix fake;
  std::vector<uint32_t> out(64);
  void* params[] = {out.data()};
  LaunchConfig c = config({range(out)});
  c.matrix = &fake;
  Report r = launch(program("mma", 1, 32 * 16, matrixSites(), &matrixKernel<16>), {1, 1, 1}, params, c);
  ASSERT_FALSE(r.failed()) << r.str();
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(out[l], 2 * (100 * (l / 4) + l % 4) + l) << l;  // matrix 0, row l / 4, word l % 4
    EXPECT_EQ(out[32 + l], 100 * (24 + l / 4) + l % 4) << l;  // matrix 3
  }
  EXPECT_EQ(r.total.instructions(InstructionClass::Mma), 1u);
  EXPECT_EQ(r.total.instructions(InstructionClass::LdMatrix), 1u);
  // Rows 16 bytes apart: each matrix (8 rows) is one conflict-free 128-byte phase.
  EXPECT_EQ(r.total.sharedLoad.requests, 1u);
  EXPECT_EQ(r.total.sharedLoad.wavefronts, 4u);
  EXPECT_EQ(r.total.sharedLoad.bankConflicts, 0u);

  // Rows 128 bytes apart (an unswizzled 64-wide f16 tile): the 8 rows of a matrix share banks 0-3: 7 extra
  // wavefronts per matrix.
  Report strided = launch(program("mma", 1, 32 * 128, matrixSites(), &matrixKernel<128>), {1, 1, 1}, params, c);
  ASSERT_FALSE(strided.failed()) << strided.str();
  EXPECT_EQ(strided.total.sharedLoad.bankConflicts, 28u);
}

TEST(SimRuntimeLaunch, LdMatrixRowsOutsideSharedMemoryAreReported) {
  FakeMatrix fake;
  std::vector<uint32_t> out(64);
  void* params[] = {out.data()};
  LaunchConfig c = config({range(out)});
  c.matrix = &fake;
  // 31 rows fit; lane 31's row (bytes 496-511) is beyond 500 bytes of shared memory. Its fill stores are too.
  Report r = launch(program("mma", 1, 500, matrixSites(), &matrixKernel<16>), {1, 1, 1}, params, c);
  const Finding* f = nullptr;
  for (const Finding& x : r.findings)
    if (x.kind == FindingKind::SharedOutOfBounds && x.line == 32) f = &x;
  ASSERT_NE(f, nullptr) << r.str();
  EXPECT_EQ(f->lane, 31u);
  EXPECT_EQ(f->address, 496u);
  EXPECT_EQ(f->bytes, 16u);
}

TEST(SimRuntimeLaunch, WarpMatrixOperationsWithoutSemanticsAreUnsupported) {
  std::vector<uint32_t> out(64);
  void* params[] = {out.data()};
  LaunchConfig c = config({range(out)});
  c.matrix = nullptr;
  Report r = launch(program("mma", 1, 32 * 16, matrixSites(), &matrixKernel<16>), {1, 1, 1}, params, c);
  ASSERT_EQ(r.findingCount(FindingKind::Unsupported), 1u) << r.str();
  EXPECT_NE(r.findings[0].message.find("warp-matrix semantics"), std::string::npos);
}

// ---- programs that cannot run
void nothing(void**) {}

TEST(SimRuntimeLaunch, InvalidProgramsAreClearErrors) {
  auto expectError = [](Program p, std::array<uint32_t, 3> grid, const std::string& text, LaunchConfig c = {}) {
    try {
      launch(p, grid, nullptr, c);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const tessera::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expectError(program("k", 1, 0, {}, nullptr), {1, 1, 1}, "kernel 'k': the program has no entry function");
  expectError(program("k", 1, 0, {}, &nothing, 48), {1, 1, 1}, "warp size 48 (expected 32 or 64)");
  Program wave = program("k", 1, 0, {}, &nothing, 64);
  wave.target = "nvptx";
  expectError(wave, {1, 1, 1}, "nvptx warps have 32 threads, not 64");
  expectError(program("k", 33, 0, {}, &nothing), {1, 1, 1}, "33 warps of 32 threads (a program has 1 to 1024");
  expectError(program("k", 1, 0, {}, &nothing), {4, 0, 1}, "grid (4, 0, 1) is empty");
  Program unknown = program("k", 1, 0, {}, &nothing);
  unknown.target = "spirv";
  expectError(unknown, {1, 1, 1}, "unknown target 'spirv'");
  Program badFormat = program("k", 1, 0, {}, &nothing, 64);
  badFormat.printfFormats = {"1:2:4:x"};
  expectError(badFormat, {1, 1, 1}, "malformed");
  LaunchConfig tiny;
  tiny.stackBytes = 1024;
  expectError(program("k", 1, 0, {}, &nothing), {1, 1, 1}, "fiber stacks of 1024 bytes", tiny);
}

TEST(SimRuntimeLaunch, ReportTextNamesFindingsAndThrowIfFailedCarriesThem) {
  auto kernel = [](void**) {
    if (__tsim_thread_id(0) == 0) __tsim_trap(kIds);
  };
  Report r = launch(program("trapper", 1, 0, atomicSites(), kernel), {1, 1, 1}, nullptr, config({}));
  std::string text = r.str();
  EXPECT_NE(text.find("sim counters for trapper"), std::string::npos) << text;
  EXPECT_NE(text.find("1 finding(s):\ntrap in trapper, program (0, 0, 0), warp 0 lane 0 at kernels.py:13:1 (store): "
                      "the kernel trapped"),
            std::string::npos)
      << text;
  try {
    r.throwIfFailed();
    FAIL() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("sim: kernel 'trapper' failed its checks (1 finding(s)):\ntrap in trapper"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
