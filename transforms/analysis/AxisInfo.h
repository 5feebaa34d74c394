// Axis analysis: static facts about the integer and pointer values of a function, per dimension, that the
// coalescing pass uses to pick vector widths (and the lowering to prove alignment).
//
// For a value x and a dimension d, cut every line of x along d into aligned blocks:
//   contiguity[d] = c    within each aligned block of c elements along d, x[i+1] == x[i] + 1
//                        (pointers: + one element)
//   divisibility[d] = v  the first element of each aligned block of contiguity[d] elements is a multiple of v
//                        (pointers: the address, in bytes); with contiguity 1 that is every element
//   constancy[d] = k     within each aligned block of k elements along d, all elements are equal
// All three are powers of two, at least 1, and contiguity/constancy are at most the dimension's size. A scalar
// has one entry (contiguity 1, constancy 1). Float values only get constancy (the rest is 1).
//
// Seeds: function argument attributes `divisibility = N` (pointers: bytes; ints: the value) and
// `equal_to_1 = true`; pointers without a seed are assumed aligned to their element size; `hint` ops
// (`multiple_of`, `max_contiguous`, `max_constancy`) raise the facts to what the kernel author guarantees.
// Loop-carried values are the meet of their inits and every iteration's yields (computed to a fixed point).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace tessera::transforms {

// The widest global access one thread makes, in bytes (128-bit loads, stores and asynchronous copies).
constexpr int64_t kMaxAccessBytes = 16;

// The divisibility of 0 (a multiple of everything) is capped here, and products saturate to it.
constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

struct AxisInfo {
  std::vector<int64_t> contiguity, divisibility, constancy;  // one entry per dimension (scalars: one)
  std::optional<int64_t> constantValue;                      // every element equals this integer
  int64_t elementBytes = 1;  // what one step of a run adds to the value: pointers advance by their pointee's size

  // No knowledge: all ones.
  static AxisInfo unknown(int rank);
  int rank() const { return static_cast<int>(contiguity.size()); }
  bool operator==(const AxisInfo&) const = default;
  // The facts true of both (what a merge point such as a loop-carried value may assume).
  static AxisInfo meet(const AxisInfo& a, const AxisInfo& b);
  // Divisibility of the elements at the start of every aligned block of `blockLen` elements along d: blocks
  // longer than a contiguous run start where runs start; shorter ones start inside runs (blockLen steps of
  // elementBytes after a run's start).
  int64_t divisibilityAt(int d, int64_t blockLen) const;
  std::string str() const;  // "{contiguity = [..], divisibility = [..], constancy = [..]}"
};

class AxisInfoAnalysis {
 public:
  explicit AxisInfoAnalysis(const ir::Function& f);
  // The facts about `v` (unknown() for values the analysis has no facts about).
  AxisInfo get(const ir::Value* v) const;

  // Dimensions of a pointer tile sorted by decreasing contiguity (ties: later dimension first, i.e. row-major
  // when nothing is known): the layout order a memory op on `ptr` wants.
  std::vector<int64_t> contiguityOrder(const ir::Value* ptr) const;

  // The most elements along dimension d of the pointer tile `ptr` that one access may cover: a power of two, at
  // most maxElements, consecutive in memory, with the first aligned to the access's size, and under one value of
  // `mask` (null: no mask). Vectorized accesses and asynchronous copies are as wide as this allows.
  int64_t widestAccess(const ir::Value* ptr, const ir::Value* mask, int d, int64_t maxElements) const;

 private:
  void analyzeBlock(const ir::Block& b);
  void analyzeOp(const ir::Op& op);
  // The transfer functions, per op family.
  AxisInfo constantLikeInfo(const ir::Op& op) const;  // constant, arange, splat
  AxisInfo shapeOpInfo(const ir::Op& op) const;       // shape ops, convert_layout, hint
  AxisInfo arithmeticInfo(const ir::Op& op) const;    // element-wise integer and pointer ops
  void analyzeLoop(const ir::Op& op);
  void analyzeWhile(const ir::Op& op);
  void analyzeIf(const ir::Op& op);
  void analyzeOther(const ir::Op& op);
  void set(const ir::Value* v, AxisInfo info);

  std::unordered_map<const ir::Value*, AxisInfo> info_;
};

}  // namespace tessera::transforms
