// Static facts about each op kind, generated from Ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::ir {

constexpr int kVariadic = -1;

enum OpTrait : uint32_t {
  kPure = 1u << 0,            // no side effects: may be CSE'd, hoisted or deleted when unused
  kElementwise = 1u << 1,     // applies independently to each element of same-shaped operands
  kCommutative = 1u << 2,     // binary op whose operands may be swapped
  kTerminator = 1u << 3,      // must be the last op of its block
  kReadsMemory = 1u << 4,
  kWritesMemory = 1u << 5,    // also: other observable effects (printing, asserting)
};

enum class OpKind : uint16_t {
#define OP(Enum, name, operands, results, regions, traits) Enum,
#include "ir/Ops.def"
};

struct OpInfo {
  OpKind kind;
  const char* name;
  int numOperands;  // or kVariadic
  int numResults;   // or kVariadic
  int numRegions;
  uint32_t traits;

  bool has(OpTrait t) const { return (traits & t) != 0; }
};

const OpInfo& opInfo(OpKind k);
const char* opName(OpKind k);
std::optional<OpKind> opKindFromName(const std::string& name);
int numOpKinds();

}  // namespace tessera::ir
