// Memory ops: load, store, atomic_rmw, atomic_cas. Every access is bounds-checked against the buffers the
// program was given; masked-off lanes are never touched. Programs and lanes run sequentially (in index
// order), which makes the atomics trivially atomic.
#include <cinttypes>
#include <cstdio>

#include "backends/interpreter/ElementBits.h"
#include "backends/interpreter/OpImpl.h"

namespace tessera::interp::detail {

using ir::OpKind;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// Finds the buffer an access lands in, remembering the last hit (consecutive lanes usually share one).
class BufferLookup {
 public:
  BufferLookup(const ir::Op& op, const ProgramContext& ctx) : op_(op), ctx_(ctx) {}

  void* check(uint64_t address, int bytes, int64_t lane) {
    if (last_ && contains(*last_, address, bytes)) return reinterpret_cast<void*>(address);
    for (const Buffer& b : ctx_.buffers)
      if (contains(b, address, bytes)) {
        last_ = &b;
        return reinterpret_cast<void*>(address);
      }
    outOfBounds(address, bytes, lane);
  }

 private:
  static bool contains(const Buffer& b, uint64_t address, int bytes) {
    auto start = reinterpret_cast<uint64_t>(b.data);
    return b.data && address >= start && address - start <= b.bytes && b.bytes - (address - start) >= uint64_t(bytes);
  }

  [[noreturn]] void outOfBounds(uint64_t address, int bytes, int64_t lane) {
    std::string msg = "out-of-bounds access of " + std::to_string(bytes) + " bytes at address " + hex(address) +
                      " (element " + std::to_string(lane) + ")";
    // Name the offset relative to the nearest buffer: that is usually the one the kernel meant.
    const Buffer* nearest = nullptr;
    uint64_t bestDistance = UINT64_MAX;
    for (const Buffer& b : ctx_.buffers) {
      if (!b.data) continue;
      auto start = reinterpret_cast<uint64_t>(b.data);
      uint64_t end = start + b.bytes;
      uint64_t distance = address < start ? start - address : (address >= end ? address - end : 0);
      if (distance < bestDistance) {
        bestDistance = distance;
        nearest = &b;
      }
    }
    if (nearest) {
      auto offset = static_cast<int64_t>(address - reinterpret_cast<uint64_t>(nearest->data));
      msg += ": byte offset " + std::to_string(offset) + " from the nearest buffer (" + hex(reinterpret_cast<uint64_t>(nearest->data)) +
             ", " + std::to_string(nearest->bytes) + " bytes)";
    } else {
      msg += ": no buffers were passed to the kernel";
    }
    fail(op_, ctx_, msg);
  }

  const ir::Op& op_;
  const ProgramContext& ctx_;
  const Buffer* last_ = nullptr;
};

const Tile& pointerOperand(const ir::Op& op, OperandList operands, const ProgramContext& ctx) {
  const Tile& ptr = *operands[0];
  if (!ptr.type.isPtr()) fail(op, ctx, "the first operand must be a pointer, not " + ptr.type.str());
  return ptr;
}

// Optional mask operand: null when absent; otherwise checked to match the pointer's element count.
const Tile* maskOperand(const ir::Op& op, OperandList operands, size_t index, const Tile& ptr,
                        const ProgramContext& ctx) {
  if (operands.size() <= index) return nullptr;
  const Tile* mask = operands[index];
  if (!mask->type.isBool() || mask->size() != ptr.size())
    fail(op, ctx, "mask " + mask->type.str() + " must be i1 with the pointer's shape " + ptr.type.str());
  return mask;
}

void checkValueOperand(const ir::Op& op, const Tile& value, const Tile& ptr, const ProgramContext& ctx,
                       const char* what) {
  if (value.size() != ptr.size() || value.type.element() != ptr.type.pointee())
    fail(op, ctx, std::string(what) + " of type " + value.type.str() + " does not match pointer type " + ptr.type.str());
}

Tile evalLoad(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const ProgramContext& ctx = env.ctx;
  if (operands.size() < 1 || operands.size() > 3) fail(op, ctx, "takes a pointer, an optional mask and other");
  const Tile& ptr = pointerOperand(op, operands, ctx);
  const Tile* mask = maskOperand(op, operands, 1, ptr, ctx);
  const Tile* other = operands.size() > 2 ? operands[2] : nullptr;
  return loadElements(op, ptr, mask, other, resultType(op, 0, env), ctx);
}

}  // namespace

Tile loadElements(const ir::Op& op, const Tile& ptr, const Tile* mask, const Tile* other, ir::Type type,
                  const ProgramContext& ctx) {
  if (other) checkValueOperand(op, *other, ptr, ctx, "'other'");
  Tile r(type);
  if (r.size() != ptr.size() || r.type.element() != ptr.type.pointee())
    fail(op, ctx, "result type " + r.type.str() + " does not match pointer type " + ptr.type.str());
  const ElementCodec codec(r.type.element());
  const int bytes = codec.bytes();
  const bool isFloat = codec.isFloat();
  BufferLookup lookup(op, ctx);
  for (int64_t i = 0, n = r.size(); i < n; ++i) {
    if (mask && mask->ints[i] == 0) {
      if (other) {  // otherwise the zero the tile was created with
        if (isFloat)
          r.floats[i] = other->floats[i];
        else
          r.ints[i] = other->ints[i];
      }
      continue;
    }
    uint64_t bits = readBits(lookup.check(static_cast<uint64_t>(ptr.ints[i]), bytes, i), bytes);
    if (isFloat)
      r.floats[i] = codec.toFloat(bits);
    else
      r.ints[i] = codec.toInt(bits);
  }
  return r;
}

void storeElements(const ir::Op& op, const Tile& ptr, const Tile* mask, const Tile& value, const ProgramContext& ctx) {
  const ElementCodec codec(ptr.type.pointee());
  const int bytes = codec.bytes();
  const bool isFloat = codec.isFloat();
  BufferLookup lookup(op, ctx);
  for (int64_t i = 0, n = ptr.size(); i < n; ++i) {
    if (mask && mask->ints[i] == 0) continue;
    void* address = lookup.check(static_cast<uint64_t>(ptr.ints[i]), bytes, i);
    writeBits(address, bytes, codec.toBits(isFloat ? 0 : value.ints[i], isFloat ? value.floats[i] : 0.0));
  }
}

namespace {

void evalStore(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const ProgramContext& ctx = env.ctx;
  if (operands.size() < 2 || operands.size() > 3) fail(op, ctx, "takes a pointer, a value and an optional mask");
  const Tile& ptr = pointerOperand(op, operands, ctx);
  const Tile& value = *operands[1];
  checkValueOperand(op, value, ptr, ctx, "value");
  storeElements(op, ptr, maskOperand(op, operands, 2, ptr, ctx), value, ctx);
}

OpKind rmwKindToOp(const ir::Op& op, const std::string& kind, const ProgramContext& ctx) {
  if (kind == "add") return OpKind::Add;
  if (kind == "max") return OpKind::Max;
  if (kind == "min") return OpKind::Min;
  if (kind == "and") return OpKind::And;
  if (kind == "or") return OpKind::Or;
  if (kind == "xor") return OpKind::Xor;
  if (kind == "xchg") return OpKind::Yield;  // marker: no arithmetic, just the new value
  fail(op, ctx, "unknown atomic kind '" + kind + "'");
}

Tile evalAtomicRMW(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const ProgramContext& ctx = env.ctx;
  if (operands.size() < 2 || operands.size() > 3) fail(op, ctx, "takes a pointer, a value and an optional mask");
  const Tile& ptr = pointerOperand(op, operands, ctx);
  const Tile& value = *operands[1];
  checkValueOperand(op, value, ptr, ctx, "value");
  const Tile* mask = maskOperand(op, operands, 2, ptr, ctx);
  const OpKind combine = rmwKindToOp(op, op.stringAttr("kind"), ctx);
  Tile old(resultType(op, 0, env));
  if (old.size() != ptr.size()) fail(op, ctx, "result shape does not match the pointer's");
  ir::Type element = ptr.type.pointee();
  const ElementCodec codec(element);
  const int bytes = codec.bytes();
  const bool isFloat = codec.isFloat();
  BufferLookup lookup(op, ctx);
  for (int64_t i = 0, n = ptr.size(); i < n; ++i) {
    if (mask && mask->ints[i] == 0) continue;  // old value stays zero
    void* address = lookup.check(static_cast<uint64_t>(ptr.ints[i]), bytes, i);
    uint64_t bits = readBits(address, bytes);
    uint64_t newBits;
    if (isFloat) {
      double current = codec.toFloat(bits);
      double next = value.floats[i];
      if (combine != OpKind::Yield) binaryFloatKernel(op, ctx, combine, element, &current, &value.floats[i], &next, 1);
      old.floats[i] = current;
      newBits = codec.toBits(0, next);
    } else {
      int64_t current = codec.toInt(bits);
      int64_t next = value.ints[i];
      if (combine != OpKind::Yield) binaryIntKernel(op, ctx, combine, element, &current, &value.ints[i], &next, 1);
      old.ints[i] = current;
      newBits = codec.toBits(next, 0.0);
    }
    writeBits(address, bytes, newBits);
  }
  return old;
}

Tile evalAtomicCAS(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  const ProgramContext& ctx = env.ctx;
  const Tile& ptr = pointerOperand(op, operands, ctx);
  const Tile& expected = *operands[1];
  const Tile& value = *operands[2];
  checkValueOperand(op, expected, ptr, ctx, "cmp");
  checkValueOperand(op, value, ptr, ctx, "value");
  Tile old(resultType(op, 0, env));
  if (old.size() != ptr.size()) fail(op, ctx, "result shape does not match the pointer's");
  ir::Type element = ptr.type.pointee();
  const ElementCodec codec(element);
  const int bytes = codec.bytes();
  const bool isFloat = codec.isFloat();
  BufferLookup lookup(op, ctx);
  for (int64_t i = 0, n = ptr.size(); i < n; ++i) {
    void* address = lookup.check(static_cast<uint64_t>(ptr.ints[i]), bytes, i);
    uint64_t bits = readBits(address, bytes);
    if (isFloat)
      old.floats[i] = codec.toFloat(bits);
    else
      old.ints[i] = codec.toInt(bits);
    uint64_t expectedBits = codec.toBits(isFloat ? 0 : expected.ints[i], isFloat ? expected.floats[i] : 0.0);
    if (bits == expectedBits)  // bitwise comparison, as the hardware does
      writeBits(address, bytes, codec.toBits(isFloat ? 0 : value.ints[i], isFloat ? value.floats[i] : 0.0));
  }
  return old;
}

}  // namespace

Tile evalMemoryOp(const ir::Op& op, OperandList operands, const EvalEnv& env) {
  switch (op.kind()) {
    case OpKind::Load: return evalLoad(op, operands, env);
    case OpKind::Store: evalStore(op, operands, env); return Tile();
    case OpKind::AtomicRMW: return evalAtomicRMW(op, operands, env);
    case OpKind::AtomicCAS: return evalAtomicCAS(op, operands, env);
    default: fail(op, env.ctx, "not a memory operation");
  }
}

}  // namespace tessera::interp::detail
