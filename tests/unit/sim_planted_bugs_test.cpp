// The emulator proves itself: each test plants one bug class, in a kernel written in the DSL (tile IR) or in the
// optimized LLVM IR the GPU target produced, and runs it through the whole path (tile IR -> optimized GPU module ->
// HostModule -> HostJit -> the runtime, through SimRuntime as a launch would). The emulator must report each bug:
// a finding naming the kernel, program, thread, access and the author's file:line, a result that differs from the
// reference interpreter, or counters whose exact values are derived by hand in the comments.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "SimPlantedBugsTestUtil.h"

namespace tessera::testing {
namespace {

// ---- the kernels (the findings name these lines)

// out = transpose(in) for a BM x BN block: the loads coalesce along N, the stores along M, so `trans` exchanges
// the elements through shared memory (store, barrier, load).
constexpr uint32_t kTransLine = __LINE__ + 6;
void transpose(Ptr<f32> in, Ptr<f32> out, Int M, Int N, Const<int> BM, Const<int> BN) {
  Tensor rm = arange(0, BM);
  Tensor rn = arange(0, BN);
  Tensor x = load(in + expand_dims(rm, 1) * N + expand_dims(rn, 0));
  store(out + expand_dims(rn, 1) * M + expand_dims(rm, 0),
        trans(x));
}
KernelDef transposeKernel() { return kernel("transpose", transpose, {"in", "out", "M", "N", "BM", "BN"}); }

// out[0] = the sum of BLOCK elements: one warp reduces with butterfly shuffles.
constexpr uint32_t kRowSumLine = __LINE__ + 2;
void rowSum(Ptr<f32> x, Ptr<f32> out, Const<int> BLOCK) {
  store(out, sum(load(x + arange(0, BLOCK)), 0));
}
KernelDef rowSumKernel() { return kernel("row_sum", rowSum, {"x", "out", "BLOCK"}); }

// c = a @ b for one BM x BN x BK block (f16 in, f32 accumulator): mma.sync on nvptx, MFMA on amdgpu.
constexpr uint32_t kDotLine = __LINE__ + 6;
void dot16(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Const<int> BM, Const<int> BN, Const<int> BK) {
  Tensor rm = arange(0, BM), rn = arange(0, BN), rk = arange(0, BK);
  Tensor x = load(a + expand_dims(rm, 1) * BK + expand_dims(rk, 0));
  Tensor y = load(b + expand_dims(rk, 1) * BN + expand_dims(rn, 0));
  store(c + expand_dims(rm, 1) * BN + expand_dims(rn, 0),
        dot(x, y, zeros<f32>({BM, BN})));
}
KernelDef dotKernel() { return kernel("dot16", dot16, {"a", "b", "c", "BM", "BN", "BK"}); }


// out[i] = x[i] for BLOCK elements per program, unmasked: it reads past x when x is shorter than the grid.
constexpr uint32_t kCopyLoadLine = __LINE__ + 3;
void copy(Ptr<f32> x, Ptr<f32> out, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor v = load(x + offs);
  store(out + offs, v);
}
KernelDef copyKernel() { return kernel("copy", copy, {"x", "out", "BLOCK"}); }

// out[i] = x[i * step]: with step = 2 a strided read; with step = the row length of a row-major matrix, a read of
// one of its columns. `step` is a runtime integer, so nothing about it is known at compile time (not equal to 1).
constexpr uint32_t kGatherLoadLine = __LINE__ + 3;
void gather(Ptr<f32> x, Ptr<f32> out, Int step, Const<int> BLOCK) {
  Tensor offs = arange(0, BLOCK);
  Tensor v = load(x + offs * step);
  store(out + offs, v);
}
KernelDef gatherKernel() { return kernel("gather", gather, {"x", "out", "step", "BLOCK"}); }

gpucheck::CheckCase transposeCase() {
  const int64_t n = 32;
  gpucheck::CheckCase c{"transpose 32x32", transposeKernel(), {{"BM", n}, {"BN", n}}, {1, 1, 1}, {}, 4, 0, 0};
  c.args = {f32Buffer(sampleValues(n * n, 1)), f32Buffer(std::vector<float>(n * n)), n, n};
  return c;
}

gpucheck::CheckCase dotCase() {
  const int64_t n = 32;
  gpucheck::CheckCase c{"dot16 32x32x32", dotKernel(), {{"BM", n}, {"BN", n}, {"BK", n}}, {1, 1, 1}, {}, 4, 1e-5, 1e-5};
  c.args = {f16Buffer(sampleValues(n * n, 2)), f16Buffer(sampleValues(n * n, 3)), f32Buffer(std::vector<float>(n * n))};
  return c;
}

gpucheck::CheckCase gatherCase(int64_t step, int64_t block) {
  gpucheck::CheckCase c{"gather", gatherKernel(), {{"BLOCK", block}}, {1, 1, 1}, {}, 4, 0, 0};
  c.args = {f32Buffer(sampleValues(block * step, 4)), f32Buffer(std::vector<float>(block)), step};
  return c;
}

std::string inText(const sim::Report& r) { return r.str(); }

// ---- planted bugs

TEST(SimPlantedBugs, MissingBarrierBetweenSharedWriteAndReadIsARace) {
  // As compiled, the exchange is store, barrier, load: the emulator finds nothing and the result is right.
  SimOutcome clean = runUnderSim(transposeCase(), "sm_90a");
  ASSERT_EQ(clean.check.status, gpucheck::CheckResult::Status::Pass) << clean.check.message << clean.check.firstMismatch;
  EXPECT_FALSE(clean.report.failed()) << inText(clean.report);

  SimOutcome planted = runUnderSim(transposeCase(), "sm_90a", [](jit::CompiledKernel& k) {
    // The kernel pipeline runs no tail-call marking, O3 does: remove the call in either form.
    const size_t removed = replaceAll(k.optimizedLLVMIR, "tail call void @llvm.nvvm.barrier0()", "; barrier removed") +
                           replaceAll(k.optimizedLLVMIR, "call void @llvm.nvvm.barrier0()", "; barrier removed");
    ASSERT_EQ(removed, 1u);
  });
  EXPECT_EQ(planted.check.status, gpucheck::CheckResult::Status::Error);
  EXPECT_NE(planted.check.message.find("shared-memory race in transpose, program (0, 0, 0), warp "),
            std::string::npos) << planted.check.message;
  ASSERT_GT(planted.report.findingCount(sim::FindingKind::SharedRace), 0u) << inText(planted.report);
  const sim::Finding* race = firstFinding(planted.report, sim::FindingKind::SharedRace);
  ASSERT_NE(race, nullptr);
  EXPECT_EQ(race->kernel, "transpose");
  EXPECT_EQ(race->program, (std::array<uint32_t, 3>{0, 0, 0}));
  EXPECT_TRUE(race->hasThread && race->hasAccess && race->hasSite);
  EXPECT_EQ(race->space, "shared");
  EXPECT_EQ(race->bytes, 4u);
  EXPECT_EQ(race->op, "trans");
  EXPECT_TRUE(race->file.ends_with("sim_planted_bugs_test.cpp")) << race->file;
  EXPECT_EQ(race->line, kTransLine);
  EXPECT_NE(race->message.find("warp"), std::string::npos) << race->message;  // names the other thread
}

TEST(SimPlantedBugs, OutOfBoundsLoadNamesTheFirstLanePastTheBuffer) {
  // One program of 128 threads (4 warps) copies 128 elements, one each; x has 100: elements 100..127, the lanes
  // 4..31 of warp 3, read past it.
  gpucheck::CheckCase c{"copy past the end", copyKernel(), {{"BLOCK", int64_t(128)}}, {1, 1, 1}, {}, 4, 0, 0};
  c.args = {f32Buffer(sampleValues(100, 5)), f32Buffer(std::vector<float>(128))};
  const sim::Report report = launchOnlyUnderSim(c, "sm_90a");
  EXPECT_EQ(report.findingCount(sim::FindingKind::GlobalOutOfBounds), 28u) << inText(report);
  EXPECT_EQ(report.findingCount(), 28u) << inText(report);
  const sim::Finding* f = firstFinding(report, sim::FindingKind::GlobalOutOfBounds);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kernel, "copy");
  EXPECT_EQ(f->program, (std::array<uint32_t, 3>{0, 0, 0}));
  EXPECT_EQ(f->warp, 3u);
  EXPECT_EQ(f->lane, 4u);
  EXPECT_FALSE(f->write);
  EXPECT_EQ(f->bytes, 4u);
  EXPECT_EQ(f->address % 256, 400u % 256);  // 400 bytes into x, whose allocation is 256-byte aligned
  EXPECT_EQ(f->op, "load");
  EXPECT_EQ(f->line, kCopyLoadLine);
  EXPECT_NE(report.findingsText().find("sim_planted_bugs_test.cpp:" + std::to_string(kCopyLoadLine)),
            std::string::npos) << report.findingsText();
}

TEST(SimPlantedBugs, ShuffleFromAWrongLaneGivesAWrongSum) {
  // The butterfly's last step reads lane l ^ 16; planted: l ^ 15, a lane of the same half-warp, which already
  // holds the same half-sum. Lane 0 then stores twice the sum of x[0..15] instead of the sum of x[0..31].
  const std::vector<float> x = sampleValues(32, 6);
  gpucheck::CheckCase c{"row sum", rowSumKernel(), {{"BLOCK", int64_t(32)}}, {1, 1, 1}, {}, 1, 0, 0};
  c.args = {f32Buffer(x), f32Buffer({0.0f})};
  SimOutcome clean = runUnderSim(c, "sm_90a");
  ASSERT_EQ(clean.check.status, gpucheck::CheckResult::Status::Pass) << clean.check.message << clean.check.firstMismatch;

  SimOutcome planted = runUnderSim(c, "sm_90a", [](jit::CompiledKernel& k) {
    ASSERT_EQ(replaceAll(k.optimizedLLVMIR, "i32 16, i32 31)", "i32 15, i32 31)"), 1);
  });
  double half = 0, all = 0;  // multiples of 1/64: every partial sum is exact
  for (int i = 0; i < 32; ++i) (i < 16 ? half : all) += x[i];
  all += half;
  ASSERT_NE(2 * half, all);
  std::ostringstream expected;
  expected.precision(9);
  expected << "buffer 1 [0]: gpu " << 2 * half << ", interpreter " << all;
  EXPECT_EQ(planted.check.status, gpucheck::CheckResult::Status::Fail);
  EXPECT_EQ(planted.check.firstMismatch, expected.str());
  EXPECT_EQ(planted.report.findingCount(), 0u) << inText(planted.report);  // inside the mask: no check can tell
  EXPECT_EQ(planted.report.total.instructions(sim::InstructionClass::Shuffle), 5u);
}

TEST(SimPlantedBugs, ShuffleFromALaneOutsideItsMaskIsReported) {
  // Planted: the last step's member mask is the low half-warp (0xffff) while all 32 lanes execute it. Lanes
  // 16..31 are not in the mask they pass (invalid on hardware), and lanes 0..15 read lanes 16..31, outside it.
  gpucheck::CheckCase c{"row sum", rowSumKernel(), {{"BLOCK", int64_t(32)}}, {1, 1, 1}, {}, 1, 0, 0};
  c.args = {f32Buffer(sampleValues(32, 7)), f32Buffer({0.0f})};
  SimOutcome planted = runUnderSim(c, "sm_90a", [](jit::CompiledKernel& k) {
    const std::regex lastStep(R"(\(i32 -1, i32 (%[0-9]+), i32 16, i32 31\))");
    const std::string halfMask = std::regex_replace(k.optimizedLLVMIR, lastStep, "(i32 65535, i32 $1, i32 16, i32 31)");
    EXPECT_NE(halfMask, k.optimizedLLVMIR);
    k.optimizedLLVMIR = halfMask;
  });
  EXPECT_EQ(planted.check.status, gpucheck::CheckResult::Status::Error);
  ASSERT_EQ(planted.report.findingCount(sim::FindingKind::InvalidCall), 1u) << inText(planted.report);
  const sim::Finding* f = firstFinding(planted.report, sim::FindingKind::InvalidCall);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kernel, "row_sum");
  EXPECT_EQ(f->warp, 0u);
  EXPECT_GE(f->lane, 16u);
  EXPECT_NE(f->message.find("shfl.sync with mask 0xffff, which leaves out the calling lane " + std::to_string(f->lane)),
            std::string::npos) << f->message;
  EXPECT_EQ(f->op, "reduce");
  EXPECT_EQ(f->line, kRowSumLine);
}

TEST(SimPlantedBugs, UnpaddedExchangeBufferHasBankConflicts) {
  // The exchange of `trans` goes through a row-padded buffer (transforms/analysis/SharedScratch.h: 33 floats per
  // row of 32), so that threads reading a column hit distinct banks: no conflict.
  SimOutcome clean = runUnderSim(transposeCase(), "sm_90a");
  ASSERT_EQ(clean.check.status, gpucheck::CheckResult::Status::Pass) << clean.check.message << clean.check.firstMismatch;
  const sim::OpCounters* exchange = opCounters(clean.report, "trans", kTransLine);
  ASSERT_NE(exchange, nullptr) << clean.report.countersTable();
  EXPECT_GT(exchange->counters.sharedLoad.requests, 0u);
  EXPECT_EQ(exchange->counters.sharedBankConflicts(), 0u) << clean.report.countersTable();

  // Planted: the pitch without its pad (32 floats). 4 warps, each 8 store and 8 load requests of 4 bytes.
  // Stores: lane l of warp w writes word (4w + l / 8 (+16)) * P + 4 (l % 8) + k. With P = 32 the row no longer
  // moves the bank: the 4 rows of a warp hit each bank 4 times, 3 extra wavefronts x 32 requests = 96.
  // Loads: lane l reads word (4 (l % 8) + k) * P + 4w + l / 8 (+16): with P = 32, 4 banks for 32 lanes, 8
  // distinct words in each: 7 extra wavefronts x 32 requests = 224. (With P = 33 both are permutations of the
  // 32 banks.)
  // The optimized IR addresses a slot as the thread's row * 33 plus its column, then each register's constant
  // offset in bytes from there (row * 132 + column * 4): both become pitch 32.
  SimOutcome planted = runUnderSim(transposeCase(), "sm_90a", [](jit::CompiledKernel& k) {
    ASSERT_EQ(replaceAll(k.optimizedLLVMIR, ", 33, !dbg", ", 32, !dbg"), 2);
    const std::regex constantOffset(R"((getelementptr inbounds i8, ptr addrspace\(3\) %[0-9]+, i64 )([0-9]+))");
    std::string text;
    int offsets = 0;
    auto last = k.optimizedLLVMIR.cbegin();
    for (std::sregex_iterator m(k.optimizedLLVMIR.begin(), k.optimizedLLVMIR.end(), constantOffset), end; m != end; ++m) {
      const int64_t offset = std::stoll((*m)[2].str());
      text.append(last, (*m)[0].first).append((*m)[1].str()).append(std::to_string(offset / 132 * 128 + offset % 132));
      last = (*m)[0].second;
      ++offsets;
    }
    k.optimizedLLVMIR = text.append(last, k.optimizedLLVMIR.cend());
    ASSERT_EQ(offsets, 14);  // 2 x 8 registers, each side's first at the thread's own slot
  });
  EXPECT_EQ(planted.check.status, gpucheck::CheckResult::Status::Pass) << planted.check.message;
  exchange = opCounters(planted.report, "trans", kTransLine);
  ASSERT_NE(exchange, nullptr);
  EXPECT_EQ(exchange->counters.sharedStore.requests, 32u);
  EXPECT_EQ(exchange->counters.sharedStore.bankConflicts, 96u);
  EXPECT_EQ(exchange->counters.sharedLoad.requests, 32u);
  EXPECT_EQ(exchange->counters.sharedLoad.bankConflicts, 224u);
}

TEST(SimPlantedBugs, TransposedMmaFragmentGivesAWrongProduct) {
  SimOutcome clean = runUnderSim(dotCase(), "sm_90a");
  ASSERT_EQ(clean.check.status, gpucheck::CheckResult::Status::Pass) << clean.check.message << clean.check.firstMismatch;
  EXPECT_FALSE(clean.report.failed()) << inText(clean.report);
  EXPECT_GT(clean.report.total.instructions(sim::InstructionClass::Mma), 0u);
  // The staging swizzle (MmaFragments.h) puts the 8 rows one ldmatrix phase reads in 8 distinct 16-byte bank
  // groups: the dot's shared loads (ldmatrix only) have no bank conflict.
  const sim::OpCounters* dot = opCounters(clean.report, "dot", kDotLine);
  ASSERT_NE(dot, nullptr) << clean.report.countersTable();
  EXPECT_GT(dot->counters.instructions(sim::InstructionClass::LdMatrix), 0u) << clean.report.countersTable();
  EXPECT_EQ(dot->counters.sharedLoad.bankConflicts, 0u) << clean.report.countersTable();
  // Planted: A's 8x8 tiles loaded with ldmatrix .trans, so each mma sees them transposed.
  SimOutcome planted = runUnderSim(dotCase(), "sm_90a", [](jit::CompiledKernel& k) {
    EXPECT_GT(replaceAll(k.optimizedLLVMIR, "m8n8.x4.b16.p3(ptr addrspace(3) %", "m8n8.x4.trans.b16.p3(ptr addrspace(3) %"), 0);
  });
  EXPECT_EQ(planted.check.status, gpucheck::CheckResult::Status::Fail) << planted.check.message;
  EXPECT_GT(planted.check.mismatches, 0u);
}

TEST(SimPlantedBugs, TransposedMfmaFragmentGivesAWrongProduct) {
  SimOutcome clean = runUnderSim(dotCase(), "gfx942");
  ASSERT_EQ(clean.check.status, gpucheck::CheckResult::Status::Pass) << clean.check.message << clean.check.firstMismatch;
  EXPECT_GT(clean.report.total.instructions(sim::InstructionClass::Mma), 0u);
  // Planted: A and B swapped in every MFMA. A's fragment (row l % 16, k 4 (l / 16) + i) read as B's (k, column)
  // and the reverse: each 16x16 block gets B^T A^T = (A B)^T of its operands, the transposed product.
  SimOutcome planted = runUnderSim(dotCase(), "gfx942", [](jit::CompiledKernel& k) {
    const std::regex mfma(R"(mfma\.f32\.16x16x16f16\(<4 x half> (%[0-9]+), <4 x half> (%[0-9]+),)");
    const std::string swapped = std::regex_replace(k.optimizedLLVMIR, mfma, "mfma.f32.16x16x16f16(<4 x half> $2, <4 x half> $1,");
    EXPECT_NE(swapped, k.optimizedLLVMIR);
    k.optimizedLLVMIR = swapped;
  });
  EXPECT_EQ(planted.check.status, gpucheck::CheckResult::Status::Fail) << planted.check.message;
  EXPECT_GT(planted.check.mismatches, 0u);
}

TEST(SimPlantedBugs, StridedGlobalLoadHalvesTheEfficiency) {
  // One element per thread (nothing is known of `step`). A warp's 32 lanes read 4 bytes every 8 bytes: 256
  // bytes, 8 sectors of 32 bytes, for 128 requested bytes: efficiency 128 / 256 = 0.5. The store is contiguous:
  // 128 bytes in 4 sectors, efficiency 1. 4 warps: 4 requests each.
  SimOutcome out = runUnderSim(gatherCase(2, 128), "sm_90a");
  ASSERT_EQ(out.check.status, gpucheck::CheckResult::Status::Pass) << out.check.message << out.check.firstMismatch;
  const sim::OpCounters* load = opCounters(out.report, "load", kGatherLoadLine);
  ASSERT_NE(load, nullptr) << out.report.countersTable();
  EXPECT_EQ(load->counters.globalLoad.requests, 4u);
  EXPECT_EQ(load->counters.globalLoad.sectors, 32u);
  EXPECT_EQ(load->counters.globalLoad.requestedBytes, 512u);
  EXPECT_EQ(out.report.total.globalLoadEfficiency(), 0.5);
  EXPECT_EQ(out.report.total.globalStoreEfficiency(), 1.0);
  EXPECT_EQ(out.report.total.globalStore.sectors, 16u);
}

TEST(SimPlantedBugs, ColumnOrderReadOfARowMajorMatrixUsesOneSectorPerLane) {
  // A column of a row-major 128x128 f32 matrix: lanes 512 bytes apart, each in its own sector, 4 useful bytes of
  // 32: efficiency 1/8, against 1 for a row (the same kernel with step 1 reads x[0..127]).
  SimOutcome column = runUnderSim(gatherCase(128, 128), "sm_90a");
  ASSERT_EQ(column.check.status, gpucheck::CheckResult::Status::Pass) << column.check.message << column.check.firstMismatch;
  const sim::OpCounters* load = opCounters(column.report, "load", kGatherLoadLine);
  ASSERT_NE(load, nullptr) << column.report.countersTable();
  EXPECT_EQ(load->counters.globalLoad.requests, 4u);
  EXPECT_EQ(load->counters.globalLoad.sectors, 128u);
  EXPECT_EQ(column.report.total.globalLoadEfficiency(), 0.125);

  SimOutcome row = runUnderSim(gatherCase(1, 128), "sm_90a");
  ASSERT_EQ(row.check.status, gpucheck::CheckResult::Status::Pass) << row.check.message << row.check.firstMismatch;
  EXPECT_EQ(row.report.total.globalLoadEfficiency(), 1.0);
}

TEST(SimPlantedBugs, TransposeLoadsAsWideAsThePtx) {
  // Regression: the optimized module had four scalar loads per thread where the PTX has one ld.global.v4.f32
  // (NVPTX's code generation vectorizes them), so the emulator reported an efficiency of 0.25 for a fully
  // coalesced load. The targets now run the load/store vectorizer in their optimization (OptimizeModule.h).
  SimOutcome out = runUnderSim(transposeCase(), "sm_90a");
  ASSERT_EQ(out.check.status, gpucheck::CheckResult::Status::Pass) << out.check.message << out.check.firstMismatch;
  EXPECT_EQ(out.report.total.globalLoadEfficiency(), 1.0) << out.report.countersTable();
  EXPECT_EQ(out.report.total.globalStoreEfficiency(), 1.0) << out.report.countersTable();
  EXPECT_EQ(out.report.total.globalAccessWidths[sim::accessWidthClass(4)], 0u) << out.report.countersTable();
}

TEST(SimPlantedBugs, VectorizedCopyHasFullGlobalEfficiency) {
  // 4 programs of 1024 elements, 128 threads: 16-byte-aligned contiguous f32 gives each thread 4 consecutive
  // elements (ld/st.global.v4), twice. A warp request covers 512 contiguous bytes: 16 sectors, all used.
  const int64_t n = 4096;
  gpucheck::CheckCase c{"copy", copyKernel(), {{"BLOCK", int64_t(1024)}}, {4, 1, 1}, {}, 4, 0, 0};
  c.args = {f32Buffer(sampleValues(n, 8)), f32Buffer(std::vector<float>(n))};
  SimOutcome out = runUnderSim(c, "sm_90a");
  ASSERT_EQ(out.check.status, gpucheck::CheckResult::Status::Pass) << out.check.message << out.check.firstMismatch;
  const sim::Counters& t = out.report.total;
  EXPECT_EQ(t.globalLoad.requests, 32u);  // 4 programs x 4 warps x 2
  EXPECT_EQ(t.globalLoad.sectors, 512u);
  EXPECT_EQ(t.globalLoadEfficiency(), 1.0);
  EXPECT_EQ(t.globalStoreEfficiency(), 1.0);
  EXPECT_EQ(t.globalAccessWidths[sim::accessWidthClass(16)], 2u * n / 4);  // every lane access, loads and stores
  EXPECT_EQ(t.globalAccessWidths[sim::accessWidthClass(4)], 0u);
}
}  // namespace
}  // namespace tessera::testing
