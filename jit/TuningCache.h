// The autotuner's winners on disk, one small text file per tuning key, next to the compiled-kernel cache
// (<KernelCache::defaultDirectory()>/autotune/<sha256>.txt), so that a second process skips benchmarking. The key
// hashes everything the winner depends on: the kernel and its signature, the config list, the launch's key
// values, the GPU (name, driver) and the compiler (jit::compilerVersion(): Tessera's version and build). Files are
// written to a temporary name and renamed, so readers see whole entries; a malformed entry reads as absent.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace tessera::jit {

struct TuningRecord {
  size_t index = 0;    // the winner's position in the config list
  std::string config;  // its TuneConfig::str(), checked against the list on load
  bool operator==(const TuningRecord&) const = default;
};

struct TuningKeyInputs {
  std::string kernel;      // name and parameter types
  std::string configs;     // every config's str(), in order
  std::string keyValues;   // "M=1024, N=1024, K=512"
  std::string device;      // "NVIDIA H100 80GB HBM3, CUDA driver 12040, sm_90a"
  std::string compilerVersion;
};
std::string tuningCacheKey(const TuningKeyInputs& inputs);  // 64 hex characters

class TuningCache {
 public:
  // `directory` empty: nothing is read or written.
  explicit TuningCache(std::filesystem::path directory);
  // <KernelCache::defaultDirectory()>/autotune; empty when TESSERA_CACHE_DIR=off.
  static std::filesystem::path defaultDirectory();

  std::optional<TuningRecord> load(const std::string& key) const;
  // Best effort, like the kernel cache: a directory that cannot be written costs a warning on stderr (once per
  // process), never the launch.
  void store(const std::string& key, const TuningRecord& record) const;
  std::filesystem::path entryPath(const std::string& key) const;
  const std::filesystem::path& directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
};

}  // namespace tessera::jit
