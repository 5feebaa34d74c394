// The DSL's random numbers (tessera/Random.h) compiled for each emulated target: the GPU code draws the
// interpreter's numbers, bit for bit for the integers and the uniform floats (only the normals' log, sin and cos
// may round differently), and the emulator's checks find nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "PhiloxReference.h"
#include "backends/interpreter/Interpreter.h"
#include "jit/JitKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

constexpr int kBlock = 512;

// Each program draws kBlock elements of every kind at offsets base + its elements; 32- and 64-bit offsets.
void draws(Ptr<u32> words, Ptr<f32> uniform, Ptr<f32> normal, Ptr<u64> words64, Ptr<f32> uniform64, Int seed, Int base,
           Long base64, Int n) {
  Tensor index = program_id(0) * kBlock + arange(0, kBlock);
  Tensor mask = index < n;
  Tensor offsets = base + index;
  std::array<Tensor, 4> w = randint4x(seed, offsets);
  for (int i = 0; i < 4; ++i) store(words + i * n + index, w[i], mask);
  store(uniform + index, rand(seed, offsets), mask);
  store(normal + index, randn(seed, offsets), mask);
  Tensor offsets64 = base64 + cast<i64>(index);
  store(words64 + index, randint(seed, offsets64), mask);
  store(uniform64 + index, rand(seed, offsets64), mask);
}

struct Draws {
  explicit Draws(int n) : words(4 * n), uniform(n), normal(n), words64(n), uniform64(n) {}
  std::vector<uint32_t> words;
  std::vector<float> uniform, normal;
  std::vector<uint64_t> words64;
  std::vector<float> uniform64;
};

// Device buffers of a runtime, read back at the end.
class Buffers {
 public:
  explicit Buffers(jit::DeviceRuntime& runtime) : runtime_(runtime) {}
  ~Buffers() {
    for (jit::DeviceAddress a : addresses_) runtime_.release(a);
  }
  template <class T> jit::KernelArg add(const std::vector<T>& data) {
    addresses_.push_back(runtime_.allocate(data.size() * sizeof(T)));
    runtime_.copyToDevice(addresses_.back(), data.data(), data.size() * sizeof(T));
    return jit::KernelArg::pointer(addresses_.back());
  }
  template <class T> void read(size_t index, std::vector<T>& into) {
    runtime_.copyToHost(into.data(), addresses_[index], into.size() * sizeof(T));
  }

 private:
  jit::DeviceRuntime& runtime_;
  std::vector<jit::DeviceAddress> addresses_;
};

template <class T> interp::Buffer buffer(std::vector<T>& v) { return interp::Buffer{v.data(), v.size() * sizeof(T)}; }

TEST(SimRandom, EveryEmulatedTargetDrawsTheInterpretersNumbers) {
  KernelDef def =
      kernel("draws", draws, {"words", "uniform", "normal", "words64", "uniform64", "seed", "base", "base64", "n"});
  const int n = 1000;  // two programs, the second partly masked
  const int64_t seed = -3, base = 2147483000, base64 = int64_t{5} << 35;  // i32 offsets wrap past 2^31 - 1
  const unsigned programs = (n + kBlock - 1) / kBlock;
  Draws want(n);
  def.runInterpreter({programs, 1, 1},
                     {buffer(want.words), buffer(want.uniform), buffer(want.normal), buffer(want.words64),
                      buffer(want.uniform64), seed, base, base64, int64_t{n}},
                     {});
  // The interpreter against the host reference (the reference's own checks are in frontend_random_test.cpp).
  for (int i = 0; i < n; ++i) {
    std::array<uint32_t, 4> bits = random_reference::randint4xReference(uint64_t(seed), uint32_t(base + i));
    ASSERT_EQ(want.words[i], bits[0]);
    ASSERT_EQ(want.uniform[i], random_reference::uniformReference(bits[0]));
    ASSERT_EQ(want.words64[i], random_reference::randint4xReference64(uint64_t(seed), uint64_t(base64 + i))[0]);
  }

  jit::KernelCache cache{std::filesystem::path()};
  jit::JitKernel kernel(def, cache);
  for (const char* arch : {"sm_90a", "sm_80", "gfx942", "gfx90a"}) {
    SCOPED_TRACE(arch);
    sim::SimRuntime& runtime = sim::simRuntime(arch);
    Draws got(n);
    Buffers buffers(runtime);
    std::vector<jit::KernelArg> args{buffers.add(got.words), buffers.add(got.uniform), buffers.add(got.normal),
                                     buffers.add(got.words64), buffers.add(got.uniform64), seed, base, base64,
                                     int64_t{n}};
    jit::LaunchOptions options;
    options.runtime = &runtime;
    kernel.launch({programs, 1, 1}, args, {}, options);
    std::optional<sim::Report> report = runtime.lastReport();
    ASSERT_TRUE(report);
    EXPECT_TRUE(report->findings.empty()) << report->findings.front().message;
    buffers.read(0, got.words);
    buffers.read(1, got.uniform);
    buffers.read(2, got.normal);
    buffers.read(3, got.words64);
    buffers.read(4, got.uniform64);
    EXPECT_EQ(got.words, want.words);
    EXPECT_EQ(got.uniform, want.uniform);
    EXPECT_EQ(got.words64, want.words64);
    EXPECT_EQ(got.uniform64, want.uniform64);
    for (int i = 0; i < n; ++i) ASSERT_NEAR(got.normal[i], want.normal[i], 1e-4) << "element " << i;
  }
}

}  // namespace
}  // namespace tessera
