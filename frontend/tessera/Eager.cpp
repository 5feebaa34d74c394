// Eager mode over the reference interpreter's per-op semantics (interp::evaluateOp).
#include "tessera/Eager.h"

#include "backends/interpreter/Interpreter.h"

namespace tessera::detail {

namespace {

class InterpreterEvaluator final : public EagerEvaluator {
 public:
  InterpreterEvaluator(const interp::Grid& grid, const std::vector<interp::Arg>& args, std::ostream* debugOut) {
    program_.numPrograms = grid;
    program_.out = debugOut;
    for (const interp::Arg& a : args) {
      if (auto* b = std::get_if<interp::Buffer>(&a)) program_.buffers.push_back(*b);
      if (auto* d = std::get_if<interp::TensorDesc>(&a)) program_.buffers.push_back(d->buffer);
    }
  }

  void enterProgram(const interp::Grid& programId) override { program_.programId = programId; }

  std::vector<interp::Tile> evaluate(const ir::Op& op, const std::vector<interp::Tile>& operands) override {
    return interp::evaluateOp(op, operands, program_);
  }

 private:
  interp::ProgramContext program_;
};

}  // namespace

std::unique_ptr<EagerEvaluator> interpreterEvaluator(const interp::Grid& grid, const std::vector<interp::Arg>& args,
                                                     std::ostream* debugOut) {
  return std::make_unique<InterpreterEvaluator>(grid, args, debugOut);
}

}  // namespace tessera::detail
