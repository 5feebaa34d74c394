// Internal to the interpreter: executes a block (a function body, or a reduce/scan combine region) op by op,
// including structured control flow (for, if, while). The block is compiled once into slot numbers so that
// repeated execution (every program of a grid, every step of a reduction) does no map lookups.
#pragma once

#include <memory>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "backends/interpreter/Tile.h"

namespace tessera::interp::detail {

class RegionExecutor {
 public:
  // Every value the block's ops use must be defined in the block (or nested in it) or be one of its arguments;
  // anything else is a tessera::Error. `laneShape`: see EvalEnv (null for ordinary execution).
  explicit RegionExecutor(const ir::Block& block, const std::vector<int64_t>* laneShape = nullptr);
  ~RegionExecutor();

  // Runs the block with one value per block argument; returns the operands of its terminator (yield/return).
  std::vector<Tile> run(std::vector<Tile> args, ProgramContext& ctx);

 private:
  struct CompiledBlock;
  struct CompiledOp;
  struct State;
  std::unique_ptr<CompiledBlock> root_;
  std::unique_ptr<State> state_;
  const std::vector<int64_t>* laneShape_;
};

}  // namespace tessera::interp::detail
