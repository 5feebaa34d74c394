// The compiled-kernel cache: key sensitivity, memory hits, disk persistence across cache instances (as across
// processes), atomic writes, and recovery from corrupt, truncated or misfiled entries.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/Error.h"
#include "jit/Cache.h"

namespace fs = std::filesystem;
using namespace tessera::jit;

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
  in.numWarps = 4;
  in.options = "fast_math=1";
  in.compilerVersion = "tessera test";
  return in;
}

CompiledKernel sampleKernel(const std::string& tag = "a") {
  CompiledKernel k;
  k.name = "k";
  k.target = "nvptx";
  k.arch = "sm_90a";
  k.format = "ptx";
  k.numWarps = 4;
  k.warpSize = 32;
  k.sharedBytes = 65536;
  k.binary = "//\n.version 8.0\n.target sm_90a\n" + tag + std::string("\0binary\xff", 8);
  k.llvmIR = "define void @k() { ret void }";
  k.optimizedLLVMIR = "define void @k() #0 { ret void }";
  k.irAfterPass = {{"input", "func @k() {}"}, {"cse", "func @k() { }"}};
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
  std::string key = cacheKey(sampleInputs());
  auto first = cache.getOrCompile(key, std::ref(compiler));
  auto second = cache.getOrCompile(key, std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(*first, sampleKernel());
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().memoryHits, 1);
  EXPECT_TRUE(cache.entryPath(key).empty());
}

TEST(JitCache, DifferentKeysCompileSeparately) {
  KernelCache cache{fs::path()};
  CountingCompiler compiler;
  CacheKeyInputs other = sampleInputs();
  other.numWarps = 8;
  cache.getOrCompile(cacheKey(sampleInputs()), std::ref(compiler));
  cache.getOrCompile(cacheKey(other), std::ref(compiler));
  EXPECT_EQ(compiler.calls, 2);
}

TEST(JitCache, PersistsOnDiskAcrossCacheInstances) {
  TempDir dir;
  std::string key = cacheKey(sampleInputs());
  {
    KernelCache writer(dir.path());
    CountingCompiler compiler;
    writer.getOrCompile(key, std::ref(compiler));
    EXPECT_EQ(compiler.calls, 1);
  }
  ASSERT_TRUE(fs::exists(dir.path() / (key + ".tkc")));
  // A new cache (a new process, in effect) finds the entry without compiling.
  KernelCache reader(dir.path());
  CountingCompiler compiler;
  auto k = reader.getOrCompile(key, std::ref(compiler));
  EXPECT_EQ(compiler.calls, 0);
  EXPECT_EQ(*k, sampleKernel());
  EXPECT_EQ(reader.stats().diskHits, 1);
  // The second lookup is served from memory.
  reader.getOrCompile(key, std::ref(compiler));
  EXPECT_EQ(reader.stats().memoryHits, 1);
  EXPECT_EQ(compiler.calls, 0);
}

TEST(JitCache, WritesAtomicallyLeavingNoTemporaryFiles) {
  TempDir dir;
  KernelCache cache(dir.path());
  for (int warps : {1, 2, 4, 8}) {
    CacheKeyInputs in = sampleInputs();
    in.numWarps = warps;
    cache.insert(cacheKey(in), sampleKernel());
  }
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().extension(), ".tkc") << "stray file " << e.path();
    EXPECT_NE(e.path().filename().string()[0], '.') << "temporary file left behind: " << e.path();
    ++entries;
  }
  EXPECT_EQ(entries, 4);
}

TEST(JitCache, CorruptEntryIsDeletedAndRecompiled) {
  TempDir dir;
  std::string key = cacheKey(sampleInputs());
  KernelCache(dir.path()).insert(key, sampleKernel("original"));
  fs::path entry = dir.path() / (key + ".tkc");
  std::string bytes = readAll(entry);
  bytes[bytes.size() - 20] ^= 0x5a;  // flip bits inside the payload; the size stays the same
  writeAll(entry, bytes);

  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookup(key), nullptr);  // never trusted
  EXPECT_EQ(cache.stats().corruptEntries, 1);
  EXPECT_FALSE(fs::exists(entry)) << "the corrupt entry must be deleted";

  CountingCompiler compiler{0, "recompiled"};
  auto k = cache.getOrCompile(key, std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(*k, sampleKernel("recompiled"));
  // The rewritten entry is valid for the next process.
  KernelCache next(dir.path());
  ASSERT_NE(next.lookup(key), nullptr);
  EXPECT_EQ(*next.lookup(key), sampleKernel("recompiled"));
}

TEST(JitCache, TruncatedEntryIsRecompiled) {
  TempDir dir;
  std::string key = cacheKey(sampleInputs());
  KernelCache(dir.path()).insert(key, sampleKernel());
  fs::path entry = dir.path() / (key + ".tkc");
  for (double fraction : {0.0, 0.1, 0.5, 0.99}) {
    KernelCache(dir.path()).insert(key, sampleKernel());
    std::string bytes = readAll(entry);
    writeAll(entry, bytes.substr(0, static_cast<size_t>(bytes.size() * fraction)));
    KernelCache cache(dir.path());
    CountingCompiler compiler;
    cache.getOrCompile(key, std::ref(compiler));
    EXPECT_EQ(compiler.calls, 1) << "truncated to " << fraction;
    EXPECT_EQ(cache.stats().corruptEntries, 1) << "truncated to " << fraction;
  }
}

TEST(JitCache, EntryFiledUnderTheWrongKeyIsRejected) {
  TempDir dir;
  std::string keyA = cacheKey(sampleInputs());
  CacheKeyInputs other = sampleInputs();
  other.arch = "sm_80";
  std::string keyB = cacheKey(other);
  KernelCache(dir.path()).insert(keyA, sampleKernel());
  fs::copy_file(dir.path() / (keyA + ".tkc"), dir.path() / (keyB + ".tkc"));
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookup(keyB), nullptr);
  EXPECT_EQ(cache.stats().corruptEntries, 1);
  EXPECT_NE(cache.lookup(keyA), nullptr);
}

TEST(JitCache, UnwritableDirectoryStillCompiles) {
  TempDir dir;
  fs::path notADirectory = dir.path() / "file";
  writeAll(notADirectory, "x");
  KernelCache cache(notADirectory / "cache");
  CountingCompiler compiler;
  std::string key = cacheKey(sampleInputs());
  auto k = cache.getOrCompile(key, std::ref(compiler));
  EXPECT_EQ(*k, sampleKernel());
  EXPECT_EQ(cache.stats().diskWriteFailures, 1);
  cache.getOrCompile(key, std::ref(compiler));
  EXPECT_EQ(compiler.calls, 1);  // the memory cache still works
}

TEST(JitCache, MalformedKeysAreErrors) {
  KernelCache cache{fs::path()};
  EXPECT_THROW(cache.lookup("../../etc/passwd"), tessera::Error);
  EXPECT_THROW(cache.insert("ABC", sampleKernel()), tessera::Error);
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
