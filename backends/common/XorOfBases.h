// Code for the offset a linear (F2) layout gives runtime coordinates: the XOR of one basis per set bit.
#pragma once

#include <vector>

#include "backends/common/LoweringHooks.h"
#include "ir/LinearLayout.h"

namespace tessera::backends {

// The XOR of bases[i] (each a one-dimensional offset) over the set bits i of `value` (bits past bases.size() ignored), built a run of bits at a
// time: bits i..j whose bases are bases[i] << 0..(j - i) and pairwise bit-disjoint add up (the XOR of disjoint terms
// is their sum) to ((value >> i) & (2^(j-i+1) - 1)) * bases[i]. A swizzled shared layout's coordinate bits fall into
// a few such runs (a plain row stride, the XOR of row bits into the column): 3 instructions per run instead of 3
// per bit, the same value.
llvm::Value* xorOfBases(IRBuilder& b, llvm::Value* value, const std::vector<ir::LinearLayout::Basis>& bases);

}  // namespace tessera::backends
