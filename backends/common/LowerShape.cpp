// Constants, ids, ranges, and the ops that move elements between positions: splat, broadcast, expand_dims,
// reshape, trans, cat, join, split (convert_layout: LowerConvertLayout.cpp). Each shape op is an exchange whose
// coordinate maps encode the op's semantics; the exchange remaps registers when it can and uses shared memory
// otherwise.
#include "backends/common/KernelLowering.h"

#include <llvm/IR/ConstantRange.h>

namespace tessera::backends {

using ir::OpKind;

void KernelLowering::lowerConstantLike(const ir::Op& op) {
  ir::Type type = op.result(0)->type();
  const ThreadMap& map = mapOf(type, op.name());
  switch (op.kind()) {
    case OpKind::Constant: {
      const ir::Attr& v = op.attr("value");
      ir::Type elem = type.element();
      llvm::Type* ty = regType(elem);
      llvm::Value* c = nullptr;
      if (elem.isPtr() || elem.isFP8()) fail(op, "constants of type " + elem.str() + " are not allowed");
      if (elem.isFloat()) {
        if (!v.isFloat() && !v.isInt()) fail(op, "a float constant needs a numeric 'value'");
        c = llvm::ConstantFP::get(ty, v.isFloat() ? v.getFloat() : static_cast<double>(v.getInt()));
      } else if (v.isBool()) {
        c = llvm::ConstantInt::get(ty, v.getBool() ? 1 : 0);
      } else if (v.isInt()) {
        c = llvm::ConstantInt::get(ty, static_cast<uint64_t>(v.getInt()), true);
      } else {
        fail(op, "an integer constant needs an int or bool 'value'");
      }
      set(op.result(0), Regs(map.numRegs(), c));
      return;
    }
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      int axis = static_cast<int>(op.intAttr("axis"));
      if (axis < 0 || axis > 2) fail(op, "axis must be 0, 1 or 2");
      llvm::Value* id = op.is(OpKind::ProgramId) ? hooks_.programId(b_, axis) : hooks_.numPrograms(b_, axis);
      // Grids have fewer than 2^31 programs per axis: the lowering of a division by a value derived from them
      // (the grouped tile order's `pid / width`) then needs no guard for MIN / -1.
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(id))
        call->addRangeRetAttr(llvm::ConstantRange(llvm::APInt(32, op.is(OpKind::ProgramId) ? 0 : 1),
                                                  llvm::APInt(32, uint64_t(1) << 31)));
      set(op.result(0), {id});
      return;
    }
    case OpKind::Arange: {
      int64_t start = op.intAttr("start");
      Regs regs;
      for (int64_t r = 0; r < map.numRegs(); ++r)
        regs.push_back(b_.CreateAdd(coord(map, r, 0), b_.getInt32(static_cast<uint32_t>(start))));
      set(op.result(0), regs);
      return;
    }
    case OpKind::Splat:
      set(op.result(0), Regs(map.numRegs(), get(op.operand(0))[0]));
      return;
    default:
      fail(op, "not a constant-like op");
  }
}

namespace {

Coords unflatten(int64_t index, const std::vector<int64_t>& shape) {
  Coords c(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    c[d] = index % shape[d];
    index /= shape[d];
  }
  return c;
}

int64_t flatten(const Coords& c, const std::vector<int64_t>& shape) {
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + c[d];
  return idx;
}

}  // namespace

void KernelLowering::lowerShapeOp(const ir::Op& op) {
  ir::Type resultType = op.result(0)->type();
  ir::Type element = resultType.element();
  const std::vector<int64_t>& outShape = resultType.shape();
  const ir::Value* in = op.operand(0);
  const std::vector<int64_t> inShape = in->type().shape();
  const ThreadMap& src = mapOf(in->type(), op.name());
  const Regs& srcRegs = get(in);
  const CoordFn identity = [](const Coords& c) { return c; };

  auto single = [&](const CoordFn& outToIn) {
    const ThreadMap& dst = mapOf(resultType, op.name());
    set(op.result(0), exchange(op, element, inShape, {{&src, &srcRegs, identity}}, {{&dst, outToIn}})[0]);
  };

  switch (op.kind()) {
    case OpKind::Broadcast:
      return single([inShape](const Coords& c) {
        Coords r = c;
        for (size_t d = 0; d < r.size(); ++d)
          if (inShape[d] == 1) r[d] = 0;
        return r;
      });
    case OpKind::ExpandDims: {
      int axis = static_cast<int>(op.intAttr("axis"));
      return single([axis](const Coords& c) {
        Coords r = c;
        r.erase(r.begin() + axis);
        return r;
      });
    }
    case OpKind::Reshape:
      return single([inShape, outShape](const Coords& c) { return unflatten(flatten(c, outShape), inShape); });
    case OpKind::Trans: {
      std::vector<int64_t> perm = op.attr("perm").getIntArray();
      return single([perm](const Coords& j) {
        Coords k(j.size());
        for (size_t i = 0; i < perm.size(); ++i) k[perm[i]] = j[i];
        return k;
      });
    }
    case OpKind::Cat: {
      const ThreadMap& srcB = mapOf(op.operand(1)->type(), op.name());
      const ThreadMap& dst = mapOf(resultType, op.name());
      int64_t half = inShape[0];
      CoordFn second = [half](const Coords& c) {
        Coords r = c;
        r[0] += half;
        return r;
      };
      set(op.result(0), exchange(op, element, outShape,
                                 {{&src, &srcRegs, identity}, {&srcB, &get(op.operand(1)), second}},
                                 {{&dst, identity}})[0]);
      return;
    }
    case OpKind::Join: {
      const ThreadMap& srcB = mapOf(op.operand(1)->type(), op.name());
      const ThreadMap& dst = mapOf(resultType, op.name());
      auto append = [](int64_t k) {
        return CoordFn([k](const Coords& c) {
          Coords r = c;
          r.push_back(k);
          return r;
        });
      };
      set(op.result(0), exchange(op, element, outShape,
                                 {{&src, &srcRegs, append(0)}, {&srcB, &get(op.operand(1)), append(1)}},
                                 {{&dst, identity}})[0]);
      return;
    }
    case OpKind::Split: {
      const ThreadMap& dst0 = mapOf(op.result(0)->type(), op.name());
      const ThreadMap& dst1 = mapOf(op.result(1)->type(), op.name());
      auto append = [](int64_t k) {
        return CoordFn([k](const Coords& c) {
          Coords r = c;
          r.push_back(k);
          return r;
        });
      };
      std::vector<Regs> parts =
          exchange(op, element, inShape, {{&src, &srcRegs, identity}}, {{&dst0, append(0)}, {&dst1, append(1)}});
      set(op.result(0), parts[0]);
      set(op.result(1), parts[1]);
      return;
    }
    default:
      fail(op, "not a shape op");
  }
}

}  // namespace tessera::backends
