// run(): argument validation and the launch-grid loop; the per-program work is the region executor's.
#include "backends/interpreter/Interpreter.h"

#include "backends/interpreter/Executor.h"
#include "ir/TensorDescriptor.h"

namespace tessera::interp {

namespace {

const char* argKindName(const Arg& a) {
  if (std::holds_alternative<int64_t>(a)) return "an integer";
  if (std::holds_alternative<double>(a)) return "a double";
  if (std::holds_alternative<TensorDesc>(a)) return "a tensor descriptor";
  return "a buffer";
}

Tile argumentTile(const ir::Function& f, unsigned i, const Arg& arg, ProgramContext& ctx) {
  ir::Type t = f.argument(i)->type();
  auto mismatch = [&](const char* expected) {
    return Error("kernel '" + f.name() + "' parameter " + std::to_string(i) + " (" + t.str() + ") expects " +
                     expected + ", got " + argKindName(arg),
                 f.loc());
  };
  if (t.isTile())
    throw Error("kernel '" + f.name() + "' parameter " + std::to_string(i) + " has tile type " + t.str() +
                    "; kernel parameters must be scalars or pointers",
                f.loc());
  if (t.isTensorDesc()) {
    const TensorDesc* d = std::get_if<TensorDesc>(&arg);
    if (!d) throw mismatch("a tensor descriptor");
    const std::string& hint = f.argument(i)->nameHint();
    Tile tile = descriptorTile(t, *d, "kernel '" + f.name() + "': descriptor argument '" +
                                          (hint.empty() ? "#" + std::to_string(i) : hint) + "'");
    if (d->buffer.data) ctx.buffers.push_back(d->buffer);
    return tile;
  }
  if (t.isPtr()) {
    const Buffer* buffer = std::get_if<Buffer>(&arg);
    if (!buffer) throw mismatch("a buffer");
    if (buffer->data) ctx.buffers.push_back(*buffer);
    return Tile::scalarInt(t, static_cast<int64_t>(reinterpret_cast<uintptr_t>(buffer->data)));
  }
  if (t.isInt()) {
    const int64_t* v = std::get_if<int64_t>(&arg);
    if (!v) throw mismatch("an integer");
    return Tile::scalarInt(t, t.isBool() ? *v != 0 : *v);  // other ints wrap to the parameter's type
  }
  const double* v = std::get_if<double>(&arg);
  if (!v) throw mismatch("a double");
  if (t.isFP8()) throw Error("kernel '" + f.name() + "' parameter " + std::to_string(i) + " has fp8 type", f.loc());
  return Tile::scalarFloat(t, *v);
}

}  // namespace

Tile descriptorTile(ir::Type t, const TensorDesc& d, const std::string& context) {
  const ir::TensorDescriptorFields fields{reinterpret_cast<uintptr_t>(d.buffer.data), d.shape, d.strides, d.block};
  if (auto why = ir::descriptorError(fields, t.element())) throw Error(context + ": " + *why);
  if (d.block != t.blockShape())
    throw Error(context + " (" + t.str() + ") reads blocks of its type's shape; the descriptor's block differs");
  Tile tile;
  tile.type = t;
  tile.ints.push_back(static_cast<int64_t>(fields.base));
  tile.ints.insert(tile.ints.end(), d.shape.begin(), d.shape.end());
  tile.ints.insert(tile.ints.end(), d.strides.begin(), d.strides.end());
  return tile;
}

void run(const ir::Function& f, const std::vector<Arg>& args, Grid grid, std::ostream* debugOut) {
  if (args.size() != f.numArguments())
    throw Error("kernel '" + f.name() + "' takes " + std::to_string(f.numArguments()) + " arguments, got " +
                    std::to_string(args.size()),
                f.loc());
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] <= 0)
      throw Error("the launch grid must be positive in every dimension; dimension " + std::to_string(axis) + " is " +
                      std::to_string(grid[axis]),
                  f.loc());
  ProgramContext ctx;
  ctx.numPrograms = grid;
  ctx.out = debugOut;
  std::vector<Tile> argTiles;
  for (unsigned i = 0; i < args.size(); ++i) argTiles.push_back(argumentTile(f, i, args[i], ctx));

  detail::RegionExecutor executor(*f.body());
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        ctx.programId = {x, y, z};
        ctx.sharedBuffers.clear();
        executor.run(argTiles, ctx);
      }
}

}  // namespace tessera::interp
