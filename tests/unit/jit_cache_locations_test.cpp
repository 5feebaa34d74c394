// The compiled-kernel cache keys on the tile IR with its source locations: a compiled kernel carries them (debug
// locations in the LLVM IR, .loc in PTX, the emulator's findings), so two kernels that differ only in where they
// were written must not share a cache entry.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "jit/JitKernel.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

// The same kernel twice, on different lines.
void copyHere(Ptr<f32> x, Ptr<f32> out) { store(out + arange(0, 64), load(x + arange(0, 64))); }
constexpr unsigned kFirstLine = __LINE__ - 1;

void copyThere(Ptr<f32> x, Ptr<f32> out) { store(out + arange(0, 64), load(x + arange(0, 64))); }
constexpr unsigned kSecondLine = __LINE__ - 1;

TEST(JitCacheLocations, KernelsWrittenOnDifferentLinesCompileSeparately) {
  jit::KernelCache cache{std::filesystem::path()};  // memory only
  std::vector<jit::KernelArg> args{jit::KernelArg::pointer(256), jit::KernelArg::pointer(256)};
  auto first = jit::JitKernel(kernel("copy", copyHere, {"x", "out"}), cache).compileOnly(args, {});
  auto second = jit::JitKernel(kernel("copy", copyThere, {"x", "out"}), cache).compileOnly(args, {});
  EXPECT_NE(first.get(), second.get());
  const std::string firstLine = "line: " + std::to_string(kFirstLine) + ",";
  const std::string secondLine = "line: " + std::to_string(kSecondLine) + ",";
  EXPECT_NE(first->optimizedLLVMIR.find(firstLine), std::string::npos) << first->optimizedLLVMIR;
  EXPECT_EQ(first->optimizedLLVMIR.find(secondLine), std::string::npos);
  EXPECT_NE(second->optimizedLLVMIR.find(secondLine), std::string::npos) << second->optimizedLLVMIR;
  // The same kernel again is a hit.
  EXPECT_EQ(jit::JitKernel(kernel("copy", copyHere, {"x", "out"}), cache).compileOnly(args, {}).get(), first.get());
}

}  // namespace
}  // namespace tessera
