// Internal to the interpreter: the pieces evaluateOp is assembled from, shared by the files that implement
// each group of ops (element-wise, shapes, memory, reductions) and by the region executor.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "backends/interpreter/Tile.h"
#include "ir/FloatFormats.h"
#include "ir/IntegerSemantics.h"

namespace tessera::interp::detail {

using OperandList = std::span<const Tile* const>;

struct EvalEnv {
  ProgramContext& ctx;
  // Set while a reduce/scan combine region is evaluated for many lanes at once: every result then has this
  // shape instead of the (scalar) type the op declares. Only element-wise ops and constants run this way.
  const std::vector<int64_t>* laneShape = nullptr;
};

// Result i's type, with the lane shape applied when there is one.
ir::Type resultType(const ir::Op& op, unsigned i, const EvalEnv& env);

// "program (x, y, z)".
std::string programTag(const ProgramContext& ctx);
// Throws tessera::Error "'<op>': <message> in program (x, y, z)" at the op's location.
[[noreturn]] void fail(const ir::Op& op, const ProgramContext& ctx, const std::string& message);

// Evaluates any non-control-flow op (the body of evaluateOp, also used by the region executor).
std::vector<Tile> evaluate(const ir::Op& op, OperandList operands, const EvalEnv& env);

// Op groups.
Tile evalElementwise(const ir::Op& op, OperandList operands, const EvalEnv& env);
std::vector<Tile> evalShapeOp(const ir::Op& op, OperandList operands, const EvalEnv& env);
Tile evalMemoryOp(const ir::Op& op, OperandList operands, const EvalEnv& env);  // store returns an empty Tile
// The elements `ptr` points at, as a tile of `type`; lanes where `mask` (optional) is 0 take `other`'s element, or 0.
Tile loadElements(const ir::Op& op, const Tile& ptr, const Tile* mask, const Tile* other, ir::Type type,
                  const ProgramContext& ctx);
// Writes `value`'s elements where `ptr` points, the lanes where `mask` (optional) is 1 (store's semantics).
void storeElements(const ir::Op& op, const Tile& ptr, const Tile* mask, const Tile& value, const ProgramContext& ctx);
// desc_load, desc_store (an empty Tile), desc_field (Descriptors.cpp).
Tile evalDescriptorOp(const ir::Op& op, OperandList operands, const EvalEnv& env);
// The block of the descriptor operands[0] at the offsets operands[1..rank] as a tile of `block` (desc_load's
// semantics; async_tma_copy's too).
Tile loadDescriptorBlock(const ir::Op& op, OperandList operands, ir::Type block, const EvalEnv& env);
// local_alloc, async_copy, async_commit_group, async_wait, local_load, mbarrier_alloc, async_tma_copy,
// mbarrier_wait (SharedBuffers.cpp).
Tile evalSharedBufferOp(const ir::Op& op, OperandList operands, const EvalEnv& env);
std::vector<Tile> evalReduceOrScan(const ir::Op& op, OperandList operands, const EvalEnv& env);
Tile evalDot(const ir::Op& op, OperandList operands, const EvalEnv& env);

// Raw element-wise kernels for the binary ops (add ... umulhi), on canonical values of element type `element`.
// `out` may alias `a` or `b`. Used by the element-wise ops, atomics and the reduce/scan fast path.
bool isBinaryArithmetic(ir::OpKind kind);
void binaryIntKernel(const ir::Op& op, const ProgramContext& ctx, ir::OpKind kind, ir::Type element,
                     const int64_t* a, const int64_t* b, int64_t* out, int64_t n);
void binaryFloatKernel(const ir::Op& op, const ProgramContext& ctx, ir::OpKind kind, ir::Type element,
                       const double* a, const double* b, double* out, int64_t n);

}  // namespace tessera::interp::detail
