// What the recording GPU runtimes (tests/fake_cuda, tests/fake_hip) share: appending a JSON line to the log file
// an environment variable names, the environment's choice of a failing entry point, and bytes in hex.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace tessera::fake {

// Appends `line` to the file $`logVariable` names; nothing when it is unset.
inline void appendToLog(const char* logVariable, const std::string& line) {
  static std::mutex mutex;
  const char* path = std::getenv(logVariable);
  if (!path || !*path) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

// Whether $`failVariable` names `call`, the entry point a test wants to fail.
inline bool failing(const char* failVariable, const char* call) {
  const char* fail = std::getenv(failVariable);
  return fail && std::strcmp(fail, call) == 0;
}

inline std::string hex(const void* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char b = static_cast<const unsigned char*>(bytes)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

}  // namespace tessera::fake
