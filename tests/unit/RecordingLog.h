// The log a recording GPU runtime (tests/fake_cuda, tests/fake_hip) writes, one JSON line per call, to the file
// its TESSERA_FAKE_*_LOG variable names: set for the lifetime of a RecordingLog, read back by call name.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace tessera::fake {

class RecordingLog {
 public:
  explicit RecordingLog(const char* variable)
      : variable_(variable),
        path_(std::filesystem::temp_directory_path() / (std::string(variable) + "-" + std::to_string(getpid()))) {
    std::filesystem::remove(path_);
    setenv(variable_, path_.c_str(), 1);
  }
  ~RecordingLog() {
    unsetenv(variable_);
    std::filesystem::remove(path_);
  }
  RecordingLog(const RecordingLog&) = delete;
  RecordingLog& operator=(const RecordingLog&) = delete;

  // The lines of `call` ("cuLaunchKernel", "hipModuleLoadData"...), in order.
  std::vector<std::string> calls(const std::string& call) const {
    std::vector<std::string> lines;
    std::ifstream in(path_);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("{\"call\": \"" + call + "\"", 0) == 0) lines.push_back(line);
    return lines;
  }

 private:
  const char* variable_;
  std::filesystem::path path_;
};

// The low `bytes` bytes of `value`, little-endian, in hex: how the logs print launch parameters.
inline std::string littleEndianHex(uint64_t value, int bytes = 8) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < bytes; ++i, value >>= 8) {
    out += digits[(value >> 4) & 15];
    out += digits[value & 15];
  }
  return out;
}

}  // namespace tessera::fake
