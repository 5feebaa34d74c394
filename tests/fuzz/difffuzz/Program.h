// A random tile program as data: what the generator (Generator.h) makes, the reducer (Reducer.h) shrinks and
// ProgramKernel.h turns into DSL calls (so one program traces to tile IR, runs on the interpreter, in eager mode
// and on every backend). Each statement that defines a value writes it to its own variable slot; a statement
// whose operand slot holds nothing (the reducer deleted its definition) reads zeros of the recorded type, so
// deleting any statement leaves a program that still builds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Types.h"

namespace tessera::fuzz {

using ir::ScalarKind;

// A value's element type and shape. Shapes are stored as log2 of each dimension, so that shrinking a program
// (a uniform right shift of every stored dimension, Program::shrink) keeps every dimension a power of two and
// dimensions that were equal, equal.
struct ValueType {
  ScalarKind dtype = ScalarKind::I32;
  std::vector<int> log2Shape;  // empty: a scalar
};

enum class StmtKind {
  Load,       // v = load(input buffer `buffer` at this program's tile, mask `mask`, masked-off lanes `constant`);
              // op 1 in a `for` body: a walking load, whose pointer tile the loop carries, one tile further along
              // the program's part of the buffer each iteration (what canonicalize-pointers and pipelining see)
  Constant,   // v = full(shape, constant)
  Index,      // v = the tile's flat index (i32, from aranges), or the program's linear id for a scalar
  Unary,      // v = op(a0)
  Binary,     // v = op(a0, a1)
  Compare,    // v = a0 <pred op> a1 (an i1 tile)
  Select,     // v = where(a0, a1, a2)
  Fma,        // v = fma(a0, a1, a2)
  Cast,       // v = cast(a0) to the result dtype
  Bitcast,    // v = bitcast(a0) to the result dtype (same width)
  Broadcast,  // v = a0 (the result's shape without dimension `axis`) expanded at `axis` and broadcast
  Permute,    // v = permute(a0, order)
  Reshape,    // v = reshape(a0) to the result shape (same element count)
  Cat,        // v = cat(a0, a1)
  JoinSplit,  // v = split(join(a0, a1)).first or .second (op 0 / 1)
  Reduce,     // v = reduce(a0, axis) with op (ReduceOp), cast back to the result dtype
  Scan,       // v = scan(a0, axis, reverse) with op (ScanOp)
  Dot,        // v = dot(a0, a1, a2)
  Store,      // store a0 to output buffer `buffer` at this program's tile, mask `mask`
  Atomic,     // v = atomic_rmw(op, ...) on atomic buffer `buffer`; contended (shared addresses) when `shared`
  AtomicCas,  // v = atomic_cas(p, a0, a1) on atomic buffer `buffer` (this program's own addresses)
  Assign,     // slot `result` (defined in an enclosing scope) = a0: a loop-carried value or branch result
  For,        // for iv in range(trip) { body } with iv in slot `result`; trip = constant [+ pid % op]
  While,      // counter in slot `result` from 0 while < trip { body; counter += 1 }
  If,         // if (a0) { body } else { orelse }
  Assert,     // device_assert(a0 == a0) on an integer value (always true)
  DebugPrint, // debug_print("v<a0's slot> ", a0): must change no result
};

enum class UnaryOp { Neg, Abs, Not, Floor, Ceil, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Tanh, Erf, Sigmoid };
enum class BinaryOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, UMulHi };
enum class ComparePred { Eq, Ne, Lt, Le, Gt, Ge };
enum class ReduceOp { Sum, Max, Min, ArgMax, ArgMin, Xor };
enum class ScanOp { Sum, Max };
enum class AtomicOp { Add, Max, Min, And, Or, Xor, Xchg };
enum class MaskKind { None, Limit, LimitWithOther };  // Limit: flat index < limit% of the tile's elements

struct Stmt {
  StmtKind kind = StmtKind::Constant;
  int result = -1;            // the slot this statement defines (or assigns, or the loop's counter)
  ValueType type;             // of the result
  std::vector<int> args;      // operand slots
  std::vector<ValueType> argTypes;  // their types (what a deleted operand's zeros look like)
  int op = 0;                 // the kind's operator enum, pred, the For/While trip divisor, or Load's walking
  int axis = 0;               // Broadcast: the inserted dimension; Reduce, Scan: the axis
  bool flag = false;          // Scan: reverse; Atomic: shared addresses; Load/Store/Index: column-major
  int buffer = -1;            // index into Program::buffers
  MaskKind mask = MaskKind::None;
  double constant = 0;        // Constant/Load other value; For/While: the trip count
  std::vector<int> order;     // Permute: the permutation
  std::vector<Stmt> body, orelse;
  bool deleted = false;       // removed by the reducer (kept so slot numbers stay put)
};

enum class BufferRole { Input, Output, Atomic };

struct BufferSpec {
  BufferRole role = BufferRole::Input;
  ScalarKind dtype = ScalarKind::F32;
  bool approximate = false;  // an output holding approximate math: compared within approxTolerance, not bit for bit
  uint64_t dataSeed = 0;     // of its initial contents (ProgramKernel.h, initialBuffer)
};

struct Program {
  uint64_t seed = 0;
  int gridX = 1, gridY = 1;
  int numWarps = 4;
  int shrink = 0;       // every stored log2 dimension is max(0, d - shrink)
  int64_t limitPercent = 100;  // the `limit` argument: this percentage of each tile's elements is unmasked
  std::vector<BufferSpec> buffers;
  int numSlots = 0;
  std::vector<Stmt> body;
};

// The concrete shape of a stored type under the program's shrink.
std::vector<int64_t> shapeOf(const Program& p, const ValueType& t);
int64_t elementsOf(const Program& p, const ValueType& t);

// Counts the statements not deleted (nested ones included).
size_t liveStatements(const Program& p);

}  // namespace tessera::fuzz
