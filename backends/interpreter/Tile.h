// A concrete tile (or scalar) value on the host: the reference interpreter's and eager mode's runtime value.
//
// Elements are stored row-major in one of two canonical forms, chosen by the element type:
//   ints  - the canonical form of ir/IntegerSemantics.h: i1 (0/1), signed ints sign-extended, unsigned ints
//           zero-extended (u64 keeps its bit pattern), pointers as addresses;
//   floats - f16, bf16, f32, f64 and fp8 values, each exactly representable in its type (already rounded).
// A scalar (rank-0) holds one element.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Types.h"

namespace tessera::interp {

struct Tile {
  ir::Type type;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  Tile() = default;
  // Zero-filled tile of the given type.
  explicit Tile(ir::Type t);
  static Tile scalarInt(ir::Type t, int64_t v);
  static Tile scalarFloat(ir::Type t, double v);

  bool usesFloats() const { return type.isFloat(); }
  int64_t size() const { return type.numElements(); }
  const std::vector<int64_t>& shape() const { return type.shape(); }

  int64_t intAt(int64_t i) const { return ints[i]; }
  double floatAt(int64_t i) const { return floats[i]; }
  // Element as double, whatever the representation (ints convert).
  double asDouble(int64_t i) const;

  // "[1, 2, 3]" / "[[1.5, 2], [3, 4]]" / "7" -- what debug_print and eager-mode printing show.
  std::string str() const;
};

}  // namespace tessera::interp
