// Ahead-of-time export (docs/AOT.md): compiles one kernel at chosen Const values and specialization for chosen
// targets, and writes a self-contained C header and source that embed the binaries and launch them through the
// CUDA driver or HIP runtime, with neither Tessera nor LLVM needed at run time. tools/tessera-aot and
// tessera.aot.export (Python) are thin front ends over exportKernel.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tessera/Kernel.h"

namespace tessera::jit::aot {

struct ArchTarget {
  std::string target;  // "nvptx" or "amdgpu"
  std::string arch;    // "sm_80", "sm_90a", "gfx90a", "gfx942"
};

// "nvptx:sm_90a" -> {nvptx, sm_90a}; throws tessera::Error for anything else.
ArchTarget parseArchTarget(const std::string& spec);

struct ExportOptions {
  std::string name;  // C identifier prefixing the exported functions; empty: the kernel's name
  Constants constants;
  // Runtime parameters the binaries may assume are 16-byte aligned (pointers) or multiples of 16 (integers),
  // integers they may assume multiples of 8 (ragged sizes such as 1000 keep 16-byte row copies of 16-bit data),
  // and integers they may assume equal 1: the JIT's specialization facts. The launch function checks them.
  std::set<std::string> divisibleBy16;
  std::set<std::string> divisibleBy8;
  std::set<std::string> equalTo1;
  int numWarps = 4;
  bool fastMath = true;
  std::vector<ArchTarget> targets;
  bool cubin = true;  // also embed a cubin per nvptx arch, when ptxas is found (see Ptxas.h)
  std::string ptxas;  // ptxas to use; empty: look for one
};

struct ExportedKernel {
  std::string name;
  std::string header;  // <name>.h
  std::string source;  // <name>.c
  std::vector<std::string> binaries;  // "nvptx sm_90a ptx", ...: what was embedded, for reports
};

// Throws tessera::Error for a name that is not a C identifier, a parameter name the C code cannot use, an unknown
// parameter in divisibleBy16/divisibleBy8/equalTo1 (or in two of them), a missing or unknown Const, an unknown target or arch, or a failed compile.
ExportedKernel exportKernel(const KernelDef& kernel, const ExportOptions& options);

// Writes <dir>/<name>.h and <dir>/<name>.c (creating dir); returns their paths.
std::vector<std::filesystem::path> writeExport(const ExportedKernel& e, const std::filesystem::path& dir);

}  // namespace tessera::jit::aot
