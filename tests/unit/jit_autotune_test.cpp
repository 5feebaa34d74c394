// The autotuner (jit/Autotuner.h) with fake hooks and timers: configs are validated, compiled in parallel and
// pruned before any launch, the fastest survivor wins, winners are read back from disk without benchmarking,
// new keys and devices re-tune, and the fixed-config mode skips tuning. Then the pieces under it (do_bench,
// pruning, the disk cache, parallel JIT compiles), and AutotunedKernel end to end on the emulator with a fake
// timer. Real timing needs a GPU and lives in benchmarks/bench_tutorials.py.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "ScopedEnv.h"
#include "backends/Target.h"
#include "backends/amdgpu/CodeObjectMetadata.h"
#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "jit/AutotunedKernel.h"
#include "jit/Autotuner.h"
#include "jit/Compiler.h"
#include "jit/ConfigPruning.h"
#include "jit/KernelTimer.h"
#include "jit/ParallelFor.h"
#include "jit/PtxasUsage.h"
#include "jit/TuningCache.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/kernels/attention.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"

namespace tessera {
namespace {

using jit::AutotuneOptions;
using jit::Autotuner;
using jit::TuneConfig;
using jit::TuningHooks;
using jit::TuningKey;
using jit::TuningReport;
using testing_support::ScopedEnv;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  return "no error";
}

TuneConfig tile(int64_t bm, int64_t bn, int64_t bk, int warps) {
  return TuneConfig{{{"BM", bm}, {"BN", bn}, {"BK", bk}}, warps, {}};
}

std::vector<TuneConfig> threeConfigs() { return {tile(64, 64, 32, 4), tile(128, 128, 64, 8), tile(32, 32, 32, 4)}; }

// A fresh directory per test, removed afterwards.
class TempDirectory {
 public:
  TempDirectory() {
    path_ = std::filesystem::temp_directory_path() /
            ("tessera_autotune_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
  }
  ~TempDirectory() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static std::atomic<int>& counter() {
    static std::atomic<int> c{0};
    return c;
  }
  std::filesystem::path path_;
};

AutotuneOptions quietOptions(const std::filesystem::path& dir) {
  AutotuneOptions o;
  o.cacheDirectory = dir;
  o.fixedConfig = std::nullopt;
  o.quiet = true;
  o.compileThreads = 4;
  return o;
}

// Hooks over fixed per-config answers that log every call, in order.
struct FakeDevice {
  std::vector<std::string> pruned;  // per config: why it is pruned ("" keeps it)
  std::vector<double> ms;           // per config: its time
  std::mutex mutex;
  std::vector<std::string> log;     // "prepare 1", "bench 0", ...

  TuningHooks hooks() {
    TuningHooks h;
    h.prepare = [this](size_t i) {
      std::lock_guard<std::mutex> lock(mutex);
      log.push_back("prepare " + std::to_string(i));
      return pruned.at(i);
    };
    h.benchmark = [this](size_t i) {
      std::lock_guard<std::mutex> lock(mutex);
      log.push_back("bench " + std::to_string(i));
      return ms.at(i);
    };
    return h;
  }
  size_t count(const std::string& prefix) const {
    return std::count_if(log.begin(), log.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
  }
};

// Hooks that fail the test when the tuner compiles or benchmarks anything.
TuningHooks untouchable() {
  TuningHooks h;
  h.prepare = [](size_t i) -> std::string { ADD_FAILURE() << "prepared config " << i; return ""; };
  h.benchmark = [](size_t i) -> double { ADD_FAILURE() << "benchmarked config " << i; return 1; };
  return h;
}

const TuningKey kKey{{"M", "1024"}, {"N", "1024"}, {"K", "512"}};
const std::vector<std::string> kKeyNames{"M", "N", "K"};

TEST(AutotuneConfigs, InvalidConfigsAndKeysAreRejectedWithTheReason) {
  const KernelDef mm = kernels::matmul_kernel();
  auto make = [&](std::vector<TuneConfig> configs, std::vector<std::string> key = kKeyNames) {
    return errorOf([&] { Autotuner(mm, configs, key, quietOptions("")); });
  };
  EXPECT_EQ(make({}), "autotune of kernel 'matmul': no configs to choose from (give at least one)");
  EXPECT_EQ(make({TuneConfig{{{"BLOCK", 64}}, 4, {}}}),
            "autotune of kernel 'matmul', config 0 {BLOCK=64, num_warps=4}: 'BLOCK' is not a Const parameter of the "
            "kernel");
  EXPECT_EQ(make({TuneConfig{{{"M", 64}}, 4, {}}}),
            "autotune of kernel 'matmul', config 0 {M=64, num_warps=4}: 'M' is not a Const parameter of the kernel");
  EXPECT_EQ(make({tile(64, 64, 32, 3)}),
            "autotune of kernel 'matmul', config 0 {BK=32, BM=64, BN=64, num_warps=3}: num_warps must be a power of "
            "two between 1 and 32, got 3");
  EXPECT_EQ(make({TuneConfig{{{"BM", 64}}, 4, {{"num_stage", 3}}}}),
            "autotune of kernel 'matmul', config 0 {BM=64, num_warps=4, num_stage=3}: unknown compile option "
            "'num_stage'");
  EXPECT_EQ(make({tile(64, 64, 32, 4), tile(64, 64, 32, 4)}),
            "autotune of kernel 'matmul', config 1 {BK=32, BM=64, BN=64, num_warps=4}: repeats config 0");
  EXPECT_EQ(make(threeConfigs(), {}),
            "autotune of kernel 'matmul': the key names no launch argument (name the arguments whose values change "
            "the best config, e.g. M, N, K)");
  EXPECT_EQ(make(threeConfigs(), {"M", "rows"}),
            "autotune of kernel 'matmul': key 'rows' is not a parameter of the kernel");
  EXPECT_EQ(make(threeConfigs(), {"M", "M"}), "autotune of kernel 'matmul': key 'M' is named twice");
  AutotuneOptions fixed = quietOptions("");
  fixed.fixedConfig = 3;
  EXPECT_EQ(errorOf([&] { Autotuner(mm, threeConfigs(), kKeyNames, fixed); }),
            "autotune of kernel 'matmul': fixed config 3 does not exist (there are 3 configs)");
}

TEST(AutotuneConfigs, OptionsApplyToTheLaunchAndConstantsMerge) {
  TuneConfig c = tile(64, 64, 32, 8);
  c.options["fast_math"] = 0;
  c.options["num_stages"] = 4;
  EXPECT_EQ(c.str(), "BK=32, BM=64, BN=64, num_warps=8, fast_math=0, num_stages=4");
  jit::LaunchOptions o = jit::applyTuneOptions(c, {});
  EXPECT_EQ(o.numWarps, 8);
  EXPECT_FALSE(o.fastMath);
  EXPECT_EQ(o.numStages, 4);
  EXPECT_FALSE(o.pingPong);
  c.options["ping_pong"] = 1;
  EXPECT_TRUE(jit::applyTuneOptions(c, {}).pingPong);
  EXPECT_EQ(o.matrixInstrSize, 0);
  c.options["matrix_instr_nonkdim"] = 32;
  EXPECT_EQ(jit::applyTuneOptions(c, {}).matrixInstrSize, 32);
  Constants merged = jit::mergeTuneConstants(c, {{"GROUP_M", 8}}, "matmul");
  EXPECT_EQ(merged.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(merged.at("GROUP_M")), 8);
  EXPECT_EQ(errorOf([&] { jit::mergeTuneConstants(c, {{"BM", 16}}, "matmul"); }),
            "autotuned kernel 'matmul': Const 'BM' is set by the autotune configs; do not pass it to the launch");
}

TEST(Autotuner, PrunesBeforeAnyLaunchAndPicksTheFastestSurvivor) {
  TempDirectory dir;
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(dir.path()));
  FakeDevice device;
  device.pruned = {"", "needs too much shared memory", ""};
  device.ms = {2.0, 0.5, 1.0};  // the pruned config would have been the fastest
  EXPECT_EQ(tuner.select(kKey, "gpu A", device.hooks()), 2u);
  // Every prepare comes before the first benchmark, and the pruned config is never launched.
  ASSERT_EQ(device.log.size(), 5u);
  EXPECT_EQ(device.count("prepare"), 3u);
  for (size_t i = 3; i < 5; ++i) EXPECT_EQ(device.log[i].rfind("bench", 0), 0u) << device.log[i];
  EXPECT_EQ(std::count(device.log.begin(), device.log.end(), "bench 1"), 0);
  std::optional<TuningReport> report = tuner.lastReport();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->source, TuningReport::Source::Benchmarked);
  EXPECT_EQ(report->key, "M=1024, N=1024, K=512");
  EXPECT_EQ(report->outcomes[1].rejected, "needs too much shared memory");
  EXPECT_EQ(report->outcomes[0].ms, 2.0);
  // The same key again: from memory, nothing compiled or run.
  EXPECT_EQ(tuner.select(kKey, "gpu A", untouchable()), 2u);
  EXPECT_EQ(tuner.lastReport()->source, TuningReport::Source::Cached);
}

TEST(Autotuner, TiesGoToTheEarlierConfig) {
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(""));
  FakeDevice device;
  device.pruned = {"", "", ""};
  device.ms = {1.5, 1.0, 1.0};
  EXPECT_EQ(tuner.select(kKey, "gpu", device.hooks()), 1u);
}

TEST(Autotuner, CompilesConfigsInParallel) {
  AutotuneOptions options = quietOptions("");
  options.compileThreads = 3;
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, options);
  // Each prepare waits until all three are running at once: with one thread at a time this would time out.
  std::mutex m;
  std::condition_variable cv;
  int running = 0;
  bool allMet = true;
  TuningHooks hooks;
  hooks.prepare = [&](size_t) {
    std::unique_lock<std::mutex> lock(m);
    ++running;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return running == 3; })) allMet = false;
    return std::string();
  };
  hooks.benchmark = [](size_t i) { return 1.0 + i; };
  EXPECT_EQ(tuner.select(kKey, "gpu", hooks), 0u);
  EXPECT_TRUE(allMet);
}

TEST(Autotuner, ASecondTunerReadsTheWinnerFromDiskWithoutBenchmarking) {
  TempDirectory dir;
  FakeDevice device;
  device.pruned = {"", "", ""};
  device.ms = {3.0, 1.0, 2.0};
  EXPECT_EQ(Autotuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(dir.path()))
                .select(kKey, "gpu A", device.hooks()),
            1u);
  ASSERT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
  // As a new process would: a new tuner over the same directory.
  Autotuner second(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(dir.path()));
  EXPECT_EQ(second.select(kKey, "gpu A", untouchable()), 1u);
  EXPECT_EQ(second.lastReport()->source, TuningReport::Source::Cached);
}

TEST(Autotuner, NewKeysDevicesAndConfigListsTuneAgain) {
  TempDirectory dir;
  FakeDevice device;
  device.pruned = {"", "", ""};
  device.ms = {3.0, 1.0, 2.0};
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(dir.path()));
  tuner.select(kKey, "gpu A", device.hooks());
  EXPECT_EQ(device.count("bench"), 3u);
  TuningKey other = kKey;
  other[2].second = "4096";
  device.ms = {0.5, 1.0, 2.0};
  EXPECT_EQ(tuner.select(other, "gpu A", device.hooks()), 0u);
  EXPECT_EQ(device.count("bench"), 6u);
  device.ms = {3.0, 3.0, 0.1};
  EXPECT_EQ(tuner.select(kKey, "gpu B", device.hooks()), 2u);
  EXPECT_EQ(device.count("bench"), 9u);
  // Another config list (one config more) does not reuse the old list's winners.
  std::vector<TuneConfig> four = threeConfigs();
  four.push_back(tile(16, 16, 16, 1));
  FakeDevice fourDevice;
  fourDevice.pruned = {"", "", "", ""};
  fourDevice.ms = {3.0, 3.0, 3.0, 0.1};
  EXPECT_EQ(Autotuner(kernels::matmul_kernel(), four, kKeyNames, quietOptions(dir.path()))
                .select(kKey, "gpu A", fourDevice.hooks()),
            3u);
}

TEST(Autotuner, KeyValuesMustMatchTheKeyNames) {
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(""));
  EXPECT_EQ(errorOf([&] { tuner.select({{"M", "1"}, {"K", "2"}, {"N", "3"}}, "gpu", untouchable()); }),
            "autotune of kernel 'matmul': the launch's key values name M=1, K=2, N=3, expected values for the key's "
            "arguments in order");
}

TEST(Autotuner, AStaleOrDamagedCacheEntryIsTunedAgain) {
  TempDirectory dir;
  FakeDevice device;
  device.pruned = {"", "", ""};
  device.ms = {3.0, 1.0, 2.0};
  Autotuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(dir.path()))
      .select(kKey, "gpu", device.hooks());
  const std::filesystem::path entry = std::filesystem::directory_iterator(dir.path())->path();
  for (const std::string& damaged : {std::string("tessera-autotune 1\n7\nBM=1\n"),  // an index past the list
                                     std::string("tessera-autotune 1\n0\nBM=1, num_warps=4\n"),  // another config
                                     std::string("garbage")}) {
    std::ofstream(entry) << damaged;
    Autotuner again(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(dir.path()));
    const size_t benches = device.count("bench");
    EXPECT_EQ(again.select(kKey, "gpu", device.hooks()), 1u) << damaged;
    EXPECT_EQ(device.count("bench"), benches + 3) << damaged;
  }
}

TEST(Autotuner, FixedConfigModeNeitherCompilesNorBenchmarks) {
  AutotuneOptions options = quietOptions("");
  options.fixedConfig = 2;
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, options);
  EXPECT_EQ(tuner.select(kKey, "gpu", untouchable()), 2u);
  EXPECT_EQ(tuner.lastReport()->source, TuningReport::Source::Fixed);
}

TEST(Autotuner, FixedConfigComesFromTheEnvironment) {
  {
    ScopedEnv env("TESSERA_AUTOTUNE_CONFIG", "1");
    EXPECT_EQ(jit::fixedConfigFromEnvironment(), 1u);
    AutotuneOptions options;  // the default reads the variable
    options.quiet = true;
    Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, options);
    EXPECT_EQ(tuner.select(kKey, "gpu", untouchable()), 1u);
  }
  ScopedEnv bad("TESSERA_AUTOTUNE_CONFIG", "fast");
  EXPECT_EQ(errorOf([] { jit::fixedConfigFromEnvironment(); }),
            "TESSERA_AUTOTUNE_CONFIG must be the index of a config (0, 1, ...), got 'fast'");
}

TEST(Autotuner, FailuresArePrunedAndAllFailingIsAClearError) {
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, quietOptions(""));
  TuningHooks hooks;
  hooks.prepare = [](size_t i) -> std::string {
    if (i == 0) throw Error("LLVM ran out of patience");
    return i == 1 ? "spills registers" : "";
  };
  hooks.benchmark = [](size_t) -> double { throw Error("cuLaunchKernel failed"); };
  EXPECT_EQ(errorOf([&] { tuner.select(kKey, "gpu", hooks); }),
            "autotune of kernel 'matmul' for M=1024, N=1024, K=512: no config can run:\n"
            "  config 0 {BK=32, BM=64, BN=64, num_warps=4}: failed to compile: LLVM ran out of patience\n"
            "  config 1 {BK=64, BM=128, BN=128, num_warps=8}: spills registers\n"
            "  config 2 {BK=32, BM=32, BN=32, num_warps=4}: failed to run: cuLaunchKernel failed");
  // One survivor that runs is enough.
  hooks.benchmark = [](size_t) { return 1.0; };
  EXPECT_EQ(tuner.select(kKey, "gpu", hooks), 2u);
  EXPECT_EQ(tuner.lastReport()->outcomes[0].rejected, "failed to compile: LLVM ran out of patience");
}

TEST(Autotuner, ShowsProgressOnTheGivenStream) {
  std::ostringstream out;
  AutotuneOptions options = quietOptions("");
  options.quiet = false;
  options.progress = &out;
  options.compileThreads = 1;
  Autotuner tuner(kernels::matmul_kernel(), threeConfigs(), kKeyNames, options);
  FakeDevice device;
  device.pruned = {"", "pruned", ""};
  device.ms = {3.0, 1.0, 2.0};
  tuner.select(kKey, "gpu", device.hooks());
  const std::string text = out.str();
  EXPECT_NE(text.find("tessera autotune @matmul M=1024, N=1024, K=512: compiled 3/3, pruned 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("benchmarked 2/2"), std::string::npos) << text;
  EXPECT_NE(text.find("best {BK=32, BM=32, BN=32, num_warps=4}\n"), std::string::npos) << text;
  EXPECT_NE(text.find('\r'), std::string::npos);  // rewritten in place
}

// A TimingClock that logs its calls and reports a fixed time per measured slot.
struct FakeClock : jit::TimingClock {
  std::vector<std::string> log;
  std::function<double(size_t)> elapsed;
  void flushCache() override { log.push_back("flush"); }
  void markStart(size_t slot) override { log.push_back("start " + std::to_string(slot)); }
  void markEnd(size_t slot) override { log.push_back("end " + std::to_string(slot)); }
  double elapsedMs(size_t slot) override { return elapsed(slot); }
  void reserveSlots(size_t) override {}
};

TEST(KernelTimer, PlanFitsTheBudgets) {
  jit::BenchSettings s;  // 25 ms warmup, 100 ms measured, 5 to 1000 repetitions
  EXPECT_EQ(jit::planBench(1.0, s).warmups, 25);
  EXPECT_EQ(jit::planBench(1.0, s).repetitions, 100);
  EXPECT_EQ(jit::planBench(50.0, s).repetitions, 5);      // at least the minimum
  EXPECT_EQ(jit::planBench(1e-4, s).repetitions, 1000);   // at most the maximum
  EXPECT_EQ(jit::planBench(0.0, s).repetitions, 1000);
}

TEST(KernelTimer, FlushesBeforeEveryTimedLaunchAndTakesTheMedian) {
  FakeClock clock;
  jit::BenchSettings s;
  s.warmupMs = 4;
  s.measureMs = 6;
  s.minRepetitions = 1;
  s.estimateRuns = 2;
  // The estimate (slot 0, first call): 2 ms for 2 launches, so 1 ms each: 4 warmups, 6 repetitions.
  int calls = 0;
  const std::vector<double> times{2.0, 9.0, 1.0, 3.0, 2.0, 100.0, 4.0};
  clock.elapsed = [&](size_t) { return times.at(calls++); };
  int launches = 0;
  EXPECT_EQ(jit::benchLaunch([&] { clock.log.push_back("launch"); ++launches; }, clock, s), 3.5);
  EXPECT_EQ(launches, 2 + 4 + 6);
  // The timed part: flush outside the events, one launch inside.
  const std::vector<std::string> tail(clock.log.end() - 4, clock.log.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"flush", "start 5", "launch", "end 5"}));
  EXPECT_EQ(std::count(clock.log.begin(), clock.log.end(), "flush"), 2 + 6);
  EXPECT_EQ(jit::medianOf({5.0, 1.0, 3.0}), 3.0);
  EXPECT_EQ(errorOf([] { jit::medianOf({}); }), "median of no measurements");
}

TEST(ParallelFor, RunsEveryIndexOnceAndKeepsEachFailure) {
  std::vector<std::atomic<int>> runs(50);
  std::vector<std::exception_ptr> errors = jit::parallelFor(50, 4, [&](size_t i) {
    ++runs[i];
    if (i % 10 == 3) throw Error("job " + std::to_string(i));
  });
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(runs[i], 1) << i;
    EXPECT_EQ(bool(errors[i]), i % 10 == 3) << i;
  }
  EXPECT_TRUE(jit::parallelFor(0, 4, [](size_t) { FAIL(); }).empty());
  ScopedEnv env("TESSERA_COMPILE_THREADS", "0");
  EXPECT_EQ(errorOf([] { jit::defaultCompileThreads(); }),
            "TESSERA_COMPILE_THREADS must be a thread count from 1 to 1024, got '0'");
}

TEST(ConfigPruning, SharedMemoryOverTheLimit) {
  jit::CompiledKernel k;
  k.format = "ptx";
  k.sharedBytes = 200000;
  jit::PruneChecks checks;
  EXPECT_EQ(jit::pruneReason(k, checks), "");  // no limit known: kept
  checks.maxSharedBytes = jit::knownSharedMemoryLimit("nvptx", "sm_80");
  EXPECT_EQ(jit::pruneReason(k, checks), "needs 200000 B of shared memory, the GPU gives 166912 B per block");
  checks.maxSharedBytes = jit::knownSharedMemoryLimit("nvptx", "sm_90a");
  EXPECT_EQ(jit::pruneReason(k, checks), "");
  EXPECT_EQ(jit::knownSharedMemoryLimit("amdgpu", "gfx942"), 65536);
  EXPECT_EQ(jit::knownSharedMemoryLimit("nvptx", "sm_999"), std::nullopt);
  EXPECT_EQ(jit::knownSharedMemoryLimit("nvptx", "sm_86"), 101376);
  EXPECT_EQ(jit::localMemoryPruneReason(0), "");
  EXPECT_EQ(jit::localMemoryPruneReason(48),
            "uses 48 B of local memory per thread (register spills; driver attribute LOCAL_SIZE_BYTES)");
}

// The same per-arch limits bound pipelining: the pass options of an arch carry its opt-in limit.
TEST(ConfigPruning, PassOptionsCarryTheArchsSharedMemoryLimit) {
  const std::unique_ptr<backends::Target> nvptx = backends::createTarget("nvptx");
  EXPECT_EQ(nvptx->passOptions(8, 3, "sm_80").maxSharedBytes, 166912);
  EXPECT_EQ(nvptx->passOptions(8, 3, "sm_89").maxSharedBytes, 101376);
  EXPECT_EQ(nvptx->passOptions(8, 3, "sm_90a").maxSharedBytes, 232448);
  EXPECT_EQ(nvptx->passOptions(8, 3).maxSharedBytes, 232448);  // the default arch, sm_90a
  EXPECT_EQ(backends::createTarget("amdgpu")->passOptions(8, 3, "gfx942").maxSharedBytes, 65536);
  // What a multiprocessor holds for all its programs (the emulator's residency, occupancy hints): 1 KB more per
  // program than the opt-in limit on NVIDIA GPUs, the driver's reservation.
  EXPECT_EQ(nvptx->sharedBytesPerMultiprocessor("sm_80"), 167936);
  EXPECT_EQ(nvptx->sharedBytesPerMultiprocessor("sm_90a"), 233472);
  EXPECT_EQ(nvptx->sharedBytesPerMultiprocessor("sm_999"), 0);
  EXPECT_EQ(backends::createTarget("amdgpu")->sharedBytesPerMultiprocessor("gfx942"), 65536);
}

TEST(ConfigPruning, ReadsPtxasVerboseOutput) {
  const std::string log =
      "ptxas info    : Compiling entry function 'matmul' for 'sm_90a'\n"
      "ptxas info    : Function properties for matmul\n"
      "    5000 bytes stack frame, 7972 bytes spill stores, 7556 bytes spill loads\n"
      "ptxas info    : Used 32 registers, 1024 bytes smem\n";
  const jit::PtxasUsage u = jit::parsePtxasVerbose(log);
  EXPECT_EQ(u.registers, 32);
  EXPECT_EQ(u.stackBytes, 5000);
  EXPECT_EQ(u.spillStoreBytes, 7972);
  EXPECT_EQ(u.spillLoadBytes, 7556);
  EXPECT_EQ(u.staticSharedBytes, 1024);
  EXPECT_EQ(errorOf([] { jit::parsePtxasVerbose("ptxas fatal   : Unresolved extern function"); }),
            "ptxas -v printed no register count:\nptxas fatal   : Unresolved extern function");
}

TEST(ConfigPruning, AsksPtxasAboutSpillsWhereItIsInstalled) {
  std::optional<std::string> ptxas = jit::findPtxas();
  if (!ptxas) GTEST_SKIP() << "ptxas is not installed";
  jit::KernelCache memoryOnly("");
  jit::JitKernel softmax(kernels::softmax_kernel(), memoryOnly);
  jit::LaunchOptions o;
  o.arch = "sm_90a";
  auto compiled = softmax.compileOnly(
      {jit::KernelArg::pointer(256), jit::KernelArg::pointer(256), int64_t(64), int64_t(64), int64_t(64)},
      {{"BLOCK", 64}}, o);
  jit::PruneChecks checks;
  checks.ptxas = ptxas;
  EXPECT_EQ(jit::pruneReason(*compiled, checks), "");  // a small kernel: no spills
  jit::CompiledKernel broken = *compiled;
  broken.binary = "not ptx";
  EXPECT_NE(errorOf([&] { jit::pruneReason(broken, checks); }).find("ptxas -v -arch=sm_90a failed"), std::string::npos);
}

// AMDGPU code objects record their own spills (backends/amdgpu/CodeObjectMetadata.h): no tool is needed to prune.
TEST(ConfigPruning, ReadsAnAMDGPUCodeObjectsSpillsFromItsMetadata) {
  jit::KernelCache memoryOnly("");
  jit::JitKernel softmax(kernels::softmax_kernel(), memoryOnly);
  jit::LaunchOptions o;
  o.target = "amdgpu";
  o.arch = "gfx942";
  auto small = softmax.compileOnly(
      {jit::KernelArg::pointer(256), jit::KernelArg::pointer(256), int64_t(64), int64_t(64), int64_t(64)},
      {{"BLOCK", 64}}, o);
  const jit::PruneChecks noTools;  // no ptxas, no shared-memory limit: the code object alone decides
  EXPECT_EQ(jit::pruneReason(*small, noTools), "");
  const backends::amdgpu::KernelResourceUsage usage =
      backends::amdgpu::codeObjectResources(small->binary, small->name);
  EXPECT_GT(usage.vgprs.value_or(0), 0);
  EXPECT_EQ(usage.vgprSpills, 0);
  EXPECT_EQ(usage.scratchBytes, 0);
  // A 256x256 matmul tile on 2 waves holds 512 f32 accumulators per lane, as many as a lane's VGPRs and AGPRs
  // together: it spills, where every standard configuration no longer does (benchmarks/README.md). (On 4 waves it
  // spilled too while its loop carried pointer tiles; with the i64 sums it fits.)
  const std::unique_ptr<ir::Module> matmul =
      kernels::matmul_kernel().trace({{"BM", 256}, {"BN", 256}, {"BK", 32}, {"GROUP_M", 8}});
  backends::TargetOptions amd;
  amd.arch = "gfx942";
  amd.numWarps = 2;
  const jit::CompiledKernel spilling = jit::compile(*matmul->functions().at(0), *backends::createTarget("amdgpu"), amd);
  const std::string reason = jit::pruneReason(spilling, noTools);
  EXPECT_EQ(reason.rfind("spills registers (code object metadata: ", 0), 0u) << reason;
  EXPECT_NE(reason.find(" VGPRs spilled, "), std::string::npos) << reason;
  EXPECT_EQ(errorOf([] { backends::amdgpu::codeObjectResources("not an ELF", "k"); })
                .rfind("k: the code object is not a 64-bit ELF", 0),
            0u);
}

TEST(TuningCache, StoresAndLoadsRecordsAndIgnoresOthers) {
  TempDirectory dir;
  jit::TuningCache cache(dir.path() / "autotune");
  const std::string key = jit::tuningCacheKey({"k", "{BM=1}", "M=1", "gpu", "v1"});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, jit::tuningCacheKey({"k", "{BM=1}", "M=1", "gpu", "v2"}));  // the compiler version counts
  EXPECT_NE(key, jit::tuningCacheKey({"k", "{BM=1}", "M=1", "gpu2", "v1"}));  // and the GPU
  EXPECT_NE(jit::tuningCacheKey({"ab", "c", "", "", ""}), jit::tuningCacheKey({"a", "bc", "", "", ""}));
  EXPECT_EQ(cache.load(key), std::nullopt);
  cache.store(key, {3, "BM=1, num_warps=4"});
  EXPECT_EQ(cache.load(key), (jit::TuningRecord{3, "BM=1, num_warps=4"}));
  EXPECT_EQ(jit::TuningCache("").load(key), std::nullopt);  // memory only: nothing on disk
  {
    ScopedEnv env("TESSERA_CACHE_DIR", (dir.path() / "kernels").string());
    EXPECT_EQ(jit::TuningCache::defaultDirectory(), dir.path() / "kernels" / "autotune");
  }
  ScopedEnv off("TESSERA_CACHE_DIR", "off");
  EXPECT_EQ(jit::TuningCache::defaultDirectory(), std::filesystem::path());
}

// The JIT compiles from several threads at once (the autotuner's compile pool): the same kernels as a serial run.
TEST(JitThreadSafety, ParallelCompilesMatchSerialOnes) {
  const std::vector<TuneConfig> configs{tile(16, 16, 16, 1), tile(32, 32, 32, 4), tile(64, 32, 16, 2),
                                        tile(32, 64, 32, 4), tile(16, 32, 64, 2), tile(64, 64, 32, 4)};
  const std::vector<jit::KernelArg> args{jit::KernelArg::pointer(256), jit::KernelArg::pointer(256),
                                         jit::KernelArg::pointer(256), 100, 100, 100, 100, 1, 100, 1, 100, 1};
  auto compileAll = [&](unsigned threads) {
    jit::KernelCache cache("");
    jit::JitKernel mm(kernels::matmul_kernel(), cache);
    std::vector<std::string> ptx(configs.size());
    auto errors = jit::parallelFor(configs.size(), threads, [&](size_t i) {
      ptx[i] = mm.compileOnly(args, jit::mergeTuneConstants(configs[i], {{"GROUP_M", 4}}, "matmul"),
                              jit::applyTuneOptions(configs[i], {}))->binary;
    });
    for (auto& e : errors) EXPECT_FALSE(e);
    return ptx;
  };
  const std::vector<std::string> serial = compileAll(1), parallel = compileAll(6);
  for (size_t i = 0; i < configs.size(); ++i) EXPECT_EQ(serial[i], parallel[i]) << configs[i].str();
}

// Host matrices in device buffers of the emulator.
struct SimMatmul {
  static constexpr int64_t M = 40, N = 24, K = 36;  // ragged against every tile below
  jit::DeviceRuntime& runtime = sim::simRuntime("sm_90a", true);
  std::vector<uint16_t> a = halves(M * K, 1), b = halves(K * N, 2);
  jit::DeviceAddress da = upload(a), db = upload(b), dc = runtime.allocate(M * N * 4);

  ~SimMatmul() {
    for (jit::DeviceAddress p : {da, db, dc}) runtime.release(p);
  }
  static std::vector<uint16_t> halves(int64_t n, int seed) {
    std::vector<uint16_t> h(n);
    for (int64_t i = 0; i < n; ++i) h[i] = ir::encodeF16(float((i * 7 + seed * 13) % 17 - 8) / 8);
    return h;
  }
  jit::DeviceAddress upload(const std::vector<uint16_t>& h) {
    jit::DeviceAddress p = runtime.allocate(h.size() * 2);
    runtime.copyToDevice(p, h.data(), h.size() * 2);
    return p;
  }
  std::vector<jit::KernelArg> args() const {
    return {jit::KernelArg::pointer(da), jit::KernelArg::pointer(db), jit::KernelArg::pointer(dc), M, N, K, K, 1, N,
            1, N, 1};
  }
  double worstError() { return worstMatmulError(runtime, a, b, dc, M, N, K); }

  // The largest difference between C (M x N f32 at `dc`) and the f64 product of the f16 matrices a and b.
  static double worstMatmulError(jit::DeviceRuntime& runtime, const std::vector<uint16_t>& a,
                                 const std::vector<uint16_t>& b, jit::DeviceAddress dc, int64_t M, int64_t N,
                                 int64_t K) {
    std::vector<float> c(M * N);
    runtime.copyToHost(c.data(), dc, c.size() * 4);
    double worst = 0;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double want = 0;
        for (int64_t k = 0; k < K; ++k) want += ir::decodeF16(a[i * K + k]) * ir::decodeF16(b[k * N + j]);
        worst = std::max(worst, std::abs(want - c[i * N + j]));
      }
    return worst;
  }
};

// Times each launch as the next entry of `ms` (the emulator has no meaningful clock), running it once.
struct ScriptedTimer : jit::KernelTimer {
  std::vector<double> ms;
  size_t calls = 0;
  double milliseconds(const std::function<void()>& launch) override {
    launch();
    return ms.at(calls++);
  }
};

jit::LaunchGrid gridFor(const TuneConfig& c) {
  auto block = [&](const char* name) { return std::get<int64_t>(c.constants.at(name)); };
  return {((SimMatmul::M + block("BM") - 1) / block("BM")) * ((SimMatmul::N + block("BN") - 1) / block("BN")), 1, 1};
}

TEST(AutotunedKernel, TunesOnTheEmulatorWithAnInjectedTimer) {
  TempDirectory dir;
  const std::vector<TuneConfig> configs{tile(32, 32, 32, 4), tile(16, 16, 16, 1),
                                        tile(32, 32, 2048, 8)};  // 256 KB of operands: more than sm_90a's 227 KB
  SimMatmul mm;
  jit::LaunchOptions options;
  options.runtime = &mm.runtime;
  jit::AutotunedKernel tuned(kernels::matmul_kernel(), configs, {"M", "N", "K"}, quietOptions(dir.path()));
  EXPECT_EQ(errorOf([&] { tuned.launch(gridFor, mm.args(), {{"GROUP_M", 4}}, options); }),
            "autotuned kernel 'matmul': sim has no clock to tune with; real timing runs on a CUDA or AMD GPU (give "
            "the tuner a timer with setTimer)");
  auto timer = std::make_shared<ScriptedTimer>();
  timer->ms = {2.0, 1.0};
  tuned.setTimer(timer);
  tuned.launch(gridFor, mm.args(), {{"GROUP_M", 4}}, options);
  EXPECT_EQ(timer->calls, 2u);  // the third config was pruned before any launch
  EXPECT_EQ(tuned.bestConfig(), configs[1]);
  const TuningReport report = *tuned.tuner().lastReport();
  EXPECT_EQ(report.key, "M=40, N=24, K=36");
  EXPECT_EQ(report.outcomes[2].rejected.rfind("needs ", 0), 0u) << report.outcomes[2].rejected;
  EXPECT_NE(report.outcomes[2].rejected.find("the GPU gives 232448 B per block"), std::string::npos);
  EXPECT_LE(mm.worstError(), 1e-4);  // the final launch, with the winner

  // Another process on the same cache: no benchmarking, the same winner.
  jit::AutotunedKernel again(kernels::matmul_kernel(), configs, {"M", "N", "K"}, quietOptions(dir.path()));
  again.setTimer(std::make_shared<ScriptedTimer>());  // no entries: any benchmark would throw
  again.launch(gridFor, mm.args(), {{"GROUP_M", 4}}, options);
  EXPECT_EQ(again.bestConfig(), configs[1]);
  EXPECT_EQ(again.tuner().lastReport()->source, TuningReport::Source::Cached);
}

// A launch keeps less of its compile than an inspection does (jit::KeptIR), and the two are separate cache
// entries: the tuner must compile each config as the winner's launch will, or that launch compiles it again.
TEST(AutotunedKernel, PruningCompilesTheKernelTheLaunchLoads) {
  SimMatmul mm;
  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel jit(kernels::matmul_kernel(), cache);
  jit::LaunchOptions resolved;
  resolved.runtime = &mm.runtime;
  resolved.target = mm.runtime.target();
  resolved.arch = mm.runtime.nativeArch();
  const std::vector<TuneConfig> configs{tile(32, 32, 32, 4)};
  const Constants launchConstants{{"GROUP_M", 4}};
  const jit::TuningDevice device = jit::tuningDeviceFor(&mm.runtime, resolved.target, resolved.arch);
  EXPECT_EQ(jit::compileAndPrune(jit, configs, mm.args(), launchConstants, resolved, device)(0), "");
  EXPECT_EQ(cache.stats().compiles, 1);

  const Constants constants = jit::mergeTuneConstants(configs[0], launchConstants, "matmul");
  const jit::LaunchOptions options = jit::applyTuneOptions(configs[0], resolved);
  const jit::CompiledKernel& launched = jit.prepare(mm.args(), constants, options).compiled();
  EXPECT_EQ(cache.stats().compiles, 1) << "the launch loads the kernel the tuner compiled";
  EXPECT_FALSE(launched.optimizedLLVMIR.empty()) << "the emulator runs the optimized LLVM IR";
  EXPECT_EQ(launched.irAfterPass.size(), 1u);
  EXPECT_TRUE(launched.llvmIR.empty());
  // Inspection keeps every stage: an entry of its own.
  EXPECT_GT(jit.compileOnly(mm.args(), constants, options)->irAfterPass.size(), 2u);
  EXPECT_EQ(cache.stats().compiles, 2);
}

TEST(AutotuneDescriptorBlocks, NamesAndConstsAreCheckedAgainstTheKernel) {
  const KernelDef desc = kernels::matmul_desc_kernel();
  auto make = [&](jit::DescriptorBlocks blocks) {
    AutotuneOptions o = quietOptions("");
    o.descriptorBlocks = std::move(blocks);
    return errorOf([&] { Autotuner(desc, {tile(64, 64, 32, 4)}, {"M"}, o); });
  };
  EXPECT_EQ(make({{"a", {"BM", "BK"}}, {"b", {"BK", int64_t(64)}}}), "no error");
  EXPECT_EQ(make({{"c", {"BM", "BN"}}}),
            "autotune of kernel 'matmul_desc', descriptor_blocks: 'c' is not a tensor descriptor parameter of the "
            "kernel");
  EXPECT_EQ(make({{"a", {"BM", "BX"}}}),
            "autotune of kernel 'matmul_desc', descriptor_blocks of 'a': 'BX' is not a Const parameter of the kernel");
  EXPECT_EQ(make({{"a", {"BM", int64_t(0)}}}),
            "autotune of kernel 'matmul_desc', descriptor_blocks of 'a': block dimensions must be positive, got 0");
  EXPECT_EQ(make({{"a", {}}}),
            "autotune of kernel 'matmul_desc', descriptor_blocks of 'a': a block has 1 to 5 dimensions, got 0");

  const std::vector<jit::KernelArg> args{jit::KernelArg::tensorDescriptor(256, {40, 40}, {40, 1}, {8, 8}),
                                         jit::KernelArg::tensorDescriptor(512, {40, 24}, {24, 1}, {8, 8})};
  const std::vector<jit::KernelArg> reblocked =
      jit::argsForConfig(desc, {{"a", {"BM", "BK"}}}, tile(64, 32, 16, 4), {}, args);
  EXPECT_EQ(reblocked[0].descriptor().block, (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(reblocked[0].descriptor().shape, (std::vector<int64_t>{40, 40}));
  EXPECT_EQ(reblocked[0].descriptor().base, 256u);
  EXPECT_EQ(reblocked[1].descriptor().block, (std::vector<int64_t>{8, 8})) << "b is not named: left as given";
  EXPECT_EQ(jit::argsForConfig(desc, {{"a", {"GROUP_M", "BK"}}}, tile(64, 32, 16, 4), {{"GROUP_M", 4}}, args)[0]
                .descriptor()
                .block,
            (std::vector<int64_t>{4, 16}))
      << "a Const the launch sets";
  EXPECT_EQ(errorOf([&] { jit::argsForConfig(desc, {{"a", {"GROUP_M", "BK"}}}, tile(64, 32, 16, 4), {}, args); }),
            "autotuned kernel 'matmul_desc', config {BK=16, BM=64, BN=32, num_warps=4}: the block of 'a' takes Const "
            "'GROUP_M', which neither the config nor the launch sets to an integer");
  EXPECT_EQ(errorOf([&] { jit::argsForConfig(desc, {{"a", {"BM"}}}, tile(64, 32, 16, 4), {}, args); }),
            "autotuned kernel 'matmul_desc': descriptor_blocks gives 'a' a block of 1 dimensions; its descriptor has "
            "2");
  EXPECT_EQ(jit::descriptorBlocksText({{"a", {"BM", "BK"}}, {"b", {int64_t(32), "BN"}}}), "a=(BM,BK);b=(32,BN)");
}

// The descriptor matmul tuned on the emulator (sm_90a: TMA copies): each config reads the blocks its tiles want,
// whatever block the launch's descriptors carry.
TEST(AutotunedKernel, ReblocksDescriptorArgumentsForEachConfig) {
  TempDirectory dir;
  jit::DeviceRuntime& runtime = sim::simRuntime("sm_90a", true);
  constexpr int64_t M = 40, N = 24, K = 40;  // rows of 80 and 48 bytes: multiples of 16, as tensor maps need
  const std::vector<uint16_t> a = SimMatmul::halves(M * K, 1), b = SimMatmul::halves(K * N, 2);
  const jit::DeviceAddress da = runtime.allocate(a.size() * 2), db = runtime.allocate(b.size() * 2),
                           dc = runtime.allocate(M * N * 4);
  runtime.copyToDevice(da, a.data(), a.size() * 2);
  runtime.copyToDevice(db, b.data(), b.size() * 2);
  const std::vector<jit::KernelArg> args{jit::KernelArg::tensorDescriptor(da, {M, K}, {K, 1}, {8, 8}),
                                         jit::KernelArg::tensorDescriptor(db, {K, N}, {N, 1}, {8, 8}),
                                         jit::KernelArg::pointer(dc), M, N, K, N, int64_t(1)};
  auto grid = [&](const TuneConfig& c) {
    auto block = [&](const char* name) { return std::get<int64_t>(c.constants.at(name)); };
    return jit::LaunchGrid{((M + block("BM") - 1) / block("BM")) * ((N + block("BN") - 1) / block("BN")), 1, 1};
  };
  const std::vector<TuneConfig> configs{tile(64, 64, 32, 4), tile(64, 32, 16, 4)};
  jit::LaunchOptions options;
  options.runtime = &runtime;
  AutotuneOptions tuneOptions = quietOptions(dir.path());
  tuneOptions.descriptorBlocks = {{"a", {"BM", "BK"}}, {"b", {"BK", "BN"}}};
  jit::AutotunedKernel tuned(kernels::matmul_desc_kernel(), configs, {"M", "N", "K"}, tuneOptions);
  auto timer = std::make_shared<ScriptedTimer>();
  timer->ms = {2.0, 1.0};
  tuned.setTimer(timer);
  tuned.launch(grid, args, {{"GROUP_M", 4}}, options);
  EXPECT_EQ(timer->calls, 2u);
  EXPECT_EQ(tuned.bestConfig(), configs[1]);
  EXPECT_LE(SimMatmul::worstMatmulError(runtime, a, b, dc, M, N, K), 1e-4);

  // Without descriptor_blocks every config reads the launch's 8x8 blocks, which its tiles cannot use.
  jit::AutotunedKernel unblocked(kernels::matmul_desc_kernel(), configs, {"M", "N", "K"}, quietOptions(dir.path()));
  unblocked.setTimer(std::make_shared<ScriptedTimer>());
  const std::string unblockedError = errorOf([&] { unblocked.launch(grid, args, {{"GROUP_M", 4}}, options); });
  EXPECT_NE(unblockedError.find("config 0 {BK=32, BM=64, BN=64, num_warps=4}: "),
            std::string::npos)
      << unblockedError;
  for (jit::DeviceAddress p : {da, db, dc}) runtime.release(p);
}

TEST(AutotunedKernel, KeysOnSizesAndConstsNotPointers) {
  const KernelDef def = kernels::matmul_kernel();
  SimMatmul mm;
  EXPECT_EQ(jit::tuningKeyFor(def, {"K", "GROUP_M"}, mm.args(), {{"GROUP_M", 4}}),
            (TuningKey{{"K", "36"}, {"GROUP_M", "4"}}));
  EXPECT_EQ(errorOf([&] { jit::tuningKeyFor(def, {"a"}, mm.args(), {}); }),
            "autotuned kernel 'matmul': key 'a' is a pointer; its element type is fixed by the kernel's signature, so "
            "key on sizes and Consts");
  EXPECT_EQ(errorOf([&] { jit::tuningKeyFor(def, {"GROUP_M"}, mm.args(), {}); }),
            "autotuned kernel 'matmul': key 'GROUP_M' is a Const the launch does not give");
}

void keyed_desc(TensorDesc<f32> src, Ptr<f32> out) { store(out, 1.0f); }

TEST(AutotunedKernel, KeysADescriptorOnTheShapeItDescribes) {
  const KernelDef def = kernel("keyed_desc", keyed_desc, {"src", "out"});
  const std::vector<jit::KernelArg> args{jit::KernelArg::tensorDescriptor(256, {30, 48}, {48, 1}, {16, 16}),
                                         jit::KernelArg::pointer(256)};
  EXPECT_EQ(jit::tuningKeyFor(def, {"src"}, args, {}), (TuningKey{{"src", "30x48"}}));
}

}  // namespace
}  // namespace tessera
