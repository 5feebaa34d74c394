// Source locations in the PTX: the tutorial matmul (128x128x64 tiles, 8 warps) compiled through the JIT carries
// `.loc`/`.file` line info pointing at tessera/kernels/matmul.h, and emitting it with or without line info
// gives the same instructions, which ptxas (sm_80 and sm_90a, where installed) accepts with the same registers
// and spills: debug info that changed the code would be a bug.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "LineInfoTestUtil.h"
#include "NVPTXTestUtil.h"

namespace tessera::testing {
namespace {

// The PTX without its line directives, source file table, and the labels line info adds.
std::string withoutLineInfo(const std::string& ptx) {
  std::istringstream in(ptx);
  std::string out;
  const std::regex lineInfo(R"(^\s*(\.loc|\.file|\$L__(tmp|func_begin|func_end)\d+:|\.section\s+\.debug_loc))");
  for (std::string line; std::getline(in, line);)
    if (!std::regex_search(line, lineInfo)) out += line + "\n";
  return out;
}

class PtxLineInfo : public ::testing::TestWithParam<const char*> {};

TEST_P(PtxLineInfo, PointsAtTheAuthorAndChangesNoCode) {
  const std::string arch = GetParam();
  jit::CompiledKernel k = compileTutorialMatmul("nvptx", arch, 128, 64, 8);
  EXPECT_TRUE(std::regex_search(k.binary, std::regex(R"(\.file\s+\d+\s+".*tessera/kernels/matmul\.h")")));
  EXPECT_NE(k.binary.find("\t.loc\t"), std::string::npos);
  EXPECT_NE(k.binary.find(".target " + arch + "\n"), std::string::npos) << "no `, debug`: ptxas would change the code";

  const std::string& with = k.binary;
  const std::string without = emitWithoutLineInfo(k);
  EXPECT_EQ(without.find("\t.loc\t"), std::string::npos);
  EXPECT_EQ(withoutLineInfo(with), without);
  if (!havePtxas()) GTEST_SKIP() << "ptxas is not installed";
  PtxasReport a = runPtxas(with, arch), b = runPtxas(without, arch);
  ASSERT_EQ(a.status, 0) << a.log;
  ASSERT_EQ(b.status, 0) << b.log;
  EXPECT_GT(a.registers, 0) << a.log;
  EXPECT_EQ(b.spillStores, 0) << "a spilling kernel: ptxas's spill choices follow the .loc lines\n" << b.log;
  EXPECT_EQ(a.registers, b.registers) << a.log << b.log;
  EXPECT_EQ(a.spillStores, b.spillStores) << a.log << b.log;
  EXPECT_EQ(a.spillLoads, b.spillLoads) << a.log << b.log;
  EXPECT_EQ(a.stackFrame, b.stackFrame) << a.log << b.log;
}

INSTANTIATE_TEST_SUITE_P(Archs, PtxLineInfo, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace tessera::testing
