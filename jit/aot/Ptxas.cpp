#include "jit/aot/Ptxas.h"

#include <filesystem>

#include "backends/common/ExternalTool.h"
#include "ir/Error.h"

namespace tessera::jit::aot {

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
