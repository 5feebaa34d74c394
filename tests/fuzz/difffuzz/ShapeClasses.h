// Which stored tile dimensions of a program are tied together: two dimensions share a class when the program
// stays valid only while they stay equal (an elementwise op's operands and result, a dot's K in both operands, a
// value's type and the type each use of its slot records...) or one apart (cat's first dimension, shifted
// together). Lowering every dimension of one class by the same amount keeps a program valid as long as each
// reshape keeps its element count. The reducer shrinks classes one at a time (Reducer.h), so that a failure that
// needs one large dimension keeps only that one large.
#pragma once

#include <cstddef>
#include <vector>

#include "tests/fuzz/difffuzz/Program.h"

namespace tessera::fuzz {

// One stored log2 dimension: `axis` of statement `statement`'s result type (operand -1) or of the type it records
// for operand `operand`.
struct DimRef {
  size_t statement = 0;  // an index into the statement list the classes were made from
  int operand = -1;
  size_t axis = 0;
};
using DimClass = std::vector<DimRef>;

// The classes of `statements` (a program's live statements in pre-order, nested ones included).
std::vector<DimClass> dimensionClasses(const std::vector<Stmt*>& statements);

// The stored dimension `r` names.
int& dimension(const std::vector<Stmt*>& statements, const DimRef& r);

// Whether each reshape among `statements` keeps its element count.
bool reshapesKeepSizes(const std::vector<Stmt*>& statements);

}  // namespace tessera::fuzz
