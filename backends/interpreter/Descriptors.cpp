// Tensor descriptor ops (async_tma_copy reads its block as desc_load does: SharedBuffers.cpp). A descriptor's value
// is a tile holding its plain fields, base then shape then strides (descriptorTile in Interpreter.cpp). desc_load
// reads the block at the given offsets: the elements outside the tensor ([0, shape) in every dimension) are zero
// and never touched, as with a TMA copy; desc_store writes a block's elements inside the tensor, and only those.
#include <utility>

#include "backends/interpreter/OpImpl.h"
#include "ir/TensorDescriptor.h"

namespace tessera::interp::detail {

namespace {

struct DescriptorFields {
  int64_t base;
  std::vector<int64_t> shape, strides;
};

DescriptorFields fieldsOf(const ir::Op& op, const Tile& desc, const ProgramContext& ctx) {
  if (!desc.type.isTensorDesc()) fail(op, ctx, "the first operand must be a tensor descriptor, not " + desc.type.str());
  const size_t rank = desc.type.blockShape().size();
  if (desc.ints.size() != 1 + 2 * rank) fail(op, ctx, "the descriptor's value does not hold its fields");
  DescriptorFields f{desc.ints[0], {}, {}};
  f.shape.assign(desc.ints.begin() + 1, desc.ints.begin() + 1 + static_cast<int64_t>(rank));
  f.strides.assign(desc.ints.begin() + 1 + static_cast<int64_t>(rank), desc.ints.end());
  return f;
}

Tile evalDescField(const ir::Op& op, const DescriptorFields& f, const EvalEnv& env) {
  Tile r(resultType(op, 0, env));
  const std::string& field = op.stringAttr("field");
  if (field == ir::kDescFieldBase) {
    r.ints[0] = f.base;
  } else {
    const auto dim = static_cast<size_t>(op.intAttr("dim"));
    if (dim >= f.shape.size()) fail(op, env.ctx, "dimension " + std::to_string(dim) + " is out of range");
    r.ints[0] = field == ir::kDescFieldShape ? f.shape[dim] : f.strides[dim];
  }
  return r;
}

// The addresses of the block at the offsets operands[1..rank] (a tile of pointers to `element`) and whether each
// lies inside the tensor: [0, shape) in every dimension.
std::pair<Tile, Tile> blockAddresses(const ir::Op& op, OperandList operands, const DescriptorFields& f,
                                     const std::vector<int64_t>& block, ir::Type element, const EvalEnv& env) {
  const size_t rank = block.size();
  if (operands.size() < rank + 1 || f.shape.size() != rank)
    fail(op, env.ctx, "takes a descriptor and one offset per dimension of its block");
  const int64_t bytes = element.storageBytes();
  Tile ptrs(ir::Type::tile(block, ir::Type::ptr(element)));
  Tile mask(ir::Type::tile(block, ir::Type::i1()));
  std::vector<int64_t> index(rank, 0);  // row-major walk over the block
  for (int64_t i = 0; i < ptrs.size(); ++i) {
    bool inside = true;
    int64_t address = f.base;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t coord = operands[d + 1]->ints[0] + index[d];
      inside = inside && coord >= 0 && coord < f.shape[d];
      address += coord * f.strides[d] * bytes;
    }
    ptrs.ints[i] = address;
    mask.ints[i] = inside;
    for (size_t d = rank; d-- > 0 && ++index[d] == block[d];) index[d] = 0;
  }
  return {std::move(ptrs), std::move(mask)};
}

Tile evalDescLoad(const ir::Op& op, OperandList operands, const DescriptorFields& f, ir::Type result,
                  const EvalEnv& env) {
  if (operands.size() != result.shape().size() + 1)
    fail(op, env.ctx, "takes a descriptor and one offset per dimension of its block");
  const auto [ptrs, mask] = blockAddresses(op, operands, f, result.shape(), result.element(), env);
  return loadElements(op, ptrs, &mask, nullptr, result, env.ctx);
}

// desc_store: the elements of the block (the last operand) that lie inside the tensor; the others are not written.
void evalDescStore(const ir::Op& op, OperandList operands, const DescriptorFields& f, const EvalEnv& env) {
  const Tile& value = *operands.back();
  const std::vector<int64_t>& block = value.type.shape();
  if (operands.size() != block.size() + 2)
    fail(op, env.ctx, "takes a descriptor, one offset per dimension of its block and a value");
  const auto [ptrs, mask] = blockAddresses(op, operands, f, block, value.type.element(), env);
  storeElements(op, ptrs, &mask, value, env.ctx);
}

}  // namespace

Tile evalDescriptorOp(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const DescriptorFields f = fieldsOf(op, *operands[0], env.ctx);
  if (op.is(ir::OpKind::DescStore)) {
    evalDescStore(op, operands, f, env);
    return Tile();
  }
  return op.is(ir::OpKind::DescField) ? evalDescField(op, f, env)
                                      : evalDescLoad(op, operands, f, resultType(op, 0, env), env);
}

Tile loadDescriptorBlock(const ir::Op& op, OperandList operands, ir::Type block, const EvalEnv& env) {
  return evalDescLoad(op, operands, fieldsOf(op, *operands[0], env.ctx), block, env);
}

}  // namespace tessera::interp::detail
