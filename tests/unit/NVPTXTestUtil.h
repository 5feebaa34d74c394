// Shared helpers of the nvptx_* tests: lower laid-out IR text to LLVM IR and PTX, and run ptxas on the PTX.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <unistd.h>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "BackendTestText.h"
#include "backends/Target.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

namespace tessera::testing {

inline constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

// Replaces each key (e.g. "#A") by its layout text, so tests can write `tile<64xf32, #A>`.
inline std::string withLayouts(std::string text, const std::map<std::string, std::string>& layouts) {
  for (const auto& [key, value] : layouts) {
    size_t pos = 0;
    while ((pos = text.find(key, pos)) != std::string::npos) {
      size_t end = pos + key.size();
      // Whole tokens only: "#A" must not match inside "#AB".
      if (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
        pos = end;
        continue;
      }
      text.replace(pos, key.size(), value);
      pos += value.size();
    }
  }
  return text;
}

struct Compiled {
  std::string llvm;  // as lowered, before optimization
  std::string ptx;
};

inline Compiled compileIR(const std::string& text, const std::string& arch = "sm_90a", int numWarps = 4,
                          bool fastMath = true) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "test.tir");
  ir::verify(*m);
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  backends::TargetOptions opts;
  opts.arch = arch;
  opts.numWarps = numWarps;
  opts.fastMath = fastMath;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = target->lowerToLLVM(*m->functions().at(0), ctx, opts);
  Compiled c;
  llvm::raw_string_ostream os(c.llvm);
  lm->print(os, nullptr);
  c.ptx = target->emitBinary(*lm, opts);
  return c;
}

struct PtxasReport {
  int status = -1;
  std::string log;
  int stackFrame = -1, spillStores = -1, spillLoads = -1, registers = -1;
};

inline bool havePtxas() { return std::filesystem::exists(kPtxas); }

inline PtxasReport runPtxas(const std::string& ptx, const std::string& arch) {
  char path[] = "/tmp/tessera_ptxas_XXXXXX.ptx";
  int fd = mkstemps(path, 4);
  PtxasReport r;
  if (fd < 0) return r;
  {
    std::ofstream out(path);
    out << ptx;
  }
  close(fd);
  std::string cmd = std::string(kPtxas) + " -arch=" + arch + " -v " + path + " -o /dev/null 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) r.log += buf;
  r.status = p ? pclose(p) : -1;
  std::filesystem::remove(path);
  std::smatch m;
  if (std::regex_search(r.log, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    r.stackFrame = std::stoi(m[1]);
    r.spillStores = std::stoi(m[2]);
    r.spillLoads = std::stoi(m[3]);
  }
  if (std::regex_search(r.log, m, std::regex(R"(Used (\d+) registers)"))) r.registers = std::stoi(m[1]);
  return r;
}

// Compiles for sm_90a and sm_80 and checks that ptxas accepts both; with `clean`, also that ptxas reports no
// spills and no stack frame. Returns the sm_90a compilation.
inline Compiled compileAndAssemble(const std::string& text, bool clean = true, int numWarps = 4) {
  Compiled result;
  for (const char* arch : {"sm_90a", "sm_80"}) {
    Compiled c = compileIR(text, arch, numWarps);
    if (std::string(arch) == "sm_90a") result = c;
    if (!havePtxas()) continue;
    PtxasReport r = runPtxas(c.ptx, arch);
    EXPECT_EQ(r.status, 0) << "ptxas -arch=" << arch << " rejected the PTX:\n" << r.log << "\n" << c.ptx;
    if (clean) {
      EXPECT_EQ(r.spillStores, 0) << arch << "\n" << r.log;
      EXPECT_EQ(r.spillLoads, 0) << arch << "\n" << r.log;
      EXPECT_EQ(r.stackFrame, 0) << arch << "\n" << r.log;
    }
  }
  return result;
}

}  // namespace tessera::testing
