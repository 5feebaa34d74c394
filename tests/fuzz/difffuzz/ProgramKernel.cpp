#include "tests/fuzz/difffuzz/ProgramKernel.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "tessera/tessera.h"
#include "tests/fuzz/difffuzz/Tolerance.h"

namespace tessera::fuzz {

namespace {

// A load whose pointer tile its `for` loop carries (Program.h). Only a load directly in a `for` body walks: one the
// reducer moved out of its loop reads its first tile.
bool isWalkingLoad(const Stmt& s) { return s.kind == StmtKind::Load && s.op == 1 && !s.deleted; }

ir::Type scalarType(ScalarKind k) { return ir::Type::scalar(k); }

// A tile (or scalar) of `shape` with every element `value`. fp8 has no constants: it is made by a cast.
Tensor constantTile(const Shape& shape, double value, ScalarKind k) {
  const ir::Type t = scalarType(k);
  if (t.isFP8()) return cast(full(shape, value, ir::Type::f32()), t);
  if (t.isBool()) return full(shape, value != 0, t);
  if (t.isInt()) return full(shape, static_cast<int64_t>(value), t);
  return full(shape, value, t);
}

// Replays a Program's statements as DSL calls inside a kernel invocation (traced or eager).
class Replayer {
 public:
  Replayer(const Program& p, detail::ParamSource& params) : p_(p), vars_(static_cast<size_t>(p.numSlots)) {
    for (size_t i = 0; i < p.buffers.size(); ++i) buffers_.push_back(params.tensor(i));
    limitPercent_ = params.tensor(p.buffers.size());
    pid_ = program_id(1) * num_programs(0) + program_id(0);
  }

  void run(const std::vector<Stmt>& body) {
    for (const Stmt& s : body)
      if (!s.deleted) execute(s);
  }

 private:
  // The value in `slot` as `t`: zeros where nothing defines it (the reducer deleted the definition).
  Tensor get(int slot, const ValueType& t) {
    Tensor& v = vars_.at(static_cast<size_t>(slot));
    if (!v.defined()) return constantTile(shapeOf(p_, t), 0, t.dtype);
    return v;
  }

  // Defines the statement's result, cast to its recorded element type (the DSL widens some results, e.g. sums).
  void define(const Stmt& s, Tensor v) {
    if (v.dtype() != scalarType(s.type.dtype)) v = cast(v, scalarType(s.type.dtype));
    vars_.at(static_cast<size_t>(s.result)) = v;
  }

  // The flat (row-major) index of each element of a `shape` tile, or column-major when `transposed`.
  Tensor flatIndex(const Shape& shape, bool transposed) {
    if (shape.empty()) return full({}, 0, ir::Type::i32());
    const size_t r = shape.size();
    Tensor index;
    int64_t stride = 1;
    for (size_t k = 0; k < r; ++k) {
      const size_t axis = transposed ? k : r - 1 - k;
      Shape alongAxis(r, 1);
      alongAxis[axis] = shape[axis];
      Tensor term = reshape(arange(0, shape[axis]), alongAxis) * static_cast<int>(stride);
      index = index.defined() ? index + term : term;
      stride *= shape[axis];
    }
    return broadcast_to(index, shape);
  }
  Tensor tileMask(const Tensor& flat, int64_t elements) {
    return flat < limitPercent_ * static_cast<int>(elements) / 100;
  }
  // Pointers to this program's `shape` tile of buffer `index` (or to the first four elements, shared by every
  // program, when `shared`).
  Tensor pointers(int index, const Shape& shape, bool transposed, bool shared, Tensor* flatOut) {
    const int64_t stride = bufferStride(p_, index);
    Tensor flat = flatIndex(shape, transposed);
    if (flatOut) *flatOut = flat;
    if (shared) return buffers_[static_cast<size_t>(index)] + (flat & static_cast<int>(std::min<int64_t>(stride, 4) - 1));
    return buffers_[static_cast<size_t>(index)] + (multiple_of(pid_ * static_cast<int>(stride), stride) + flat);
  }

  void execute(const Stmt& s);
  void executeControl(const Stmt& s);

  const Program& p_;
  std::vector<Tensor> vars_;  // sized once: the DSL keys loop-carried values on these objects
  std::map<const Stmt*, Tensor> walkers_;  // the pointer tiles of the running `for` loops' walking loads (stable nodes)
  std::vector<Tensor> buffers_;
  Tensor limitPercent_, pid_;
};

Tensor unary(UnaryOp op, const Tensor& x) {
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return abs(x);
    case UnaryOp::Not: return ~x;
    case UnaryOp::Floor: return floor(x);
    case UnaryOp::Ceil: return ceil(x);
    case UnaryOp::Exp: return exp(x);
    case UnaryOp::Exp2: return exp2(x);
    case UnaryOp::Log: return log(x);
    case UnaryOp::Log2: return log2(x);
    case UnaryOp::Sqrt: return sqrt(x);
    case UnaryOp::Rsqrt: return rsqrt(x);
    case UnaryOp::Sin: return sin(x);
    case UnaryOp::Cos: return cos(x);
    case UnaryOp::Tanh: return tanh(x);
    case UnaryOp::Erf: return erf(x);
    case UnaryOp::Sigmoid: return sigmoid(x);
  }
  throw Error("fuzz: unknown unary op");
}

Tensor binary(BinaryOp op, const Tensor& x, const Tensor& y) {
  switch (op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Rem: return x % y;
    case BinaryOp::Min: return minimum(x, y);
    case BinaryOp::Max: return maximum(x, y);
    case BinaryOp::And: return x & y;
    case BinaryOp::Or: return x | y;
    case BinaryOp::Xor: return x ^ y;
    case BinaryOp::Shl: return x << y;
    case BinaryOp::Shr: return x >> y;
    case BinaryOp::UMulHi: return umulhi(x, y);
  }
  throw Error("fuzz: unknown binary op");
}

Tensor compare(ComparePred pred, const Tensor& x, const Tensor& y) {
  switch (pred) {
    case ComparePred::Eq: return x == y;
    case ComparePred::Ne: return x != y;
    case ComparePred::Lt: return x < y;
    case ComparePred::Le: return x <= y;
    case ComparePred::Gt: return x > y;
    case ComparePred::Ge: return x >= y;
  }
  throw Error("fuzz: unknown compare predicate");
}

const char* atomicKindName(AtomicOp op) {
  static const char* names[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return names[static_cast<int>(op)];
}

void Replayer::execute(const Stmt& s) {
  const ValueType& t = s.type;
  const Shape shape = shapeOf(p_, t);
  auto a = [&](size_t i) { return get(s.args.at(i), s.argTypes.at(i)); };
  switch (s.kind) {
    case StmtKind::Load: {
      Tensor flat;
      Tensor ptr = pointers(s.buffer, shape, s.flag, false, &flat);
      if (auto walker = walkers_.find(&s); walker != walkers_.end()) {
        ptr = walker->second;  // this iteration's tile; the next iteration reads the one after it
        walker->second = walker->second + static_cast<int>(elementsOf(p_, t));
      }
      if (s.mask == MaskKind::None || shape.empty()) define(s, load(ptr));
      else if (s.mask == MaskKind::Limit) define(s, load(ptr, tileMask(flat, elementsOf(p_, t))));
      else define(s, load(ptr, tileMask(flat, elementsOf(p_, t)), constantTile(shape, s.constant, t.dtype)));
      return;
    }
    case StmtKind::Constant: define(s, constantTile(shape, s.constant, t.dtype)); return;
    case StmtKind::Index: define(s, shape.empty() ? pid_ : flatIndex(shape, s.flag)); return;
    case StmtKind::Unary: define(s, unary(static_cast<UnaryOp>(s.op), a(0))); return;
    case StmtKind::Binary: define(s, binary(static_cast<BinaryOp>(s.op), a(0), a(1))); return;
    case StmtKind::Compare: define(s, compare(static_cast<ComparePred>(s.op), a(0), a(1))); return;
    case StmtKind::Select: define(s, where(a(0), a(1), a(2))); return;
    case StmtKind::Fma: define(s, fma(a(0), a(1), a(2))); return;
    case StmtKind::Cast: define(s, cast(a(0), scalarType(t.dtype))); return;
    case StmtKind::Bitcast: define(s, bitcast(a(0), scalarType(t.dtype))); return;
    case StmtKind::Broadcast: {
      Tensor x = a(0);
      define(s, broadcast_to(x.rank() == 0 ? x : expand_dims(x, s.axis), shape));
      return;
    }
    case StmtKind::Permute: define(s, permute(a(0), std::vector<int64_t>(s.order.begin(), s.order.end()))); return;
    case StmtKind::Reshape: define(s, reshape(a(0), shape)); return;
    case StmtKind::Cat: define(s, cat(a(0), a(1))); return;
    case StmtKind::JoinSplit: {
      auto [first, second] = split(join(a(0), a(1)));
      define(s, s.op == 0 ? first : second);
      return;
    }
    case StmtKind::Reduce: {
      Tensor x = a(0);
      switch (static_cast<ReduceOp>(s.op)) {
        case ReduceOp::Sum: define(s, sum(x, s.axis)); return;
        case ReduceOp::Max: define(s, max(x, s.axis)); return;
        case ReduceOp::Min: define(s, min(x, s.axis)); return;
        case ReduceOp::ArgMax: define(s, argmax(x, s.axis)); return;
        case ReduceOp::ArgMin: define(s, argmin(x, s.axis)); return;
        case ReduceOp::Xor: define(s, reduce(x, s.axis, [](const Tensor& l, const Tensor& r) { return l ^ r; })); return;
      }
      return;
    }
    case StmtKind::Scan: {
      if (static_cast<ScanOp>(s.op) == ScanOp::Sum) define(s, cumsum(a(0), s.axis, s.flag));
      else define(s, scan(a(0), s.axis, [](const Tensor& l, const Tensor& r) { return maximum(l, r); }, s.flag));
      return;
    }
    case StmtKind::Dot: define(s, dot(a(0), a(1), a(2))); return;
    case StmtKind::Store: {
      Tensor flat;
      Tensor ptr = pointers(s.buffer, shape, s.flag, false, &flat);
      if (s.mask == MaskKind::None || shape.empty()) store(ptr, a(0));
      else store(ptr, a(0), tileMask(flat, elementsOf(p_, t)));
      return;
    }
    case StmtKind::Atomic: {
      Tensor flat;
      Tensor ptr = pointers(s.buffer, shape, false, s.flag, &flat);
      Tensor mask = s.mask == MaskKind::None || shape.empty() ? Tensor() : tileMask(flat, elementsOf(p_, t));
      Tensor old = atomic_rmw(atomicKindName(static_cast<AtomicOp>(s.op)), ptr, a(0), mask);
      if (s.result >= 0) define(s, old);
      return;
    }
    case StmtKind::AtomicCas: define(s, atomic_cas(pointers(s.buffer, shape, false, false, nullptr), a(0), a(1))); return;
    case StmtKind::Assign: vars_.at(static_cast<size_t>(s.result)) = a(0); return;
    case StmtKind::Assert: {
      Tensor x = a(0);
      device_assert(x == x, "fuzz: a value differs from itself");
      return;
    }
    case StmtKind::DebugPrint: debug_print("v" + std::to_string(s.args.at(0)) + " ", {a(0)}); return;
    case StmtKind::For:
    case StmtKind::While:
    case StmtKind::If: executeControl(s); return;
  }
}

void Replayer::executeControl(const Stmt& s) {
  // Trip counts: a constant, or (op > 0) this program's id modulo op, so programs run different trip counts.
  auto tripCount = [&]() -> Tensor {
    if (s.op > 0) return pid_ % s.op + static_cast<int>(s.constant);
    return full({}, static_cast<int64_t>(s.constant), ir::Type::i32());
  };
  Tensor& counter = vars_.at(static_cast<size_t>(std::max(s.result, 0)));
  switch (s.kind) {
    case StmtKind::For: {
      Tensor trip = tripCount();
      // The walking loads of the body start at the program's first tile; the loop carries their pointers.
      std::vector<const Stmt*> walking;
      for (const Stmt& b : s.body)
        if (isWalkingLoad(b)) {
          walkers_[&b] = pointers(b.buffer, shapeOf(p_, b.type), b.flag, false, nullptr);
          walking.push_back(&b);
        }
      for (Tensor iv : range(trip)) {
        counter = iv;
        run(s.body);
      }
      for (const Stmt* b : walking) walkers_.erase(b);
      return;
    }
    case StmtKind::While: {
      Tensor trip = tripCount();
      counter = full({}, 0, ir::Type::i32());
      while_([&] { return counter < trip; },
             [&] {
               run(s.body);
               counter = counter + 1;
             });
      return;
    }
    default:
      if_(get(s.args.at(0), s.argTypes.at(0)), [&] { run(s.body); }, [&] { run(s.orelse); });
  }
}

// `tiles`: how many tiles a walking load directly in `body` reads (its loop's largest trip count), else 1.
void collectStride(const Program& p, const std::vector<Stmt>& body, int64_t tiles, int index, int64_t& stride) {
  for (const Stmt& s : body) {
    if (s.deleted) continue;
    const bool touches = s.kind == StmtKind::Load || s.kind == StmtKind::Store || s.kind == StmtKind::Atomic ||
                         s.kind == StmtKind::AtomicCas;
    if (touches && s.buffer == index) stride = std::max(stride, elementsOf(p, s.type) * (isWalkingLoad(s) ? tiles : 1));
    const int64_t bodyTiles =
        s.kind == StmtKind::For ? std::max<int64_t>(1, static_cast<int64_t>(s.constant) + std::max(0, s.op - 1)) : 1;
    collectStride(p, s.body, bodyTiles, index, stride);
    collectStride(p, s.orelse, 1, index, stride);
  }
}

}  // namespace

int64_t bufferStride(const Program& p, int index) {
  int64_t stride = 1;
  collectStride(p, p.body, 1, index, stride);
  return stride;
}

gpucheck::Tolerance toleranceFor(const BufferSpec& spec) {
  if (!spec.approximate) return gpucheck::Tolerance{0, 0, true};
  return approxTolerance(spec.dtype);
}

gpucheck::HostBuffer initialBuffer(const BufferSpec& spec, int64_t elements) {
  std::mt19937_64 rng(spec.dataSeed);
  const ir::Type t = scalarType(spec.dtype);
  const size_t width = static_cast<size_t>(t.storageBytes());
  gpucheck::HostBuffer b{spec.dtype, std::vector<uint8_t>(static_cast<size_t>(elements) * width), toleranceFor(spec)};
  for (int64_t i = 0; i < elements; ++i) {
    uint64_t bits;
    if (t.isFloat()) {
      bits = ir::encodeFloat(spec.dtype, static_cast<double>(static_cast<int>(rng() % 17) - 8) / 4);
    } else if (t.isBool()) {
      bits = rng() & 1;
    } else if (spec.role == BufferRole::Atomic || rng() % 2) {
      bits = static_cast<uint64_t>(static_cast<int64_t>(rng() % 9) - (t.isSigned() ? 4 : 0));  // small: CAS hits
    } else {
      bits = rng();  // full range, truncated to the width
    }
    std::memcpy(b.bytes.data() + static_cast<size_t>(i) * width, &bits, width);
  }
  return b;
}

gpucheck::CheckCase makeCase(const Program& p) {
  std::vector<ParamInfo> params;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    params.push_back({"b" + std::to_string(i), ParamKind::Pointer, ir::Type::ptr(scalarType(p.buffers[i].dtype))});
  params.push_back({"limit", ParamKind::Scalar, ir::Type::i32()});
  auto program = std::make_shared<const Program>(p);
  KernelDef kernel("fuzz_" + std::to_string(p.seed), params, [program](detail::ParamSource& source) {
    Replayer(*program, source).run(program->body);
  });
  gpucheck::CheckCase c{"fuzz seed " + std::to_string(p.seed), kernel, {}, {p.gridX, p.gridY, 1}, {}};
  c.numWarps = p.numWarps;
  const int64_t programs = int64_t(p.gridX) * p.gridY;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    c.args.push_back(initialBuffer(p.buffers[i], programs * bufferStride(p, static_cast<int>(i))));
  c.args.push_back(p.limitPercent);
  return c;
}

}  // namespace tessera::fuzz
