// desc_field: a tensor descriptor parameter's field, read from the parameter's bytes at the offsets the runtimes
// write it (DescriptorParameter.h). desc_load has no lowering of its own: the expand-descriptor-loads pass turns
// it into pointer arithmetic over these fields and a masked load, the same on every target, or
// async-copy-dot-operands into a TMA copy. desc_store likewise, except where expand-descriptor-loads keeps it for
// a TMA store (LowerTmaCopies.cpp).
#include "backends/common/DescriptorParameter.h"
#include "backends/common/KernelLowering.h"
#include "ir/TensorDescriptor.h"

namespace tessera::backends {

void KernelLowering::lowerDescriptorOp(const ir::Op& op) {
  if (op.is(ir::OpKind::DescLoad))
    fail(op, "run expand-descriptor-loads first (the default pipeline does): it rewrites desc_load into a masked "
             "load");
  if (op.is(ir::OpKind::DescStore)) {
    if (hooks_.descriptorsCarryTensorMaps()) return lowerTmaStore(op);
    fail(op, "run expand-descriptor-loads first (the default pipeline does): it rewrites desc_store into a masked "
             "store");
  }
  const ir::Type desc = op.operand(0)->type();
  const std::string& field = op.stringAttr("field");
  int64_t offset = kDescriptorBaseOffset;
  if (field != ir::kDescFieldBase) {
    const int dim = static_cast<int>(op.intAttr("dim"));
    const int rank = static_cast<int>(desc.blockShape().size());
    offset = field == ir::kDescFieldShape ? descriptorShapeOffset(dim) : descriptorStrideOffset(rank, dim);
  }
  llvm::Value* param = get(op.operand(0))[0];  // a pointer to the parameter's bytes (LoweringHooks)
  llvm::Value* at = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), param, static_cast<uint64_t>(offset));
  llvm::Value* value = b_.CreateAlignedLoad(b_.getInt64Ty(), at, llvm::Align(8), "desc." + field);
  const ir::Type result = op.result(0)->type();
  if (result.isPtr()) value = b_.CreateIntToPtr(value, regType(result));
  set(op.result(0), {value});
}

}  // namespace tessera::backends
