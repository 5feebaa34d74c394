// make-persistent: the kernel becomes a persistent one. Instead of one program per tile of the launch grid, the
// launch starts at most as many programs as the GPU holds at once, and each loops over the tiles a static tile
// scheduler deals it: program p runs tiles p, p + P, p + 2P, ... of the grid's gx * gy * gz tiles (P programs),
// in the order the hardware would start them (x fastest). The launch passes the grid it was given as three
// trailing i32 arguments (jit/LoadedKernel.cpp), so
//
//   func @k(%a: ptr<f16>, ...) {                       func @k(%a: ptr<f16>, ..., %grid_x: i32, %grid_y: i32, %grid_z: i32)
//     %m = program_id {axis = 0}                          attributes {persistent = true} {
//     %n = program_id {axis = 1}              ->           %p = program_id {axis = 0}; %P = num_programs {axis = 0}
//     ... body ...                                         for %t = %p to %grid_x * %grid_y * %grid_z step %P {persistent_tiles = true} {
//     return                                                 %m = rem %t, %grid_x; %n = rem (div %t, %grid_x), %grid_y
//   }                                                        ... body, num_programs {axis = d} read as %grid_d ...
//                                                          }
//                                                          return
//
// Each tile computes what its own program would have: a program id is the tile's coordinate and num_programs the
// grid's extent. What persistence buys is no block launch and teardown per tile and no tail wave of partially
// filled multiprocessors; what does not depend on the tile (thread offsets, LLVM's hoisted invariants) is computed
// once per program. pipeline-loops leaves the tile loop itself alone (its copies of later tiles would multiply
// every buffer the tile copies once, e.g. attention's Q, by num_stages) and pipelines the loops inside it as
// before; async-copy-dot-operands places its buffers in the tile (ir::programBody), so that their bytes are free
// for the epilogue, as without persistence.
//
// Runs first, before anything else in the default pipeline, when PassOptions::persistent is set; a function
// already made persistent (attribute `persistent`) is left as it is.
#include <algorithm>
#include <vector>

#include "ir/Builder.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

class MakePersistentPass : public Pass {
 public:
  const char* name() const override { return "make-persistent"; }

  void run(ir::Function& f) override {
    if (f.attrs().count(ir::kPersistentAttr)) return;
    ir::Block& body = *f.body();
    Op* ret = body.terminator();
    if (!ret || !ret->is(OpKind::Return))
      throw Error("make-persistent: the body of @" + f.name() + " does not end with 'return'", f.loc());
    std::vector<Op*> tileOps;  // what one program did: everything but the return
    for (auto& op : body.ops())
      if (op.get() != ret) tileOps.push_back(op.get());

    // The grid the launch was given, and the static schedule of its tiles over the programs that run.
    Value* grid[3];
    for (int d = 0; d < 3; ++d) {
      grid[d] = f.addArgument(Type::i32());
      grid[d]->setNameHint(std::string("grid_") + "xyz"[d]);
    }
    ir::Builder b(&body, ret);
    b.setLoc(f.loc());
    Value* tiles = b.binary(OpKind::Mul, b.binary(OpKind::Mul, grid[0], grid[1]), grid[2]);
    Value* first = b.programId(0);
    Value* programs = b.numPrograms(0);
    Op* loop = b.forOp(first, tiles, programs, {});
    loop->setAttr(ir::kPersistentTilesAttr, ir::Attr::boolean(true));
    ir::Block& tileBody = *loop->region(0);
    first->setNameHint("program");
    programs->setNameHint("programs");
    tiles->setNameHint("tiles");
    tileBody.argument(0)->setNameHint("tile");
    for (Op* op : tileOps) tileBody.append(body.remove(op));
    ir::Builder end;
    end.setInsertionPointToEnd(&tileBody);
    end.setLoc(f.loc());
    end.yield({});

    // A program id is the tile's coordinate (computed once, at the top of the tile, for the axes read);
    // num_programs the grid's extent.
    std::vector<Op*> replaced;
    bool read[3] = {false, false, false};
    for (Op* op : tileOps)
      op->walk([&](Op* inner) {
        if (!inner->is(OpKind::ProgramId) && !inner->is(OpKind::NumPrograms)) return;
        replaced.push_back(inner);
        if (inner->is(OpKind::ProgramId)) read[inner->attr("axis").getInt()] = true;
      });
    Value* coordinate[3] = {nullptr, nullptr, nullptr};
    ir::Builder top(&tileBody, tileBody.front());
    top.setLoc(f.loc());
    // Axis d's coordinate is (tile / (grid_0 * ... * grid_{d-1})) % grid_d; the last axis needs no remainder.
    Value* inner = tileBody.argument(0);
    for (int axis = 0; axis < 3; ++axis) {
      if (read[axis]) coordinate[axis] = axis == 2 ? inner : top.binary(OpKind::Rem, inner, grid[axis]);
      if (!std::any_of(read + axis + 1, read + 3, [](bool r) { return r; })) break;
      inner = top.binary(OpKind::Div, inner, grid[axis]);
    }
    for (Op* op : replaced) {
      const auto axis = static_cast<size_t>(op->attr("axis").getInt());
      Value* tileValue = op->is(OpKind::ProgramId) ? coordinate[axis] : grid[axis];
      if (tileValue->nameHint().empty()) tileValue->setNameHint(op->result(0)->nameHint());  // `%pid` stays `%pid`
      op->result(0)->replaceAllUsesWith(tileValue);
      op->parentBlock()->erase(op);
    }
    f.attrs()[ir::kPersistentAttr] = ir::Attr::boolean(true);
  }
};

}  // namespace

std::unique_ptr<Pass> createMakePersistentPass() { return std::make_unique<MakePersistentPass>(); }

}  // namespace tessera::transforms
