#include "jit/aot/Ptxas.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "backends/common/ExternalTool.h"
#include "ir/Error.h"

namespace tessera::jit::aot {

namespace {
bool isExecutableFile(const std::string& path) {
  return !path.empty() && std::filesystem::is_regular_file(path) && ::access(path.c_str(), X_OK) == 0;
}
}  // namespace

std::optional<std::string> findPtxas(const std::string& explicitPath) {
  if (!explicitPath.empty()) {
    if (!isExecutableFile(explicitPath)) throw Error("aot: ptxas '" + explicitPath + "' is not an executable file");
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

std::string assembleCubin(const std::string& ptxas, const std::string& ptx, const std::string& arch,
                          const std::string& kernelName) {
  backends::TempDir dir("tessera_cubin");
  const std::filesystem::path input = dir.path() / "kernel.ptx", output = dir.path() / "kernel.cubin";
  backends::writeFile(input, ptx);
  backends::ToolResult r =
      backends::runTool({ptxas, "-arch=" + arch, "-o", output.string(), input.string()}, dir.path() / "ptxas.log");
  if (!r.exitedWithZero || !std::filesystem::exists(output))
    throw Error("aot: ptxas -arch=" + arch + " failed for kernel '" + kernelName + "':\n" + r.output);
  return backends::readFile(output);
}

}  // namespace tessera::jit::aot
