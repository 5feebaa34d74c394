// requiredScratchBytes: the shared-memory scratch each op's lowering uses, so the allocation pass and the
// lowering agree. Mirrors the layouts used in LowerShape/LowerReduce/LowerMemory/LowerDot.
#include "backends/common/KernelLowering.h"

namespace tessera::backends {

using ir::OpKind;

namespace {

int64_t bytesOf(ir::Type t) {
  ir::Type e = t.element();
  if (e.isPtr()) return 8;
  if (e.isBool()) return 1;
  return e.bitWidth() / 8;
}

Coords dropDim(const Coords& c, int axis) {
  Coords r = c;
  r.erase(r.begin() + axis);
  return r;
}

}  // namespace

int64_t requiredScratchBytes(const ir::Op& op, int numWarps, int warpSize) {
  auto map = [&](ir::Type t) { return ThreadMap::of(t, numWarps, warpSize, op.name()); };
  const CoordFn identity = [](const Coords& c) { return c; };
  switch (op.kind()) {
    case OpKind::ConvertLayout:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::Cat:
    case OpKind::Join:
    case OpKind::Split: {
      // The same coordinate maps as LowerShape.cpp; only whether registers suffice matters here.
      ThreadMap src = map(op.operand(0)->type());
      ThreadMap dst = map(op.result(0)->type());
      std::vector<int64_t> inShape = op.operand(0)->type().shape(), outShape = op.result(0)->type().shape();
      Regs none;
      std::vector<ExchangeSource> sources{{&src, &none, identity}};
      std::vector<ExchangeDest> dests{{&dst, identity}};
      std::vector<int64_t> buffer = inShape;
      ThreadMap second, dst1;
      if (op.is(OpKind::Broadcast))
        dests[0].fromBuffer = [inShape](const Coords& c) {
          Coords r = c;
          for (size_t d = 0; d < r.size(); ++d)
            if (inShape[d] == 1) r[d] = 0;
          return r;
        };
      if (op.is(OpKind::ExpandDims)) {
        int axis = static_cast<int>(op.intAttr("axis"));
        dests[0].fromBuffer = [axis](const Coords& c) { return dropDim(c, axis); };
      }
      if (op.is(OpKind::Reshape))
        dests[0].fromBuffer = [inShape, outShape](const Coords& c) {
          int64_t idx = 0;
          for (size_t d = 0; d < outShape.size(); ++d) idx = idx * outShape[d] + c[d];
          Coords r(inShape.size());
          for (int d = static_cast<int>(inShape.size()) - 1; d >= 0; --d) {
            r[d] = idx % inShape[d];
            idx /= inShape[d];
          }
          return r;
        };
      if (op.is(OpKind::Trans)) {
        std::vector<int64_t> perm = op.attr("perm").getIntArray();
        dests[0].fromBuffer = [perm](const Coords& j) {
          Coords k(j.size());
          for (size_t i = 0; i < perm.size(); ++i) k[perm[i]] = j[i];
          return k;
        };
      }
      if (op.is(OpKind::Cat) || op.is(OpKind::Join)) {
        second = map(op.operand(1)->type());
        buffer = outShape;
        int64_t half = inShape.empty() ? 0 : inShape[0];
        bool join = op.is(OpKind::Join);
        sources[0].toBuffer = [join](const Coords& c) {
          Coords r = c;
          if (join) r.push_back(0);
          return r;
        };
        sources.push_back({&second, &none, [join, half](const Coords& c) {
                             Coords r = c;
                             if (join) r.push_back(1);
                             else r[0] += half;
                             return r;
                           }});
      }
      if (op.is(OpKind::Split)) {
        dst1 = map(op.result(1)->type());
        auto append = [](int64_t k) {
          return CoordFn([k](const Coords& c) {
            Coords r = c;
            r.push_back(k);
            return r;
          });
        };
        dests = {{&dst, append(0)}, {&dst1, append(1)}};
      }
      if (KernelLowering::canRemapInRegisters(sources, dests)) return 0;
      int64_t elements = 1;
      for (int64_t s : buffer) elements *= s;
      return elements * bytesOf(op.result(0)->type());
    }
    case OpKind::Reduce: {
      ThreadMap in = map(op.operand(0)->type());
      int axis = static_cast<int>(op.intAttr("axis"));
      int64_t parts = 1;
      for (const Coords& c : in.warpBases)
        if (c[axis] != 0) parts *= 2;
      if (parts == 1) return 0;
      int64_t outElems = std::max<int64_t>(1, op.result(0)->type().numElements()), need = 0;
      for (const ir::Value* v : op.operands()) need = alignTo(need + outElems * parts * bytesOf(v->type()), 16);
      return need;
    }
    case OpKind::Scan: {
      int64_t need = 0;
      for (const ir::Value* v : op.operands()) need = alignTo(need + v->type().numElements() * bytesOf(v->type()), 16);
      return need;
    }
    case OpKind::Dot: {
      ir::Type a = op.operand(0)->type(), b = op.operand(1)->type();
      return alignTo(a.numElements() * bytesOf(a), 16) + b.numElements() * bytesOf(b);
    }
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: {
      if (!op.result(0)->hasUses()) return 0;
      ir::Type t = op.operand(0)->type();
      ThreadMap m = map(t);
      bool replicated = m.replicatedLaneMask() || m.replicatedWarpMask();
      for (bool owner : m.regOwner) replicated |= !owner;
      return replicated ? std::max<int64_t>(1, t.numElements()) * bytesOf(t.pointee()) : 0;
    }
    default:
      return 0;
  }
}

}  // namespace tessera::backends
