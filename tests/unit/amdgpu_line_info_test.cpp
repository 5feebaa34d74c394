// Source locations in AMDGPU code objects: the tutorial matmul (64x64x32 tiles, 4 warps) links into a code object
// with a DWARF line table, whose machine code is the code object's without line info, instruction for instruction.
#include <gtest/gtest.h>

#include <sstream>

#include "AMDGPUTestUtil.h"
#include "LineInfoTestUtil.h"

namespace tessera::testing {
namespace {

// The disassembled instructions, without the temporary file's name.
std::string instructions(const std::string& hsaco) {
  std::istringstream in(disassemble(hsaco));
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("file format") == std::string::npos) out += line + "\n";
  return out;
}

TEST(AmdgpuLineInfo, CodeObjectsLinkWithALineTableAndTheSameCode) {
  jit::CompiledKernel k = compileTutorialMatmul("amdgpu", "gfx942", 64, 32, 4);
  expectGoodCodeObject(k, "gfx942");
  const std::string without = emitWithoutLineInfo(k);
  if (!haveLlvmTools()) GTEST_SKIP() << "llvm-readelf-19 / llvm-objdump-19 are not installed";
  EXPECT_NE(runTool(kReadelf, "-S", k.binary).find(".debug_line"), std::string::npos);
  EXPECT_EQ(runTool(kReadelf, "-S", without).find(".debug_line"), std::string::npos);
  const std::string code = instructions(k.binary);
  EXPECT_NE(code.find("v_mfma"), std::string::npos) << code;
  EXPECT_EQ(code, instructions(without));
}

}  // namespace
}  // namespace tessera::testing
