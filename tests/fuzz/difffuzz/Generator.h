// Random tile programs, valid by construction: every op and element type of docs/IR.md that the DSL exposes,
// tiles of rank 0 to 3 (powers of two), masked and transposed loads and stores through pointers computed from
// program ids and aranges (or walking along the buffer through pointers a `for` loop carries), for/while loops
// with carried values, if/else, reductions, scans, dots, atomics,
// casts, bitcasts and debug prints. The same seed always gives the same program.
//
// Programs are also deterministic by construction, so that every backend must agree bit for bit (Tolerance.h
// lists the exceptions): atomics whose old values depend on the order programs run in (several programs on one
// address) return nothing the program uses; float sums, scans and dots only see values whose partial sums are
// all representable; approximate math goes straight to memory.
#pragma once

#include <cstdint>

#include "tests/fuzz/difffuzz/Program.h"

namespace tessera::fuzz {

Program generateProgram(uint64_t seed);

}  // namespace tessera::fuzz
