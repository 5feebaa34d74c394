// The synthetic cache entries jit_cache_worker writes and jit_cache_test checks: `variant` (0..3) picks the key
// and the contents; 256 KiB of binary, so that concurrent writes take long enough to overlap.
#pragma once

#include <cstddef>

#include "jit/Cache.h"

namespace tessera::jit::testing {

inline CacheKeyInputs workerInputs(int variant) {
  CacheKeyInputs in;
  in.irText = "func @stress() {}\n";
  in.target = "nvptx";
  in.arch = "sm_90a";
  in.format = "ptx";
  in.numWarps = 1 << variant;
  in.compilerVersion = "jit_cache_worker";
  return in;
}

inline CompiledKernel workerKernel(int variant) {
  CompiledKernel k;
  k.name = "stress";
  k.target = "nvptx";
  k.arch = "sm_90a";
  k.format = "ptx";
  k.numWarps = 1 << variant;
  k.warpSize = 32;
  k.binary.resize(256 * 1024);
  for (size_t i = 0; i < k.binary.size(); ++i) k.binary[i] = static_cast<char>((i * 31 + variant * 7) & 0xff);
  return k;
}

}  // namespace tessera::jit::testing
