// Static facts about each op kind, generated from Ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/Types.h"

namespace tessera::ir {

constexpr int kVariadic = -1;

enum OpTrait : uint32_t {
  kPure = 1u << 0,            // no side effects: may be CSE'd, hoisted or deleted when unused
  kElementwise = 1u << 1,     // applies independently to each element of same-shaped operands
  kCommutative = 1u << 2,     // binary op whose operands may be swapped
  kTerminator = 1u << 3,      // must be the last op of its block
  kReadsMemory = 1u << 4,
  kWritesMemory = 1u << 5,    // also: other observable effects (printing, asserting)
  kSameType = 1u << 6,        // every operand and the result have one type
};

// A set of element types: one bit per ScalarKind, one for pointers. Ops.def's last column is the set an op
// computes on, which the verifier enforces: every operand of a kSameType op, both operands of
// `cmp`, `a` and `b` of `dot`. kAnyElements: the op's own verifier rule checks its types.
using ElementTypeSet = uint32_t;

template <class... Kinds>
constexpr ElementTypeSet elementsOf(Kinds... kinds) {
  return ((ElementTypeSet(1) << static_cast<unsigned>(kinds)) | ... | 0u);
}
constexpr ElementTypeSet kAnyElements = 0;
constexpr ElementTypeSet kBoolElements = elementsOf(ScalarKind::I1);
constexpr ElementTypeSet kIntElements =  // not i1
    elementsOf(ScalarKind::I8, ScalarKind::I16, ScalarKind::I32, ScalarKind::I64, ScalarKind::U8, ScalarKind::U16,
               ScalarKind::U32, ScalarKind::U64);
constexpr ElementTypeSet kFloatElements =  // fp8 is storage-only
    elementsOf(ScalarKind::F16, ScalarKind::BF16, ScalarKind::F32, ScalarKind::F64);
constexpr ElementTypeSet kPointerElements = ElementTypeSet(1) << 31;
constexpr ElementTypeSet kNumericElements = kIntElements | kFloatElements;

// Whether `set` holds the element type of `t` (a scalar, pointer or tile type).
bool acceptsElement(ElementTypeSet set, Type t);
// The set in words, for diagnostics: "integer or floating-point (not i1)", "i32, i64, u32 or u64".
std::string describeElements(ElementTypeSet set);

enum class OpKind : uint16_t {
#define OP(Enum, name, operands, results, regions, traits, elements) Enum,
#include "ir/Ops.def"
};

struct OpInfo {
  OpKind kind;
  const char* name;
  int numOperands;  // or kVariadic
  int numResults;   // or kVariadic
  int numRegions;
  uint32_t traits;
  ElementTypeSet elements;

  bool has(OpTrait t) const { return (traits & t) != 0; }
};

const OpInfo& opInfo(OpKind k);
const char* opName(OpKind k);
std::optional<OpKind> opKindFromName(const std::string& name);
int numOpKinds();

}  // namespace tessera::ir
