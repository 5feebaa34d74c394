// Internal: type promotion and broadcasting for DSL operations (rules in docs/IR.md, "Type promotion").
#pragma once

#include <string>
#include <vector>

#include "tessera/Context.h"

namespace tessera::detail {

// The element type two operands promote to. `a`/`b` are Tensors or weak literals.
ir::Type promote(const TArg& a, const TArg& b, const char* opName);
// The same with an already-promoted element type on the left.
ir::Type promote(ir::Type a, const TArg& b, const char* opName);
// The numpy-style broadcast of two shapes; throws naming `opName` when incompatible.
std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const char* opName, const SourceLoc& loc);

// Turns an operand into a Tensor of element type `elem` (casting Tensors, materializing literals) with
// `shape` (splatting/broadcasting). Pass an empty elem to keep a Tensor's element type.
Tensor materialize(const TArg& a, ir::Type elem, const std::vector<int64_t>& shape, const SourceLoc& loc);
Tensor castTo(const Tensor& t, ir::Type elem, const SourceLoc& loc);
Tensor broadcastTo(const Tensor& t, const std::vector<int64_t>& shape, const SourceLoc& loc);
Tensor constant(ir::Type type, const TArg& value, const SourceLoc& loc);

// The operand's type; literals report i32 / f32 / i1.
ir::Type typeOf(const TArg& a);
std::string shapeStr(const std::vector<int64_t>& s);
// Why a Tensor has no value at the point of use.
extern const char* const kUndefinedTensor;
[[noreturn]] void fail(const std::string& message, const SourceLoc& loc);

}  // namespace tessera::detail
