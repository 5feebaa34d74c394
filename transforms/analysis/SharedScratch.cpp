#include "transforms/analysis/SharedScratch.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ir/Layout.h"
#include "ir/LayoutConversion.h"
#include "transforms/analysis/ExchangeConflicts.h"

namespace tessera::transforms {

using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;
using Coords = std::vector<int64_t>;

namespace {

// Buffer coordinates without a heap allocation: the register checks below map one per register and probe thread.
// Rank at most 4, and one more while a join or split appends its half.
struct SmallCoords {
  std::array<int64_t, 5> v{};
  size_t n = 0;
};

}  // namespace

// A side's value coordinates -> the exchange buffer's, in place.
using CoordMap = std::function<void(SmallCoords&)>;

namespace {

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<int64_t>());
}

[[noreturn]] void fail(const Op& op, const std::string& why) { throw Error(op.describe() + ": " + why, op.loc()); }

// A value as the threads hold it: a tile in a distributed layout, or a scalar (one register, the same in every
// thread). The linear form is built once: the exchange checks ask for the coordinates of every register of
// several threads, and building it per question made allocate-shared-memory the slowest tile-IR pass.
struct HeldValue {
  std::optional<Layout> layout;
  std::vector<int64_t> shape;
  std::optional<ir::LinearLayout> linear;  // layout->toLinear(shape)

  int64_t registers() const { return linear ? linear->inDimSize(ir::kRegisterDim) : 1; }
  Coords coords(int64_t warp, int64_t lane, int64_t reg) const {
    return linear ? linear->apply({reg, lane, warp}) : Coords{};
  }
};

HeldValue heldValue(const Value* v, const Op& op, const PassOptions& options) {
  Type t = v->type();
  if (!t.isTile()) return {};
  std::optional<Layout> layout = Layout::ofType(t);
  if (!layout) fail(op, "tile " + t.str() + " has no layout (run the layout passes before shared-memory allocation)");
  if (!layout->isDistributed()) fail(op, "tile " + t.str() + " has a shared layout, not a distributed one");
  if (layout->warpSize() != options.warpSize || layout->numWarps() != options.numWarps)
    fail(op, "layout of " + t.str() + " spans " + std::to_string(layout->numWarps()) + " warps of " +
                 std::to_string(layout->warpSize()) + " threads, but the pass runs with " +
                 std::to_string(options.numWarps) + " warps of " + std::to_string(options.warpSize));
  return {layout, t.shape(), layout->toLinear(t.shape())};
}

// One side of an exchange: a value and the map between its coordinates and the exchange buffer's.
struct ExchangeSide {
  HeldValue value;
  CoordMap map;
};

void identity(SmallCoords&) {}

CoordMap appendCoord(int64_t k) {
  return [k](SmallCoords& c) { c.v.at(c.n++) = k; };
}

// The exchange's sources (value coordinates -> buffer) and destinations (value coordinates -> buffer element they
// read), encoding each op's semantics from docs/IR.md.
void exchangeSides(const Op& op, const PassOptions& options, std::vector<ExchangeSide>& sources,
                   std::vector<ExchangeSide>& dests) {
  const std::vector<int64_t> inShape = op.operand(0)->type().shape(), outShape = op.result(0)->type().shape();
  sources = {{heldValue(op.operand(0), op, options), identity}};
  dests = {{heldValue(op.result(0), op, options), identity}};
  switch (op.kind()) {
    case OpKind::ConvertLayout:
      break;
    case OpKind::Broadcast:
      dests[0].map = [inShape](SmallCoords& c) {
        for (size_t d = 0; d < c.n; ++d)
          if (inShape[d] == 1) c.v[d] = 0;
      };
      break;
    case OpKind::ExpandDims: {
      const auto axis = static_cast<size_t>(op.intAttr("axis"));
      dests[0].map = [axis](SmallCoords& c) {
        for (size_t d = axis; d + 1 < c.n; ++d) c.v[d] = c.v[d + 1];
        --c.n;
      };
      break;
    }
    case OpKind::Reshape:
      if (inShape.size() > 4) fail(op, "reshape of rank " + std::to_string(inShape.size()) + " (at most 4)");
      dests[0].map = [inShape, outShape](SmallCoords& c) {
        int64_t index = 0;
        for (size_t d = 0; d < outShape.size(); ++d) index = index * outShape[d] + c.v[d];
        c.n = inShape.size();
        for (size_t d = inShape.size(); d-- > 0;) {
          c.v[d] = index % inShape[d];
          index /= inShape[d];
        }
      };
      break;
    case OpKind::Trans: {
      std::vector<int64_t> perm = op.attr("perm").getIntArray();
      dests[0].map = [perm](SmallCoords& c) {
        const SmallCoords j = c;
        for (size_t i = 0; i < perm.size(); ++i) c.v[static_cast<size_t>(perm[i])] = j.v[i];
      };
      break;
    }
    case OpKind::Cat: {
      int64_t half = inShape[0];
      sources.push_back({heldValue(op.operand(1), op, options), [half](SmallCoords& c) { c.v[0] += half; }});
      break;
    }
    case OpKind::Join:
      sources[0].map = appendCoord(0);
      sources.push_back({heldValue(op.operand(1), op, options), appendCoord(1)});
      break;
    case OpKind::Split:
      dests[0].map = appendCoord(0);
      dests.push_back({heldValue(op.result(1), op, options), appendCoord(1)});
      break;
    default:
      fail(op, "is not an exchange op");
  }
}

}  // namespace

bool isExchangeOp(const Op& op) {
  switch (op.kind()) {
    case OpKind::ConvertLayout:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::Cat:
    case OpKind::Join:
    case OpKind::Split:
      return true;
    default:
      return false;
  }
}

std::vector<int64_t> exchangeBufferShape(const Op& op) {
  if (op.is(OpKind::Cat) || op.is(OpKind::Join)) return op.result(0)->type().shape();
  return op.operand(0)->type().shape();
}

ExchangeBuffer exchangeBufferOf(const Op& op) {
  ExchangeBuffer buffer{exchangeBufferShape(op), op.result(0)->type().storageBytes()};
  if (!op.is(OpKind::ConvertLayout) || buffer.rows() == 1) return buffer;
  if (op.hasAttr(kExchangePad)) {  // allocate-shared-memory's choice, recorded on the op
    buffer.padBytes = op.intAttr(kExchangePad);
    if (op.hasAttr(kExchangeSwizzle)) {
      const std::vector<int64_t> swizzle = op.attr(kExchangeSwizzle).getIntArray();
      buffer.swizzle = {swizzle.at(0), swizzle.at(1)};
    }
    return buffer;
  }
  // The pad or swizzle that makes this conversion's writes and reads cheapest (the shapes are the same on both
  // sides).
  std::optional<Layout> src = Layout::ofType(op.operand(0)->type()), dst = Layout::ofType(op.result(0)->type());
  if (!src || !dst || !src->isDistributed() || !dst->isDistributed()) return buffer;
  return leastConflictingExchange(src->toLinear(buffer.shape), dst->toLinear(buffer.shape), buffer);
}

void recordExchangeChoice(Op& op) {
  op.attrs().erase(kExchangePad);
  op.attrs().erase(kExchangeSwizzle);
  const ExchangeBuffer buffer = exchangeBufferOf(op);
  if (!op.is(OpKind::ConvertLayout) || buffer.rows() == 1) return;
  op.setAttr(kExchangePad, ir::Attr::integer(buffer.pitchBytes() - buffer.rowLength() * buffer.elementBytes));
  if (buffer.swizzle.phases > 1)
    op.setAttr(kExchangeSwizzle, ir::Attr::intArray({buffer.swizzle.phases, buffer.swizzle.strideBytes}));
}

int64_t ExchangeBuffer::rows() const {
  return shape.empty() ? 1 : product(std::vector<int64_t>(shape.begin(), shape.end() - 1));
}

int64_t ExchangeBuffer::rowsPerRound(int64_t scratchBytes) const {
  if (bytes() <= scratchBytes) return rows();
  int64_t r = 0;
  for (int64_t candidate = 1; candidate < rows() && roundBytes(candidate) <= scratchBytes; candidate *= 2) r = candidate;
  return r;
}

int64_t ExchangeBuffer::byteOffset(const Coords& coords) const {
  if (coords.size() != shape.size()) throw Error("exchange buffer: coordinates and shape differ in rank");
  if (coords.empty()) return 0;
  int64_t row = 0;
  for (size_t d = 0; d + 1 < coords.size(); ++d) row = row * shape[d] + coords[d];
  return swizzle.apply(row * pitchBytes() + coords.back() * elementBytes);  // a swizzle leaves rows unpadded
}

int64_t ExchangeBuffer::swizzleBlockRows() const {
  return std::max<int64_t>(1, swizzle.blockBytes() / (rowLength() * elementBytes));
}

OperandAreas operandAreas(const Op& op, int64_t slots) {
  OperandAreas areas;
  for (const Value* v : op.operands()) {
    areas.offsets.push_back(areas.bytes);
    areas.bytes = alignToShared(areas.bytes + slots * v->type().storageBytes());
  }
  return areas;
}

OperandAreas reduceScratch(const Op& reduce, int64_t warpParts) {
  return operandAreas(reduce, std::max<int64_t>(1, reduce.result(0)->type().numElements()) * warpParts);
}

OperandAreas scanScratch(const Op& scan) { return operandAreas(scan, scan.operand(0)->type().numElements()); }

const Op* dotOperandBuffer(const Op& dot, unsigned index) {
  const Op* def = dot.operand(index)->definingOp();
  return def && def->is(OpKind::LocalLoad) ? def : nullptr;
}

bool onlyDotsReadBufferOf(const Op& localLoad) {
  const std::vector<ir::Use>& uses = localLoad.result(0)->uses();
  return !uses.empty() && std::all_of(uses.begin(), uses.end(), [&](const ir::Use& use) {
    const Op& dot = *use.user;
    return dot.is(OpKind::Dot) && use.operandIndex < 2 && dotOperandBuffer(dot, use.operandIndex) == &localLoad &&
           !(use.operandIndex == 0 && dotTakesAInRegisters(dot));
  });
}

bool dotTakesAInRegisters(const Op& dot) {
  return dot.hasAttr(kDotAInRegisters) && dot.attr(kDotAInRegisters).isBool() && dot.attr(kDotAInRegisters).getBool();
}

DotStaging dotStaging(const Op& dot) {
  Type a = dot.operand(0)->type(), b = dot.operand(1)->type();
  DotStaging staging;
  staging.stagesA = !dotOperandBuffer(dot, 0) && !dotTakesAInRegisters(dot);
  staging.stagesB = !dotOperandBuffer(dot, 1);
  staging.bOffset = staging.stagesA ? alignToShared(a.numElements() * a.storageBytes()) : 0;
  staging.bytes = staging.bOffset + (staging.stagesB ? alignToShared(b.numElements() * b.storageBytes()) : 0);
  return staging;
}

int64_t mbarrierArrayBytes(ir::Type barriers) { return alignToShared(barriers.stages() * kMbarrierBytes); }

int64_t descStoreStagingBytes(const Op& store) {
  const Type desc = store.operand(0)->type();
  int64_t elements = 1;
  for (int64_t d : desc.blockShape()) elements *= d;
  return alignToShared(elements * desc.element().storageBytes());
}

int64_t sharedBufferBytes(Type buffer) {
  return alignToShared(buffer.stages() * buffer.stageTile().numElements() * buffer.storageBytes());
}

int64_t atomicBroadcastBytes(const Op& atomic) {
  Type ptr = atomic.operand(0)->type();
  return alignToShared(std::max<int64_t>(1, ptr.numElements()) * ptr.pointee().storageBytes());
}

namespace {

// The plan of a convert_layout, from the linear forms of its operand's and result's layouts.
ir::ConversionPlan conversionPlan(const Op& convert, const PassOptions& options) {
  HeldValue in = heldValue(convert.operand(0), convert, options), out = heldValue(convert.result(0), convert, options);
  if (!in.layout || !out.layout) fail(convert, "operand and result must be tiles");
  try {
    return ir::planConversion(in.layout->toLinear(in.shape), out.layout->toLinear(out.shape));
  } catch (const Error& e) {
    fail(convert, e.message());
  }
}

}  // namespace

namespace {

// Buffer coordinates packed into one integer (16 bits per dimension; tiles are far smaller), so that looking up
// which register holds an element compares integers instead of vectors.
int64_t packCoords(const SmallCoords& c) {
  if (c.n > 4) throw Error("exchange: a buffer of rank " + std::to_string(c.n) + " (at most 4)");
  int64_t key = 0;
  for (size_t d = 0; d < c.n; ++d) key = key << 16 | c.v[d];
  return key;
}

// One side's buffer coordinates (packed) for each register of thread 0 and of each probe thread. A layout is
// linear over the bits of (register, lane, warp), so a register's coordinates in a thread are its coordinates in
// thread 0 XOR the thread's coordinates for register 0, and register r's coordinates in thread 0 are register
// (r with its lowest bit cleared)'s XOR that bit's basis: one XOR per register and one application per thread.
std::vector<std::vector<int64_t>> sideKeys(const ExchangeSide& side,
                                           const std::vector<std::pair<int64_t, int64_t>>& threads) {
  const int64_t registers = side.value.registers();
  const size_t rank = side.value.shape.size();
  if (rank > 4) throw Error("exchange: a tile of rank " + std::to_string(rank) + " (at most 4)");
  std::vector<SmallCoords> registerParts(static_cast<size_t>(registers));
  registerParts[0].n = rank;
  if (side.value.linear) {
    const std::vector<ir::LinearLayout::Basis>& bases = side.value.linear->inDim(ir::kRegisterDim).bases;
    for (int64_t r = 1; r < registers; ++r) {
      const int64_t bit = __builtin_ctzll(static_cast<uint64_t>(r));
      const SmallCoords& rest = registerParts[static_cast<size_t>(r & (r - 1))];
      SmallCoords& c = registerParts[static_cast<size_t>(r)];
      c.n = rank;
      for (size_t d = 0; d < rank; ++d) c.v[d] = rest.v[d] ^ bases[static_cast<size_t>(bit)][d];
    }
  }
  std::vector<std::vector<int64_t>> keys;
  for (auto [warp, lane] : threads) {
    const Coords threadPart = side.value.coords(warp, lane, 0);
    std::vector<int64_t>& row = keys.emplace_back();
    row.reserve(static_cast<size_t>(registers));
    for (int64_t r = 0; r < registers; ++r) {
      SmallCoords c = registerParts[static_cast<size_t>(r)];
      for (size_t d = 0; d < rank; ++d) c.v[d] ^= threadPart[d];
      side.map(c);
      row.push_back(packCoords(c));
    }
  }
  return keys;
}

}  // namespace

bool canRemapInRegisters(const Op& op, const PassOptions& options) {
  if (op.is(OpKind::ConvertLayout)) return conversionPlan(op, options).kind == ir::ConversionKind::RegisterPermutation;
  std::vector<ExchangeSide> sources, dests;
  exchangeSides(op, options, sources, dests);
  // Layouts are linear over the bits of (register, lane, warp) (docs/Layouts.md), so a register renaming that
  // is right in thread 0 and in every single-bit lane and warp is right in every thread.
  std::vector<std::pair<int64_t, int64_t>> threads{{0, 0}};  // (warp, lane): thread 0, then the probes
  for (int64_t lane = 1; lane < options.warpSize; lane *= 2) threads.push_back({0, lane});
  for (int64_t warp = 1; warp < options.numWarps; warp *= 2) threads.push_back({warp, 0});

  std::vector<std::vector<std::vector<int64_t>>> sourceKeys;  // [source][thread][register]
  std::unordered_map<int64_t, std::pair<size_t, int64_t>> heldByThread0;  // buffer element -> (source, register)
  for (size_t s = 0; s < sources.size(); ++s) {
    sourceKeys.push_back(sideKeys(sources[s], threads));
    for (int64_t r = 0; r < sources[s].value.registers(); ++r)
      heldByThread0.emplace(sourceKeys[s][0][r], std::make_pair(s, r));
  }
  for (const ExchangeSide& dest : dests) {
    const std::vector<std::vector<int64_t>> destKeys = sideKeys(dest, threads);
    for (int64_t r = 0; r < dest.value.registers(); ++r) {
      auto it = heldByThread0.find(destKeys[0][r]);
      if (it == heldByThread0.end()) return false;
      const auto [s, reg] = it->second;
      for (size_t t = 1; t < threads.size(); ++t)
        if (sourceKeys[s][t][reg] != destKeys[t][r]) return false;
    }
  }
  return true;
}

bool exchangeNeedsSharedMemory(const Op& op, const PassOptions& options) {
  if (op.is(OpKind::ConvertLayout)) return conversionPlan(op, options).kind == ir::ConversionKind::SharedMemory;
  return !canRemapInRegisters(op, options);
}

int64_t reduceWarpParts(const Op& reduce, const PassOptions& options) {
  HeldValue in = heldValue(reduce.operand(0), reduce, options);
  if (!in.layout) fail(reduce, "input must be a tile");
  int64_t axis = reduce.intAttr("axis");
  Coords origin = in.coords(0, 0, 0);
  int64_t parts = 1;
  for (int64_t warp = 1; warp < options.numWarps; warp *= 2)
    if (in.coords(warp, 0, 0)[axis] != origin[axis]) parts *= 2;
  return parts;
}

namespace {

bool isReplicated(const Value* ptr, const Op& op, const PassOptions& options) {
  HeldValue held = heldValue(ptr, op, options);
  if (!held.layout) return true;  // a scalar is held by every thread
  return int64_t(options.numWarps) * options.warpSize * held.registers() > product(held.shape);
}

}  // namespace

int64_t scratchBytes(const Op& op, const PassOptions& options) {
  if (isExchangeOp(op)) {
    if (!exchangeNeedsSharedMemory(op, options)) return 0;
    const ExchangeBuffer buffer = exchangeBufferOf(op);
    if (options.maxSharedBytes <= 0) return buffer.bytes();
    const int64_t rows = buffer.rowsPerRound(options.maxSharedBytes);
    return rows == 0 ? buffer.bytes() : buffer.roundBytes(rows);
  }
  switch (op.kind()) {
    case OpKind::Reduce: {
      int64_t parts = reduceWarpParts(op, options);
      return parts == 1 ? 0 : reduceScratch(op, parts).bytes;
    }
    case OpKind::Scan:
      return scanScratch(op).bytes;
    case OpKind::Dot:
      return dotStaging(op).bytes;
    case OpKind::LocalAlloc:
      return sharedBufferBytes(op.result(0)->type());
    case OpKind::MbarrierAlloc:
      return mbarrierArrayBytes(op.result(0)->type());
    case OpKind::DescStore:
      return descStoreStagingBytes(op);
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS:
      if (!op.result(0)->hasUses() || !isReplicated(op.operand(0), op, options)) return 0;
      return atomicBroadcastBytes(op);
    default:
      return 0;
  }
}

std::optional<SharedRange> scratchRangeOf(const Op& op) {
  bool hasOffset = op.hasAttr("smem_offset"), hasBytes = op.hasAttr("smem_bytes");
  if (!hasOffset && !hasBytes) return std::nullopt;
  if (hasOffset != hasBytes) fail(op, "has only one of 'smem_offset' and 'smem_bytes'; shared scratch needs both");
  for (const char* key : {"smem_offset", "smem_bytes"})
    if (!op.attr(key).isInt() || op.attr(key).getInt() < 0)
      fail(op, std::string("attribute '") + key + "' must be a non-negative int, got " + op.attr(key).str());
  return SharedRange{op.intAttr("smem_offset"), op.intAttr("smem_bytes")};
}

}  // namespace tessera::transforms
