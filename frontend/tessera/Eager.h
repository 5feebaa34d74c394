// Internal: how eager mode computes. Context evaluates each DSL op through an EagerEvaluator, one program of the
// launch grid at a time; the reference interpreter implements it (Eager.cpp), so that no DSL header depends on
// the interpreter.
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "ir/IR.h"
#include "ir/LaunchArgs.h"

namespace tessera::interp {
struct Tile;
}

namespace tessera::detail {

class EagerEvaluator {
 public:
  virtual ~EagerEvaluator() = default;
  // Later evaluate() calls run as this program of the grid: what program_id returns, debug_print and errors name.
  virtual void enterProgram(const interp::Grid& programId) = 0;
  // Evaluates one verified op (not control flow; reduce and scan run their combine region) on concrete operands.
  virtual std::vector<interp::Tile> evaluate(const ir::Op& op, const std::vector<interp::Tile>& operands) = 0;
};

// The reference interpreter's semantics, for a launch over `grid` whose memory accesses must land in the buffers
// among `args`; debug_print writes to `debugOut` (null: std::cout).
std::unique_ptr<EagerEvaluator> interpreterEvaluator(const interp::Grid& grid, const std::vector<interp::Arg>& args,
                                                     std::ostream* debugOut);

}  // namespace tessera::detail
