#include "jit/PtxasUsage.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "backends/common/ExternalTool.h"
#include "ir/Error.h"

namespace tessera::jit {

namespace {
bool isExecutableFile(const std::string& path) {
  return !path.empty() && std::filesystem::is_regular_file(path) && ::access(path.c_str(), X_OK) == 0;
}

int intAfter(const std::string& log, const std::regex& pattern, int group = 1) {
  std::smatch m;
  return std::regex_search(log, m, pattern) ? std::stoi(m[group]) : 0;
}
}  // namespace

std::optional<std::string> findPtxas(const std::string& explicitPath) {
  if (!explicitPath.empty()) {
    if (!isExecutableFile(explicitPath)) throw Error("ptxas '" + explicitPath + "' is not an executable file");
    return explicitPath;
  }
  if (const char* env = std::getenv("TESSERA_PTXAS"); env && isExecutableFile(env)) return std::string(env);
  if (isExecutableFile("/usr/local/cuda/bin/ptxas")) return std::string("/usr/local/cuda/bin/ptxas");
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (std::string candidate = dir + "/ptxas"; isExecutableFile(candidate)) return candidate;
  }
  return std::nullopt;
}

PtxasUsage parsePtxasVerbose(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(Used (\d+) registers)")))
    throw Error("ptxas -v printed no register count:\n" + log);
  PtxasUsage u;
  u.registers = std::stoi(m[1]);
  const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  u.stackBytes = intAfter(log, frame, 1);
  u.spillStoreBytes = intAfter(log, frame, 2);
  u.spillLoadBytes = intAfter(log, frame, 3);
  u.staticSharedBytes = intAfter(log, std::regex(R"((\d+) bytes smem)"));
  return u;
}

PtxasUsage ptxasUsage(const std::string& ptxas, const std::string& ptx, const std::string& arch,
                      const std::string& kernelName) {
  backends::TempDir dir("tessera_ptxas_v");
  const std::filesystem::path input = dir.path() / "kernel.ptx";
  backends::writeFile(input, ptx);
  const std::filesystem::path cubin = dir.path() / "kernel.cubin";
  backends::ToolResult r = backends::runTool({ptxas, "-v", "-arch=" + arch, "-o", cubin.string(), input.string()},
                                             dir.path() / "ptxas.log");
  if (!r.exitedWithZero)
    throw Error("ptxas -v -arch=" + arch + " failed for kernel '" + kernelName + "':\n" + r.output);
  return parsePtxasVerbose(r.output);
}

}  // namespace tessera::jit
