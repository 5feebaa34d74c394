// The JIT's compiled-kernel cache: an in-memory map in front of an on-disk directory shared by every process
// of the user (and by several Tessera versions, NFS clients or GPU architectures at once).
//
// Keys are SHA-256 digests of everything that determines the binary (cacheKey below). Disk entries are written
// to a private temporary file, fsync'ed, then renamed into place, so a reader sees a whole entry or none, even
// when the writer is killed or the machine loses power. Each carries a header with the payload's size and
// SHA-256, and records the target, arch, format and warp count it was compiled for: an entry that is truncated,
// corrupt, filed under the wrong key or compiled for something other than what was asked is deleted and
// recompiled, never trusted. Temporary files that a killed writer left behind are deleted once they are old.
//
// The disk cache is an optimization: when the directory cannot be used (read-only, a dangling symlink, a full
// disk) the kernel is still compiled and returned, kept in memory, and the process warns once on stderr.
//
// Directory: TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera, created on first write.
// TESSERA_CACHE_DIR=off keeps the cache in memory only.
#pragma once

#include <sys/types.h>

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
  std::string format;           // "ptx": the artifact the target emits
  int numWarps = 4;
  std::string options;          // every other compile option, spelled canonically ("fast_math=1")
  std::string compilerVersion;  // jit::compilerVersion() in production; tests vary it
  std::string toolchain;        // Target::toolchainIdentity(): LLVM, libdevice, ld.lld builds
};

// 64 lowercase hex characters. Changing any input changes the key.
std::string cacheKey(const CacheKeyInputs& inputs);

class KernelCache {
 public:
  struct Stats {
    int64_t memoryHits = 0;
    int64_t diskHits = 0;
    int64_t compiles = 0;
    int64_t corruptEntries = 0;     // entries found damaged or for another target/arch, deleted and recompiled
    int64_t diskWriteFailures = 0;  // entries that could not be written (the kernel was still returned)
    int64_t staleTemporariesRemoved = 0;  // leftovers of writers killed mid-write
  };

  // The writer's file-system calls. Tests replace them to inject a full disk (ENOSPC), short writes, a failing
  // fsync, or a writer that stops halfway and is then killed.
  struct FileOps {
    std::function<ssize_t(int fd, const char* data, size_t size)> write;
    std::function<int(int fd)> fsync;
  };
  static FileOps systemFileOps();

  // `directory` empty: memory only. Nothing touches the disk before the first lookup or insert.
  explicit KernelCache(std::filesystem::path directory, FileOps ops = systemFileOps());

  // The directory the environment asks for (see above); empty when TESSERA_CACHE_DIR=off.
  static std::filesystem::path defaultDirectory();
  // The process-wide cache over defaultDirectory().
  static KernelCache& global();

  // The kernel for `inputs`: from memory, else from disk (verified), else compile() (then stored in both).
  // Throws tessera::Error when compile() returns a kernel for another target, arch, format or warp count.
  std::shared_ptr<const CompiledKernel> getOrCompile(const CacheKeyInputs& inputs,
                                                     const std::function<CompiledKernel()>& compile);
  // Memory, then disk; null when neither holds a valid entry for exactly what `inputs` asks.
  std::shared_ptr<const CompiledKernel> lookup(const CacheKeyInputs& inputs);
  std::shared_ptr<const CompiledKernel> insert(const CacheKeyInputs& inputs, const CompiledKernel& kernel);

  void clearMemory();  // forget the in-memory entries (the disk keeps its own)
  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path entryPath(const std::string& key) const;  // where `key` lives on disk
  Stats stats() const;

  // Temporary files older than this are a killed writer's leftovers (a live writer renames within seconds; the
  // margin covers clock skew between NFS clients and server).
  static constexpr int kStaleTemporaryMinutes = 30;

 private:
  std::shared_ptr<const CompiledKernel> loadFromDisk(const std::string& key, const CacheKeyInputs& inputs);
  // Empty on success, else why the entry could not be written.
  std::string writeToDisk(const std::string& key, const CompiledKernel& kernel);
  std::string prepareDirectory();
  void removeStaleTemporaries();
  void countCorrupt();

  std::filesystem::path directory_;
  FileOps ops_;
  std::once_flag swept_;  // stale temporaries are looked for once per cache, on first disk access
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CompiledKernel>> memory_;
  Stats stats_;
};

// The on-disk entry format, exposed for tests: serialize, then parse back. parseCacheEntry returns null for
// anything malformed (bad magic, wrong key, size or checksum mismatch, truncated fields).
std::string serializeCacheEntry(const std::string& key, const CompiledKernel& kernel);
std::unique_ptr<CompiledKernel> parseCacheEntry(const std::string& key, const std::string& bytes);

}  // namespace tessera::jit
