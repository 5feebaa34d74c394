#include "jit/TuningCache.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>

#include "jit/Cache.h"
#include "jit/Sha256.h"

namespace tessera::jit {

namespace {
constexpr const char* kMagic = "tessera-autotune 1";

void warnOnce(const std::string& message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) std::cerr << "tessera: warning: autotune cache: " << message << " (kept in memory)\n";
}
}  // namespace

std::string tuningCacheKey(const TuningKeyInputs& in) {
  Sha256 h;
  // Length-prefixed fields, so that no two different inputs concatenate to the same bytes.
  for (const std::string* field : {&in.kernel, &in.configs, &in.keyValues, &in.device, &in.compilerVersion}) {
    h.update(std::to_string(field->size()) + ":");
    h.update(*field);
  }
  return h.hexDigest();
}

TuningCache::TuningCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::filesystem::path TuningCache::defaultDirectory() {
  std::filesystem::path kernels = KernelCache::defaultDirectory();
  return kernels.empty() ? kernels : kernels / "autotune";
}

std::filesystem::path TuningCache::entryPath(const std::string& key) const { return directory_ / (key + ".txt"); }

std::optional<TuningRecord> TuningCache::load(const std::string& key) const {
  if (directory_.empty()) return std::nullopt;
  std::ifstream in(entryPath(key));
  std::string magic, index;
  TuningRecord r;
  if (!std::getline(in, magic) || magic != kMagic || !std::getline(in, index) || !std::getline(in, r.config))
    return std::nullopt;
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9)
    return std::nullopt;
  r.index = std::stoul(index);
  return r;
}

void TuningCache::store(const std::string& key, const TuningRecord& record) const {
  if (directory_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return warnOnce("cannot create '" + directory_.string() + "': " + ec.message());
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path temp =
      directory_ / (key + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++));
  {
    std::ofstream out(temp, std::ios::trunc);
    out << kMagic << "\n" << record.index << "\n" << record.config << "\n";
    if (!out.flush()) {
      std::filesystem::remove(temp, ec);
      return warnOnce("cannot write '" + temp.string() + "'");
    }
  }
  std::filesystem::rename(temp, entryPath(key), ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    warnOnce("cannot rename into '" + entryPath(key).string() + "'");
  }
}

}  // namespace tessera::jit
