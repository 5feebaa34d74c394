// What the lowering needs to know about integer and pointer tiles to vectorize memory accesses, per dimension:
//   contiguity:   values come in runs of this many consecutive integers (pointers: consecutive elements);
//   divisibility: the first value of every run is a multiple of this (pointers: in bytes);
//   constancy:    values come in runs of this many equal values.
// All three are powers of two. Seeded by argument attributes (`divisibility`), `hint` ops, constants and
// arange, and propagated through the arithmetic that builds addresses and masks. Conservative: anything it
// does not understand gets 1/1/1.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace tessera::backends {

struct AxisFacts {
  std::vector<int64_t> contiguity, divisibility, constancy;  // one entry per dimension (one for scalars)
};

class AxisAnalysis {
 public:
  explicit AxisAnalysis(const ir::Function& f) : func_(f) {}
  const AxisFacts& get(const ir::Value* v);

 private:
  AxisFacts compute(const ir::Value* v);
  const ir::Function& func_;
  std::unordered_map<const ir::Value*, AxisFacts> memo_;
};

}  // namespace tessera::backends
