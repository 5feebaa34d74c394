// Running a toolchain program (ld.lld for AMDGPU code objects, ptxas for ahead-of-time cubins) on files in a
// private temporary directory, with its output captured for the error message.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::backends {

// A private temporary directory, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);  // e.g. "tessera_hsaco"
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string readFile(const std::filesystem::path& p);
void writeFile(const std::filesystem::path& p, const std::string& bytes);  // throws tessera::Error on failure

struct ToolResult {
  bool exitedWithZero = false;
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (a path, not searched on $PATH) with argv, stdout and stderr going to `logFile`. Throws
// tessera::Error when it cannot be started.
ToolResult runTool(const std::vector<std::string>& argv, const std::filesystem::path& logFile);

}  // namespace tessera::backends
