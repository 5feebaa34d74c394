#include "tests/fuzz/difffuzz/Generator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <vector>

namespace tessera::fuzz {

namespace {

using K = ScalarKind;

const std::vector<K> kAll = {K::I1,  K::I8,   K::I16, K::I32, K::I64, K::U8,     K::U16,    K::U32,
                             K::U64, K::F16, K::BF16, K::F32, K::F64, K::F8E4M3, K::F8E5M2};
const std::vector<K> kArith = {K::I1,  K::I8,  K::I16, K::I32, K::I64, K::U8,  K::U16,
                               K::U32, K::U64, K::F16, K::BF16, K::F32, K::F64};  // fp8 is storage-only
const std::vector<K> kInts = {K::I8, K::I16, K::I32, K::I64, K::U8, K::U16, K::U32, K::U64};
const std::vector<K> kFloats = {K::F16, K::BF16, K::F32, K::F64};  // with arithmetic (fp8 has none)
const std::vector<K> kNumeric = {K::I8,  K::I16, K::I32, K::I64, K::U8,  K::U16,
                                 K::U32, K::U64, K::F16, K::BF16, K::F32, K::F64};

bool isFloat(K k) { return ir::Type::scalar(k).isFloat(); }

// A value known to be a multiple of 2^-fracBits with |v| <= maxAbs. Float arithmetic on such values is exact
// while the results fit the significand, in any order: what makes float sums, scans and dots deterministic.
struct Bound {
  double maxAbs = 0;
  int fracBits = 0;
};

// A bound holding for a value that is one of two bounded values (min, max, select, cat).
std::optional<Bound> either(const std::optional<Bound>& a, const std::optional<Bound>& b) {
  if (!a || !b) return std::nullopt;
  return Bound{std::max(a->maxAbs, b->maxAbs), std::max(a->fracBits, b->fracBits)};
}

int significandBits(K k) {
  switch (k) {
    case K::F16: return 11;
    case K::BF16: return 8;
    case K::F32: return 24;
    case K::F64: return 53;
    case K::F8E4M3: return 4;
    case K::F8E5M2: return 3;
    default: return ir::Type::scalar(k).bitWidth() - (ir::Type::scalar(k).isSigned() ? 1 : 0);
  }
}

// The bound, if every value under it is exactly representable in `k` (else nothing is known).
std::optional<Bound> fit(std::optional<Bound> b, K k) {
  if (!b || k == K::I1) return std::nullopt;
  if (!isFloat(k) && b->fracBits > 0) return std::nullopt;
  const int magnitudeBits = b->maxAbs < 1 ? 0 : static_cast<int>(std::ceil(std::log2(b->maxAbs + 1)));
  if (magnitudeBits + b->fracBits > significandBits(k) || b->fracBits > 8) return std::nullopt;
  return b;
}

struct Info {
  ValueType type;
  bool approximate = false;  // only to be stored
  std::optional<Bound> bound;
  bool assignable = true;    // loop counters and the program id are not
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) { p_.seed = seed; }

  Program run() {
    p_.gridX = 1 + static_cast<int>(rng_() % 3);
    p_.gridY = 1 + static_cast<int>(rng_() % 2);
    p_.numWarps = 1 << (rng_() % 4);
    p_.limitPercent = chance(0.5) ? 100 : static_cast<int64_t>(rng_() % 101);
    const int baseShapes = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < baseShapes; ++i) shapes_.push_back(randomShape());
    scopes_.push_back({});
    out_ = &p_.body;
    Stmt pid = stmt(StmtKind::Index, ValueType{K::I32, {}});
    info_.push_back(Info{pid.type, false, Bound{8, 0}, false});
    pid.result = 0;
    scopes_.back().push_back(0);
    out_->push_back(std::move(pid));
    const int statements = 10 + static_cast<int>(rng_() % 25);
    for (int i = 0; i < statements; ++i) statement();
    // Store a few of the last values, so that most of the program matters.
    std::vector<int> visible = scopes_.back();
    for (int i = 0, n = 2 + static_cast<int>(rng_() % 3); i < n && !visible.empty(); ++i)
      storeValue(visible[visible.size() - 1 - rng_() % std::min<size_t>(visible.size(), 6)]);
    p_.numSlots = static_cast<int>(info_.size());
    return std::move(p_);
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T> const T& oneOf(const std::vector<T>& v) { return v[rng_() % v.size()]; }

  std::vector<int> randomShape() {
    const int rank = static_cast<int>(rng_() % 4);  // 0: a scalar
    std::vector<int> s;
    int total = 0;
    for (int i = 0; i < rank; ++i) {
      const int d = std::min(static_cast<int>(rng_() % 7), 10 - total);
      s.push_back(d);
      total += d;
    }
    return s;
  }

  Stmt stmt(StmtKind kind, ValueType type) {
    Stmt s;
    s.kind = kind;
    s.type = std::move(type);
    return s;
  }
  // Gives the statement a new slot, records what is known about it and emits it.
  int define(Stmt s, std::optional<Bound> bound, bool approximate = false) {
    s.result = static_cast<int>(info_.size());
    info_.push_back(Info{s.type, approximate, fit(bound, s.type.dtype)});
    scopes_.back().push_back(s.result);
    if (std::find(shapes_.begin(), shapes_.end(), s.type.log2Shape) == shapes_.end() && shapes_.size() < 8)
      shapes_.push_back(s.type.log2Shape);
    out_->push_back(std::move(s));
    return out_->back().result;
  }
  void operand(Stmt& s, int slot) {
    s.args.push_back(slot);
    s.argTypes.push_back(info_[static_cast<size_t>(slot)].type);
  }
  const Info& info(int slot) const { return info_[static_cast<size_t>(slot)]; }

  // A visible, usable value of this type (bounded when asked), or a new one, whose bound may be unknown.
  int need(K dtype, const std::vector<int>& shape, bool bounded = false) {
    std::vector<int> candidates;
    for (const auto& scope : scopes_)
      for (int slot : scope) {
        const Info& i = info(slot);
        if (!i.approximate && i.type.dtype == dtype && i.type.log2Shape == shape && (!bounded || i.bound))
          candidates.push_back(slot);
      }
    if (!candidates.empty() && chance(0.75)) return oneOf(candidates);
    return fresh(dtype, shape, bounded);
  }

  int fresh(K dtype, const std::vector<int>& shape, bool bounded) {
    const int choice = static_cast<int>(rng_() % 10);
    if (choice < 6) return newLoad(dtype, shape);
    if (choice < 8 && dtype == K::I32 && !shape.empty()) {
      Stmt s = stmt(StmtKind::Index, ValueType{dtype, shape});
      s.flag = chance(0.3);
      int64_t n = 1;
      for (int d : shape) n <<= d;
      return define(s, Bound{static_cast<double>(n), 0});
    }
    Stmt s = stmt(StmtKind::Constant, ValueType{dtype, shape});
    s.constant = dtype == K::I1 ? static_cast<double>(rng_() % 2) : static_cast<double>(static_cast<int>(rng_() % 17) - 8) / (isFloat(dtype) ? 4 : 1);
    if (ir::Type::scalar(dtype).isUnsigned()) s.constant = std::fabs(s.constant);
    return define(s, Bound{2 * 4, isFloat(dtype) ? 2 : 0});
  }

  int newLoad(K dtype, const std::vector<int>& shape) {
    Stmt s = stmt(StmtKind::Load, ValueType{dtype, shape});
    s.buffer = buffer(BufferRole::Input, dtype, false, chance(0.6));
    s.flag = shape.size() >= 2 && chance(0.3);
    s.mask = static_cast<MaskKind>(rng_() % 3);
    s.constant = dtype == K::I1 ? 1 : isFloat(dtype) ? 0.5 : 3;
    // Directly in a `for` body, the loop may carry the load's pointers (ProgramKernel.cpp: walking loads).
    if (!enclosing_.empty() && enclosing_.back() == StmtKind::For && chance(0.5)) s.op = 1;
    // Input floats are multiples of 1/4 in [-2, 2] (ProgramKernel.cpp); integers are not bounded.
    return define(s, isFloat(dtype) ? std::optional<Bound>(Bound{2, 2}) : std::nullopt);
  }

  int buffer(BufferRole role, K dtype, bool approximate, bool reuse) {
    if (reuse)
      for (size_t i = 0; i < p_.buffers.size(); ++i)
        if (p_.buffers[i].role == role && p_.buffers[i].dtype == dtype) return static_cast<int>(i);
    p_.buffers.push_back(BufferSpec{role, dtype, approximate, p_.seed * 1000003 + p_.buffers.size()});
    return static_cast<int>(p_.buffers.size() - 1);
  }

  void storeValue(int slot) {
    const Info& i = info(slot);
    Stmt s = stmt(StmtKind::Store, i.type);
    operand(s, slot);
    s.buffer = buffer(BufferRole::Output, i.type.dtype, i.approximate, false);
    s.flag = i.type.log2Shape.size() >= 2 && chance(0.3);
    s.mask = chance(0.5) ? MaskKind::Limit : MaskKind::None;
    out_->push_back(std::move(s));
  }

  // ---- one random statement

  void statement() {
    static const std::vector<std::pair<int, void (Generator::*)()>> kinds = {
        {12, &Generator::unaryStmt},   {16, &Generator::binaryStmt},  {5, &Generator::compareStmt},
        {4, &Generator::selectStmt},   {2, &Generator::fmaStmt},      {6, &Generator::castStmt},
        {2, &Generator::bitcastStmt},  {3, &Generator::broadcastStmt}, {3, &Generator::permuteStmt},
        {2, &Generator::reshapeStmt},  {2, &Generator::catStmt},      {2, &Generator::joinSplitStmt},
        {6, &Generator::reduceStmt},   {4, &Generator::scanStmt},     {3, &Generator::dotStmt},
        {6, &Generator::storeStmt},    {4, &Generator::atomicStmt},   {1, &Generator::casStmt},
        {4, &Generator::forStmt},      {2, &Generator::whileStmt},    {4, &Generator::ifStmt},
        {1, &Generator::assertStmt},   {2, &Generator::debugPrintStmt}};
    int total = 0;
    for (const auto& k : kinds) total += k.first;
    int r = static_cast<int>(rng_() % static_cast<uint64_t>(total));
    for (const auto& k : kinds) {
      if (r < k.first) return (this->*k.second)();
      r -= k.first;
    }
  }

  void unaryStmt() {
    const auto op = static_cast<UnaryOp>(rng_() % 16);
    const bool approximate = op >= UnaryOp::Exp && op != UnaryOp::Sqrt;
    const K dtype = op == UnaryOp::Not ? (chance(0.2) ? K::I1 : oneOf(kInts))
                    : op >= UnaryOp::Floor ? oneOf(kFloats)
                                           : oneOf(kNumeric);
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Unary, ValueType{dtype, shape});
    s.op = static_cast<int>(op);
    const int x = need(dtype, shape, approximate);
    operand(s, x);
    std::optional<Bound> b = info(x).bound;
    if (op == UnaryOp::Floor || op == UnaryOp::Ceil) {
      if (b) b = Bound{b->maxAbs + 1, 0};
    } else if (op != UnaryOp::Neg && op != UnaryOp::Abs) {
      b.reset();
    }
    if (op == UnaryOp::Abs && !isFloat(dtype)) b.reset();  // abs(MIN) wraps
    const int result = define(s, b, approximate);
    if (approximate) storeValue(result);
  }

  void binaryStmt() {
    const auto op = static_cast<BinaryOp>(rng_() % 13);
    K dtype;
    if (op <= BinaryOp::Max) dtype = oneOf(kNumeric);
    else if (op <= BinaryOp::Xor) dtype = chance(0.2) ? K::I1 : oneOf(kInts);
    else if (op <= BinaryOp::Shr) dtype = oneOf(kInts);
    else dtype = oneOf(std::vector<K>{K::I32, K::I64, K::U32, K::U64});
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Binary, ValueType{dtype, shape});
    s.op = static_cast<int>(op);
    const int x = need(dtype, shape), y = need(dtype, shape);
    operand(s, x);
    operand(s, y);
    std::optional<Bound> a = info(x).bound, b = info(y).bound, r;
    if (a && b) {
      switch (op) {
        case BinaryOp::Add:
        case BinaryOp::Sub: r = Bound{a->maxAbs + b->maxAbs, std::max(a->fracBits, b->fracBits)}; break;
        case BinaryOp::Mul: r = Bound{a->maxAbs * b->maxAbs, a->fracBits + b->fracBits}; break;
        case BinaryOp::Min:
        case BinaryOp::Max: r = either(a, b); break;
        default: break;
      }
    }
    define(s, r);
  }

  void compareStmt() {
    const K dtype = chance(0.1) ? K::I1 : oneOf(kNumeric);
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Compare, ValueType{K::I1, shape});
    s.op = static_cast<int>(rng_() % 6);
    operand(s, need(dtype, shape));
    operand(s, need(dtype, shape));
    define(s, std::nullopt);
  }

  void selectStmt() {
    const K dtype = oneOf(kArith);
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Select, ValueType{dtype, shape});
    operand(s, need(K::I1, shape));
    const int x = need(dtype, shape), y = need(dtype, shape);
    operand(s, x);
    operand(s, y);
    define(s, either(info(x).bound, info(y).bound));
  }

  void fmaStmt() {
    const K dtype = oneOf(kFloats);
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Fma, ValueType{dtype, shape});
    std::optional<Bound> b[3];
    for (int i = 0; i < 3; ++i) {
      const int x = need(dtype, shape);
      operand(s, x);
      b[i] = info(x).bound;
    }
    std::optional<Bound> r;
    if (b[0] && b[1] && b[2])
      r = Bound{b[0]->maxAbs * b[1]->maxAbs + b[2]->maxAbs,
                std::max(b[0]->fracBits + b[1]->fracBits, b[2]->fracBits)};
    define(s, r);
  }

  void castStmt() {
    const K from = oneOf(kAll), to = oneOf(kAll);
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Cast, ValueType{to, shape});
    const int x = need(from, shape);
    operand(s, x);
    define(s, isFloat(from) && !isFloat(to) ? std::nullopt : info(x).bound);  // float -> int truncates
  }

  void bitcastStmt() {
    static const std::vector<std::vector<K>> widths = {{K::I8, K::U8, K::F8E4M3, K::F8E5M2},
                                                       {K::I16, K::U16, K::F16, K::BF16},
                                                       {K::I32, K::U32, K::F32},
                                                       {K::I64, K::U64, K::F64}};
    const std::vector<K>& same = oneOf(widths);
    const K from = oneOf(same), to = oneOf(same);
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Bitcast, ValueType{to, shape});
    // From floats only where they hold no NaN (the interpreter canonicalizes NaN payloads, docs/IR.md).
    operand(s, need(from, shape, isFloat(from)));
    define(s, std::nullopt);
  }

  void broadcastStmt() {
    std::vector<int> to = oneOf(shapes_);
    if (to.empty()) return;
    Stmt s = stmt(StmtKind::Broadcast, ValueType{oneOf(kAll), to});
    s.axis = static_cast<int>(rng_() % to.size());
    std::vector<int> from = to;
    from.erase(from.begin() + s.axis);
    const int x = need(s.type.dtype, from);
    operand(s, x);
    define(s, info(x).bound);
  }

  void permuteStmt() {
    std::vector<int> from = oneOf(shapes_);
    if (from.size() < 2) return;
    Stmt s = stmt(StmtKind::Permute, ValueType{oneOf(kAll), {}});
    s.order.resize(from.size());
    for (size_t i = 0; i < from.size(); ++i) s.order[i] = static_cast<int>(i);
    std::shuffle(s.order.begin(), s.order.end(), rng_);
    for (int o : s.order) s.type.log2Shape.push_back(from[static_cast<size_t>(o)]);
    const int x = need(s.type.dtype, from);
    operand(s, x);
    define(s, info(x).bound);
  }

  void reshapeStmt() {
    std::vector<int> from = oneOf(shapes_);
    if (from.empty()) return;
    int total = 0;
    for (int d : from) total += d;
    std::vector<int> to;  // a random split of the same element count into 1 to 3 dimensions
    for (int i = 0, rank = 1 + static_cast<int>(rng_() % 3); i < rank; ++i) {
      const int d = i == rank - 1 ? total : static_cast<int>(rng_() % (total + 1));
      to.push_back(d);
      total -= d;
    }
    Stmt s = stmt(StmtKind::Reshape, ValueType{oneOf(kAll), to});
    const int x = need(s.type.dtype, from);
    operand(s, x);
    define(s, info(x).bound);
  }

  void catStmt() {
    std::vector<int> from = oneOf(shapes_);
    if (from.empty() || from[0] >= 6) return;
    std::vector<int> to = from;
    ++to[0];
    Stmt s = stmt(StmtKind::Cat, ValueType{oneOf(kAll), to});
    const int x = need(s.type.dtype, from), y = need(s.type.dtype, from);
    operand(s, x);
    operand(s, y);
    define(s, either(info(x).bound, info(y).bound));
  }

  void joinSplitStmt() {
    std::vector<int> shape = oneOf(shapes_);
    if (shape.size() >= 3) return;
    Stmt s = stmt(StmtKind::JoinSplit, ValueType{oneOf(kAll), shape});
    s.op = static_cast<int>(rng_() % 2);
    const int x = need(s.type.dtype, shape), y = need(s.type.dtype, shape);
    operand(s, x);
    operand(s, y);
    define(s, info(s.op == 0 ? x : y).bound);
  }

  // Sums of floats (reduce or scan over `n` elements) are only taken of values whose partial sums all fit.
  std::optional<Bound> sumBound(K dtype, const std::optional<Bound>& b, int log2n) {
    if (!b) return std::nullopt;
    return fit(Bound{b->maxAbs * std::ldexp(1.0, log2n), b->fracBits}, dtype);
  }

  void reduceStmt() {
    std::vector<int> from = oneOf(shapes_);
    if (from.empty()) return;
    const auto op = static_cast<ReduceOp>(rng_() % 6);
    const K dtype = op == ReduceOp::Xor ? oneOf(kInts) : oneOf(kNumeric);
    const int axis = static_cast<int>(rng_() % from.size());
    const bool needsBound = isFloat(dtype) && op != ReduceOp::Max && op != ReduceOp::Min;
    const int x = need(dtype, from, needsBound);
    std::optional<Bound> r = info(x).bound;
    if (op == ReduceOp::Sum) {
      r = sumBound(dtype, r, from[static_cast<size_t>(axis)]);
      if (isFloat(dtype) && !r) return;
    }
    std::vector<int> to = from;
    to.erase(to.begin() + axis);
    const bool index = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
    Stmt s = stmt(StmtKind::Reduce, ValueType{index ? K::I32 : dtype, to});
    s.op = static_cast<int>(op);
    s.axis = axis;
    operand(s, x);
    if (index) r = Bound{std::ldexp(1.0, from[static_cast<size_t>(axis)]), 0};
    if (op == ReduceOp::Xor) r.reset();
    define(s, r);
  }

  void scanStmt() {
    std::vector<int> shape = oneOf(shapes_);
    if (shape.empty()) return;
    const auto op = static_cast<ScanOp>(rng_() % 2);
    const K dtype = oneOf(kNumeric);
    const int axis = static_cast<int>(rng_() % shape.size());
    const int x = need(dtype, shape, isFloat(dtype) && op == ScanOp::Sum);
    std::optional<Bound> r = info(x).bound;
    if (op == ScanOp::Sum) {
      r = sumBound(dtype, r, shape[static_cast<size_t>(axis)]);
      if (isFloat(dtype) && !r) return;
    }
    Stmt s = stmt(StmtKind::Scan, ValueType{dtype, shape});
    s.op = static_cast<int>(op);
    s.axis = axis;
    s.flag = chance(0.3);
    operand(s, x);
    define(s, r);
  }

  void dotStmt() {
    const K in = oneOf(std::vector<K>{K::F16, K::BF16, K::F32, K::I8, K::F8E4M3, K::F8E5M2});
    const K acc = in == K::I8 ? K::I32 : K::F32;
    const int m = 4 + static_cast<int>(rng_() % 3), n = 4 + static_cast<int>(rng_() % 3),
              k = 4 + static_cast<int>(rng_() % 3);
    const bool bounded = in != K::I8;
    const int a = need(in, {m, k}, bounded), b = need(in, {k, n}, bounded), c = need(acc, {m, n}, bounded);
    std::optional<Bound> r;
    if (bounded) {
      const auto &ba = info(a).bound, &bb = info(b).bound, &bc = info(c).bound;
      if (!ba || !bb || !bc) return;  // a new fp8 operand may fit no bound (too few significand bits)
      r = fit(Bound{ba->maxAbs * bb->maxAbs * std::ldexp(1.0, k) + bc->maxAbs,
                    std::max(ba->fracBits + bb->fracBits, bc->fracBits)},
              acc);
      if (!r) return;  // the accumulation order would matter
    }
    Stmt s = stmt(StmtKind::Dot, ValueType{acc, {m, n}});
    operand(s, a);
    operand(s, b);
    operand(s, c);
    define(s, r);
  }

  void storeStmt() {
    std::vector<int> candidates;
    for (const auto& scope : scopes_) candidates.insert(candidates.end(), scope.begin(), scope.end());
    storeValue(oneOf(candidates));
  }

  void atomicStmt() {
    const K dtype = oneOf(std::vector<K>{K::I32, K::U32, K::I64, K::U64, K::F32});
    const bool shared = chance(0.5);  // several programs (and lanes) on one address: the old values are unusable
    std::vector<AtomicOp> ops;
    if (isFloat(dtype)) ops = shared ? std::vector<AtomicOp>{AtomicOp::Max, AtomicOp::Min}
                                     : std::vector<AtomicOp>{AtomicOp::Add, AtomicOp::Max, AtomicOp::Min, AtomicOp::Xchg};
    else ops = shared ? std::vector<AtomicOp>{AtomicOp::Add, AtomicOp::Max, AtomicOp::Min, AtomicOp::And, AtomicOp::Or,
                                              AtomicOp::Xor}
                      : std::vector<AtomicOp>{AtomicOp::Add, AtomicOp::Max, AtomicOp::Min, AtomicOp::And, AtomicOp::Or,
                                              AtomicOp::Xor, AtomicOp::Xchg};
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Atomic, ValueType{dtype, shape});
    s.op = static_cast<int>(oneOf(ops));
    s.flag = shared;
    s.buffer = buffer(BufferRole::Atomic, dtype, false, false);
    s.mask = chance(0.4) ? MaskKind::Limit : MaskKind::None;
    operand(s, need(dtype, shape));
    if (shared) out_->push_back(std::move(s));
    else define(s, std::nullopt);
  }

  void casStmt() {
    const K dtype = oneOf(std::vector<K>{K::I32, K::U32, K::I64, K::U64});
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::AtomicCas, ValueType{dtype, shape});
    s.buffer = buffer(BufferRole::Atomic, dtype, false, false);
    operand(s, need(dtype, shape));
    operand(s, need(dtype, shape));
    define(s, std::nullopt);
  }

  void assertStmt() {
    const std::vector<int> shape = oneOf(shapes_);
    Stmt s = stmt(StmtKind::Assert, ValueType{oneOf(kInts), shape});
    operand(s, need(s.type.dtype, shape));
    out_->push_back(std::move(s));
  }

  // Prints a visible value of at most 64 elements (the emulator runs a printf per element): printing must
  // change no result, and eager mode and the interpreter after the passes must print the interpreter's text.
  void debugPrintStmt() {
    std::vector<int> candidates;
    for (const auto& scope : scopes_)
      for (int slot : scope) {
        int log2Elements = 0;
        for (int d : info(slot).type.log2Shape) log2Elements += d;
        if (log2Elements <= 6) candidates.push_back(slot);
      }
    if (candidates.empty()) return;
    const int slot = oneOf(candidates);
    Stmt s = stmt(StmtKind::DebugPrint, info(slot).type);
    operand(s, slot);
    out_->push_back(std::move(s));
  }

  // ---- control flow: bodies of a few statements, then assignments to values from outside (carried values)

  void body(std::vector<Stmt>& into) {
    std::vector<Stmt>* outer = out_;
    out_ = &into;
    scopes_.push_back({});
    ++depth_;
    for (int i = 0, n = 1 + static_cast<int>(rng_() % 5); i < n; ++i) statement();
    for (int i = 0, n = static_cast<int>(rng_() % 3); i < n; ++i) assign();
    --depth_;
    scopes_.pop_back();
    out_ = outer;
  }

  void assign() {
    std::vector<int> targets;  // values of enclosing scopes (not this body's own)
    for (size_t i = 0; i + 1 < scopes_.size(); ++i)
      for (int slot : scopes_[i])
        if (!info(slot).approximate && info(slot).assignable) targets.push_back(slot);
    if (targets.empty()) return;
    const int target = oneOf(targets);
    const Info t = info(target);
    const int source = need(t.type.dtype, t.type.log2Shape);
    const std::optional<Bound>& b = info(source).bound;
    // The target's bound must keep holding: the uses generated so far rely on it.
    if (t.bound && !(b && b->maxAbs <= t.bound->maxAbs && b->fracBits <= t.bound->fracBits)) return;
    Stmt s = stmt(StmtKind::Assign, t.type);
    s.result = target;
    operand(s, source);
    out_->push_back(std::move(s));
  }

  void loop(StmtKind kind) {
    if (depth_ >= 2) return;
    Stmt s = stmt(kind, ValueType{K::I32, {}});
    s.constant = static_cast<double>(rng_() % 4);
    s.op = chance(0.4) ? 2 + static_cast<int>(rng_() % 2) : 0;
    s.result = static_cast<int>(info_.size());
    info_.push_back(Info{s.type, false, Bound{8, 0}, false});
    scopes_.push_back({s.result});  // the counter is visible in the body only
    enclosing_.push_back(kind);
    body(s.body);
    enclosing_.pop_back();
    scopes_.pop_back();
    out_->push_back(std::move(s));
  }
  void forStmt() { loop(StmtKind::For); }
  void whileStmt() { loop(StmtKind::While); }

  void ifStmt() {
    if (depth_ >= 2) return;
    Stmt s = stmt(StmtKind::If, ValueType{K::I1, {}});
    operand(s, need(K::I1, {}));
    enclosing_.push_back(StmtKind::If);
    body(s.body);
    body(s.orelse);
    enclosing_.pop_back();
    out_->push_back(std::move(s));
  }

  std::mt19937_64 rng_;
  Program p_;
  std::vector<Info> info_;
  std::vector<std::vector<int>> scopes_;  // visible slots, innermost last
  std::vector<std::vector<int>> shapes_;  // log2 shapes in use
  std::vector<Stmt>* out_ = nullptr;
  int depth_ = 0;
  std::vector<StmtKind> enclosing_;  // the control statements around the body being generated, innermost last
};

}  // namespace

Program generateProgram(uint64_t seed) { return Generator(seed).run(); }

}  // namespace tessera::fuzz
