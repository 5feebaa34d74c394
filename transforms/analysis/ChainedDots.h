// Chained dots: a `dot` whose result becomes (part of) another dot's A operand, as softmax(Q K^T) becomes P in
// attention's P V. The data flows from the first dot's accumulator through ops that keep each element in place
// (element-wise ops and casts; row reductions feed back only through element-wise ops, so the element-wise path
// alone decides). A target that lays out both dots' accumulators alike, with the rows of A and of the accumulator
// held by the same threads, can hand the first result to the second dot without moving data between threads
// (backends/nvptx/MmaLayoutPolicy.h). Target-independent: the policies decide what to do with the answer.
#pragma once

#include "ir/IR.h"

namespace tessera::transforms {

// Whether result 0 of `dot` reaches operand 0 (A) of another dot through element-wise ops (casts included),
// broadcasts, hints, layout conversions and the carried values of `for` loops.
bool feedsDotOperandA(const ir::Op& dot);
// Whether operand 0 (A) of `dot` is computed, through the same ops, from another dot's result.
bool operandAFromDot(const ir::Op& dot);
// Either: the dot is one end of a chain.
inline bool isChainedDot(const ir::Op& dot) { return feedsDotOperandA(dot) || operandAFromDot(dot); }

}  // namespace tessera::transforms
