// Reading the AMD GPUs' arch from the KFD topology (jit/KfdTopology.h), against fake topology trees: no machine
// here has an AMD GPU or /sys/class/kfd.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/Error.h"
#include "jit/DeviceRuntime.h"
#include "jit/HipRuntime.h"
#include "jit/KfdTopology.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

TEST(GfxArchName, DecodesMajorMinorAndSteppingAsTheArchName) {
  EXPECT_EQ(jit::gfxArchName(90010), "gfx90a");
  EXPECT_EQ(jit::gfxArchName(90402), "gfx942");
  EXPECT_EQ(jit::gfxArchName(90008), "gfx908");
  EXPECT_EQ(jit::gfxArchName(100300), "gfx1030");
  EXPECT_EQ(jit::gfxArchName(110000), "gfx1100");
  EXPECT_EQ(jit::gfxArchName(0), std::nullopt);      // a CPU node
  EXPECT_EQ(jit::gfxArchName(91600), std::nullopt);  // minor 16 is no hex digit
}

class FakeTopology : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tessera_kfd_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void node(const std::string& name, const std::string& properties) {
    fs::create_directories(root_ / name);
    std::ofstream(root_ / name / "properties") << properties;
  }
  fs::path root_;
};

TEST_F(FakeTopology, ListsGpuNodesInNumericNodeOrderAndSkipsCpus) {
  node("0", "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");
  node("1", "cpu_cores_count 0\nsimd_count 440\ngfx_target_version 90010\nvendor_id 4098\n");
  node("2", "gfx_target_version 90402\n");
  node("10", "gfx_target_version 100300\n");
  node("not_a_node", "gfx_target_version 90010\n");
  EXPECT_EQ(jit::kfdGpuArchs(root_), (std::vector<std::string>{"gfx90a", "gfx942", "gfx1030"}));
}

// Compute units (what a persistent launch multiplies by the programs one holds): SIMDs over SIMDs per unit.
TEST_F(FakeTopology, CountsComputeUnitsFromTheNodesSimds) {
  node("0", "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");
  node("1", "simd_count 440\nsimd_per_cu 4\ngfx_target_version 90010\n");  // an MI250X die: 110 units
  node("2", "gfx_target_version 90402\nsimd_count 1216\nsimd_per_cu 4\n");  // MI300X: 304
  node("3", "gfx_target_version 90402\nsimd_count 1216\n");                 // no simd_per_cu: unknown
  const std::vector<jit::KfdGpu> gpus = jit::kfdGpus(root_);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].arch, "gfx90a");
  EXPECT_EQ(gpus[0].computeUnits, 110);
  EXPECT_EQ(gpus[1].computeUnits, 304);
  EXPECT_EQ(gpus[2].computeUnits, 0);
}

TEST_F(FakeTopology, NoTopologyMeansNoGpus) {
  EXPECT_TRUE(jit::kfdGpuArchs(root_ / "missing").empty());
  node("0", "gfx_target_version 0\n");
  EXPECT_TRUE(jit::kfdGpuArchs(root_).empty());
}

// The HIP runtime's default arch: TESSERA_HIP_ARCH, else the topology's; here there is no topology to read.
TEST(HipNativeArch, ComesFromTheEnvironmentOrSaysWhatToSet) {
  std::unique_ptr<jit::DeviceRuntime> hip = jit::makeHipDeviceRuntime(jit::HipRuntime::instance());
  const char* saved = std::getenv("TESSERA_HIP_ARCH");
  std::string restore = saved ? saved : "";
  ::setenv("TESSERA_HIP_ARCH", "gfx942", 1);
  EXPECT_EQ(hip->nativeArch(), "gfx942");
  ::unsetenv("TESSERA_HIP_ARCH");
  if (!jit::kfdGpuArchs().empty()) {
    EXPECT_EQ(hip->nativeArch(), jit::kfdGpuArchs()[0]);
  } else {
    try {
      hip->nativeArch();
      ADD_FAILURE() << "an arch was made up without a GPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no GPU in /sys/class/kfd/kfd/topology/nodes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("TESSERA_HIP_ARCH"), std::string::npos) << e.what();
    }
  }
  if (saved) ::setenv("TESSERA_HIP_ARCH", restore.c_str(), 1);
}

}  // namespace
}  // namespace tessera::testing
