#include "backends/nvptx/WgmmaPlan.h"

#include <algorithm>

#include "backends/common/TensorCoreDot.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "backends/nvptx/MmaLinearLayouts.h"
#include "backends/nvptx/WgmmaAsm.h"
#include "transforms/AsyncCopyDotOperands.h"
#include "transforms/analysis/ChainedDots.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::nvptx {

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int log2(int64_t v) { return 63 - __builtin_clzll(static_cast<uint64_t>(v)); }

// The widest swizzle whose lines `bytes` contiguous bytes fill.
int64_t swizzleFor(int64_t bytes) { return std::min<int64_t>(128, bytes); }

constexpr int64_t kWarpsPerGroup = 4, kWgmmaM = 64;

// The inputs wgmma takes into an f32 accumulator, with the instruction's K (matchTensorCoreDot requires K to be a
// multiple of it).
constexpr TensorCoreTile kWgmmaTiles[] = {
    {ir::ScalarKind::F16, ir::ScalarKind::F32, kWgmmaM, 8, 16},
    {ir::ScalarKind::BF16, ir::ScalarKind::F32, kWgmmaM, 8, 16},
    {ir::ScalarKind::F8E4M3, ir::ScalarKind::F32, kWgmmaM, 8, 32},
    {ir::ScalarKind::F8E5M2, ir::ScalarKind::F32, kWgmmaM, 8, 32},
};

// Says why a dot does not run on wgmma, where the caller asks (whyNot non-null: an error explaining it), and
// returns nullopt. The words are built only then: the plans are asked for on every layout query.
template <class Words>
std::nullopt_t refuse(std::string* whyNot, Words words) {
  if (whyNot) *whyNot = words();
  return std::nullopt;
}

std::string dims(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + " x " + std::to_string(b) + " x " + std::to_string(c);
}

// The refusals both kinds of plan share: the arch, whole warpgroups, and the dot's kinds and shape.
std::optional<TensorCoreDot> wgmmaShape(const ir::Op& dot, const transforms::PassOptions& options, bool mixedFp8,
                                        std::string* whyNot) {
  const std::string arch = options.arch.empty() ? "sm_90a" : options.arch;  // NVPTXTarget::defaultArch
  if (arch != "sm_90a") return refuse(whyNot, [&] { return "wgmma needs sm_90a (the arch is " + arch + ")"; });
  if (options.warpSize != kMmaWarpSize || options.numWarps % kWarpsPerGroup)
    return refuse(whyNot, [&] {
      return "wgmma needs whole warpgroups: num_warps a multiple of 4, got " + std::to_string(options.numWarps);
    });
  std::optional<TensorCoreDot> shape = matchTensorCoreDot(dot, kWgmmaTiles, mixedFp8);
  if (!shape) return refuse(whyNot, [&] { return tensorCoreRefusal(dot, kWgmmaTiles, "wgmma"); });
  return shape;
}

}  // namespace

std::optional<WgmmaDotPlan> wgmmaDotPlan(const ir::Op& dot, const transforms::PassOptions& options,
                                         std::string* whyNot) {
  std::optional<TensorCoreDot> shape = wgmmaShape(dot, options, /*mixedFp8=*/true, whyNot);
  if (!shape) return std::nullopt;
  // Both operands must reach the dot from shared buffers (register operands keep mma.sync).
  for (unsigned index : {0u, 1u})
    if (!transforms::dotOperandInSharedBuffer(dot, index))
      return refuse(whyNot, [&] {
        return std::string("wgmma reads both operands from shared buffers; operand ") + (index ? "B" : "A") +
               " does not come from a load copied into one";
      });
  // Chained dots (attention) take wgmmaChainedDotPlan's.
  if (transforms::isChainedDot(dot)) return refuse(whyNot, [] { return "a chained dot takes the chained plan"; });
  WgmmaDotPlan p;
  p.M = shape->M;
  p.N = shape->N;
  p.K = shape->K;
  p.input = shape->tile.input;
  p.inputB = dot.operand(1)->type().element().scalarKind();
  p.k = shape->tile.k;
  p.elementBytes = 32 / p.k;
  p.kMajorB = p.elementBytes == 1 || dotBKContiguous(dot);
  if (!isPowerOfTwo(p.M) || !isPowerOfTwo(p.N) || !isPowerOfTwo(p.K))
    return refuse(whyNot, [&] { return "wgmma plans take powers of two; M x N x K = " + dims(p.M, p.N, p.K); });
  const int64_t warpgroups = options.numWarps / kWarpsPerGroup;
  if (!isPowerOfTwo(warpgroups))
    return refuse(whyNot, [&] {
      return "wgmma plans take a power of two of warpgroups, got " + std::to_string(warpgroups);
    });
  p.warpgroupsM = std::min(warpgroups, p.M / kWgmmaM);
  p.warpgroupsN = warpgroups / p.warpgroupsM;
  const int64_t perWarpgroupN = p.N / p.warpgroupsN;
  p.n = std::min<int64_t>(perWarpgroupN, 256);
  const std::vector<int>& ns = wgmmaNs();
  // An N-major B's lines hold n elements: at least 32 bytes, the narrowest swizzle, takes n >= 16.
  if (p.N % p.warpgroupsN || (!p.bKMajor() && p.n < 16) || std::find(ns.begin(), ns.end(), p.n) == ns.end())
    return refuse(whyNot, [&] {
      if (p.N % p.warpgroupsN)
        return "N = " + std::to_string(p.N) + " does not split over " + std::to_string(p.warpgroupsN) +
               " warpgroups along N";
      return "no wgmma instruction takes N = " + std::to_string(p.n) + " per warpgroup" +
             (!p.bKMajor() && p.n < 16 ? " with B N-major (16 or more)" : "");
    });
  p.repeatsM = p.M / (kWgmmaM * p.warpgroupsM);
  p.repeatsN = perWarpgroupN / p.n;
  if (p.registers() > kWgmmaMaxWaitRegisters)
    return refuse(whyNot, [&] {
      return "the accumulator would take " + std::to_string(p.registers()) + " registers per thread, more than " +
             std::to_string(kWgmmaMaxWaitRegisters) + ": use more warps or a smaller block";
    });
  p.swizzleA = swizzleFor(p.K * p.elementBytes);
  p.swizzleB = swizzleFor((p.bKMajor() ? p.K : p.n) * p.elementBytes);
  // Every stage of a buffer starts on a 1024-byte boundary, where the swizzle patterns start.
  if ((p.K * p.N * p.elementBytes) % 1024)
    return refuse(whyNot, [&] {
      return "B's block (" + std::to_string(p.K * p.N * p.elementBytes) +
             " bytes) is no multiple of 1024 bytes, where the swizzle patterns of its stages start";
    });
  return p;
}

std::optional<WgmmaDotPlan> wgmmaChainedDotPlan(const ir::Op& dot, const transforms::PassOptions& options,
                                                std::string* whyNot) {
  if (!transforms::isChainedDot(dot)) return refuse(whyNot, [] { return "the dot is not chained"; });
  std::optional<TensorCoreDot> shape = wgmmaShape(dot, options, /*mixedFp8=*/false, whyNot);
  if (!shape) return std::nullopt;
  if (shape->tile.k != 16)  // 16-bit inputs: the A fragment is the accumulator's
    return refuse(whyNot, [] { return "chained dots run on wgmma with 16-bit inputs only"; });
  if (!transforms::dotOperandInSharedBuffer(dot, 1))
    return refuse(whyNot, [] { return "wgmma reads B from a shared buffer; B comes from no load copied into one"; });
  // A computed by the previous dot always ends in registers (mmaOperandARegisterLayout); asked before layouts are
  // assigned (expand-descriptor-loads), the attribute saying so is not there yet.
  const bool aInRegisters = transforms::dotTakesAInRegisters(dot) || transforms::operandAFromDot(dot);
  if (!aInRegisters && !transforms::dotOperandInSharedBuffer(dot, 0))
    return refuse(whyNot, [] { return "A is neither the previous dot's result nor a load copied into a buffer"; });
  WgmmaDotPlan p;
  p.M = shape->M;
  p.N = shape->N;
  p.K = shape->K;
  p.input = p.inputB = shape->tile.input;
  p.k = 16;
  p.elementBytes = 2;
  p.kMajorB = dotBKContiguous(dot);
  p.chained = true;
  p.aInRegisters = aInRegisters;
  // The chained layout (MmaLayoutPolicy.h) gives each warp M / (16 * num_warps) blocks of 16 rows, all N columns.
  const int64_t rowsPerRound = kMmaM * options.numWarps;
  if (p.M % rowsPerRound)
    return refuse(whyNot, [&] {
      return "each of the " + std::to_string(options.numWarps) + " warps takes whole 16-row blocks: M = " +
             std::to_string(p.M) + " must be a multiple of " + std::to_string(rowsPerRound);
    });
  if (!isPowerOfTwo(p.N) || !isPowerOfTwo(p.K))
    return refuse(whyNot, [&] { return "wgmma plans take powers of two; M x N x K = " + dims(p.M, p.N, p.K); });
  p.warpgroupsM = options.numWarps / kWarpsPerGroup;
  p.n = p.N;
  p.repeatsM = p.M / rowsPerRound;
  const std::vector<int>& ns = wgmmaNs();
  if ((!p.bKMajor() && p.n < 16) || std::find(ns.begin(), ns.end(), p.n) == ns.end())
    return refuse(whyNot, [&] {
      return "no wgmma instruction takes N = " + std::to_string(p.n) +
             (!p.bKMajor() && p.n < 16 ? " with B N-major (16 or more)" : "");
    });
  if (p.registers() > kWgmmaMaxWaitRegisters)
    return refuse(whyNot, [&] {
      return "the accumulator would take " + std::to_string(p.registers()) + " registers per thread, more than " +
             std::to_string(kWgmmaMaxWaitRegisters) + ": use more warps or a smaller block";
    });
  p.swizzleB = swizzleFor((p.bKMajor() ? p.K : p.n) * p.elementBytes);
  if ((p.K * p.N * p.elementBytes) % 1024)
    return refuse(whyNot, [&] {
      return "B's block (" + std::to_string(p.K * p.N * p.elementBytes) +
             " bytes) is no multiple of 1024 bytes, where the swizzle patterns of its stages start";
    });
  if (!p.aInRegisters) {
    p.swizzleA = swizzleFor(p.K * p.elementBytes);
    if (p.swizzleA < 32)  // A's lines: at least the narrowest swizzle
      return refuse(whyNot, [&] { return "A's rows of " + std::to_string(p.K * 2) + " bytes are under 32 bytes"; });
  }
  return p;
}

ir::Layout wgmmaAccumulatorLayout(const WgmmaDotPlan& plan, int numWarps) {
  const ir::LinearLayout fragment = wgmmaAccumulatorFragment(plan.n);
  std::vector<ir::LinearLayout::Basis> registers = fragment.inDim(ir::kRegisterDim).bases;
  std::vector<ir::LinearLayout::Basis> warps = fragment.inDim(ir::kWarpDim).bases;
  for (int i = 0; i < log2(plan.repeatsN); ++i) registers.push_back({0, plan.n * plan.warpgroupsN << i});
  for (int i = 0; i < log2(plan.repeatsM); ++i) registers.push_back({kWgmmaM * plan.warpgroupsM << i, 0});
  for (int i = 0; i < log2(plan.warpgroupsM); ++i) warps.push_back({kWgmmaM << i, 0});
  for (int i = 0; i < log2(plan.warpgroupsN); ++i) warps.push_back({0, plan.n << i});
  if (int64_t{1} << warps.size() != numWarps)
    throw Error("wgmma accumulator layout: " + std::to_string(numWarps) + " warps do not match the plan");
  return ir::Layout::linear(ir::LinearLayout({{ir::kRegisterDim, registers},
                                              {ir::kLaneDim, fragment.inDim(ir::kLaneDim).bases},
                                              {ir::kWarpDim, warps}},
                                             {{ir::tensorDimName(0), plan.M}, {ir::tensorDimName(1), plan.N}}));
}

ir::Layout wgmmaOperandLayout(const WgmmaDotPlan& plan, unsigned index) {
  const std::vector<int64_t> shape = index == 0 ? std::vector<int64_t>{plan.M, plan.K} : std::vector<int64_t>{plan.K, plan.N};
  // K is dimension 1 of A and 0 of B: A and a K-major B have it contiguous, an N-major B has N.
  const int contiguous = index == 0 || !plan.bKMajor() ? 1 : 0;
  const ir::LinearLayout nvmma =
      nvmmaSharedLayout(shape, contiguous, plan.elementBytes, index == 0 ? plan.swizzleA : plan.swizzleB);
  if (index != 0 || !plan.chained) return ir::Layout::linearShared(nvmma);
  // A chained A: buffer row r of a 16-row block holds the block's row kChainedRows(r), linear over the row bits.
  std::vector<ir::LinearLayout::Basis> offsets = nvmma.inDim(ir::kOffsetDim).bases;
  for (ir::LinearLayout::Basis& basis : offsets) {
    int64_t row = basis[0] & ~int64_t{15};
    for (int i = 0; i < 4; ++i)
      if (basis[0] >> i & 1) row ^= kChainedRows[static_cast<size_t>(i)];
    basis[0] = row;
  }
  return ir::Layout::linearShared(ir::LinearLayout({{ir::kOffsetDim, offsets}}, nvmma.outDims()));
}

std::optional<WgmmaDotPlan> wgmmaBufferDotPlan(const ir::Op& dot, const transforms::PassOptions& options) {
  const ir::Value* acc = dot.operand(2);
  if (dot.result(0)->type() != acc->type() || wgmmaChainedDotPlan(dot, options)) return std::nullopt;
  std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(dot, options);
  if (!plan || ir::Layout::ofType(acc->type()) != wgmmaAccumulatorLayout(*plan, options.numWarps)) return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    const ir::Op* load = transforms::dotOperandBuffer(dot, i);
    if (!load || ir::Layout::fromAttr(*load->operand(0)->type().encoding()) != wgmmaOperandLayout(*plan, i))
      return std::nullopt;
  }
  return plan;
}

}  // namespace tessera::backends::nvptx
