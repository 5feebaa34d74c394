// A separate process for jit_cache_test's multi-process cases: real processes share a cache directory, and one
// of them can be killed halfway through writing an entry.
//
//   jit_cache_worker compile DIR|off START_FILE ROUNDS  compiles kernels for nvptx and amdgpu through a JitKernel
//                                                   ROUNDS times (dropping the memory cache between rounds), prints
//                                                   one "<kernel> <arch> <sha256 of the binary>" line each
//   jit_cache_worker stress DIR START_FILE ROUNDS   hammers a few synthetic entries (large payloads, so writes
//                                                   overlap): reads, recompiles and rewrites; checks every kernel
//   jit_cache_worker hang-mid-write DIR             writes half an entry, prints "paused", waits to be killed
//   jit_cache_worker warn DIR                       two caches fail to write three entries: stderr must get one line
//
// START_FILE: the workers spin until it exists, so that all of them start at once. The exit status is 0 when
// every kernel the cache returned was the right one; the last stdout line is "stats <hits> <disk hits> <compiles>".
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include "jit/Cache.h"
#include "jit/JitKernel.h"
#include "jit/Sha256.h"
#include "JitCacheWorkerEntries.h"
#include "tessera/tessera.h"

namespace fs = std::filesystem;
using namespace tessera;
using namespace tessera::jit;
using namespace tessera::jit::testing;

namespace {

void vectorAdd(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, Const<int> BLOCK) {
  Tensor offsets = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offsets < n;
  store(out + offsets, load(x + offsets, mask) + load(y + offsets, mask), mask);
}

void rowMax(Ptr<f32> in, Ptr<f32> out, Int n, Const<int> BLOCK) {
  Tensor cols = arange(0, BLOCK);
  Tensor x = load(in + program_id(0) * n + cols, cols < n, -1e30f);
  store(out + program_id(0), max(x, 0));
}

void waitFor(const std::string& startFile) {
  while (!fs::exists(startFile)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void printStats(const KernelCache& cache) {
  KernelCache::Stats s = cache.stats();
  std::cout << "stats " << s.memoryHits << " " << s.diskHits << " " << s.compiles << std::endl;
}

int compile(const std::string& dir, const std::string& startFile, int rounds) {
  KernelCache cache(dir == "off" ? fs::path() : fs::path(dir));
  JitKernel add(kernel("vector_add", vectorAdd, {"x", "y", "out", "n", "BLOCK"}), cache);
  JitKernel rows(kernel("row_max", rowMax, {"in", "out", "n", "BLOCK"}), cache);
  waitFor(startFile);
  std::string first;
  for (int round = 0; round < rounds; ++round) {
    cache.clearMemory();
    std::string lines;
    for (auto [target, arch] : {std::pair{"nvptx", "sm_90a"}, {"nvptx", "sm_80"}, {"amdgpu", "gfx942"}}) {
      LaunchOptions options{.target = target, .arch = arch};
      auto a = add.compileOnly({KernelArg::pointer(256), KernelArg::pointer(256), KernelArg::pointer(256),
                                KernelArg(int32_t(1000))},
                               {{"BLOCK", 256}}, options);
      auto r = rows.compileOnly({KernelArg::pointer(256), KernelArg::pointer(256), KernelArg(int32_t(100))},
                                {{"BLOCK", 128}}, options);
      for (const auto& k : {a, r}) {
        if (k->target != target || k->arch != arch) return 2;  // the cache returned another target's kernel
        lines += k->name + " " + k->arch + " " + sha256Hex(k->binary) + "\n";
      }
    }
    if (round == 0) first = lines;
    if (lines != first) return 3;  // a later round read back something else than what was compiled
  }
  std::cout << first;
  printStats(cache);
  return 0;
}

int stress(const std::string& dir, const std::string& startFile, int rounds) {
  KernelCache cache{fs::path(dir)};
  waitFor(startFile);
  for (int round = 0; round < rounds; ++round) {
    int variant = round % 4;
    cache.clearMemory();
    auto k = cache.getOrCompile(workerInputs(variant), [&] { return workerKernel(variant); });
    if (!(*k == workerKernel(variant))) return 2;
    if (round % 3 == 0) cache.insert(workerInputs(variant), workerKernel(variant));  // rename over a live entry
  }
  printStats(cache);
  return 0;
}

int hangMidWrite(const std::string& dir) {
  KernelCache::FileOps ops = KernelCache::systemFileOps();
  ops.write = [](int fd, const char* data, size_t size) -> ssize_t {
    ssize_t n = ::write(fd, data, size / 2);
    std::cout << "paused" << std::endl;
    for (;;) ::pause();  // the test kills this process here
    return n;
  };
  KernelCache cache(fs::path(dir), ops);
  cache.insert(workerInputs(0), workerKernel(0));
  return 1;  // not reached
}

int warn(const std::string& dir) {
  for (int cacheIndex = 0; cacheIndex < 2; ++cacheIndex) {
    KernelCache cache{fs::path(dir)};
    for (int variant = 0; variant < (cacheIndex == 0 ? 2 : 1); ++variant)
      if (!(*cache.getOrCompile(workerInputs(variant), [&] { return workerKernel(variant); }) == workerKernel(variant)))
        return 2;
    if (cache.stats().diskWriteFailures == 0) return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "compile" && argc == 5) return compile(argv[2], argv[3], std::stoi(argv[4]));
    if (mode == "stress" && argc == 5) return stress(argv[2], argv[3], std::stoi(argv[4]));
    if (mode == "hang-mid-write" && argc == 3) return hangMidWrite(argv[2]);
    if (mode == "warn" && argc == 3) return warn(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "jit_cache_worker: " << e.what() << "\n";
    return 4;
  }
  std::cerr << "usage: jit_cache_worker compile|stress|hang-mid-write|warn ... (see the source)\n";
  return 64;
}
