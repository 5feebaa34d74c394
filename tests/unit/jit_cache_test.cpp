// The compiled-kernel cache: key sensitivity, memory hits, disk persistence across cache instances (as across
// processes), atomic writes, and surviving what shared cache folders go through: damaged entries, entries for
// another arch or toolchain, read-only, missing and symlinked folders, a full disk, eight processes at once and
// a writer killed mid-write (the last two run jit_cache_worker as real processes).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backends/Target.h"
#include "ir/Error.h"
#include "jit/Cache.h"
#include "JitCacheWorkerEntries.h"

namespace fs = std::filesystem;
using namespace tessera::jit;
using tessera::jit::testing::workerInputs;

namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tessera-jit-cache-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

CacheKeyInputs sampleInputs() {
  CacheKeyInputs in;
  in.irText = "func @k(%x: ptr<f32> {divisibility = 16}) {\n  return\n}\n";
  in.target = "nvptx";
  in.arch = "sm_90a";
  in.format = "ptx";
  in.numWarps = 4;
  in.options = "fast_math=1";
  in.compilerVersion = "tessera test";
  in.toolchain = "LLVM 19.1.7 /usr/lib/libLLVM.so.19.1 1-2";
  return in;
}

CompiledKernel sampleKernel(const std::string& tag = "a", int numWarps = 4) {
  CompiledKernel k;
  k.name = "k";
  k.target = "nvptx";
  k.arch = "sm_90a";
  k.format = "ptx";
  k.numWarps = numWarps;
  k.warpSize = 32;
  k.sharedBytes = 65536;
  k.binary = "//\n.version 8.0\n.target sm_90a\n" + tag + std::string("\0binary\xff", 8);
  k.llvmIR = "define void @k() { ret void }";
  k.optimizedLLVMIR = "define void @k() #0 { ret void }";
  k.irAfterPass = {{"input", "func @k() {}"}, {"cse", "func @k() { }"}};
  k.persistent = true;  // not the default: a round trip that dropped it would differ
  k.producerWarps = 4;
  k.consumerGroups = 2;  // neither is this
  k.dots = {{"matmul.h:76:14", "mma.sync m16n8k16 f16", "not wgmma: wgmma needs whole warpgroups"},
            {"", "fma", ""}};  // empty fields survive too
  return k;
}

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void writeAll(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

// The folder holds exactly `count` entries, each complete and filed under its own key, and nothing else.
void expectOnlyValidEntries(const fs::path& dir, int count) {
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    ASSERT_EQ(e.path().extension(), ".tkc") << "stray file " << e.path();
    EXPECT_NE(parseCacheEntry(name.substr(0, name.size() - 4), readAll(e.path())), nullptr) << "invalid " << name;
    ++entries;
  }
  EXPECT_EQ(entries, count);
}

// A jit_cache_worker process, its stdout and stderr going to files under `logs`.
class Worker {
 public:
  Worker(const std::vector<std::string>& args, const fs::path& logs) {
    static int serial = 0;
    out_ = logs / ("worker" + std::to_string(serial) + ".out");
    err_ = logs / ("worker" + std::to_string(serial++) + ".err");
    std::vector<std::string> argv = {JIT_CACHE_WORKER};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      std::vector<char*> cargv;
      for (std::string& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
  }
  ~Worker() {
    if (pid_ > 0) kill();
  }
  // The exit status (128 + signal when killed by one).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void kill() {
    ::kill(pid_, SIGKILL);
    wait();
  }
  bool waitForOutput(const std::string& text) {
    for (int i = 0; i < 60000; ++i) {
      if (stdoutText().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  std::string stdoutText() const { return readAll(out_); }
  std::string stderrText() const { return readAll(err_); }

 private:
  pid_t pid_ = -1;
  fs::path out_, err_;
};

// A worker's output without its final "stats ..." line, and the numbers on that line.
std::string withoutStats(const std::string& out) { return out.substr(0, out.rfind("stats ")); }
std::vector<int64_t> statsOf(const std::string& out) {
  std::istringstream line(out.substr(out.rfind("stats ") + 6));
  std::vector<int64_t> numbers(3);
  for (int64_t& n : numbers) line >> n;
  return numbers;
}

// Counts compiles so tests can tell a hit from a recompilation.
struct CountingCompiler {
  int calls = 0;
  std::string tag = "a";
  CompiledKernel operator()() {
    ++calls;
    return sampleKernel(tag);
  }
};

}  // namespace

TEST(JitCacheKey, IsHexDigestAndDeterministic) {
  std::string key = cacheKey(sampleInputs());
  ASSERT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(cacheKey(sampleInputs()), key);
}

TEST(JitCacheKey, EveryInputChangesTheKey) {
  const std::string base = cacheKey(sampleInputs());
  auto changed = [&](auto mutate) {
    CacheKeyInputs in = sampleInputs();
    mutate(in);
    return cacheKey(in);
  };
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.irText += " "; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.irText = "func @k(%x: ptr<f32>) {\n  return\n}\n"; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.target = "amdgpu"; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.arch = "sm_80"; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.numWarps = 8; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.options = "fast_math=0"; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.compilerVersion = "tessera test 2"; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.format = "cubin"; }), base);
  EXPECT_NE(changed([](CacheKeyInputs& i) { i.toolchain = "LLVM 19.1.8 /usr/lib/libLLVM.so.19.1 1-2"; }), base);
  // Fields are length-prefixed: moving text from one field to the next is a different key.
  EXPECT_NE(changed([](CacheKeyInputs& i) {
              i.target = "nvpt";
              i.arch = "xsm_90a";
            }),
            base);
}

TEST(JitCache, MemoryHitDoesNotRecompile) {
  KernelCache cache{fs::path()};  // memory only
  CountingCompiler compiler;
  auto first = cache.getOrCompile(sampleInputs(), std::ref(compiler));
  auto second = cache.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(*first, sampleKernel());
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().memoryHits, 1);
  EXPECT_TRUE(cache.entryPath(cacheKey(sampleInputs())).empty());
}

TEST(JitCache, DifferentKeysCompileSeparately) {
  KernelCache cache{fs::path()};
  CountingCompiler compiler;
  CacheKeyInputs other = sampleInputs();
  other.options = "fast_math=0";
  cache.getOrCompile(sampleInputs(), std::ref(compiler));
  cache.getOrCompile(other, std::ref(compiler));
  EXPECT_EQ(compiler.calls, 2);
}

TEST(JitCache, PersistsOnDiskAcrossCacheInstances) {
  TempDir dir;
  std::string key = cacheKey(sampleInputs());
  {
    KernelCache writer(dir.path());
    CountingCompiler compiler;
    writer.getOrCompile(sampleInputs(), std::ref(compiler));
    EXPECT_EQ(compiler.calls, 1);
  }
  ASSERT_TRUE(fs::exists(dir.path() / (key + ".tkc")));
  // A new cache (a new process, in effect) finds the entry without compiling.
  KernelCache reader(dir.path());
  CountingCompiler compiler;
  auto k = reader.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(compiler.calls, 0);
  EXPECT_EQ(*k, sampleKernel());
  EXPECT_EQ(reader.stats().diskHits, 1);
  // The second lookup is served from memory.
  reader.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(reader.stats().memoryHits, 1);
  EXPECT_EQ(compiler.calls, 0);
}

TEST(JitCache, WritesAtomicallyLeavingNoTemporaryFiles) {
  TempDir dir;
  KernelCache cache(dir.path());
  for (int warps : {1, 2, 4, 8}) {
    CacheKeyInputs in = sampleInputs();
    in.numWarps = warps;
    cache.insert(in, sampleKernel("a", warps));
  }
  expectOnlyValidEntries(dir.path(), 4);
}

TEST(JitCache, CorruptEntryIsDeletedAndRecompiled) {
  TempDir dir;
  KernelCache(dir.path()).insert(sampleInputs(), sampleKernel("original"));
  fs::path entry = dir.path() / (cacheKey(sampleInputs()) + ".tkc");
  std::string bytes = readAll(entry);
  bytes[bytes.size() - 20] ^= 0x5a;  // flip bits inside the payload; the size stays the same
  writeAll(entry, bytes);

  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookup(sampleInputs()), nullptr);  // never trusted
  EXPECT_EQ(cache.stats().corruptEntries, 1);
  EXPECT_FALSE(fs::exists(entry)) << "the corrupt entry must be deleted";

  CountingCompiler compiler{0, "recompiled"};
  auto k = cache.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(*k, sampleKernel("recompiled"));
  // The rewritten entry is valid for the next process.
  KernelCache next(dir.path());
  ASSERT_NE(next.lookup(sampleInputs()), nullptr);
  EXPECT_EQ(*next.lookup(sampleInputs()), sampleKernel("recompiled"));
}

TEST(JitCache, TruncatedEntryIsRecompiled) {
  TempDir dir;
  fs::path entry = dir.path() / (cacheKey(sampleInputs()) + ".tkc");
  for (double fraction : {0.0, 0.1, 0.5, 0.99}) {
    KernelCache(dir.path()).insert(sampleInputs(), sampleKernel());
    std::string bytes = readAll(entry);
    writeAll(entry, bytes.substr(0, static_cast<size_t>(bytes.size() * fraction)));
    KernelCache cache(dir.path());
    CountingCompiler compiler;
    cache.getOrCompile(sampleInputs(), std::ref(compiler));
    EXPECT_EQ(compiler.calls, 1) << "truncated to " << fraction;
    EXPECT_EQ(cache.stats().corruptEntries, 1) << "truncated to " << fraction;
  }
}

// What a crash on a file system without data journaling leaves: the right size, all zero bytes.
TEST(JitCache, ZeroedEntryIsRecompiled) {
  TempDir dir;
  fs::path entry = dir.path() / (cacheKey(sampleInputs()) + ".tkc");
  KernelCache(dir.path()).insert(sampleInputs(), sampleKernel());
  const std::string good = readAll(entry);
  const size_t headerEnd = good.find("\n\n") + 2;
  std::string whole(good.size(), '\0');
  std::string header = std::string(headerEnd, '\0') + good.substr(headerEnd);
  std::string payload = good.substr(0, headerEnd) + std::string(good.size() - headerEnd, '\0');
  for (const std::string* damaged : {&whole, &header, &payload}) {
    writeAll(entry, *damaged);
    KernelCache cache(dir.path());
    CountingCompiler compiler;
    EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
    EXPECT_EQ(compiler.calls, 1);
    EXPECT_EQ(cache.stats().corruptEntries, 1);
  }
}

TEST(JitCache, EntryFiledUnderTheWrongKeyIsRejected) {
  TempDir dir;
  CacheKeyInputs other = sampleInputs();
  other.irText += "\n";
  KernelCache(dir.path()).insert(sampleInputs(), sampleKernel());
  fs::copy_file(dir.path() / (cacheKey(sampleInputs()) + ".tkc"), dir.path() / (cacheKey(other) + ".tkc"));
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookup(other), nullptr);
  EXPECT_EQ(cache.stats().corruptEntries, 1);
  EXPECT_NE(cache.lookup(sampleInputs()), nullptr);
}

// An intact entry under the right key that records another target, arch, format or warp count (written by a
// buggy or foreign Tessera) is never returned: Triton's users were handed binaries for the wrong GPU this way.
TEST(JitCache, EntryCompiledForSomethingElseIsNeverReturned) {
  TempDir dir;
  const std::string key = cacheKey(sampleInputs());
  std::vector<CompiledKernel> impostors(4, sampleKernel());
  impostors[0].arch = "sm_80";
  impostors[1].target = "amdgpu";
  impostors[2].format = "hsaco";
  impostors[3].numWarps = 8;
  for (const CompiledKernel& impostor : impostors) {
    writeAll(dir.path() / (key + ".tkc"), serializeCacheEntry(key, impostor));
    ASSERT_NE(parseCacheEntry(key, readAll(dir.path() / (key + ".tkc"))), nullptr);  // intact, checksum and all
    KernelCache cache(dir.path());
    EXPECT_EQ(cache.lookup(sampleInputs()), nullptr) << impostor.target << " " << impostor.arch;
    EXPECT_EQ(cache.stats().corruptEntries, 1);
    CountingCompiler compiler;
    EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
    EXPECT_EQ(compiler.calls, 1);
  }
}

TEST(JitCache, CompilerResultForAnotherArchIsAnErrorAndNotStored) {
  TempDir dir;
  KernelCache cache(dir.path());
  try {
    cache.getOrCompile(sampleInputs(), [] {
      CompiledKernel k = sampleKernel();
      k.arch = "sm_80";
      return k;
    });
    FAIL() << "expected an error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiled for nvptx sm_80 (ptx, num_warps 4) but nvptx sm_90a"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(cache.entryPath(cacheKey(sampleInputs()))));
  EXPECT_EQ(cache.lookup(sampleInputs()), nullptr);
}

// Another Tessera build, LLVM or libdevice/ld.lld uses other keys: its entries are neither used nor deleted,
// so versions sharing one folder keep their own.
TEST(JitCache, EntriesOfAnotherVersionOrToolchainAreIgnoredAndKept) {
  TempDir dir;
  CacheKeyInputs older = sampleInputs(), otherLLVM = sampleInputs();
  older.compilerVersion = "tessera 0.2.0";
  otherLLVM.toolchain = "LLVM 18.1.8 /usr/lib/libLLVM-18.so 1-2";
  KernelCache(dir.path()).insert(older, sampleKernel("older"));
  KernelCache(dir.path()).insert(otherLLVM, sampleKernel("llvm18"));
  KernelCache cache(dir.path());
  CountingCompiler compiler{0, "current"};
  EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel("current"));
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(cache.stats().corruptEntries, 0);
  EXPECT_EQ(*KernelCache(dir.path()).lookup(older), sampleKernel("older"));
  EXPECT_EQ(*KernelCache(dir.path()).lookup(otherLLVM), sampleKernel("llvm18"));
}

// Each target names the tools that shape its artifact, so upgrading LLVM, libdevice or ld.lld changes the key.
TEST(JitCacheKey, TargetsNameTheirToolchain) {
  std::string nvptx = tessera::backends::createTarget("nvptx")->toolchainIdentity();
  std::string amdgpu = tessera::backends::createTarget("amdgpu")->toolchainIdentity();
  EXPECT_EQ(nvptx.rfind("LLVM 19.", 0), 0u) << nvptx;
  EXPECT_NE(nvptx.find("; libdevice "), std::string::npos) << nvptx;
  EXPECT_EQ(amdgpu.rfind("LLVM 19.", 0), 0u) << amdgpu;
  EXPECT_NE(amdgpu.find("; ld.lld "), std::string::npos) << amdgpu;
}

TEST(JitCacheKey, FileIdentityChangesWhenTheFileDoes) {
  TempDir dir;
  fs::path tool = dir.path() / "tool";
  EXPECT_EQ(tessera::backends::fileIdentity(tool.string()), tool.string() + " (missing)");
  EXPECT_EQ(tessera::backends::fileIdentity(""), "none");
  writeAll(tool, "version 1");
  std::string before = tessera::backends::fileIdentity(tool.string());
  writeAll(tool, "version 1.1");
  EXPECT_NE(tessera::backends::fileIdentity(tool.string()), before);
}

// A FIFO would block a plain read forever; a directory cannot be read. Neither is taken for an entry.
TEST(JitCache, SpecialFilesAtTheEntryPathAreNotRead) {
  TempDir dir;
  fs::path entry = dir.path() / (cacheKey(sampleInputs()) + ".tkc");
  ASSERT_EQ(::mkfifo(entry.c_str(), 0644), 0);
  KernelCache cache(dir.path());
  CountingCompiler compiler;
  EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
  EXPECT_EQ(cache.stats().corruptEntries, 1);
  EXPECT_TRUE(fs::is_regular_file(entry)) << "the FIFO is replaced by the entry";

  fs::remove(entry);
  fs::create_directory(entry);
  fs::create_directory(entry / "occupied");  // cannot be deleted or renamed over
  KernelCache blocked(dir.path());
  EXPECT_EQ(*blocked.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
  EXPECT_EQ(blocked.stats().diskWriteFailures, 1);
}

TEST(JitCache, PathUnderAFileStillCompiles) {
  TempDir dir;
  fs::path notADirectory = dir.path() / "file";
  writeAll(notADirectory, "x");
  KernelCache cache(notADirectory / "cache");
  CountingCompiler compiler;
  auto k = cache.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(*k, sampleKernel());
  EXPECT_EQ(cache.stats().diskWriteFailures, 1);
  cache.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);  // the memory cache still works
}

TEST(JitCache, MissingDirectoryIsCreatedOnFirstWrite) {
  TempDir dir;
  fs::path nested = dir.path() / "a" / "b" / "tessera";
  KernelCache cache(nested);
  EXPECT_EQ(cache.lookup(sampleInputs()), nullptr);
  EXPECT_FALSE(fs::exists(nested)) << "a lookup alone creates nothing";
  cache.insert(sampleInputs(), sampleKernel());
  expectOnlyValidEntries(nested, 1);
}

// Triton users keep ~/.cache on NFS or a scratch disk through a symlink.
TEST(JitCache, SymlinkedDirectoryWorks) {
  TempDir dir;
  fs::create_directory(dir.path() / "real");
  fs::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  KernelCache(dir.path() / "link").insert(sampleInputs(), sampleKernel());
  expectOnlyValidEntries(dir.path() / "real", 1);
  KernelCache reader(dir.path() / "link");
  ASSERT_NE(reader.lookup(sampleInputs()), nullptr);
  EXPECT_EQ(reader.stats().diskHits, 1);
}

// A symlink to a folder that is gone (a wiped scratch disk, an unmounted share): the kernel is still compiled,
// the cache is bypassed, and nothing is created where the share would be mounted.
TEST(JitCache, DanglingSymlinkIsBypassed) {
  TempDir dir;
  fs::create_directory_symlink(dir.path() / "gone", dir.path() / "link");
  KernelCache cache(dir.path() / "link");
  CountingCompiler compiler;
  EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
  EXPECT_EQ(cache.stats().diskWriteFailures, 1);
  EXPECT_FALSE(fs::exists(dir.path() / "gone"));
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link"));
  cache.getOrCompile(sampleInputs(), std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);
}

// Permission bits do not stop root, so as root the check runs in a child process that drops to `nobody`.
TEST(JitCache, ReadOnlyDirectoryIsReadButNotWritten) {
  TempDir dir;
  CacheKeyInputs present = sampleInputs(), absent = sampleInputs(), damaged = sampleInputs();
  absent.numWarps = 8;
  damaged.numWarps = 2;
  KernelCache(dir.path()).insert(present, sampleKernel("present"));
  KernelCache(dir.path()).insert(damaged, sampleKernel("damaged", 2));
  writeAll(dir.path() / (cacheKey(damaged) + ".tkc"), "garbage");
  ::chmod(dir.path().c_str(), 0555);
  for (const auto& e : fs::directory_iterator(dir.path())) ::chmod(e.path().c_str(), 0444);

  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // reports through its exit status only: it must never return into GoogleTest
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(77);
    try {
      KernelCache cache(dir.path());
      CountingCompiler compiler;
      if (!(*cache.getOrCompile(present, std::ref(compiler)) == sampleKernel("present"))) ::_exit(1);
      if (!(*cache.getOrCompile(absent, [] { return sampleKernel("a", 8); }) == sampleKernel("a", 8))) ::_exit(2);
      if (!(*cache.getOrCompile(damaged, [] { return sampleKernel("a", 2); }) == sampleKernel("a", 2))) ::_exit(3);
      KernelCache::Stats s = cache.stats();
      ::_exit(s.diskHits == 1 && s.compiles == 2 && s.diskWriteFailures == 2 && s.corruptEntries == 1 ? 0 : 4);
    } catch (...) {
      ::_exit(5);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::chmod(dir.path().c_str(), 0755);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "running as root without the right to switch to uid 65534";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: present entry not read, 2/3: wrong kernel, 4: wrong statistics, 5: threw";
  EXPECT_EQ(fs::exists(dir.path() / (cacheKey(absent) + ".tkc")), false);
}

TEST(JitCache, FullDiskFallsBackToMemory) {
  TempDir dir;
  for (int bytesBeforeFull : {0, 100}) {
    KernelCache::FileOps ops = KernelCache::systemFileOps();
    int written = 0;
    ops.write = [&](int fd, const char* data, size_t size) -> ssize_t {
      if (written >= bytesBeforeFull) {
        errno = ENOSPC;
        return -1;
      }
      ssize_t n = ::write(fd, data, std::min<size_t>(size, bytesBeforeFull - written));
      written += static_cast<int>(n);
      return n;
    };
    KernelCache cache(dir.path(), ops);
    CountingCompiler compiler;
    EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
    EXPECT_EQ(cache.stats().diskWriteFailures, 1);
    EXPECT_TRUE(fs::is_empty(dir.path())) << "the partial temporary file must be removed";
    cache.getOrCompile(sampleInputs(), std::ref(compiler));
    EXPECT_EQ(compiler.calls, 1);  // from memory
  }
}

// NFS and some file systems report a full disk (or an I/O error) only when the data is flushed.
TEST(JitCache, FailedSyncLeavesNoEntry) {
  TempDir dir;
  KernelCache::FileOps ops = KernelCache::systemFileOps();
  ops.fsync = [](int) {
    errno = EIO;
    return -1;
  };
  KernelCache cache(dir.path(), ops);
  CountingCompiler compiler;
  EXPECT_EQ(*cache.getOrCompile(sampleInputs(), std::ref(compiler)), sampleKernel());
  EXPECT_EQ(cache.stats().diskWriteFailures, 1);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// write(2) may write less than asked without failing; the writer continues where it stopped.
TEST(JitCache, ShortWritesStillWriteWholeEntries) {
  TempDir dir;
  KernelCache::FileOps ops = KernelCache::systemFileOps();
  int calls = 0;
  ops.write = [&](int fd, const char* data, size_t size) {
    ++calls;
    return ::write(fd, data, std::min<size_t>(size, 7));
  };
  KernelCache(dir.path(), ops).insert(sampleInputs(), sampleKernel());
  EXPECT_GT(calls, 10);
  expectOnlyValidEntries(dir.path(), 1);
  EXPECT_EQ(*KernelCache(dir.path()).lookup(sampleInputs()), sampleKernel());
}

TEST(JitCache, StaleTemporaryFilesAreRemovedWhenTheDirectoryIsOpened) {
  TempDir dir;
  const std::string key = cacheKey(sampleInputs());
  fs::path stale = dir.path() / ("." + key + ".tmp.123.0.42"), live = dir.path() / ("." + key + ".tmp.456.0.7");
  fs::path foreign = dir.path() / ".module.tmp.1", extension = dir.path() / "kernels_ab12.so";
  for (const fs::path& p : {stale, live, foreign, extension}) writeAll(p, "partial");
  auto old = fs::file_time_type::clock::now() - std::chrono::minutes(KernelCache::kStaleTemporaryMinutes + 5);
  fs::last_write_time(stale, old);
  fs::last_write_time(foreign, old);

  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookup(sampleInputs()), nullptr);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live)) << "a young temporary file may belong to a writer still at work";
  EXPECT_TRUE(fs::exists(foreign)) << "files that are not the cache's are left alone";
  EXPECT_TRUE(fs::exists(extension));
  EXPECT_EQ(cache.stats().staleTemporariesRemoved, 1);
  EXPECT_EQ(cache.stats().corruptEntries, 0);
}

TEST(JitCacheProcesses, WriterKilledMidWriteLeavesNoEntry) {
  TempDir dir, logs;
  Worker worker({"hang-mid-write", dir.path().string()}, logs.path());
  ASSERT_TRUE(worker.waitForOutput("paused")) << worker.stderrText();
  worker.kill();
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(dir.path())) leftovers.push_back(e.path());
  ASSERT_EQ(leftovers.size(), 1u);
  EXPECT_EQ(leftovers[0].filename().string().find("." + cacheKey(workerInputs(0)) + ".tmp."), 0u) << leftovers[0];
  EXPECT_FALSE(fs::exists(dir.path() / (cacheKey(workerInputs(0)) + ".tkc"))) << "no entry before the rename";

  // The half-written file is never read as an entry; the kernel is compiled again.
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookup(workerInputs(0)), nullptr);
  EXPECT_EQ(cache.stats().corruptEntries, 0);
  EXPECT_TRUE(fs::exists(leftovers[0])) << "too young to be called stale";
  // Once old, the leftover goes when a process next opens the directory.
  fs::last_write_time(leftovers[0], fs::file_time_type::clock::now() - std::chrono::hours(1));
  KernelCache later(dir.path());
  EXPECT_EQ(later.lookup(workerInputs(0)), nullptr);
  EXPECT_FALSE(fs::exists(leftovers[0]));
}

// Eight processes compile and read back the same real kernels (nvptx sm_90a and sm_80, amdgpu gfx942) at once;
// each must get exactly the binary a private compile produces, and the folder must hold valid entries only.
TEST(JitCacheProcesses, EightProcessesCompileTheSameKernels) {
  TempDir dir, logs;
  const fs::path start = logs.path() / "start";
  writeAll(start, "");
  Worker reference({"compile", "off", start.string(), "1"}, logs.path());
  ASSERT_EQ(reference.wait(), 0) << reference.stderrText();
  const std::string expected = withoutStats(reference.stdoutText());
  ASSERT_EQ(std::count(expected.begin(), expected.end(), '\n'), 6) << expected;
  fs::remove(start);

  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 8; ++i)
    workers.push_back(std::make_unique<Worker>(
        std::vector<std::string>{"compile", dir.path().string(), start.string(), "3"}, logs.path()));
  writeAll(start, "");
  int64_t diskHits = 0;
  for (auto& w : workers) {
    ASSERT_EQ(w->wait(), 0) << w->stderrText();
    EXPECT_EQ(withoutStats(w->stdoutText()), expected);
    diskHits += statsOf(w->stdoutText())[1];
  }
  EXPECT_GE(diskHits, 8 * 2 * 6) << "rounds 2 and 3 of every worker read the entries back from disk";
  expectOnlyValidEntries(dir.path(), 6);
}

// The same with synthetic 256 KiB entries and many more rounds, so that writes, renames over live entries and
// reads overlap all the time.
TEST(JitCacheProcesses, EightProcessesHammerTheSameEntries) {
  TempDir dir, logs;
  const fs::path start = logs.path() / "start";
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 8; ++i)
    workers.push_back(std::make_unique<Worker>(
        std::vector<std::string>{"stress", dir.path().string(), start.string(), "100"}, logs.path()));
  writeAll(start, "");
  for (auto& w : workers) EXPECT_EQ(w->wait(), 0) << "a worker got a wrong kernel: " << w->stderrText();
  expectOnlyValidEntries(dir.path(), 4);
}

TEST(JitCacheProcesses, WarnsOncePerProcess) {
  TempDir dir, logs;
  writeAll(dir.path() / "file", "x");
  Worker worker({"warn", (dir.path() / "file" / "cache").string()}, logs.path());
  ASSERT_EQ(worker.wait(), 0) << worker.stderrText();
  std::string err = worker.stderrText();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(err.rfind("tessera: warning: JIT cache bypassed: cannot create the directory", 0), 0u) << err;
}

TEST(JitCacheEntry, RoundTripsEveryField) {
  std::string key = cacheKey(sampleInputs());
  CompiledKernel k = sampleKernel();
  auto parsed = parseCacheEntry(key, serializeCacheEntry(key, k));
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(*parsed, k);
  EXPECT_EQ(parsed->binary.size(), k.binary.size());  // embedded NUL survived
}

TEST(JitCacheEntry, RejectsDamage) {
  std::string key = cacheKey(sampleInputs());
  std::string good = serializeCacheEntry(key, sampleKernel());
  EXPECT_EQ(parseCacheEntry(key, ""), nullptr);
  EXPECT_EQ(parseCacheEntry(key, "garbage"), nullptr);
  EXPECT_EQ(parseCacheEntry(key, good + "extra"), nullptr);  // size mismatch
  std::string badMagic = good;
  badMagic[0] = 'T';
  EXPECT_EQ(parseCacheEntry(key, badMagic), nullptr);
  // Each single flipped byte anywhere is caught (header fields or payload).
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    EXPECT_EQ(parseCacheEntry(key, bad), nullptr) << "flipped byte " << i;
  }
}

TEST(JitCacheDirectory, FollowsTheEnvironment) {
  const char* names[] = {"TESSERA_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::string saved[3];
  bool had[3];
  for (int i = 0; i < 3; ++i) {
    const char* v = std::getenv(names[i]);
    had[i] = v != nullptr;
    saved[i] = v ? v : "";
  }
  ::setenv("HOME", "/home/someone", 1);
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("TESSERA_CACHE_DIR");
  EXPECT_EQ(KernelCache::defaultDirectory(), fs::path("/home/someone/.cache/tessera"));
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), fs::path("/xdg/tessera"));
  ::setenv("TESSERA_CACHE_DIR", "/explicit", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), fs::path("/explicit"));
  ::setenv("TESSERA_CACHE_DIR", "off", 1);
  EXPECT_TRUE(KernelCache::defaultDirectory().empty());
  for (int i = 0; i < 3; ++i) {
    if (had[i]) ::setenv(names[i], saved[i].c_str(), 1);
    else ::unsetenv(names[i]);
  }
}
