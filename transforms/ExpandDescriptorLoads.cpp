// expand-descriptor-loads: every `desc_load` becomes pointer arithmetic over its descriptor's fields and a masked
// `load` (masked-off elements read as zero), so that every target lowers descriptor loads as it lowers pointer
// loads, and the passes after it (coalescing, async copies of dot operands, pipelining) treat them the same.
// Every `desc_store` becomes the same pointers and mask and a masked `store` (nothing written outside the tensor).
//
//   %t = desc_load %d, %m0, %k0 : tile<64x32xf16>
// becomes, with the fields read once at the function's entry (%base, %shape0, %shape1, %stride0),
//   %r = add (splat %m0), (arange 0..64)        ; rows, i32      %c = add (splat %k0), (arange 0..32)
//   %mask = (0 <= %r < %shape0)[:, None] & (0 <= %c < %shape1)[None, :]   (compared as i64)
//   %ptrs = %base + (i64 %r * %stride0)[:, None] + (i64 %c)[None, :]
//   %t = load %ptrs, %mask : tile<64x32xf16>
// A block read through a reshape that only drops unit dimensions (a [1, BN, d] block of a [batch * heads, seq, d]
// tensor used as a [BN, d] tile), or stored from one, is expanded at the tile's rank: each dropped dimension's
// offset moves the base pointer and its bounds check is one scalar in the mask, so the tile needs no reshape (an
// exchange through shared memory once layouts are assigned) and its addresses are those of a 2-d load.
// The innermost stride is not read: every launch checks that it is 1 (ir/TensorDescriptor.h), and the unit stride
// is what lets coalescing see contiguous rows. The same rules make the base 16-byte aligned and the outer strides
// multiples of 16 bytes, which the expansion passes on as `hint {multiple_of}` for vectorized accesses, as it does
// the launch's specialization of the shape (a descriptor argument's `divisibility`: its innermost dimension a
// multiple of it, which keeps masks constant over the vectorized runs of its rows).
//
// Except on targets that copy descriptor blocks with TMA (LayoutPolicy::dotOperandTmaSwizzle): there a desc_load
// whose only use is a dot operand (directly, or through reshapes that drop unit dimensions and a 2-d transpose,
// each the only use of the last) stays, for async-copy-dot-operands to turn into an async_tma_copy into the
// operand's shared buffer, and its descriptor argument gets the tensor map's swizzle (kTensorMapSwizzleAttr). Such
// a desc_load must run at most once per iteration of a `for` directly in the program's body (the function's, or a
// persistent kernel's tile loop's), once per tile, or once outside any loop, which is what lets the copy's barrier
// phases be counted (analysis/ProgramIterations.h); and all the copies through one descriptor must agree on its
// swizzle. Every other desc_load is expanded.
//
// Likewise on targets that store descriptor blocks with TMA (LayoutPolicy::storesDescriptorsWithTma) a desc_store
// through a kernel parameter whose block a tensor map's box can hold (inner rows of a multiple of 16 bytes; block
// dimensions are at most 256, and tiles have at most 3) stays, for the target's lowering to stage in shared memory
// and store with TMA (its scratch: analysis/SharedScratch.h), swizzled as its descriptor's TMA copies are, else as
// widely as its rows allow. Every other desc_store is expanded.
#include <map>
#include <tuple>
#include <vector>

#include "ir/Builder.h"
#include "ir/TensorDescriptor.h"
#include "transforms/AssignLayouts.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/PassManager.h"
#include "transforms/analysis/ProgramIterations.h"

namespace tessera::transforms {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

constexpr int64_t kDescriptorAlignBytes = 16;  // base and outer strides, in bytes (the launch's rules)

// Whether `load` runs at most once per iteration of a `for` in the program's body (the function's, or a persistent
// kernel's tile loop's: analysis/ProgramIterations.h counts its iterations over the program), once per tile of a
// persistent kernel, or once in the function's body itself.
bool runsOncePerTopLevelIteration(const Op& load) {
  const Op* parent = load.parentOp();
  return !parent || countsProgramIterations(*parent) || isTileLoop(*parent);
}

class ExpandDescriptorLoadsPass : public Pass {
 public:
  explicit ExpandDescriptorLoadsPass(const PassOptions& options) : options_(options) {}
  const char* name() const override { return "expand-descriptor-loads"; }

  void run(ir::Function& f) override {
    // First every access that cannot stay for TMA: then the dots whose other operand came from one of them (the
    // Q that both of attention's key loops read) see it as the load it becomes when the target decides.
    std::vector<Op*> expanded, candidates;
    f.walk([&](Op* op) {
      if (op->is(OpKind::DescLoad) && dotOperandUse(*op))
        candidates.push_back(op);
      else if (op->is(OpKind::DescLoad) || (op->is(OpKind::DescStore) && !storedWithTma(f, *op)))
        expanded.push_back(op);
    });
    if (expanded.empty() && candidates.empty()) return;
    fields_.clear();
    // What the launch's specialization says the innermost dimension of a descriptor's shape is a multiple of (its
    // `divisibility` argument attribute, jit/Specialization.h): masks are then constant over runs that long.
    shapeDivisibility_.clear();
    for (unsigned i = 0; i < f.numArguments(); ++i)
      if (auto it = f.argAttrs(i).find("divisibility");
          f.argument(i)->type().isTensorDesc() && it != f.argAttrs(i).end() && it->second.isInt())
        shapeDivisibility_[f.argument(i)] = it->second.getInt();
    expandAll(f, expanded);
    std::vector<Op*> rest;
    for (Op* op : candidates)
      if (!copiedWithTma(f, *op)) rest.push_back(op);
    expandAll(f, rest);
  }

 private:
  void expandAll(ir::Function& f, const std::vector<Op*>& ops) {
    entry_ = ir::Builder(f.body(), f.body()->front());
    for (Op* op : ops) expand(*op);
    // Erased last: the entry builder may be inserting before one of them.
    for (Op* op : ops) op->parentBlock()->erase(op);
  }

  // The dot operand `load`'s block reaches, directly or through single-use views (reshapes that only drop or add
  // unit dimensions, a 2-d transpose: async-copy-dot-operands' chains), each the only use of the last; else null.
  static const ir::Use* dotOperandUse(const Op& load) {
    if (load.result(0)->type().shape().back() == 1) return nullptr;  // TMA's inner box: at least 16 bytes
    const Value* result = load.result(0);
    while (result->uses().size() == 1) {
      const Op& user = *result->uses()[0].user;
      if (!isDescriptorBlockView(user)) break;
      result = user.result(0);
    }
    if (result->uses().size() != 1) return nullptr;
    const ir::Use& use = result->uses()[0];
    return use.user->is(OpKind::Dot) && use.operandIndex <= 1 ? &use : nullptr;
  }

  // Whether `load` stays for a TMA copy (see above); if so, its descriptor argument records the map's swizzle.
  bool copiedWithTma(ir::Function& f, const Op& load) {
    if (!options_.layoutPolicy || !runsOncePerTopLevelIteration(load)) return false;
    const ir::Use* found = dotOperandUse(load);
    if (!found) return false;
    const ir::Use& use = *found;
    const std::optional<int64_t> swizzle = options_.layoutPolicy->dotOperandTmaSwizzle(*use.user, use.operandIndex);
    const Value* desc = load.operand(0);
    if (!swizzle || !desc->isBlockArg() || desc->ownerBlock() != f.body()) return false;
    ir::AttrDict& attrs = f.argAttrs(desc->index());
    auto it = attrs.find(ir::kTensorMapSwizzleAttr);
    if (it != attrs.end()) return it->second.isInt() && it->second.getInt() == *swizzle;
    attrs[ir::kTensorMapSwizzleAttr] = ir::Attr::integer(*swizzle);
    return true;
  }

  // Whether `store` stays for a TMA store (see above). A descriptor no TMA copy has given a swizzle gets the widest
  // its rows allow (128, 64 or 32 bytes, else none): the threads' writes of the staging then spread over the banks
  // (unswizzled rows of 128 bytes or more put a warp's rows in the same banks).
  bool storedWithTma(ir::Function& f, const Op& store) {
    if (!options_.layoutPolicy || !options_.layoutPolicy->storesDescriptorsWithTma()) return false;
    const Value* desc = store.operand(0);
    if (!desc->isBlockArg() || desc->ownerBlock() != f.body()) return false;
    const std::vector<int64_t>& block = desc->type().blockShape();
    const int64_t rowBytes = block.empty() ? 0 : block.back() * desc->type().element().storageBytes();
    if (rowBytes == 0 || rowBytes % 16 != 0) return false;
    ir::AttrDict& attrs = f.argAttrs(desc->index());
    if (!attrs.count(ir::kTensorMapSwizzleAttr)) {
      int64_t swizzle = 0;
      for (int64_t s : {128, 64, 32})
        if (rowBytes % s == 0) {
          swizzle = s;
          break;
        }
      attrs[ir::kTensorMapSwizzleAttr] = ir::Attr::integer(swizzle);
    }
    return true;
  }

  // A field of `desc`, read at the function's entry once for all the loads through it.
  Value* field(Value* desc, const std::string& name, int dim) {
    Value*& v = fields_[{desc, name, dim}];
    if (v) return v;
    const int64_t elementBytes = desc->type().element().storageBytes();
    v = entry_.descField(desc, name, dim);
    if (name == ir::kDescFieldBase)
      v = entry_.hint(v, {{"multiple_of", ir::Attr::integer(kDescriptorAlignBytes)}});
    else if (name == ir::kDescFieldStride && kDescriptorAlignBytes % elementBytes == 0)
      v = entry_.hint(v, {{"multiple_of", ir::Attr::integer(kDescriptorAlignBytes / elementBytes)}});
    else if (name == ir::kDescFieldShape && dim + 1 == static_cast<int>(desc->type().blockShape().size()))
      if (auto it = shapeDivisibility_.find(desc); it != shapeDivisibility_.end())
        v = entry_.hint(v, {{"multiple_of", ir::Attr::integer(it->second)}});
    return v;
  }

  static Value* broadcastTo(ir::Builder& b, Value* v, const std::vector<int64_t>& shape) {
    return v->type().shape() == shape ? v : b.broadcast(v, shape);
  }

  // `v`, a 1-d tile, as a rank-`rank` tile whose dimensions other than `dim` are 1.
  static Value* along(ir::Builder& b, Value* v, int dim, int rank) {
    for (int d = 0; d < dim; ++d) v = b.expandDims(v, 0);
    for (int d = dim + 1; d < rank; ++d) v = b.expandDims(v, d);
    return v;
  }

  // The block's dimensions that `shape` keeps, in order, when `shape` is the block without some of its unit
  // dimensions (a reshape that only drops those: a [1, BN, d] block of a [batch * heads, seq, d] tensor read as a
  // [BN, d] tile); empty otherwise.
  static std::vector<int> keptDimensions(const std::vector<int64_t>& block, const std::vector<int64_t>& shape) {
    std::vector<int> kept;
    for (int d = 0; d < static_cast<int>(block.size()); ++d) {
      if (kept.size() < shape.size() && block[d] == shape[kept.size()]) kept.push_back(d);
      else if (block[d] != 1) return {};
    }
    return kept.size() == shape.size() && shape.size() < block.size() ? kept : std::vector<int>{};
  }

  // The reshape that drops only unit dimensions of `op`'s block (a desc_load's only user), or that adds them to a
  // desc_store's value (a reshape, or the expand_dims the frontend adds to store a tile of lower rank), or null.
  static Op* unitDropOf(Op& op, const std::vector<int64_t>& block) {
    Op* reshape = nullptr;
    if (op.is(OpKind::DescStore)) {
      reshape = op.operand(op.numOperands() - 1)->definingOp();
      if (!reshape || !(reshape->is(OpKind::Reshape) || reshape->is(OpKind::ExpandDims))) return nullptr;
      return keptDimensions(block, reshape->operand(0)->type().shape()).empty() ? nullptr : reshape;
    }
    if (op.result(0)->uses().size() != 1) return nullptr;
    reshape = op.result(0)->uses()[0].user;
    if (!reshape->is(OpKind::Reshape)) return nullptr;
    return keptDimensions(block, reshape->result(0)->type().shape()).empty() ? nullptr : reshape;
  }

  void expand(Op& op) {
    Value* desc = op.operand(0);
    const bool isStore = op.is(OpKind::DescStore);
    Value* value = isStore ? op.operand(op.numOperands() - 1) : op.result(0);
    const std::vector<int64_t>& block = value->type().shape();
    const int rank = static_cast<int>(block.size());
    ir::Builder b(op.parentBlock(), &op);
    b.setLoc(op.loc());
    entry_.setLoc(op.loc());

    // A block read as a tile without some of its unit dimensions (or stored from one) is expanded at the tile's
    // rank: a dropped dimension's offset moves the base, and its bounds check is one scalar.
    Op* unitDrop = unitDropOf(op, block);
    Value* tile = !unitDrop ? value : isStore ? unitDrop->operand(0) : unitDrop->result(0);
    const std::vector<int64_t>& tileShape = tile->type().shape();
    std::vector<int> kept = unitDrop ? keptDimensions(block, tileShape) : std::vector<int>{};
    if (!unitDrop)
      for (int d = 0; d < rank; ++d) kept.push_back(d);
    const int tileRank = static_cast<int>(tileShape.size());

    Value* base = field(desc, ir::kDescFieldBase, -1);
    Value* droppedInside = nullptr;  // i1: every dropped dimension's offset is inside the tensor
    for (int d = 0, k = 0; d < rank; ++d) {
      if (k < tileRank && kept[k] == d) {
        ++k;
        continue;
      }
      Value* index = op.operand(1 + d);
      Value* wide = b.cast(index, Type::i64());
      Value* below = b.cmp("lt", wide, field(desc, ir::kDescFieldShape, d));
      Value* inside = b.binary(OpKind::And, b.cmp("ge", index, b.constantInt(0, Type::i32())), below);
      droppedInside = droppedInside ? b.binary(OpKind::And, droppedInside, inside) : inside;
      Value* offset = d + 1 == rank ? wide : b.binary(OpKind::Mul, wide, field(desc, ir::kDescFieldStride, d));
      base = b.addptr(base, offset);
    }

    // Built up one dimension at a time: after dimension k, the tiles have shape tileShape[0..k] x 1 x ... x 1.
    std::vector<int64_t> shape(static_cast<size_t>(tileRank), 1);
    Value* ptrs = b.splat(base, shape);
    Value* mask = nullptr;
    for (int k = 0; k < tileRank; ++k) {
      const int d = kept[k];
      shape[k] = block[d];
      // One op-building call per statement: C++ leaves the order of a call's arguments unspecified (gcc and clang
      // differ), and the printed IR must not depend on the compiler.
      Value* iota = b.arange(0, block[d]);
      Value* index = b.binary(OpKind::Add, b.splat(op.operand(1 + d), {block[d]}), iota);
      Value* wide = b.cast(index, Type::i64());
      Value* below = b.cmp("lt", wide, b.splat(field(desc, ir::kDescFieldShape, d), {block[d]}));
      Value* zeros = b.splat(b.constantInt(0, Type::i32()), {block[d]});
      Value* inside = b.binary(OpKind::And, b.cmp("ge", index, zeros), below);
      Value* offset = d + 1 == rank ? wide
                                    : b.binary(OpKind::Mul, wide,
                                               b.splat(field(desc, ir::kDescFieldStride, d), {block[d]}));
      Value* offsetHere = broadcastTo(b, along(b, offset, k, tileRank), shape);
      ptrs = b.addptr(broadcastTo(b, ptrs, shape), offsetHere);
      Value* insideHere = broadcastTo(b, along(b, inside, k, tileRank), shape);
      mask = mask ? b.binary(OpKind::And, broadcastTo(b, mask, shape), insideHere) : insideHere;
    }
    if (droppedInside) mask = b.binary(OpKind::And, mask, b.splat(droppedInside, shape));
    if (isStore) {
      b.store(ptrs, tile, mask);
      return;
    }
    Value* loaded = b.load(ptrs, mask);
    loaded->setNameHint(tile->nameHint());
    tile->replaceAllUsesWith(loaded);
    if (unitDrop) unitDrop->parentBlock()->erase(unitDrop);
  }

  PassOptions options_;
  ir::Builder entry_;
  std::map<std::tuple<Value*, std::string, int>, Value*> fields_;
  std::map<const Value*, int64_t> shapeDivisibility_;
};

}  // namespace

std::unique_ptr<Pass> createExpandDescriptorLoadsPass(const PassOptions& options) {
  return std::make_unique<ExpandDescriptorLoadsPass>(options);
}

}  // namespace tessera::transforms
