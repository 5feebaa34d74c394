// The JIT's compiled-kernel cache: an in-memory map in front of an on-disk directory shared by every process
// of the user.
//
// Keys are SHA-256 digests of everything that determines the binary (cacheKey below). Disk entries are written
// atomically (temporary file + rename) and carry a header with the payload's size and SHA-256: an entry that
// is truncated, corrupt, or filed under the wrong key is deleted and recompiled, never trusted. The disk cache
// is an optimization: when the directory cannot be written, compiling still works (stats() counts failures).
//
// Directory: TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera. TESSERA_CACHE_DIR=off
// keeps the cache in memory only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "jit/CompiledKernel.h"

namespace tessera::jit {

struct CacheKeyInputs {
  std::string irText;           // the printed, specialized tile IR (argument attributes included)
  std::string target;           // "nvptx"
  std::string arch;             // "sm_90a"
  int numWarps = 4;
  std::string options;          // every other compile option, spelled canonically ("fast_math=1")
  std::string compilerVersion;  // jit::compilerVersion() in production; tests vary it
};

// 64 lowercase hex characters. Changing any input changes the key.
std::string cacheKey(const CacheKeyInputs& inputs);

class KernelCache {
 public:
  struct Stats {
    int64_t memoryHits = 0;
    int64_t diskHits = 0;
    int64_t compiles = 0;
    int64_t corruptEntries = 0;     // entries found damaged, deleted and recompiled
    int64_t diskWriteFailures = 0;  // entries that could not be written (the kernel was still returned)
  };

  // `directory` empty: memory only.
  explicit KernelCache(std::filesystem::path directory);

  // The directory the environment asks for (see above); empty when TESSERA_CACHE_DIR=off.
  static std::filesystem::path defaultDirectory();
  // The process-wide cache over defaultDirectory().
  static KernelCache& global();

  // The kernel for `key`: from memory, else from disk (verified), else compile() (then stored in both).
  std::shared_ptr<const CompiledKernel> getOrCompile(const std::string& key,
                                                     const std::function<CompiledKernel()>& compile);
  // Memory, then disk; null when neither holds a valid entry.
  std::shared_ptr<const CompiledKernel> lookup(const std::string& key);
  std::shared_ptr<const CompiledKernel> insert(const std::string& key, const CompiledKernel& kernel);

  void clearMemory();  // forget the in-memory entries (the disk keeps its own)
  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path entryPath(const std::string& key) const;  // where `key` lives on disk
  Stats stats() const;

 private:
  std::shared_ptr<const CompiledKernel> loadFromDisk(const std::string& key);
  void writeToDisk(const std::string& key, const CompiledKernel& kernel);

  std::filesystem::path directory_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CompiledKernel>> memory_;
  Stats stats_;
};

// The on-disk entry format, exposed for tests: serialize, then parse back. parseCacheEntry returns null for
// anything malformed (bad magic, wrong key, size or checksum mismatch, truncated fields).
std::string serializeCacheEntry(const std::string& key, const CompiledKernel& kernel);
std::unique_ptr<CompiledKernel> parseCacheEntry(const std::string& key, const std::string& bytes);

}  // namespace tessera::jit
