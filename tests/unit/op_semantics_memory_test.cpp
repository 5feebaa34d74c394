// Per-op semantics of the memory ops (docs/IR.md "Memory"): load with mask/other, store with mask, and atomics
// under contention (many programs and lanes hitting the same addresses).
#include <algorithm>
#include <map>
#include <set>

#include "OpTestUtil.h"

namespace optest {
namespace {

using tessera::ir::Attr;

std::vector<ScalarKind> loadStoreKinds() {
  std::vector<ScalarKind> kinds = numericKinds();
  for (ScalarKind k : {ScalarKind::I1, ScalarKind::F8E4M3, ScalarKind::F8E5M2}) kinds.push_back(k);
  return kinds;
}

void fillRandom(HostBuf& buf, Rng& rng) {
  for (size_t i = 0; i < buf.size(); ++i) {
    if (isFloatKind(buf.kind()))
      buf.setFloat(i, randomFloat(buf.kind(), rng, false));
    else
      buf.setInt(i, randomInt(buf.kind(), rng));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// load / store

// out[i] = load(in + i, mask[i] [, other[i]]) for i < n, stored with the block mask. Masked-off lanes of the
// load point far outside every buffer, so touching them would be an out-of-bounds error.
TEST(LoadTest, MaskAndOtherOnEveryType) {
  for (ScalarKind k : loadStoreKinds()) {
    for (bool withOther : {false, true}) {
      for (const auto& shape : elementwiseShapes()) {
        SCOPED_TRACE(std::string(kindName(k)) + (withOther ? " with other" : " zero fill") + " shape " +
                     shapeStr(shape));
        Rng rng(0x10AD + static_cast<unsigned>(k) * 2 + withOther);
        const int64_t n = kElementwiseCount;
        HostBuf in(k, n), other(k, n), mask(ScalarKind::I1, n);
        fillRandom(in, rng);
        fillRandom(other, rng);
        for (size_t i = 0; i < mask.size(); ++i) mask.setInt(i, (rng() % 3) != 0);

        Kernel kern({ptrTo(k), ptrTo(k), ptrTo(ScalarKind::I1), ptrTo(k), Type::i32()});
        Kernel::Block blk = kern.block(shape, kern.arg(4));
        Value* m = kern.b.load(kern.ptrs(kern.arg(2), blk.offsets), blk.mask);
        Value* laneMask = kern.b.binary(OpKind::And, m, blk.mask);
        // Masked-off lanes get a wild offset (1 << 24 elements past the buffer).
        Value* wild = kern.b.binary(OpKind::Add, blk.offsets, kern.tileI32(1 << 24, shape));
        Value* offs = kern.b.select(laneMask, blk.offsets, wild);
        Value* otherVals = withOther ? kern.b.load(kern.ptrs(kern.arg(1), blk.offsets), blk.mask) : nullptr;
        Value* v = kern.b.load(kern.ptrs(kern.arg(0), offs), laneMask, otherVals);
        kern.b.store(kern.ptrs(kern.arg(3), blk.offsets), v, blk.mask);

        int64_t programs = (n + numel(shape) - 1) / numel(shape);
        HostBuf out(k, static_cast<size_t>(programs * numel(shape)));
        out.fill(kPoison);
        kern.run({in.arg(), other.arg(), mask.arg(), out.arg(), n}, {programs, 1, 1});
        int failures = 0;
        for (size_t i = 0; i < static_cast<size_t>(n) && failures < 8; ++i) {
          uint64_t want = mask.intAt(i) ? in.bitsAt(i) : (withOther ? other.bitsAt(i) : 0);
          if (out.bitsAt(i) != want) {
            ++failures;
            ADD_FAILURE() << "element " << i << " mask " << mask.intAt(i) << ": expected bits 0x" << std::hex << want
                          << ", got 0x" << out.bitsAt(i);
          }
        }
        EXPECT_TRUE(out.untouchedFrom(static_cast<size_t>(n), kPoison));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// shared buffers

// Two stages of `shape` f16 elements, unswizzled.
Type twoStageF16Buffer(const std::vector<int64_t>& shape) {
  return Type::sharedBuffer(
      2, shape, Type::f16(),
      std::make_shared<const Attr>(Attr::layout("shared", {{"max_phase", Attr::integer(1)}, {"order", Attr::intArray({0})},
                                                           {"per_phase", Attr::integer(1)}, {"vec", Attr::integer(1)}})));
}

// async_copy into a stage (masked-off elements read nothing and become 0), local_load reads it back;
// the other stage keeps its own copy.

TEST(SharedBufferTest, AsyncCopyLandsInItsStageAndLocalLoadReadsIt) {
  const std::vector<int64_t> shape{64};
  Rng rng(0x5AFE);
  const int64_t n = kElementwiseCount;
  HostBuf in(ScalarKind::F16, n), mask(ScalarKind::I1, n), out(ScalarKind::F16, n), first(ScalarKind::F16, n);
  fillRandom(in, rng);
  for (size_t i = 0; i < mask.size(); ++i) mask.setInt(i, (rng() % 3) != 0);

  Kernel kern({ptrTo(ScalarKind::F16), ptrTo(ScalarKind::I1), ptrTo(ScalarKind::F16), ptrTo(ScalarKind::F16), Type::i32()});
  Kernel::Block blk = kern.block(shape, kern.arg(4));
  Value* m = kern.b.binary(OpKind::And, kern.b.load(kern.ptrs(kern.arg(1), blk.offsets), blk.mask), blk.mask);
  // Masked-off lanes point 1 << 24 elements past the buffer: reading them would be an out-of-bounds error.
  Value* wild = kern.b.binary(OpKind::Add, blk.offsets, kern.tileI32(1 << 24, shape));
  Value* src = kern.ptrs(kern.arg(0), kern.b.select(m, blk.offsets, wild));
  Value* buf = kern.b.create1(OpKind::LocalAlloc, {}, twoStageF16Buffer(shape));
  Value* stage0 = kern.b.constantInt(0, Type::i32());
  Value* stage1 = kern.b.constantInt(1, Type::i32());
  Value* t0 = kern.b.create1(OpKind::AsyncCopy, {kern.ptrs(kern.arg(0), blk.offsets), buf, stage0, blk.mask}, Type::asyncToken());
  Value* t1 = kern.b.create1(OpKind::AsyncCopy, {src, buf, stage1, m}, Type::asyncToken());
  Value* group = kern.b.create1(OpKind::AsyncCommitGroup, {t0, t1}, Type::asyncToken());
  Value* landed = kern.b.create1(OpKind::AsyncWait, {group}, Type::asyncToken(), {{"pending", Attr::integer(0)}});
  Type tile = Type::tile(shape, Type::f16());
  kern.b.store(kern.ptrs(kern.arg(2), blk.offsets), kern.b.create1(OpKind::LocalLoad, {buf, stage1, landed}, tile), blk.mask);
  kern.b.store(kern.ptrs(kern.arg(3), blk.offsets), kern.b.create1(OpKind::LocalLoad, {buf, stage0}, tile), blk.mask);

  const int64_t programs = (n + numel(shape) - 1) / numel(shape);
  kern.run({in.arg(), mask.arg(), out.arg(), first.arg(), n}, {programs, 1, 1});
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    EXPECT_EQ(out.bitsAt(i), mask.intAt(i) ? in.bitsAt(i) : 0u) << "element " << i;
    EXPECT_EQ(first.bitsAt(i), in.bitsAt(i)) << "element " << i;
  }
}

// local_store writes a tile in registers into its stage (stage-copies-in-registers' second half); the other stage
// keeps what was there (zeros: a fresh buffer).
TEST(SharedBufferTest, LocalStoreWritesItsStageOnly) {
  const std::vector<int64_t> shape{64};
  Rng rng(0x5704E);
  const int64_t n = kElementwiseCount;
  HostBuf in(ScalarKind::F16, n), out(ScalarKind::F16, n), other(ScalarKind::F16, n);
  fillRandom(in, rng);

  Kernel kern({ptrTo(ScalarKind::F16), ptrTo(ScalarKind::F16), ptrTo(ScalarKind::F16), Type::i32()});
  Kernel::Block blk = kern.block(shape, kern.arg(3));
  Value* buf = kern.b.create1(OpKind::LocalAlloc, {}, twoStageF16Buffer(shape));
  Value* stage0 = kern.b.constantInt(0, Type::i32());
  Value* stage1 = kern.b.constantInt(1, Type::i32());
  Value* loaded = kern.b.load(kern.ptrs(kern.arg(0), blk.offsets), blk.mask);
  kern.b.create1(OpKind::LocalStore, {loaded, buf, stage1}, Type::asyncToken());
  Type tile = Type::tile(shape, Type::f16());
  kern.b.store(kern.ptrs(kern.arg(1), blk.offsets), kern.b.create1(OpKind::LocalLoad, {buf, stage1}, tile), blk.mask);
  kern.b.store(kern.ptrs(kern.arg(2), blk.offsets), kern.b.create1(OpKind::LocalLoad, {buf, stage0}, tile), blk.mask);

  const int64_t programs = (n + numel(shape) - 1) / numel(shape);
  kern.run({in.arg(), out.arg(), other.arg(), n}, {programs, 1, 1});
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    EXPECT_EQ(out.bitsAt(i), in.bitsAt(i)) << "element " << i;
    EXPECT_EQ(other.bitsAt(i), 0u) << "element " << i;
  }
}

TEST(LoadTest, SpecialFloatEncodingsRoundTripThroughLoadAndStore) {
  // Infinities, zeros of both signs, the extreme finite values and subnormals are values of their type: loading and
  // storing them must keep their bits (NaNs must stay NaN).
  for (ScalarKind k : {ScalarKind::F16, ScalarKind::BF16, ScalarKind::F32, ScalarKind::F64, ScalarKind::F8E4M3,
                       ScalarKind::F8E5M2}) {
    SCOPED_TRACE(kindName(k));
    const FloatFormat f = formatOf(k);
    std::vector<uint64_t> patterns{0, formatSignBit(f), 1, formatSignBit(f) | 1, formatMaxFiniteBits(f),
                                   formatSignBit(f) | formatMaxFiniteBits(f), formatNaNBits(f)};
    if (f.ieee) {
      patterns.push_back(formatInfBits(f));
      patterns.push_back(formatSignBit(f) | formatInfBits(f));
    }
    HostBuf in(k, patterns.size()), out(k, patterns.size());
    for (size_t i = 0; i < patterns.size(); ++i) in.setBits(i, patterns[i]);
    Kernel kern({ptrTo(k), ptrTo(k), Type::i32()});
    Kernel::Block blk = kern.block({16}, kern.arg(2));
    kern.b.store(kern.ptrs(kern.arg(1), blk.offsets), kern.b.load(kern.ptrs(kern.arg(0), blk.offsets), blk.mask),
                 blk.mask);
    kern.run({in.arg(), out.arg(), static_cast<int64_t>(patterns.size())}, {1, 1, 1});
    for (size_t i = 0; i < patterns.size(); ++i) {
      if (patterns[i] == formatNaNBits(f))
        EXPECT_TRUE(std::isnan(out.floatAt(i))) << "NaN came back as 0x" << std::hex << out.bitsAt(i);
      else
        EXPECT_EQ(out.bitsAt(i), patterns[i]) << std::hex << "0x" << patterns[i] << " came back as 0x" << out.bitsAt(i);
    }
  }
}

TEST(LoadTest, ScalarMaskedLoadNeverTouchesItsAddress) {
  // A scalar pointer far out of bounds, masked off: the result is `other` (or zero) and nothing faults.
  Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32), Type::i32()});
  Value* bad = kern.b.addptr(kern.arg(0), kern.i32(1 << 26));
  Value* on = kern.b.cmp("ne", kern.arg(2), kern.i32(0));
  Value* off = kern.b.unary(OpKind::Not, on);
  Value* a = kern.b.load(bad, off, kern.b.constantFloat(2.5, Type::f32()));
  Value* b = kern.b.load(bad, off);
  Value* c = kern.b.load(kern.arg(0), on);
  kern.b.store(kern.arg(1), a);
  kern.b.store(kern.b.addptr(kern.arg(1), kern.i32(1)), b);
  kern.b.store(kern.b.addptr(kern.arg(1), kern.i32(2)), c);
  HostBuf in(ScalarKind::F32, 1), out(ScalarKind::F32, 3);
  in.setFloat(0, -4.0);
  out.fill(kPoison);
  kern.run({in.arg(), out.arg(), int64_t(1)}, {1, 1, 1});
  EXPECT_EQ(out.floatAt(0), 2.5);
  EXPECT_EQ(out.floatAt(1), 0.0);
  EXPECT_EQ(out.floatAt(2), -4.0);
}

TEST(LoadTest, CacheAndEvictionAttributesDoNotChangeResults) {
  Kernel kern({ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32)});
  Value* idx = kern.linearIndex({16});
  Value* v = kern.b.load(kern.ptrs(kern.arg(0), idx));
  v->definingOp()->setAttr("cache", Attr::string("cg"));
  v->definingOp()->setAttr("evict", Attr::string("first"));
  v->definingOp()->setAttr("volatile", Attr::boolean(true));
  tessera::ir::Op* st = kern.b.store(kern.ptrs(kern.arg(1), idx), v);
  st->setAttr("cache", Attr::string("cv"));
  st->setAttr("evict", Attr::string("last"));
  HostBuf in(ScalarKind::I32, 16), out(ScalarKind::I32, 16);
  for (size_t i = 0; i < 16; ++i) in.setInt(i, static_cast<int64_t>(i * i) - 50);
  kern.run({in.arg(), out.arg()}, {1, 1, 1});
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(out.intAt(i), in.intAt(i));
}

TEST(LoadTest, UnmaskedOutOfBoundsAccessThrows) {
  Kernel kern({ptrTo(ScalarKind::F32), ptrTo(ScalarKind::F32)});
  Value* idx = kern.linearIndex({16});
  kern.b.store(kern.ptrs(kern.arg(1), idx), kern.b.load(kern.ptrs(kern.arg(0), idx)));
  HostBuf in(ScalarKind::F32, 15), out(ScalarKind::F32, 16);  // one element short
  EXPECT_THROW(kern.run({in.arg(), out.arg()}, {1, 1, 1}), tessera::Error);
}

TEST(StoreTest, UnmaskedOutOfBoundsStoreThrows) {
  Kernel kern({ptrTo(ScalarKind::I16)});
  Value* idx = kern.linearIndex({8});
  kern.b.store(kern.ptrs(kern.arg(0), idx), kern.b.constantInt(3, Type::tile({8}, Type::scalar(ScalarKind::I16))));
  HostBuf out(ScalarKind::I16, 7);
  EXPECT_THROW(kern.run({out.arg()}, {1, 1, 1}), tessera::Error);
}

TEST(StoreTest, MaskedOffElementsStayUntouched) {
  for (ScalarKind k : loadStoreKinds()) {
    for (const auto& shape : elementwiseShapes()) {
      SCOPED_TRACE(std::string(kindName(k)) + " shape " + shapeStr(shape));
      Rng rng(0x5707 + static_cast<unsigned>(k));
      const int64_t n = numel(shape) * 2;
      HostBuf in(k, n), mask(ScalarKind::I1, n), out(k, n);
      fillRandom(in, rng);
      for (size_t i = 0; i < mask.size(); ++i) mask.setInt(i, rng() & 1);
      out.fill(kPoison);
      Kernel kern({ptrTo(k), ptrTo(ScalarKind::I1), ptrTo(k), Type::i32()});
      Kernel::Block blk = kern.block(shape, kern.arg(3));
      Value* v = kern.b.load(kern.ptrs(kern.arg(0), blk.offsets));
      Value* m = kern.b.load(kern.ptrs(kern.arg(1), blk.offsets));
      // Masked-off lanes point far outside every buffer: a store that touched them would fault.
      Value* wild = kern.b.binary(OpKind::Add, blk.offsets, kern.tileI32(1 << 24, shape));
      kern.b.store(kern.ptrs(kern.arg(2), kern.b.select(m, blk.offsets, wild)), v, m);
      kern.run({in.arg(), mask.arg(), out.arg(), n}, {2, 1, 1});
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        if (mask.intAt(i)) {
          EXPECT_EQ(out.bitsAt(i), in.bitsAt(i)) << "element " << i;
        } else {
          for (size_t b = 0; b < kindBytes(k); ++b)
            EXPECT_EQ(out.data()[i * kindBytes(k) + b], kPoison) << "masked-off element " << i << " was written";
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Atomics

// Applies one read-modify-write of `kind` to the memory bits `cur` of element kind k.
uint64_t applyRmw(const std::string& kind, ScalarKind k, uint64_t cur, uint64_t val) {
  const uint64_t mask = widthMask(kindBits(k));
  if (kind == "xchg") return val;
  if (isFloatKind(k)) {
    FloatFormat f = formatOf(k);
    double c = static_cast<double>(decodeFloat(cur, f)), v = static_cast<double>(decodeFloat(val, f));
    double r = kind == "add" ? c + v : kind == "max" ? std::fmax(c, v) : std::fmin(c, v);
    return encodeFloat(r, f, false);
  }
  int64_t c = wrapInt(k, cur), v = wrapInt(k, val);
  uint64_t uc = cur & mask, uv = val & mask;
  if (kind == "add") return (uc + uv) & mask;
  if (kind == "and") return uc & uv;
  if (kind == "or") return uc | uv;
  if (kind == "xor") return uc ^ uv;
  bool less = isSignedKind(k) ? v < c : uv < uc;  // is the new value below the current one
  if (kind == "max") return less ? uc : uv;
  return less ? uv : uc;  // min
}

// Is there an order of the (old, value) operations on one address that, starting from `init`, makes every
// operation see its recorded old value and ends at `final`? Depth-first search; operations that leave the value
// unchanged are tried first, which makes the idempotent kinds (max/min/and/or) linear.
bool chainConsistent(const std::string& kind, ScalarKind k, uint64_t init, uint64_t final,
                     const std::vector<std::pair<uint64_t, uint64_t>>& ops, std::string& why) {
  std::vector<bool> used(ops.size(), false);
  long budget = 2000000;
  std::function<bool(uint64_t, size_t)> dfs = [&](uint64_t cur, size_t done) -> bool {
    if (done == ops.size()) return cur == final;
    if (--budget < 0) return false;
    std::vector<size_t> candidates;
    for (size_t i = 0; i < ops.size(); ++i)
      if (!used[i] && ops[i].first == cur) candidates.push_back(i);
    std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
      return (applyRmw(kind, k, cur, ops[a].second) == cur) > (applyRmw(kind, k, cur, ops[b].second) == cur);
    });
    std::set<uint64_t> triedValues;  // operations with equal (old, value) are interchangeable
    for (size_t i : candidates) {
      if (!triedValues.insert(ops[i].second).second) continue;
      used[i] = true;
      if (dfs(applyRmw(kind, k, cur, ops[i].second), done + 1)) return true;
      used[i] = false;
      if (applyRmw(kind, k, cur, ops[i].second) == cur) return false;  // a no-op first is always as good
    }
    return false;
  };
  if (dfs(init, 0)) return true;
  why = budget < 0 ? "search budget exhausted" : "no sequential order reproduces the returned old values";
  return false;
}

uint64_t randomAtomicOperand(const std::string& kind, ScalarKind k, Rng& rng) {
  const int w = kindBits(k);
  if (isFloatKind(k)) {
    // Small integers: float add is then exact in every order, and the chain check can use exact equality.
    double v = kind == "add" ? static_cast<double>(1 + rng() % 9) : static_cast<double>(static_cast<int>(rng() % 2001) - 1000) / 4;
    if (kind == "xchg") v = std::ldexp(static_cast<double>(rng() % 100000) + 1, -static_cast<int>(rng() % 10));
    return floatBits(k, v);
  }
  if (kind == "add") return (1 + rng() % 1000) & widthMask(w);
  if (kind == "and") return ~(uint64_t(1) << (rng() % w)) & widthMask(w);  // clears one bit
  if (kind == "or") return (uint64_t(1) << (rng() % w)) & widthMask(w);    // sets one bit
  return rng() & widthMask(w);
}

struct AtomicCase {
  std::string kind;
  ScalarKind type;
};

std::vector<AtomicCase> atomicCases() {
  std::vector<AtomicCase> cases;
  for (const char* kind : {"add", "max", "min"})
    for (ScalarKind k : {ScalarKind::I32, ScalarKind::U32, ScalarKind::I64, ScalarKind::U64, ScalarKind::F32,
                         ScalarKind::F64})
      cases.push_back({kind, k});
  cases.push_back({"add", ScalarKind::F16});
  for (const char* kind : {"and", "or", "xor"})
    for (ScalarKind k : {ScalarKind::I32, ScalarKind::U32, ScalarKind::I64, ScalarKind::U64})
      cases.push_back({kind, k});
  for (ScalarKind k : {ScalarKind::I16, ScalarKind::U16, ScalarKind::F16, ScalarKind::BF16, ScalarKind::I32,
                       ScalarKind::U32, ScalarKind::F32, ScalarKind::I64, ScalarKind::U64, ScalarKind::F64})
    cases.push_back({"xchg", k});
  return cases;
}

class AtomicRmwTest : public testing::TestWithParam<AtomicCase> {};

// A 2-D grid of programs; each program's 2x8 tile of lanes targets kAddresses shared slots (lane % kAddresses),
// with some lanes masked off. Checks: masked-off lanes return 0 and change nothing, each slot's returned old
// values form one consistent sequential history, and the slot ends at that history's final value.
TEST_P(AtomicRmwTest, ContendedHistoryIsConsistent) {
  const auto& [kind, k] = GetParam();
  constexpr int64_t kAddresses = 3, kLanes = 16;
  const interp::Grid grid{5, 3, 1};
  const int64_t programs = grid[0] * grid[1];
  const std::vector<int64_t> shape{2, 8};
  Rng rng(0xA70 + static_cast<unsigned>(k) * 7 + kind.size() * 1000 + kind[0]);

  HostBuf slots(k, kAddresses), vals(k, programs * kLanes), olds(k, programs * kLanes), mask(ScalarKind::I1, programs * kLanes);
  std::vector<uint64_t> init(kAddresses);
  for (size_t a = 0; a < kAddresses; ++a) {
    init[a] = kind == "and" ? widthMask(kindBits(k)) : isFloatKind(k) ? floatBits(k, a * 1.0) : a;
    slots.setBits(a, init[a]);
  }
  for (size_t i = 0; i < vals.size(); ++i) {
    vals.setBits(i, randomAtomicOperand(kind, k, rng));
    mask.setInt(i, (rng() % 5) != 0);
  }
  olds.fill(kPoison);

  Kernel kern({ptrTo(k), ptrTo(k), ptrTo(ScalarKind::I1), ptrTo(k)});
  // program linear id = pid_y * num_programs_x + pid_x; element offset = linear id * kLanes + lane.
  Value* linearPid = kern.b.binary(OpKind::Add, kern.b.binary(OpKind::Mul, kern.b.programId(1), kern.b.numPrograms(0)),
                                   kern.b.programId(0));
  Value* lane = kern.linearIndex(shape);
  Value* offs = kern.b.binary(OpKind::Add, kern.b.splat(kern.b.binary(OpKind::Mul, linearPid, kern.i32(kLanes)), shape), lane);
  Value* slotIdx = kern.b.binary(OpKind::Rem, lane, kern.tileI32(kAddresses, shape));
  Value* v = kern.b.load(kern.ptrs(kern.arg(1), offs));
  Value* m = kern.b.load(kern.ptrs(kern.arg(2), offs));
  Value* old = kern.b.atomicRMW(kind, kern.ptrs(kern.arg(0), slotIdx), v, m);
  kern.b.store(kern.ptrs(kern.arg(3), offs), old);
  kern.run({slots.arg(), vals.arg(), mask.arg(), olds.arg()}, grid);

  for (int64_t a = 0; a < kAddresses; ++a) {
    std::vector<std::pair<uint64_t, uint64_t>> ops;
    for (size_t i = 0; i < vals.size(); ++i) {
      if (static_cast<int64_t>(i % kLanes) % kAddresses != a) continue;
      if (!mask.intAt(i)) {
        EXPECT_EQ(olds.bitsAt(i), 0u) << "masked-off lane " << i << " must return 0";
        continue;
      }
      ops.push_back({olds.bitsAt(i), vals.bitsAt(i)});
    }
    std::string why;
    EXPECT_TRUE(chainConsistent(kind, k, init[a], slots.bitsAt(a), ops, why))
        << kind << " on " << kindName(k) << ", slot " << a << ": " << why << " (final bits 0x" << std::hex
        << slots.bitsAt(a) << ")";
    // Order-independent totals, computed directly.
    if (kind != "xchg") {
      uint64_t total = init[a];
      for (const auto& op : ops) total = applyRmw(kind, k, total, op.second);
      EXPECT_EQ(slots.bitsAt(a), total) << "final value of slot " << a;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, AtomicRmwTest, testing::ValuesIn(atomicCases()),
                         [](const testing::TestParamInfo<AtomicCase>& info) {
                           return info.param.kind + "_" + kindName(info.param.type);
                         });

TEST(AtomicRmwScalar, ScalarPointerReturnsPreviousValue) {
  // Every program adds its pid+1 to one counter through a scalar atomic and records what it saw.
  const int64_t programs = 20;
  Kernel kern({ptrTo(ScalarKind::I64), ptrTo(ScalarKind::I64)});
  Value* pid = kern.b.programId(0);
  Value* inc = kern.b.cast(kern.b.binary(OpKind::Add, pid, kern.i32(1)), Type::i64());
  Value* old = kern.b.atomicRMW("add", kern.arg(0), inc);
  kern.b.store(kern.b.addptr(kern.arg(1), pid), old);
  HostBuf counter(ScalarKind::I64, 1), seen(ScalarKind::I64, programs);
  counter.setInt(0, 1000);
  kern.run({counter.arg(), seen.arg()}, {programs, 1, 1});
  EXPECT_EQ(counter.intAt(0), 1000 + programs * (programs + 1) / 2);
  std::vector<std::pair<uint64_t, uint64_t>> ops;
  for (int64_t p = 0; p < programs; ++p) ops.push_back({static_cast<uint64_t>(seen.intAt(p)), uint64_t(p + 1)});
  std::string why;
  EXPECT_TRUE(chainConsistent("add", ScalarKind::I64, 1000, static_cast<uint64_t>(counter.intAt(0)), ops, why)) << why;
}

TEST(AtomicCasTest, ContendedIncrementLoopCountsEveryProgram) {
  // Each program increments a shared counter with a CAS retry loop (a `while` carrying the expected value and a
  // done flag). Whatever the interleaving, the successful CASes see 0, 1, ..., programs-1 exactly once.
  const interp::Grid grid{4, 3, 2};
  const int64_t programs = grid[0] * grid[1] * grid[2];
  Kernel kern({ptrTo(ScalarKind::I32), ptrTo(ScalarKind::I32)});
  Value* expected0 = kern.i32(0);
  Value* notDone = kern.b.constantBool(false);
  tessera::ir::Op* loop = kern.b.whileOp({expected0, notDone});
  {
    Builder before(loop->region(0));
    before.yield({before.unary(OpKind::Not, loop->region(0)->argument(1))});
    Builder after(loop->region(1));
    Value* exp = loop->region(1)->argument(0);
    Value* old = after.atomicCAS(kern.arg(0), exp, after.binary(OpKind::Add, exp, after.constantInt(1, Type::i32())));
    after.yield({old, after.cmp("eq", old, exp)});
  }
  Value* pid = kern.b.binary(
      OpKind::Add,
      kern.b.binary(OpKind::Mul, kern.b.programId(2), kern.i32(grid[0] * grid[1])),
      kern.b.binary(OpKind::Add, kern.b.binary(OpKind::Mul, kern.b.programId(1), kern.i32(grid[0])), kern.b.programId(0)));
  kern.b.store(kern.b.addptr(kern.arg(1), pid), loop->result(0));
  HostBuf counter(ScalarKind::I32, 1), seen(ScalarKind::I32, programs);
  kern.run({counter.arg(), seen.arg()}, grid);
  EXPECT_EQ(counter.intAt(0), programs);
  std::vector<int64_t> got;
  for (int64_t p = 0; p < programs; ++p) got.push_back(seen.intAt(p));
  std::sort(got.begin(), got.end());
  for (int64_t p = 0; p < programs; ++p) EXPECT_EQ(got[p], p);
}

TEST(AtomicCasTest, PerElementCompareIsBitwise) {
  for (ScalarKind k : {ScalarKind::I16, ScalarKind::U16, ScalarKind::F16, ScalarKind::I32, ScalarKind::U32,
                       ScalarKind::F32, ScalarKind::I64, ScalarKind::U64, ScalarKind::F64}) {
    SCOPED_TRACE(kindName(k));
    Rng rng(0xCA5 + static_cast<unsigned>(k));
    const size_t n = 32;
    HostBuf mem(k, n), cmp(k, n), val(k, n), olds(k, n);
    std::vector<uint64_t> before(n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t m = isFloatKind(k) ? floatBits(k, randomFloat(k, rng, false)) : unsignedBits(k, randomInt(k, rng));
      uint64_t c = (i % 2 == 0) ? m : (m ^ 1);
      if (isFloatKind(k) && i % 8 == 1) {  // +0 in memory vs -0 as cmp: equal as floats, not bitwise
        m = floatBits(k, 0.0);
        c = floatBits(k, -0.0);
      }
      if (isFloatKind(k) && i % 8 == 2) {  // NaN in memory, same NaN bits as cmp: bitwise equal
        m = c = formatNaNBits(formatOf(k));
      }
      mem.setBits(i, m);
      cmp.setBits(i, c);
      val.setBits(i, isFloatKind(k) ? floatBits(k, static_cast<double>(i) + 0.5) : uint64_t(i * 3 + 1));
      before[i] = m;
    }
    Kernel kern({ptrTo(k), ptrTo(k), ptrTo(k), ptrTo(k)});
    Value* idx = kern.linearIndex({4, 8});
    Value* c = kern.b.load(kern.ptrs(kern.arg(1), idx));
    Value* v = kern.b.load(kern.ptrs(kern.arg(2), idx));
    kern.b.store(kern.ptrs(kern.arg(3), idx), kern.b.atomicCAS(kern.ptrs(kern.arg(0), idx), c, v));
    kern.run({mem.arg(), cmp.arg(), val.arg(), olds.arg()}, {1, 1, 1});
    for (size_t i = 0; i < n; ++i) {
      bool swapped = before[i] == cmp.bitsAt(i);
      if (isFloatKind(k) && std::isnan(static_cast<double>(decodeFloat(before[i], formatOf(k)))))
        EXPECT_TRUE(std::isnan(olds.floatAt(i))) << "element " << i;
      else
        EXPECT_EQ(olds.bitsAt(i), before[i]) << "element " << i;
      EXPECT_EQ(mem.bitsAt(i), swapped ? val.bitsAt(i) : before[i]) << "element " << i << (swapped ? " should swap" : " should not swap");
    }
  }
}

}  // namespace
}  // namespace optest
