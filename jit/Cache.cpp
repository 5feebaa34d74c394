#include "jit/Cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "ir/Error.h"
#include "jit/Sha256.h"

namespace tessera::jit {

namespace {

constexpr const char* kMagic = "tessera-jit-cache v1";

// Length-prefixed fields, so that any byte (PTX, code objects) survives and truncation is detectable.
void putField(std::string& out, const std::string& field) {
  uint64_t n = field.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += field;
}

class FieldReader {
 public:
  explicit FieldReader(const std::string& data) : data_(data) {}
  bool next(std::string& field) {
    if (data_.size() - pos_ < 8) return false;
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += 8;
    if (data_.size() - pos_ < n) return false;
    field = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool nextInt(int64_t& v) {
    std::string s;
    if (!next(s) || s.empty()) return false;
    char* end = nullptr;
    v = std::strtoll(s.c_str(), &end, 10);
    return end == s.c_str() + s.size();
  }
  bool atEnd() const { return pos_ == data_.size(); }

 private:
  const std::string& data_;
  size_t pos_ = 0;
};

bool isHexKey(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string readFile(const std::filesystem::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  if (!ok) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string cacheKey(const CacheKeyInputs& in) {
  // Each input is length-prefixed so that no two different input tuples hash the same bytes.
  std::string bytes;
  putField(bytes, "tessera-cache-key v1");
  putField(bytes, in.irText);
  putField(bytes, in.target);
  putField(bytes, in.arch);
  putField(bytes, std::to_string(in.numWarps));
  putField(bytes, in.options);
  putField(bytes, in.compilerVersion);
  return sha256Hex(bytes);
}

std::string serializeCacheEntry(const std::string& key, const CompiledKernel& k) {
  std::string payload;
  for (const std::string* s : {&k.name, &k.target, &k.arch, &k.format}) putField(payload, *s);
  putField(payload, std::to_string(k.numWarps));
  putField(payload, std::to_string(k.warpSize));
  putField(payload, std::to_string(k.sharedBytes));
  putField(payload, k.binary);
  putField(payload, k.llvmIR);
  putField(payload, k.optimizedLLVMIR);
  putField(payload, std::to_string(k.irAfterPass.size()));
  for (const auto& [stage, text] : k.irAfterPass) {
    putField(payload, stage);
    putField(payload, text);
  }
  std::string header = std::string(kMagic) + "\nkey " + key + "\nsize " + std::to_string(payload.size()) +
                       "\nsha256 " + sha256Hex(payload) + "\n\n";
  return header + payload;
}

std::unique_ptr<CompiledKernel> parseCacheEntry(const std::string& key, const std::string& bytes) {
  // The header is compared byte for byte against what serializeCacheEntry would write for this payload.
  size_t headerEnd = bytes.find("\n\n");
  if (headerEnd == std::string::npos) return nullptr;
  std::string payload = bytes.substr(headerEnd + 2);
  std::string expectedHeader = std::string(kMagic) + "\nkey " + key + "\nsize " + std::to_string(payload.size()) +
                               "\nsha256 " + sha256Hex(payload);
  if (bytes.compare(0, headerEnd, expectedHeader) != 0) return nullptr;

  auto k = std::make_unique<CompiledKernel>();
  FieldReader r(payload);
  int64_t numWarps = 0, warpSize = 0, sharedBytes = 0, stages = 0;
  if (!r.next(k->name) || !r.next(k->target) || !r.next(k->arch) || !r.next(k->format) || !r.nextInt(numWarps) ||
      !r.nextInt(warpSize) || !r.nextInt(sharedBytes) || !r.next(k->binary) || !r.next(k->llvmIR) ||
      !r.next(k->optimizedLLVMIR) || !r.nextInt(stages) || stages < 0)
    return nullptr;
  k->numWarps = static_cast<int>(numWarps);
  k->warpSize = static_cast<int>(warpSize);
  k->sharedBytes = sharedBytes;
  for (int64_t i = 0; i < stages; ++i) {
    std::string stage, text;
    if (!r.next(stage) || !r.next(text)) return nullptr;
    k->irAfterPass.emplace_back(std::move(stage), std::move(text));
  }
  if (!r.atEnd()) return nullptr;
  return k;
}

KernelCache::KernelCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::filesystem::path KernelCache::defaultDirectory() {
  if (const char* dir = std::getenv("TESSERA_CACHE_DIR"); dir && *dir)
    return std::string(dir) == "off" ? std::filesystem::path() : std::filesystem::path(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "tessera";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "tessera";
  return {};  // nowhere sensible to write: memory only
}

KernelCache& KernelCache::global() {
  static KernelCache cache(defaultDirectory());
  return cache;
}

std::filesystem::path KernelCache::entryPath(const std::string& key) const {
  if (directory_.empty()) return {};
  return directory_ / (key + ".tkc");
}

KernelCache::Stats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.clear();
}

std::shared_ptr<const CompiledKernel> KernelCache::loadFromDisk(const std::string& key) {
  std::filesystem::path path = entryPath(key);
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return nullptr;
  bool ok = false;
  std::string bytes = readFile(path, ok);
  std::unique_ptr<CompiledKernel> kernel = ok ? parseCacheEntry(key, bytes) : nullptr;
  if (!kernel) {
    // Damaged (a crash mid-copy, a full disk, a stray edit): drop it so the recompiled entry replaces it.
    std::filesystem::remove(path, ec);
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.corruptEntries;
    return nullptr;
  }
  return std::shared_ptr<const CompiledKernel>(std::move(kernel));
}

void KernelCache::writeToDisk(const std::string& key, const CompiledKernel& kernel) {
  if (directory_.empty()) return;
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  // A unique temporary name per writer: concurrent processes compiling the same kernel each rename a complete
  // file into place, and readers only ever see a complete entry.
  std::filesystem::path tmp = directory_ / ("." + key + ".tmp." + std::to_string(::getpid()) + "." +
                                            std::to_string(counter.fetch_add(1)) + "." +
                                            std::to_string(std::random_device{}()));
  bool written = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << serializeCacheEntry(key, kernel);
    out.flush();
    written = static_cast<bool>(out);
  }
  if (written) std::filesystem::rename(tmp, entryPath(key), ec);
  if (!written || ec) {
    std::filesystem::remove(tmp, ec);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stats_.diskWriteFailures++ == 0)
      std::cerr << "tessera: warning: cannot write the JIT cache directory '" << directory_.string()
                << "'; kernels are cached in memory only (set TESSERA_CACHE_DIR to a writable directory)\n";
  }
}

std::shared_ptr<const CompiledKernel> KernelCache::lookup(const std::string& key) {
  if (!isHexKey(key)) throw Error("JIT cache: malformed key '" + key + "' (expected 64 lowercase hex digits)");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end()) {
      ++stats_.memoryHits;
      return it->second;
    }
  }
  std::shared_ptr<const CompiledKernel> kernel = loadFromDisk(key);
  if (!kernel) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.diskHits;
  memory_.emplace(key, kernel);
  return kernel;
}

std::shared_ptr<const CompiledKernel> KernelCache::insert(const std::string& key, const CompiledKernel& kernel) {
  if (!isHexKey(key)) throw Error("JIT cache: malformed key '" + key + "' (expected 64 lowercase hex digits)");
  writeToDisk(key, kernel);
  auto stored = std::make_shared<const CompiledKernel>(kernel);
  std::lock_guard<std::mutex> lock(mutex_);
  memory_[key] = stored;
  return stored;
}

std::shared_ptr<const CompiledKernel> KernelCache::getOrCompile(const std::string& key,
                                                                const std::function<CompiledKernel()>& compile) {
  if (auto hit = lookup(key)) return hit;
  CompiledKernel kernel = compile();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.compiles;
  }
  return insert(key, kernel);
}

}  // namespace tessera::jit
