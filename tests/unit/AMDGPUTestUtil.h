// Shared helpers of the amdgpu_* tests. No AMD GPU exists on any machine these tests run on: they compile tile IR
// through the JIT pipeline (layouts planned for wave64) to HSA code objects and inspect those with
// llvm-readelf-19 --notes and llvm-objdump-19 -d; nothing here executes on AMD hardware.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "BackendTestText.h"
#include "backends/Target.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "jit/Compiler.h"

namespace tessera::testing {

inline constexpr const char* kReadelf = "/usr/bin/llvm-readelf-19";
inline constexpr const char* kObjdump = "/usr/bin/llvm-objdump-19";
inline const char* const kAmdArchs[] = {"gfx90a", "gfx942"};

inline bool haveLlvmTools() { return std::filesystem::exists(kReadelf) && std::filesystem::exists(kObjdump); }

// `matrixInstrSize`: backends::TargetOptions::matrixInstrSize (0: the target's choice, 16; 32: 32x32x8 where a dot
// allows).
inline jit::CompiledKernel compileForAmdgpu(const ir::Function& f, const std::string& arch, int numWarps = 4,
                                            int matrixInstrSize = 0) {
  std::unique_ptr<backends::Target> target = backends::createTarget("amdgpu");
  backends::TargetOptions opts;
  opts.arch = arch;
  opts.numWarps = numWarps;
  opts.matrixInstrSize = matrixInstrSize;
  return jit::compile(f, *target, opts);
}

inline jit::CompiledKernel compileTextForAmdgpu(const std::string& text, const std::string& arch, int numWarps = 4,
                                                int matrixInstrSize = 0) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "amdgpu_test.tir");
  ir::verify(*m);
  return compileForAmdgpu(*m->functions().at(0), arch, numWarps, matrixInstrSize);
}

inline std::string runTool(const std::string& tool, const std::string& args, const std::string& binary) {
  char path[] = "/tmp/tessera_amdgpu_test_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "";
  close(fd);
  {
    std::ofstream out(path, std::ios::binary);
    out << binary;
  }
  std::string cmd = tool + " " + args + " " + path + " 2>&1";
  std::string text;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) text += buf;
  if (p) pclose(p);
  std::filesystem::remove(path);
  return text;
}

// The facts the code object's metadata note states about its one kernel.
struct CodeObjectNotes {
  std::string text;
  std::string kernelName, symbol;
  int64_t wavefrontSize = -1, groupSegmentBytes = -1, privateSegmentBytes = -1;
};

inline int64_t noteInt(const std::string& text, const std::string& key) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex("\\." + key + ":\\s+(\\d+)"))) return std::stoll(m[1]);
  return -1;
}

inline CodeObjectNotes readNotes(const std::string& hsaco) {
  CodeObjectNotes n;
  n.text = runTool(kReadelf, "--notes", hsaco);
  std::smatch m;
  if (std::regex_search(n.text, m, std::regex(R"(\n    \.name:\s+(\S+))"))) n.kernelName = m[1];
  if (std::regex_search(n.text, m, std::regex(R"(\.symbol:\s+(\S+))"))) n.symbol = m[1];
  n.wavefrontSize = noteInt(n.text, "wavefront_size");
  n.groupSegmentBytes = noteInt(n.text, "group_segment_fixed_size");
  n.privateSegmentBytes = noteInt(n.text, "private_segment_fixed_size");
  return n;
}

inline std::string disassemble(const std::string& hsaco) { return runTool(kObjdump, "-d", hsaco); }

// The checks every AMDGPU kernel must pass: an HSACO for the arch with the kernel, wave64, LDS equal to the
// allocator's smem_bytes, and (with `noSpills`) no private (scratch) memory.
inline void expectGoodCodeObject(const jit::CompiledKernel& k, const std::string& arch, bool noSpills = true) {
  ASSERT_EQ(k.format, "hsaco");
  ASSERT_GE(k.binary.size(), 4u);
  ASSERT_EQ(k.binary.substr(0, 4), std::string("\x7f" "ELF"));
  if (!haveLlvmTools()) return;
  CodeObjectNotes n = readNotes(k.binary);
  EXPECT_EQ(n.kernelName, k.name) << n.text;
  EXPECT_EQ(n.symbol, k.name + ".kd") << n.text;
  EXPECT_NE(n.text.find("amdgcn-amd-amdhsa--" + arch), std::string::npos) << n.text;
  EXPECT_NE(n.text.find("amdhsa.version"), std::string::npos) << n.text;
  EXPECT_EQ(n.wavefrontSize, 64) << n.text;
  EXPECT_EQ(n.groupSegmentBytes, k.sharedBytes) << n.text;
  if (noSpills) {
    EXPECT_EQ(n.privateSegmentBytes, 0) << n.text;
    std::string dis = disassemble(k.binary);
    EXPECT_EQ(dis.find("scratch_"), std::string::npos) << "scratch access in " << k.name;
    EXPECT_FALSE(std::regex_search(dis, std::regex(R"(buffer_store\S*[^\n]*offen)"))) << "spill in " << k.name;
  }
}

}  // namespace tessera::testing
