#include "backends/common/Toolchain.h"

#include <dlfcn.h>
#include <llvm-c/Core.h>

#include <filesystem>

namespace tessera::backends {

std::string fileIdentity(const std::string& path) {
  if (path.empty()) return "none";
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return path + " (missing)";
  auto mtime = std::filesystem::last_write_time(path, ec).time_since_epoch().count();
  if (ec) return path + " (missing)";
  return path + " " + std::to_string(size) + "-" + std::to_string(mtime);
}

const std::string& llvmIdentity() {
  static const std::string identity = [] {
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);  // compiled into the library itself, not taken from our headers
    std::string holder = "unknown";
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&LLVMGetVersion), &info) && info.dli_fname) {
      std::error_code ec;
      // A statically linked LLVM lives in the executable, which dladdr may name only by argv[0].
      std::filesystem::path named(info.dli_fname);
      holder = named.is_absolute() ? named.string() : std::filesystem::canonical("/proc/self/exe", ec).string();
    }
    return "LLVM " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) + " " +
           fileIdentity(holder);
  }();
  return identity;
}

}  // namespace tessera::backends
