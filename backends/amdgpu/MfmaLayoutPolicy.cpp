#include "backends/amdgpu/MfmaLayoutPolicy.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "backends/amdgpu/MfmaFragments.h"
#include "backends/common/TensorCoreDot.h"
#include "ir/IR.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/analysis/ChainedDots.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::amdgpu {

namespace {

constexpr TensorCoreTile kGfx90aTiles[] = {
    {ir::ScalarKind::F16, ir::ScalarKind::F32, kMfmaM, kMfmaN, 16},
    {ir::ScalarKind::BF16, ir::ScalarKind::F32, kMfmaM, kMfmaN, 16},
    {ir::ScalarKind::I8, ir::ScalarKind::I32, kMfmaM, kMfmaN, 16},
};
constexpr TensorCoreTile kGfx942Tiles[] = {
    {ir::ScalarKind::F16, ir::ScalarKind::F32, kMfmaM, kMfmaN, 16},
    {ir::ScalarKind::BF16, ir::ScalarKind::F32, kMfmaM, kMfmaN, 16},
    {ir::ScalarKind::I8, ir::ScalarKind::I32, kMfmaM, kMfmaN, 32},
};

// The MFMA block `dot` runs on: 16 (16x16 instructions), or 32 (v_mfma_f32_32x32x8) where asked
// (options.matrixInstrSize) for 16-bit inputs whose blocks fit: a chained dot's M must give each wave whole
// 32-row blocks (the waves are stacked along M) and its N and K be multiples of 32 (the same test for both ends of attention's
// chain, whose N and K swap, so that the two agree); another dot's M must be a multiple of 32 and its N give each
// wave whole 32-column blocks (the waves lie side by side along N: a blocked layout cannot give a wave whole
// 32-row blocks there, its repetitions along M would interleave the waves every 8 rows).
int64_t mfmaBlock(const ir::Op& dot, const TensorCoreDot& shape, const transforms::PassOptions& options) {
  if (options.matrixInstrSize != kMfmaLargeBlock || shape.tile.input == ir::ScalarKind::I8) return kMfmaM;
  const int64_t large = kMfmaLargeBlock, waves = options.numWarps;
  const bool fits = transforms::isChainedDot(dot)
                        ? shape.M % (large * waves) == 0 && shape.N % large == 0 && shape.K % large == 0
                        : shape.M % large == 0 && shape.N % (large * waves) == 0;
  return fits ? large : kMfmaM;
}

// Whether `dot` is one end of a chain (ChainedDots.h) of 16-bit inputs whose M splits into whole blocks per wave.
bool takesChainedLayout(const ir::Op& dot, const TensorCoreDot& shape, const transforms::PassOptions& options,
                        int64_t block) {
  return shape.tile.input != ir::ScalarKind::I8 && shape.M % (block * options.numWarps) == 0 &&
         transforms::isChainedDot(dot);
}

// The transposed C/D fragments (MfmaFragments.h), each wave owning whole blocks of rows: lane l holds row
// l % block of every block of its rows, and columns 4 (l / 16) + {0..3} of each 16x16 block, or 8 j + 4 (l / 32) +
// {0..3} (j = 0..3, the layout's repetitions along N) of each 32x32 block.
ir::Layout chainedLayout(int numWarps, int64_t block) {
  if (block == kMfmaLargeBlock) return ir::Layout::blocked({1, 4}, {32, 2}, {numWarps, 1}, {0, 1});
  return ir::Layout::blocked({1, 4}, {16, 4}, {numWarps, 1}, {0, 1});
}

}  // namespace

std::span<const TensorCoreTile> mfmaTiles(const std::string& arch) {
  if (arch == "gfx942") return kGfx942Tiles;
  return kGfx90aTiles;
}

std::optional<ir::Layout> mfmaAccumulatorLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMfmaWaveSize) return std::nullopt;
  const std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, mfmaTiles(options.arch));
  if (!shape) return std::nullopt;
  const int64_t block = mfmaBlock(dot, *shape, options);
  if (takesChainedLayout(dot, *shape, options, block)) return chainedLayout(options.numWarps, block);
  // Lane l holds rows 4 (l / 16) + {0..3} of column l % 16 of each 16x16 block; with 32x32 blocks, rows
  // 8 j + 4 (l / 32) + {0..3} (j = 0..3, the layout's repetitions along M) of column l % 32.
  if (block == kMfmaLargeBlock) return ir::Layout::blocked({4, 1}, {2, 32}, {1, options.numWarps}, {1, 0});
  return ir::Layout::blocked({4, 1}, {4, 16}, {1, options.numWarps}, {1, 0});
}

std::optional<ir::Layout> mfmaOperandARegisterLayout(const ir::Op& dot, const transforms::PassOptions& options) {
  if (options.warpSize != kMfmaWaveSize || !transforms::operandAFromDot(dot)) return std::nullopt;
  const std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, mfmaTiles(options.arch));
  if (!shape) return std::nullopt;
  const int64_t block = mfmaBlock(dot, *shape, options);
  if (!takesChainedLayout(dot, *shape, options, block)) return std::nullopt;
  return chainedLayout(options.numWarps, block);
}

ir::Layout mfmaOperandLdsLayout(int64_t K, int64_t elementBytes, unsigned index, int64_t outer) {
  const MfmaSwizzle s = mfmaSwizzleFor(K, elementBytes);
  const ir::Layout swizzled = ir::Layout::shared(kMfmaChunkBytes / elementBytes, s.perPhase, s.maxPhase,
                                                 index == 0 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1});
  // Rows shorter than 128 bytes share a line, perPhase of them, told apart by the row's low bits; the phase is the
  // bits above those, up to `shift`. A copy that transposes (B, N-contiguous in memory) stores one column of each
  // thread's run of N at a time: rows a run apart, all with the same low bits, in one perPhase-th of the banks.
  // Row r goes where r ^ ((r >> shift) % perPhase) would (rows of one phase differ in the bits from `shift` up),
  // which lets such a store reach every part; the 16 rows an MFMA read takes (lane % 16 of a 16-row block, bit 4
  // and up the same) land on the same 16 rows, so the reads stay conflict-free. B only: A's rows arrive
  // K-contiguous (a copy stores a row's chunks, not a column), and the permutation costs its reads' addresses
  // registers (the 64x64x32 matmul on gfx942: 52 VGPRs with neither permuted, 68 with both).
  const int lowBits = std::countr_zero(static_cast<uint64_t>(s.perPhase));
  const int shift = lowBits + std::countr_zero(static_cast<uint64_t>(s.maxPhase));
  if (index != 1 || lowBits == 0 || shift < 4 || outer < (int64_t(1) << (shift + lowBits)) ||
      (outer & (outer - 1)) != 0)
    return swizzled;
  const ir::LinearLayout offsets = swizzled.toLinear({K, outer});  // element offset -> (k, n)
  std::vector<ir::LinearLayout::InDim> ins = offsets.inDims();
  for (ir::LinearLayout::InDim& in : ins)
    for (ir::LinearLayout::Basis& basis : in.bases) basis[1] ^= (basis[1] >> shift) & (s.perPhase - 1);
  return ir::Layout::linearShared(ir::LinearLayout(std::move(ins), offsets.outDims()));
}

namespace {

using ir::OpKind;

// The innermost `for` holding `op`; null outside loops.
const ir::Op* enclosingLoop(const ir::Op& op) {
  for (const ir::Op* p = op.parentOp(); p; p = p->parentOp())
    if (p->is(OpKind::For)) return p;
  return nullptr;
}

bool isInside(const ir::Op& op, const ir::Op* loop) { return loop && op.isNestedIn(*loop); }

// Where operand #index of `dot` comes from when it is (or will be) read from an operand buffer: the buffer, once
// async-copy-dot-operands has rewritten it, else the load the pass will copy (through casts and layout
// conversions). `copiedInLoop` says whether the copies into it run inside `loop` (a buffer pipeline-loops
// multiplies) rather than once before it (attention's Q). Null `key` for an operand the dot stages in its own
// scratch.
struct OperandSource {
  const void* key = nullptr;
  bool copiedInLoop = false;
};

OperandSource operandSource(const ir::Op& dot, unsigned index, const ir::Op* loop) {
  if (const ir::Op* localLoad = transforms::dotOperandBuffer(dot, index)) {
    const ir::Value* buffer = localLoad->operand(0);
    bool inLoop = false;
    for (const ir::Use& use : buffer->uses())
      if (use.user->is(OpKind::AsyncCopy) && use.operandIndex == 1 && isInside(*use.user, loop)) inLoop = true;
    return {buffer, inLoop};
  }
  if (!transforms::dotOperandInSharedBuffer(dot, index)) return {};
  const ir::Value* v = dot.operand(index);
  while (const ir::Op* def = v->definingOp()) {
    if (def->is(OpKind::Load)) return {def, isInside(*def, loop)};
    if (!def->is(OpKind::Cast) && !def->is(OpKind::ConvertLayout)) break;
    v = def->operand(0);
  }
  return {};
}

// The LDS that the MFMA dots of the function holding `dot` would take with their loaded operands in buffers of
// `stages` stages: each buffer once (a load several dots read is copied once), loop-invariant ones (copied before
// the loop) in one stage and live throughout, the buffers copied in a loop in `stages` stages and live in that loop,
// and per loop the largest staging scratch of a dot in it (an operand from registers, such as attention's P, live
// only while its dot runs). Sequential loops (attention's key loops) reuse each other's LDS. Without `loopCopies`
// the operands copied in loops are staged by their dots instead (counted as scratch): only the loop-invariant ones
// get buffers. The estimate reads the same before async-copy-dot-operands runs, while it rewrites one operand at a
// time, and after pipelining, so that every dot of the function gets the same answer.
int64_t operandBufferBytes(const ir::Op& dot, const transforms::PassOptions& options, int64_t stages,
                           bool loopCopies = true) {
  auto operandBytes = [](const ir::Op& d, const TensorCoreDot& s, unsigned i) {
    return (i == 0 ? s.M * s.K : s.K * s.N) * d.operand(i)->type().element().storageBytes();
  };
  ir::Function* f = dot.parentBlock() ? dot.parentBlock()->parentFunction() : nullptr;
  std::vector<const ir::Op*> dots;
  if (f)
    f->walk([&](ir::Op* op) {
      if (op->is(OpKind::Dot)) dots.push_back(op);
    });
  else
    dots.push_back(&dot);
  std::set<const void*> counted;
  int64_t invariant = 0;
  std::map<const ir::Op*, int64_t> inLoop, scratch;  // per innermost loop (null: none)
  for (const ir::Op* d : dots) {
    const std::optional<TensorCoreDot> s = matchTensorCoreDot(*d, mfmaTiles(options.arch));
    if (!s) continue;
    const ir::Op* loop = enclosingLoop(*d);
    int64_t staged = 0;
    for (unsigned i = 0; i < 2; ++i) {
      if (i == 0 && mfmaOperandARegisterLayout(*d, options)) continue;  // attention's P: in registers, no LDS
      const OperandSource source = operandSource(*d, i, loop);
      const int64_t bytes = operandBytes(*d, *s, i);
      if (!source.key || (source.copiedInLoop && !loopCopies)) staged += bytes;
      else if (!counted.insert(source.key).second) continue;
      else if (source.copiedInLoop) inLoop[loop] += stages * bytes;
      else invariant += bytes;
    }
    scratch[loop] = std::max(scratch[loop], staged);
  }
  int64_t perLoop = 0;
  for (const auto& [loop, bytes] : scratch) perLoop = std::max(perLoop, bytes + inLoop[loop]);
  return invariant + perLoop;
}

}  // namespace

std::optional<ir::Layout> mfmaOperandSharedLayout(const ir::Op& dot, unsigned index,
                                                  const transforms::PassOptions& options) {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, mfmaTiles(options.arch));
  if (options.warpSize != kMfmaWaveSize || !shape || index > 1) return std::nullopt;
  // gfx9's LDS is 64 KiB: where the copies of the operands would not fit in it, the dots stage their operands in
  // their own scratch instead (one copy, live only while the dot runs). pipeline-loops takes fewer stages than
  // num_stages where they would not fit: 2, else one buffer each, which it still fills an iteration ahead (loads
  // into registers, stored at the end of the iteration: the copies are loads and stores here). Where not even one
  // fits, an operand loaded once before the loop still gets its buffer if it fits beside the dots' staging: copied
  // once rather than staged again by every iteration's dot.
  const int64_t stages = std::min<int64_t>(options.numStages, 2);
  if (options.maxSharedBytes > 0 && operandBufferBytes(dot, options, stages) > options.maxSharedBytes &&
      operandBufferBytes(dot, options, 1) > options.maxSharedBytes) {
    if (operandSource(dot, index, enclosingLoop(dot)).copiedInLoop ||
        operandBufferBytes(dot, options, stages, /*loopCopies=*/false) > options.maxSharedBytes)
      return std::nullopt;
  }
  return mfmaOperandLdsLayout(shape->K, dot.operand(0)->type().element().storageBytes(), index,
                              index == 0 ? shape->M : shape->N);
}

std::optional<ir::Layout> AMDGPULayoutPolicy::dotOperandStagingLayout(const ir::Op& dot, unsigned index) const {
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, mfmaTiles(options_.arch));
  if (!shape || index > 1) return std::nullopt;
  return mfmaOperandLdsLayout(shape->K, dot.operand(0)->type().element().storageBytes(), index,
                              index == 0 ? shape->M : shape->N);
}

}  // namespace tessera::backends::amdgpu
