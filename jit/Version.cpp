#include "jit/Version.h"

#include <dlfcn.h>

#include <filesystem>

#include "backends/common/Toolchain.h"

#ifndef TESSERA_GIT_DESCRIBE
#define TESSERA_GIT_DESCRIBE "unknown"
#endif

namespace tessera::jit {

namespace {
constexpr const char* kVersion = TESSERA_VERSION;  // project(VERSION), passed by jit/CMakeLists.txt

// Identifies the binary this function lives in, so that a rebuilt compiler never trusts an older one's cache.
std::string buildIdentity() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&buildIdentity), &info) || !info.dli_fname) return "unknown-binary";
  std::error_code ec;
  std::filesystem::path binary = std::filesystem::canonical("/proc/self/exe", ec);
  // dladdr names the shared library when the compiler is one; for the main executable it may give argv[0].
  std::filesystem::path named(info.dli_fname);
  if (named.is_absolute() && std::filesystem::exists(named, ec)) binary = named;
  return backends::fileIdentity(binary.string());
}
}  // namespace

const std::string& compilerVersion() {
  static const std::string version =
      std::string("tessera ") + kVersion + " (" + TESSERA_GIT_DESCRIBE + ") build " + buildIdentity();
  return version;
}

}  // namespace tessera::jit
