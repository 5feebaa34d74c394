// A Program (Program.h) as a kernel and a launch. The kernel's parameters are one pointer per buffer (b0, b1, ...)
// then `limit`, an Int: masked accesses touch the tile elements whose flat index is below limit% of the tile. The
// kernel body replays the statements as DSL calls, so the same program traces to tile IR, runs in eager mode and
// compiles for every target. Buffer contents come from the program's seed.
#pragma once

#include <cstdint>

#include "tests/fuzz/difffuzz/Program.h"
#include "tests/gpucheck/GpuCheck.h"

namespace tessera::fuzz {

gpucheck::CheckCase makeCase(const Program& p);

// Elements of buffer `index` per program: the largest tile any statement reads or writes there (for a walking
// load, as many tiles as its loop's largest trip count).
int64_t bufferStride(const Program& p, int index);

// How the buffer must agree across backends: bit for bit, except outputs of approximate math (approxTolerance).
gpucheck::Tolerance toleranceFor(const BufferSpec& spec);

// A buffer's initial contents (`elements` of them, from spec.dataSeed): floats are multiples of 1/4 in [-2, 2]
// (so sums and dots over them are exact in any order, Generator.cpp), integers a mix of small and full-range
// values, i1 0 or 1. The same spec always gives the same bytes (regression files rely on it).
gpucheck::HostBuffer initialBuffer(const BufferSpec& spec, int64_t elements);

}  // namespace tessera::fuzz
