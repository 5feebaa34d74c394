// Helpers for the emulator runtime's tests (tests/unit/sim_runtime_*_test.cpp). Test kernels are ordinary C++
// functions `void kernel(void** params)` that call the SimABI.h functions directly, as host code rewritten from
// a GPU module would; each test gives its kernel a site table whose entries the kernel names by index.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/Launch.h"
#include "jit/sim/runtime/Report.h"

namespace simtest {

using namespace tessera::sim;

inline constexpr const char* kKernelFile = "kernels.py";

// A site attributed to tile-IR op `op` at kernels.py:<line>:1.
inline Site site(SiteKind kind, AddressSpace space, uint32_t bytes, const char* op, uint32_t line,
                 uint32_t align = 0) {
  Site s;
  s.kind = kind;
  s.space = space;
  s.bytes = bytes;
  s.align = align;
  s.op = op;
  s.file = kKernelFile;
  s.line = line;
  s.column = 1;
  return s;
}
inline Site syncSite(SiteKind kind, const char* op, uint32_t line) {
  return site(kind, AddressSpace::Generic, 0, op, line);
}

inline uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

template <class T>
T load(const void* p, uint32_t site) {
  T v;
  __tsim_load(&v, addr(p), sizeof(T), site);
  return v;
}
template <class T>
void store(void* p, T v, uint32_t site) {
  __tsim_store(addr(p), &v, sizeof(T), site);
}
// This thread's slot in a shared array of T.
template <class T>
T* shared(uint32_t index) {
  return static_cast<T*>(__tsim_shared_base()) + index;
}

template <class T>
MemoryRange range(const std::vector<T>& v) {
  return {addr(v.data()), v.size() * sizeof(T)};
}

inline Program program(const std::string& name, uint32_t numWarps, uint32_t sharedBytes, SiteTable sites,
                       void (*entry)(void**), uint32_t warpSize = 32) {
  Program p;
  p.kernel = name;
  p.warpSize = warpSize;
  p.numWarps = numWarps;
  p.sharedBytes = sharedBytes;
  p.sites = std::move(sites);
  p.entry = entry;
  if (warpSize == 64) p.target = "amdgpu";
  return p;
}

// One host thread unless a test says otherwise: findings and output in a fixed order.
inline LaunchConfig config(std::vector<MemoryRange> allocations, unsigned threads = 1) {
  LaunchConfig c;
  c.allocations = std::move(allocations);
  c.threads = threads;
  return c;
}

inline const Finding* firstFinding(const Report& r, FindingKind kind) {
  for (const Finding& f : r.findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

}  // namespace simtest
