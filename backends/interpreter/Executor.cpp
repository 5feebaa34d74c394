#include "backends/interpreter/Executor.h"

#include <unordered_map>

#include "backends/interpreter/OpImpl.h"

namespace tessera::interp::detail {

using ir::OpKind;

struct RegionExecutor::CompiledOp {
  const ir::Op* op;
  std::vector<int> operands;
  std::vector<int> results;
  std::vector<CompiledBlock> regions;
};

struct RegionExecutor::CompiledBlock {
  const ir::Block* block = nullptr;
  std::vector<int> args;
  std::vector<CompiledOp> ops;
};

struct RegionExecutor::State {
  std::vector<Tile> slots;                 // one per value
  std::vector<const Tile*> operandScratch; // reused for every op: no allocation per op
};

namespace {

class Compiler {
 public:
  int slotOf(const ir::Value* v) {
    auto [it, inserted] = slots_.try_emplace(v, static_cast<int>(slots_.size()));
    return it->second;
  }
  int lookup(const ir::Op& op, const ir::Value* v) {
    auto it = slots_.find(v);
    if (it == slots_.end())
      throw Error(std::string("'") + op.name() +
                      "' uses a value that is not defined before it in the region being interpreted",
                  op.loc());
    return it->second;
  }
  size_t numSlots() const { return slots_.size(); }

 private:
  std::unordered_map<const ir::Value*, int> slots_;
};

}  // namespace

// Compiles `block` (and the regions nested in it) into `out`, numbering every value it defines.
template <class CB, class CO>
static void compileBlock(const ir::Block& block, CB& out, Compiler& compiler) {
  out.block = &block;
  for (unsigned i = 0; i < block.numArguments(); ++i) out.args.push_back(compiler.slotOf(block.argument(i)));
  for (const auto& opPtr : block.ops()) {
    const ir::Op& op = *opPtr;
    CO compiled;
    compiled.op = &op;
    for (const ir::Value* v : op.operands()) compiled.operands.push_back(compiler.lookup(op, v));
    // Reduce/scan regions are interpreted by evaluateOp itself; every other region executes here.
    if (!op.is(OpKind::Reduce) && !op.is(OpKind::Scan)) {
      compiled.regions.resize(op.numRegions());
      for (unsigned r = 0; r < op.numRegions(); ++r) compileBlock<CB, CO>(*op.region(r), compiled.regions[r], compiler);
    }
    for (unsigned i = 0; i < op.numResults(); ++i) compiled.results.push_back(compiler.slotOf(op.result(i)));
    out.ops.push_back(std::move(compiled));
  }
}

RegionExecutor::RegionExecutor(const ir::Block& block, const std::vector<int64_t>* laneShape)
    : root_(std::make_unique<CompiledBlock>()), state_(std::make_unique<State>()), laneShape_(laneShape) {
  Compiler compiler;
  compileBlock<CompiledBlock, CompiledOp>(block, *root_, compiler);
  state_->slots.resize(compiler.numSlots());
}

RegionExecutor::~RegionExecutor() = default;

namespace {

struct Runner {
  std::vector<Tile>& slots;
  std::vector<const Tile*>& scratch;
  EvalEnv env;

  template <class CB>
  void bindArgs(const ir::Op& owner, const CB& block, std::vector<Tile>&& values) {
    if (values.size() != block.args.size())
      fail(owner, env.ctx, "region expects " + std::to_string(block.args.size()) + " arguments, got " +
                               std::to_string(values.size()));
    for (size_t i = 0; i < values.size(); ++i) slots[block.args[i]] = std::move(values[i]);
  }

  // Runs the block's ops; returns copies of its terminator's operands.
  template <class CB>
  std::vector<Tile> runBlock(const CB& block) {
    for (const auto& c : block.ops) {
      const ir::Op& op = *c.op;
      switch (op.kind()) {
        case OpKind::Yield:
        case OpKind::Return: {
          std::vector<Tile> out;
          out.reserve(c.operands.size());
          for (int s : c.operands) out.push_back(slots[s]);
          return out;
        }
        case OpKind::For: runFor(c); break;
        case OpKind::If: runIf(c); break;
        case OpKind::While: runWhile(c); break;
        // The producer's copies land at once here, so running it first, then the consumers, is every order the
        // mbarriers allow. Consumer groups that each run their own tiles (consumer_groups) run one after the other.
        case OpKind::WarpSpecialize: {
          runBlock(c.regions.at(0));
          const int64_t groups = op.hasAttr("consumer_groups") ? op.intAttr("consumer_groups") : 1;
          for (env.ctx.consumerGroup = 0; env.ctx.consumerGroup < groups; ++env.ctx.consumerGroup)
            runBlock(c.regions.at(1));
          env.ctx.consumerGroup = 0;
          break;
        }
        default: {
          scratch.clear();
          for (int s : c.operands) scratch.push_back(&slots[s]);
          std::vector<Tile> results = evaluate(op, OperandList(scratch.data(), scratch.size()), env);
          storeResults(c, std::move(results));
        }
      }
    }
    return {};  // a block without a terminator passes nothing on
  }

  template <class CO>
  void storeResults(const CO& c, std::vector<Tile>&& values) {
    if (values.size() < c.results.size())
      fail(*c.op, env.ctx, "produced " + std::to_string(values.size()) + " values for " +
                               std::to_string(c.results.size()) + " results");
    for (size_t i = 0; i < c.results.size(); ++i) slots[c.results[i]] = std::move(values[i]);
  }

  template <class CO>
  void checkYieldCount(const CO& c, const std::vector<Tile>& values, size_t expected) {
    if (values.size() != expected)
      fail(*c.op, env.ctx, "region yields " + std::to_string(values.size()) + " values, expected " +
                               std::to_string(expected));
  }

  template <class CO>
  void runFor(const CO& c) {
    const ir::Op& op = *c.op;
    if (c.operands.size() < 3 || c.regions.size() != 1) fail(op, env.ctx, "malformed for loop");
    const Tile& lbTile = slots[c.operands[0]];
    ir::Type ivType = lbTile.type;
    if (!ivType.isInt() || ivType.isTile()) fail(op, env.ctx, "loop bounds must be integer scalars");
    const bool isUnsigned = ivType.isUnsigned();
    int64_t lb = lbTile.ints[0];
    int64_t ub = slots[c.operands[1]].ints[0];
    int64_t step = slots[c.operands[2]].ints[0];
    if (isUnsigned ? step == 0 : step <= 0)
      fail(op, env.ctx, "loop step must be positive, got " + std::to_string(step));
    std::vector<Tile> carried;
    for (size_t i = 3; i < c.operands.size(); ++i) carried.push_back(slots[c.operands[i]]);
    const size_t numCarried = carried.size();
    auto below = [&](int64_t iv) {
      return isUnsigned ? static_cast<uint64_t>(iv) < static_cast<uint64_t>(ub) : iv < ub;
    };
    const ir::IntFormat canon(ivType);
    for (int64_t iv = lb; below(iv);) {
      std::vector<Tile> args;
      args.reserve(numCarried + 1);
      args.push_back(Tile::scalarInt(ivType, iv));
      for (Tile& t : carried) args.push_back(std::move(t));
      bindArgs(op, c.regions[0], std::move(args));
      carried = runBlock(c.regions[0]);
      checkYieldCount(c, carried, numCarried);
      // Stop instead of wrapping when the next induction value leaves the type's range.
      int64_t next = canon.wrap(static_cast<uint64_t>(iv) + static_cast<uint64_t>(step));
      if (isUnsigned ? static_cast<uint64_t>(next) <= static_cast<uint64_t>(iv) : next <= iv) break;
      iv = next;
    }
    storeResults(c, std::move(carried));
  }

  template <class CO>
  void runIf(const CO& c) {
    const ir::Op& op = *c.op;
    const Tile& cond = slots[c.operands.at(0)];
    if (!cond.type.isBool() || cond.size() != 1) fail(op, env.ctx, "condition must be an i1 scalar");
    if (c.regions.size() != 2) fail(op, env.ctx, "needs a then and an else region");
    const auto& region = c.regions[cond.ints[0] != 0 ? 0 : 1];
    std::vector<Tile> results = runBlock(region);
    checkYieldCount(c, results, c.results.size());
    storeResults(c, std::move(results));
  }

  template <class CO>
  void runWhile(const CO& c) {
    const ir::Op& op = *c.op;
    if (c.regions.size() != 2) fail(op, env.ctx, "needs a before and an after region");
    std::vector<Tile> carried;
    for (int s : c.operands) carried.push_back(slots[s]);
    for (;;) {
      bindArgs(op, c.regions[0], std::vector<Tile>(carried));
      std::vector<Tile> condition = runBlock(c.regions[0]);
      if (condition.size() != 1 || !condition[0].type.isBool() || condition[0].size() != 1)
        fail(op, env.ctx, "the before region must yield one i1 scalar");
      if (condition[0].ints[0] == 0) break;
      bindArgs(op, c.regions[1], std::move(carried));
      carried = runBlock(c.regions[1]);
      checkYieldCount(c, carried, c.operands.size());
    }
    storeResults(c, std::move(carried));
  }
};

}  // namespace

std::vector<Tile> RegionExecutor::run(std::vector<Tile> args, ProgramContext& ctx) {
  Runner runner{state_->slots, state_->operandScratch, EvalEnv{ctx, laneShape_}};
  if (args.size() != root_->args.size())
    throw Error("region expects " + std::to_string(root_->args.size()) + " arguments, got " +
                std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) state_->slots[root_->args[i]] = std::move(args[i]);
  return runner.runBlock(*root_);
}

}  // namespace tessera::interp::detail
