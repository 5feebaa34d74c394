#include "jit/Cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>

#include "ir/Error.h"
#include "jit/Sha256.h"

namespace tessera::jit {

namespace {

constexpr const char* kMagic = "tessera-jit-cache v7";

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

// Temporary entries are named ".<key>.tmp.<writer>": hidden, and never mistaken for another program's files
// when the directory is shared (tessera.load() keeps its extensions there too).
constexpr const char* kTemporaryInfix = ".tmp.";
bool isTemporaryName(const std::string& name) {
  return name.size() > 65 + std::strlen(kTemporaryInfix) && name[0] == '.' && isHexKey(name.substr(1, 64)) &&
         name.compare(65, std::strlen(kTemporaryInfix), kTemporaryInfix) == 0;
}

std::string errnoText(const std::string& what, const std::filesystem::path& p) {
  return what + " '" + p.string() + "': " + std::strerror(errno);
}

// What an entry read from disk is: its bytes, and the file they came from (to delete that file only).
struct EntryFile {
  std::string bytes;
  dev_t device = 0;
  ino_t inode = 0;
};

// Reads a regular file whole; nullopt when there is none at `p`. Special files (a FIFO would block, a directory
// cannot be read) come back empty, so that they fail verification like any other damage.
std::optional<EntryFile> readEntryFile(const std::filesystem::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  EntryFile file;
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    file.device = st.st_dev;
    file.inode = st.st_ino;
    if (S_ISREG(st.st_mode)) {
      char buffer[1 << 16];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof buffer)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          file.bytes.clear();  // an I/O error mid-file: treat as damaged
          break;
        }
        file.bytes.append(buffer, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  return file;
}

// Deletes `p` if it is still the file that was read: a concurrent writer may have renamed a good entry over it.
void removeIfSameFile(const std::filesystem::path& p, const EntryFile& read) {
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0 && st.st_dev == read.device && st.st_ino == read.inode) ::unlink(p.c_str());
}

bool sameTargetAs(const CompiledKernel& k, const CacheKeyInputs& in) {
  return k.target == in.target && k.arch == in.arch && k.format == in.format && k.numWarps == in.numWarps;
}

std::string describeTarget(const std::string& target, const std::string& arch, const std::string& format, int numWarps) {
  return target + " " + arch + " (" + format + ", num_warps " + std::to_string(numWarps) + ")";
}

// One line per process, however many caches and entries fail: the disk cache is an optimization.
void warnOnce(const std::string& why) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  std::cerr << "tessera: warning: JIT cache bypassed: " << why
            << "; kernels are kept in memory only (set TESSERA_CACHE_DIR to a writable directory, or to 'off')\n";
}

}  // namespace

std::string cacheKey(const CacheKeyInputs& in) {
  // Each input is length-prefixed so that no two different input tuples hash the same bytes.
  std::string bytes;
  putField(bytes, "tessera-cache-key v1");
  putField(bytes, in.irText);
  putField(bytes, in.target);
  putField(bytes, in.arch);
  putField(bytes, in.format);
  putField(bytes, std::to_string(in.numWarps));
  putField(bytes, in.options);
  putField(bytes, in.compilerVersion);
  putField(bytes, in.toolchain);
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
  putField(payload, std::to_string(k.tensorMaps.size()));
  for (const auto& [param, swizzle] : k.tensorMaps) {
    putField(payload, std::to_string(param));
    putField(payload, std::to_string(swizzle));
  }
  putField(payload, k.persistent ? "1" : "0");
  putField(payload, std::to_string(k.producerWarps));
  putField(payload, std::to_string(k.consumerGroups));
  for (int d : k.clusterDims) putField(payload, std::to_string(d));
  putField(payload, std::to_string(k.dots.size()));
  for (const DotReport& d : k.dots)
    for (const std::string* s : {&d.location, &d.instruction, &d.note}) putField(payload, *s);
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
  int64_t maps = 0;
  if (!r.nextInt(maps) || maps < 0) return nullptr;
  for (int64_t i = 0; i < maps; ++i) {
    int64_t param = 0, swizzle = 0;
    if (!r.nextInt(param) || !r.nextInt(swizzle) || param < 0) return nullptr;
    k->tensorMaps.emplace_back(static_cast<unsigned>(param), static_cast<int>(swizzle));
  }
  int64_t persistent = 0;
  if (!r.nextInt(persistent) || (persistent != 0 && persistent != 1)) return nullptr;
  k->persistent = persistent == 1;
  int64_t producerWarps = 0;
  if (!r.nextInt(producerWarps) || producerWarps < 0) return nullptr;
  k->producerWarps = static_cast<int>(producerWarps);
  int64_t consumerGroups = 0;
  if (!r.nextInt(consumerGroups) || consumerGroups < 1) return nullptr;
  k->consumerGroups = static_cast<int>(consumerGroups);
  for (int& d : k->clusterDims) {
    int64_t programs = 0;
    if (!r.nextInt(programs) || programs < 1 || programs > 16) return nullptr;
    d = static_cast<int>(programs);
  }
  int64_t dots = 0;
  if (!r.nextInt(dots) || dots < 0) return nullptr;
  for (int64_t i = 0; i < dots; ++i) {
    DotReport d;
    if (!r.next(d.location) || !r.next(d.instruction) || !r.next(d.note)) return nullptr;
    k->dots.push_back(std::move(d));
  }
  if (!r.atEnd()) return nullptr;
  return k;
}

KernelCache::FileOps KernelCache::systemFileOps() {
  return {[](int fd, const char* data, size_t size) { return ::write(fd, data, size); }, ::fsync};
}

KernelCache::KernelCache(std::filesystem::path directory, FileOps ops)
    : directory_(std::move(directory)), ops_(std::move(ops)) {}

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

void KernelCache::countCorrupt() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.corruptEntries;
}

void KernelCache::removeStaleTemporaries() {
  std::error_code ec;
  auto now = std::filesystem::file_time_type::clock::now();
  int64_t removed = 0;
  for (std::filesystem::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!isTemporaryName(it->path().filename().string())) continue;
    std::error_code fileError;
    auto mtime = std::filesystem::last_write_time(it->path(), fileError);
    if (!fileError && now - mtime > std::chrono::minutes(kStaleTemporaryMinutes) &&
        std::filesystem::remove(it->path(), fileError))
      ++removed;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.staleTemporariesRemoved += removed;
}

std::shared_ptr<const CompiledKernel> KernelCache::loadFromDisk(const std::string& key, const CacheKeyInputs& inputs) {
  std::filesystem::path path = entryPath(key);
  if (path.empty()) return nullptr;
  std::call_once(swept_, [&] { removeStaleTemporaries(); });
  std::optional<EntryFile> file = readEntryFile(path);
  if (!file) return nullptr;
  std::unique_ptr<CompiledKernel> kernel = parseCacheEntry(key, file->bytes);
  // Damaged (a bad disk, a stray edit, a copy that stopped halfway) or made for something else than what was
  // asked (another arch filed under this key by a buggy or foreign writer): drop it and recompile.
  if (!kernel || !sameTargetAs(*kernel, inputs)) {
    removeIfSameFile(path, *file);
    countCorrupt();
    return nullptr;
  }
  return std::shared_ptr<const CompiledKernel>(std::move(kernel));
}

std::string KernelCache::prepareDirectory() {
  std::error_code ec;
  if (std::filesystem::is_symlink(directory_, ec) && !std::filesystem::exists(directory_, ec))
    return "'" + directory_.string() + "' is a symbolic link to '" +
           std::filesystem::read_symlink(directory_, ec).string() + "', which does not exist";
  std::filesystem::create_directories(directory_, ec);
  if (ec) return "cannot create the directory '" + directory_.string() + "': " + ec.message();
  std::call_once(swept_, [&] { removeStaleTemporaries(); });
  return "";
}

std::string KernelCache::writeToDisk(const std::string& key, const CompiledKernel& kernel) {
  if (std::string why = prepareDirectory(); !why.empty()) return why;
  static std::atomic<uint64_t> counter{0};
  // A unique temporary name per writer: concurrent processes compiling the same kernel each rename a complete
  // file into place, and readers only ever see a complete entry.
  std::filesystem::path tmp = directory_ / ("." + key + kTemporaryInfix + std::to_string(::getpid()) + "." +
                                            std::to_string(counter.fetch_add(1)) + "." +
                                            std::to_string(std::random_device{}()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errnoText("cannot create", tmp);
  const std::string bytes = serializeCacheEntry(key, kernel);
  std::string why;
  for (size_t done = 0; done < bytes.size() && why.empty();) {
    ssize_t n = ops_.write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = errnoText("cannot write", tmp);
    else if (n == 0) why = "cannot write '" + tmp.string() + "': no space written";
    else done += static_cast<size_t>(n);
  }
  // The data must be on disk before the name is: after a power loss, a renamed but unwritten file would be an
  // empty entry (verification would catch it, but every reader would pay a recompile).
  if (why.empty() && ops_.fsync(fd) != 0) why = errnoText("cannot sync", tmp);
  if (::close(fd) != 0 && why.empty()) why = errnoText("cannot close", tmp);  // NFS reports a full disk here
  if (why.empty() && ::rename(tmp.c_str(), entryPath(key).c_str()) != 0) why = errnoText("cannot rename", tmp);
  if (!why.empty()) ::unlink(tmp.c_str());
  return why;
}

std::shared_ptr<const CompiledKernel> KernelCache::lookup(const CacheKeyInputs& inputs) {
  std::string key = cacheKey(inputs);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end()) {
      ++stats_.memoryHits;
      return it->second;
    }
  }
  std::shared_ptr<const CompiledKernel> kernel = loadFromDisk(key, inputs);
  if (!kernel) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.diskHits;
  memory_.emplace(key, kernel);
  return kernel;
}

std::shared_ptr<const CompiledKernel> KernelCache::insert(const CacheKeyInputs& inputs, const CompiledKernel& kernel) {
  if (!sameTargetAs(kernel, inputs))
    throw Error("JIT cache: kernel '" + kernel.name + "' was compiled for " +
                describeTarget(kernel.target, kernel.arch, kernel.format, kernel.numWarps) + " but " +
                describeTarget(inputs.target, inputs.arch, inputs.format, inputs.numWarps) + " was asked");
  std::string key = cacheKey(inputs);
  if (!directory_.empty()) {
    if (std::string why = writeToDisk(key, kernel); !why.empty()) {
      warnOnce(why);
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.diskWriteFailures;
    }
  }
  auto stored = std::make_shared<const CompiledKernel>(kernel);
  std::lock_guard<std::mutex> lock(mutex_);
  memory_[key] = stored;
  return stored;
}

std::shared_ptr<const CompiledKernel> KernelCache::getOrCompile(const CacheKeyInputs& inputs,
                                                                const std::function<CompiledKernel()>& compile) {
  if (auto hit = lookup(inputs)) return hit;
  CompiledKernel kernel = compile();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.compiles;
  }
  return insert(inputs, kernel);
}

}  // namespace tessera::jit
