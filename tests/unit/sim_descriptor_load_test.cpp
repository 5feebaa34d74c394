// load(desc, {offsets...}) on the emulator against the interpreter: the expand-descriptor-loads pass turns it into
// a masked load over the descriptor's fields, which every target lowers with no code of its own (sm_90a, where the
// parameter also carries the tensor map; sm_80; gfx942). A plain block copy, with blocks reaching past every edge
// of the tensor and a negative offset, and the descriptor matmul with M, N and K not multiples of the blocks,
// whose products are exact, so the emulator, the interpreter and the host's reference all agree bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <variant>
#include <vector>

#include "ir/FloatFormats.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/matmul.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

// A host array launched as a tensor descriptor (`block` set) or as a pointer.
struct HostTensor {
  std::vector<uint8_t> bytes;
  std::vector<int64_t> shape, strides, block;
};
using Arg = std::variant<HostTensor, int64_t>;

// Runs `k` on the interpreter and returns every array afterwards, in argument order.
std::vector<std::vector<uint8_t>> onInterpreter(const KernelDef& k, interp::Grid grid, std::vector<Arg> args,
                                                const Constants& constants) {
  std::vector<interp::Arg> launch;
  for (Arg& a : args) {
    if (auto* t = std::get_if<HostTensor>(&a)) {
      const interp::Buffer buffer{t->bytes.data(), t->bytes.size()};
      if (t->block.empty())
        launch.push_back(buffer);
      else
        launch.push_back(interp::TensorDesc{buffer, t->shape, t->strides, t->block});
    } else {
      launch.push_back(std::get<int64_t>(a));
    }
  }
  k.runInterpreter(grid, launch, constants);
  std::vector<std::vector<uint8_t>> out;
  for (Arg& a : args)
    if (auto* t = std::get_if<HostTensor>(&a)) out.push_back(t->bytes);
  return out;
}

// Runs `k` on the emulator of `arch` (compiled through the JIT's default pipeline, with `numStages` stages) and
// returns every array after; `compiled`, when given, receives what ran. The launch fails on any finding of the
// emulator's checkers (races, out-of-bounds accesses, barrier hangs). A persistent launch runs on an emulated GPU
// of one multiprocessor, whose programs each loop over several tiles; `programs` receives how many ran.
std::vector<std::vector<uint8_t>> onEmulator(const KernelDef& k, const char* arch, jit::LaunchGrid grid,
                                             const std::vector<Arg>& args, const Constants& constants, int numWarps,
                                             int numStages = 3,
                                             std::shared_ptr<const jit::CompiledKernel>* compiled = nullptr,
                                             bool persistent = false, unsigned* programs = nullptr,
                                             bool warpSpecialize = false, bool pingPong = false) {
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  runtime.setMultiprocessors(persistent || pingPong ? 1 : 0);
  std::vector<jit::DeviceAddress> addresses;
  std::vector<jit::KernelArg> launch;
  for (const Arg& a : args) {
    if (const auto* t = std::get_if<HostTensor>(&a)) {
      addresses.push_back(runtime.allocate(t->bytes.size()));
      runtime.copyToDevice(addresses.back(), t->bytes.data(), t->bytes.size());
      launch.push_back(t->block.empty() ? jit::KernelArg::pointer(addresses.back())
                                        : jit::KernelArg::tensorDescriptor(addresses.back(), t->shape, t->strides,
                                                                           t->block));
    } else {
      launch.push_back(std::get<int64_t>(a));
    }
  }
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel jit(k, cache);
  jit::LaunchOptions options;
  options.runtime = &runtime;
  options.numWarps = numWarps;
  options.numStages = numStages;
  options.persistent = persistent;
  options.warpSpecialize = warpSpecialize;
  options.pingPong = pingPong;
  runtime.takeLastReport();
  jit.launch(grid, launch, constants, options);
  runtime.setMultiprocessors(0);
  if (programs) *programs = runtime.takeLastReport()->grid[0];
  if (compiled) {  // compileOnly takes the target and arch from the options, not from a runtime
    jit::LaunchOptions compileOptions = options;
    compileOptions.runtime = nullptr;
    compileOptions.arch = arch;
    compileOptions.target = std::string(arch).starts_with("gfx") ? "amdgpu" : "nvptx";
    *compiled = jit.compileOnly(launch, constants, compileOptions);
  }
  std::vector<std::vector<uint8_t>> out;
  size_t i = 0;
  for (const Arg& a : args)
    if (const auto* t = std::get_if<HostTensor>(&a)) {
      out.emplace_back(t->bytes.size());
      runtime.copyToHost(out.back().data(), addresses[i], t->bytes.size());
      runtime.release(addresses[i++]);
    }
  return out;
}

std::vector<float> floatsOf(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

constexpr const char* kArchs[] = {"sm_90a", "sm_80", "gfx942"};

// The BM x BN block of src at (pm * BM + shift, pn * BN), stored whole to out (rows of the grid's width).
void copy_desc(TensorDesc<f32> src, Ptr<f32> out, Int shift, Int out_cols, Const<int> BM, Const<int> BN) {
  Tensor pm = program_id(0), pn = program_id(1);
  Tensor block = load(src, {pm * BM + shift, pn * BN});
  Tensor rows = pm * BM + arange(0, BM), cols = pn * BN + arange(0, BN);
  store(out + expand_dims(rows, 1) * out_cols + expand_dims(cols, 0), block);
}

TEST(SimDescriptorLoad, ACopyReadsZerosOutsideTheTensorOnEveryTarget) {
  constexpr int64_t kRows = 45, kCols = 52, kStride = 56, BM = 16, BN = 32, shift = -3;
  constexpr int64_t gridM = (kRows + BM - 1) / BM, gridN = (kCols + BN - 1) / BN, outCols = gridN * BN;
  HostTensor src{std::vector<uint8_t>(kRows * kStride * 4), {kRows, kCols}, {kStride, 1}, {BM, BN}};
  std::vector<float> values(kRows * kStride);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) + 0.5f;
  std::memcpy(src.bytes.data(), values.data(), src.bytes.size());
  const HostTensor out{std::vector<uint8_t>(gridM * BM * outCols * 4), {}, {}, {}};
  const std::vector<Arg> args{src, out, shift, outCols};
  const Constants constants{{"BM", BM}, {"BN", BN}};
  const KernelDef k = kernel("copy_desc", copy_desc, {"src", "out", "shift", "out_cols", "BM", "BN"});

  const std::vector<float> reference = floatsOf(onInterpreter(k, {gridM, gridN, 1}, args, constants)[1]);
  for (int64_t r = 0; r < gridM * BM; ++r)
    for (int64_t c = 0; c < outCols; ++c) {
      const int64_t y = r + shift;
      const float expected = y >= 0 && y < kRows && c < kCols ? values[y * kStride + c] : 0.0f;
      ASSERT_EQ(reference[r * outCols + c], expected) << "interpreter, row " << r << " col " << c;
    }
  for (const char* arch : kArchs)
    EXPECT_EQ(floatsOf(onEmulator(k, arch, {gridM, gridN, 1}, args, constants, 4)[1]), reference) << arch;
}

// A rows x cols f16 matrix, rows `ld` elements apart (a multiple of 16 bytes, as descriptors need; the padding
// holds 1000s, which no load may read). Its values, multiples of 1/4 in [-2, 2) so that products and their sums
// are exact in f32, go to `values` (rows x cols).
HostTensor halfMatrix(int64_t rows, int64_t cols, std::vector<int64_t> block, int seed, std::vector<double>& values) {
  const int64_t ld = (cols + 7) / 8 * 8;
  HostTensor t{std::vector<uint8_t>(rows * ld * 2), {rows, cols}, {ld, 1}, std::move(block)};
  values.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < ld; ++c) {
      const int64_t i = r * cols + c;
      const double v = c < cols ? static_cast<double>((i * 7 + seed * 13) % 16 - 8) / 4 : 1000.0;
      if (c < cols) values[i] = v;
      const uint16_t bits = ir::encodeF16(v);
      std::memcpy(t.bytes.data() + (r * ld + c) * 2, &bits, 2);
    }
  return t;
}

struct MatmulConfig {
  int64_t M, N, K, BM, BN, BK;
  int warps;
};

// One launch of the descriptor matmul: its arguments, grid and the interpreter's C (checked against the host's
// exact product).
struct MatmulLaunch {
  std::vector<Arg> args;
  Constants constants;
  int64_t programs = 0;
  std::vector<float> reference;
};

MatmulLaunch descriptorMatmul(const KernelDef& k, const MatmulConfig& s) {
  std::vector<double> a, b;
  const HostTensor A = halfMatrix(s.M, s.K, {s.BM, s.BK}, 1, a), B = halfMatrix(s.K, s.N, {s.BK, s.BN}, 2, b);
  const HostTensor C{std::vector<uint8_t>(s.M * s.N * 4), {}, {}, {}};
  MatmulLaunch launch{{A, B, C, s.M, s.N, s.K, s.N, int64_t{1}},
                      {{"BM", s.BM}, {"BN", s.BN}, {"BK", s.BK}, {"GROUP_M", int64_t{2}}},
                      ((s.M + s.BM - 1) / s.BM) * ((s.N + s.BN - 1) / s.BN)};
  launch.reference = floatsOf(onInterpreter(k, {launch.programs, 1, 1}, launch.args, launch.constants)[2]);
  int64_t wrong = 0;
  for (int64_t i = 0; i < s.M; ++i)
    for (int64_t j = 0; j < s.N; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < s.K; ++l) sum += a[i * s.K + l] * b[l * s.N + j];
      wrong += launch.reference[i * s.N + j] != static_cast<float>(sum);
    }
  EXPECT_EQ(wrong, 0) << "elements of the interpreter's C differ from the host's product";
  return launch;
}

TEST(SimDescriptorLoad, TheDescriptorMatmulMatchesTheInterpreterWithRaggedSizes) {
  // Ragged in M, N and K (element-wise copies), then shapes of multiples of 16, which the launch specializes on
  // (16-byte async copies: cp.async on sm_80, wgmma's operands on sm_90a, LDS on gfx942), on 4 and 8 warps.
  const KernelDef k = kernels::matmul_desc_kernel();
  for (const MatmulConfig& s : {MatmulConfig{75, 67, 90, 32, 32, 32, 4}, MatmulConfig{70, 72, 40, 64, 64, 16, 4},
                                MatmulConfig{128, 64, 96, 64, 64, 32, 4}, MatmulConfig{64, 128, 64, 64, 128, 32, 8}}) {
    const MatmulLaunch m = descriptorMatmul(k, s);
    for (const char* arch : kArchs)
      EXPECT_EQ(floatsOf(onEmulator(k, arch, {m.programs, 1, 1}, m.args, m.constants, s.warps)[2]), m.reference)
          << arch << " " << s.M << "x" << s.N << "x" << s.K;
  }
}

// On sm_90a the descriptor matmul's operands reach wgmma through TMA: each block is one cp.async.bulk.tensor (or
// several boxes, each no wider than the swizzle) into the swizzled NVMMA layout wgmma reads, waited for on an
// mbarrier per stage; blocks past M, N or K land zero-filled, so the ragged size needs no masks. Bit-exact against
// the interpreter for 1 to 4 stages, on 4 and 8 warps, with no finding of the emulator's race and memory checkers
// (a launch with one throws); sm_80 and gfx942 keep the expanded loads.
TEST(SimDescriptorLoad, TheDescriptorMatmulCopiesWithTmaOnSm90a) {
  const KernelDef k = kernels::matmul_desc_kernel();
  for (const MatmulConfig& s :
       {MatmulConfig{75, 67, 90, 64, 64, 32, 4}, MatmulConfig{128, 64, 96, 64, 64, 32, 4},
        MatmulConfig{256, 256, 128, 128, 128, 64, 8}, MatmulConfig{128, 256, 64, 128, 256, 64, 8}}) {
    const MatmulLaunch m = descriptorMatmul(k, s);
    const auto& [args, constants, programs, reference] = m;
    const std::string size = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
    for (int stages = 1; stages <= 4; ++stages) {
      std::shared_ptr<const jit::CompiledKernel> compiled;
      EXPECT_EQ(floatsOf(onEmulator(k, "sm_90a", {programs, 1, 1}, args, constants, s.warps, stages, &compiled)[2]),
                reference)
          << size << ", " << stages << " stages";
      // A's rows are BK elements, B's BN (as wide as wgmma's N per warpgroup allows): the plan's swizzles.
      const int aSwizzle = static_cast<int>(std::min<int64_t>(128, s.BK * 2));
      const int bSwizzle = static_cast<int>(std::min<int64_t>(128, std::min<int64_t>(s.BN, 256) * 2));
      EXPECT_EQ(compiled->tensorMaps, (std::vector<std::pair<unsigned, int>>{{0, aSwizzle}, {1, bSwizzle}})) << size;
      EXPECT_NE(compiled->binary.find("cp.async.bulk.tensor.2d"), std::string::npos) << size;
      EXPECT_NE(compiled->binary.find("mbarrier.try_wait.parity"), std::string::npos) << size;
      EXPECT_EQ(compiled->binary.find("cp.async.cg"), std::string::npos)
          << size << ": an operand still copied by cp.async";
    }
    for (const char* arch : {"sm_80", "gfx942"}) {
      std::shared_ptr<const jit::CompiledKernel> compiled;
      EXPECT_EQ(floatsOf(onEmulator(k, arch, {programs, 1, 1}, args, constants, s.warps, 3, &compiled)[2]), reference)
          << arch << " " << size;
      EXPECT_TRUE(compiled->tensorMaps.empty()) << arch;
      EXPECT_EQ(compiled->binary.find("cp.async.bulk"), std::string::npos) << arch;
    }
  }
}

// A persistent descriptor matmul keeps its TMA copies: its K loop, in the tile loop, counts its iterations over the
// program (the tile loop carries the count: transforms/analysis/ProgramIterations.h), so each barrier's phases go on
// from tile to tile. Ragged sizes, 1 to 4 stages, 16 tiles (and 4 of 128x128) on the programs one emulated
// multiprocessor holds: each program runs several tiles. Bit-exact against the interpreter, no finding (a wrong
// parity hangs the waits, which the emulator reports).
//
// Warp-specialized too (2 to 4 stages): the producer loops over the program's tiles, counting their K iterations,
// and the consumers hand each tile's last stage back after its dot_wait, so the producer fills the next tile's
// stages during the epilogue (whose exchange no longer shares the buffers' bytes). A producer a phase ahead of its
// consumers, or the epilogue in the stages being filled, is a race or a hang the emulator reports.
TEST(SimDescriptorLoad, APersistentDescriptorMatmulCopiesWithTmaAcrossTiles) {
  const KernelDef k = kernels::matmul_desc_kernel();
  for (const MatmulConfig& s : {MatmulConfig{250, 200, 90, 64, 64, 32, 4}, MatmulConfig{256, 256, 128, 128, 128, 64, 8}}) {
    const MatmulLaunch m = descriptorMatmul(k, s);
    const std::string size = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
    for (bool warpSpecialize : {false, true})
      for (int stages = warpSpecialize ? 2 : 1; stages <= 4; ++stages) {
        const std::string what = size + ", " + std::to_string(stages) + " stages" +
                                 (warpSpecialize ? ", warp-specialized" : "");
        std::shared_ptr<const jit::CompiledKernel> compiled;
        unsigned programs = 0;
        EXPECT_EQ(floatsOf(onEmulator(k, "sm_90a", {m.programs, 1, 1}, m.args, m.constants, s.warps, stages,
                                      &compiled, /*persistent=*/true, &programs, warpSpecialize)[2]),
                  m.reference)
            << what;
        EXPECT_LT(programs, m.programs) << what << ": every program should loop";
        EXPECT_TRUE(compiled->persistent);
        EXPECT_EQ(compiled->producerWarps, warpSpecialize ? 4 : 0) << what;
        EXPECT_NE(compiled->binary.find("cp.async.bulk.tensor.2d"), std::string::npos) << what;
        EXPECT_EQ(compiled->binary.find("cp.async.cg"), std::string::npos) << what << ": an operand copied by cp.async";
      }
  }
}

// Warp-specialized and persistent at 128x256x64 on 8 warps: 3 stages of A and B take 144 KiB, and the epilogue's
// conversion of the f32 accumulator to the store's layout 132 KiB more, which it cannot share with the stages (the
// producer fills them for the next tile meanwhile): 276 KiB, over sm_90a's 227. The conversion runs in rounds of
// fewer rows instead (allocate-shared-memory), and the kernel fits: bit-exact against the interpreter, no finding
// (the emulator refuses a launch over the limit, as the driver does).
TEST(SimDescriptorLoad, AWarpSpecializedPersistentEpilogueConvertsInRoundsWhereTheStagesLeaveTooLittle) {
  const KernelDef k = kernels::matmul_desc_kernel();
  const MatmulConfig s{256, 512, 192, 128, 256, 64, 8};
  const MatmulLaunch m = descriptorMatmul(k, s);
  std::shared_ptr<const jit::CompiledKernel> compiled;
  unsigned programs = 0;
  EXPECT_EQ(floatsOf(onEmulator(k, "sm_90a", {m.programs, 1, 1}, m.args, m.constants, s.warps, 3, &compiled,
                                /*persistent=*/true, &programs, /*warpSpecialize=*/true)[2]),
            m.reference);
  EXPECT_LT(programs, m.programs) << "every program should loop";
  const int64_t stagesBytes = 3 * (128 * 64 + 64 * 256) * 2, wholeExchangeBytes = 128 * (256 * 4 + 32);
  EXPECT_GT(stagesBytes + wholeExchangeBytes, 232448);
  EXPECT_LE(compiled->sharedBytes, 232448);
  EXPECT_GE(compiled->sharedBytes, stagesBytes + wholeExchangeBytes / 2) << "two rounds should be enough";
}

// Ping-pong consumers: two groups of num_warps warps, each on every other tile of its program, taking turns with
// their main loops and their epilogues (transforms/PingPongConsumers.cpp). Programs of an even and an odd number of
// tiles (the group that would run the next tile takes the last turns back, or a barrier is left waiting: a finding),
// ragged sizes, 2 to 4 stages: bit-exact against the interpreter with no finding (a group counting its stages
// without the other group's tiles hangs on a parity; epilogues sharing their exchange without the turns race).
TEST(SimDescriptorLoad, PingPongConsumerGroupsRunAlternateTilesOfEachProgram) {
  const KernelDef k = kernels::matmul_desc_kernel();
  for (const MatmulConfig& s : {MatmulConfig{250, 200, 90, 64, 64, 32, 4}, MatmulConfig{192, 192, 96, 64, 64, 32, 4},
                                MatmulConfig{256, 384, 128, 128, 128, 64, 4}}) {
    const MatmulLaunch m = descriptorMatmul(k, s);
    const std::string size = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
    for (int stages = 2; stages <= 4; ++stages) {
      const std::string what = size + ", " + std::to_string(stages) + " stages";
      std::shared_ptr<const jit::CompiledKernel> compiled;
      unsigned programs = 0;
      EXPECT_EQ(floatsOf(onEmulator(k, "sm_90a", {m.programs, 1, 1}, m.args, m.constants, s.warps, stages, &compiled,
                                    /*persistent=*/false, &programs, /*warpSpecialize=*/false, /*pingPong=*/true)[2]),
                m.reference)
          << what;
      EXPECT_LT(programs, m.programs) << what << ": every program should loop";
      EXPECT_TRUE(compiled->persistent) << what << ": ping_pong implies persistent";
      EXPECT_EQ(compiled->numWarps, s.warps);
      EXPECT_EQ(compiled->consumerGroups, 2);
      EXPECT_EQ(compiled->producerWarps, 4);
      EXPECT_EQ(compiled->threadsPerProgram(), (2 * s.warps + 4) * 32);
      const std::string& ptx = compiled->binary;
      EXPECT_NE(ptx.find(".maxntid " + std::to_string((2 * s.warps + 4) * 32) + ", 1, 1"), std::string::npos) << what;
      EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 240;"), std::string::npos) << what;
      EXPECT_NE(ptx.find("bar.arrive"), std::string::npos) << what << ": the groups pass their turns";
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos) << what;
    }
  }
}

// Warp-specialized: a producer warpgroup beyond num_warps (its one thread issuing every TMA copy, waiting on the
// "empty" mbarriers for each stage to be handed back) and the num_warps consumer warps (waiting on the "full" ones,
// releasing each stage once the dot that read it completed, synchronizing among themselves with barrier 1), with
// setmaxnreg moving registers to the consumers. Ragged sizes, 2 to 4 stages, 4 and 8 consumer warps: bit-exact
// against the interpreter with no finding of the emulator's checkers (a missed release hangs the producer, a stage
// refilled before its readers are done is a race, barrier 0 after the producers are gone is a hang; each throws).
TEST(SimDescriptorLoad, AWarpSpecializedDescriptorMatmulMatchesTheInterpreter) {
  const KernelDef k = kernels::matmul_desc_kernel();
  for (const MatmulConfig& s : {MatmulConfig{75, 67, 90, 64, 64, 32, 4}, MatmulConfig{256, 256, 192, 128, 128, 64, 8},
                                MatmulConfig{128, 256, 64, 128, 256, 64, 8}}) {
    const MatmulLaunch m = descriptorMatmul(k, s);
    const std::string size = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
    for (int stages = 2; stages <= 4; ++stages) {
      std::shared_ptr<const jit::CompiledKernel> compiled;
      EXPECT_EQ(floatsOf(onEmulator(k, "sm_90a", {m.programs, 1, 1}, m.args, m.constants, s.warps, stages, &compiled,
                                    /*persistent=*/false, nullptr, /*warpSpecialize=*/true)[2]),
                m.reference)
          << size << ", " << stages << " stages";
      EXPECT_EQ(compiled->numWarps, s.warps);
      EXPECT_EQ(compiled->producerWarps, 4);
      EXPECT_EQ(compiled->threadsPerProgram(), (s.warps + 4) * 32);
      const std::string& ptx = compiled->binary;
      EXPECT_NE(ptx.find(".maxntid " + std::to_string((s.warps + 4) * 32) + ", 1, 1"), std::string::npos) << size;
      EXPECT_NE(ptx.find(".minnctapersm 1"), std::string::npos) << size;
      EXPECT_NE(ptx.find("setmaxnreg.dec.sync.aligned.u32 24;"), std::string::npos) << size;
      EXPECT_NE(ptx.find(s.warps == 4 ? "setmaxnreg.inc.sync.aligned.u32 256;" : "setmaxnreg.inc.sync.aligned.u32 240;"),
                std::string::npos)
          << size;
      EXPECT_NE(ptx.find("mbarrier.arrive.shared.b64"), std::string::npos) << size;
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos) << size;
      EXPECT_NE(ptx.find("barrier.sync \t1, " + std::to_string(s.warps * 32) + ";"), std::string::npos)
          << size << ": the consumers' epilogue synchronizes on their own barrier";
    }
  }
  // One stage leaves the producer nothing to run ahead of; sm_80 cannot move registers between warps.
  const MatmulLaunch m = descriptorMatmul(k, {128, 64, 96, 64, 64, 32, 4});
  auto error = [&](const char* arch, int stages, bool persistent) {
    try {
      onEmulator(k, arch, {m.programs, 1, 1}, m.args, m.constants, 4, stages, nullptr, persistent, nullptr, true);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("sm_90a", 1, false).find("warp_specialize needs num_stages >= 2"), std::string::npos);
  EXPECT_NE(error("sm_80", 3, false).find("the target does not reallocate registers between warps"), std::string::npos);
  EXPECT_NE(error("sm_80", 3, true).find("the target does not reallocate registers between warps"), std::string::npos);
}

}  // namespace
}  // namespace tessera
