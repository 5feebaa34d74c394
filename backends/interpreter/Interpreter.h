// The reference interpreter: executes any verified tile IR function on the CPU over a launch grid, against
// real host buffers. It is the semantic reference every backend and pass is tested against.
//
// Programs run one after another (x fastest, then y, then z), so atomics are trivially atomic. Every memory
// access is bounds-checked against the buffers passed in. An unmasked access outside every buffer, a failed
// device_assert or a non-positive for-loop step throws tessera::Error naming the op, its source location and
// the program id (integer division by zero is not an error: docs/IR.md gives its value).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "backends/interpreter/Tile.h"
#include "ir/IR.h"
#include "ir/LaunchArgs.h"

namespace tessera::interp {

// Per-program execution state, shared by the interpreter and eager mode.
struct ProgramContext {
  Grid programId{0, 0, 0};
  Grid numPrograms{1, 1, 1};
  std::vector<Buffer> buffers;      // accesses must land inside one of these
  std::ostream* out = nullptr;      // debug_print destination (null = std::cout)
  // The program's shared buffers (local_alloc), each a list of stages; a buffer value holds its index here.
  // Cleared before every program: shared memory does not outlive its program.
  std::vector<std::vector<Tile>> sharedBuffers;
  // The consumer group running a warp_specialize's consumer region (consumer_group), one after the other here.
  int64_t consumerGroup = 0;
};

// Evaluates one op that has no regions, or a reduce/scan (whose combine region is interpreted), on concrete
// operand values. Control-flow ops (for/if/while/yield/return) are not accepted here.
std::vector<Tile> evaluateOp(const ir::Op& op, const std::vector<Tile>& operands, ProgramContext& ctx);

// The value of a descriptor argument for a parameter of type `t` (tensordesc<...>): a tile of type `t` holding
// the plain fields, base then shape then strides. Throws tessera::Error "<context>: <why>" when the descriptor
// breaks the rules of ir::descriptorError or reads blocks other than `t`'s.
Tile descriptorTile(ir::Type t, const TensorDesc& d, const std::string& context);

// Runs `f` over the whole grid (every dimension >= 1). Throws tessera::Error on argument mismatch (count or
// kind), a non-positive grid dimension, or a runtime failure.
void run(const ir::Function& f, const std::vector<Arg>& args, Grid grid, std::ostream* debugOut = nullptr);

}  // namespace tessera::interp
