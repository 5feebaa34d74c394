// NVPTXHooks::lowerDot on Hopper's wgmma, for the dots WgmmaPlan.h admits once their layouts say so:
//  - both operands in shared buffers (wgmmaDotPlan): the accumulator in wgmma's fragment layout, A and B read from
//    their buffers in the NVMMA layouts by matrix descriptors;
//  - a chained dot (wgmmaChainedDotPlan): the accumulator in mma.sync's chained layout, A packed from the registers
//    as mma.sync would take it or read by descriptor from its row-permuted buffer, B read by descriptor.
// Per dot, one inline asm (WgmmaGroup, after every operand is computed): fence.proxy.async (the buffers were
// written through the generic proxy, wgmma reads through the async one), wgmma.fence, one mma_async per warpgroup
// repeat (or row block) per K step (16 or 32; the accumulator chained through them), commit_group, and wait_group
// passing the accumulator through, so that nothing reads it, and no copy overwrites the stage, before the products
// are complete: wait_group 0, or the dot's `pending` (pipeline-loops leaves one group in flight across
// iterations; a dot_wait after the loop waits for it).
#include <llvm/IR/InlineAsm.h>

#include "backends/common/KernelLowering.h"
#include "backends/nvptx/MmaFragments.h"
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "backends/nvptx/NVPTXHooks.h"
#include "backends/nvptx/WgmmaAsm.h"
#include "backends/nvptx/WgmmaPlan.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::nvptx {

namespace {

constexpr int64_t kWgmmaM = 64;

WgmmaInput wgmmaInput(ir::ScalarKind kind) {
  switch (kind) {
    case ir::ScalarKind::BF16: return WgmmaInput::BF16;
    case ir::ScalarKind::F8E4M3: return WgmmaInput::E4M3;
    case ir::ScalarKind::F8E5M2: return WgmmaInput::E5M2;
    default: return WgmmaInput::F16;
  }
}

llvm::Value* i32(IRBuilder& b, int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }

// The 64-bit shared-memory matrix descriptor (PTX ISA, wgmma matrix descriptor): start address, leading and
// stride byte offsets (each >> 4 in 14 bits), swizzle mode in bits 62-63 (1: 128 B, 2: 64 B, 3: 32 B).
llvm::Value* descriptor(IRBuilder& b, llvm::Value* address, int64_t leadingBytes, int64_t strideBytes, int64_t swizzle) {
  const uint64_t mode = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
  const uint64_t fixed = (uint64_t(leadingBytes >> 4) & 0x3FFF) << 16 | (uint64_t(strideBytes >> 4) & 0x3FFF) << 32 |
                         mode << 62;
  llvm::Value* start = b.CreateZExt(b.CreateLShr(b.CreateAnd(address, i32(b, 0x3FFFF)), i32(b, 4)), b.getInt64Ty());
  return b.CreateOr(start, b.getInt64(fixed));
}

// The shared address at which an instruction's B starts: its columns from n0 = `instruction` * n, its K rows from
// `k`. A K-major B ([N, K] lines of swizzle bytes of K, in column blocks of N lines); an N-major B [K, N]: line = k
// (swizzle bytes of N), column blocks of K lines.
llvm::Value* bStart(IRBuilder& b, const WgmmaDotPlan& p, llvm::Value* bBase, llvm::Value* instruction, int64_t k) {
  const int64_t eb = p.elementBytes;
  if (p.bKMajor()) {
    const int64_t line = p.swizzleB / eb;
    llvm::Value* row = b.CreateMul(instruction, i32(b, p.n));
    return b.CreateAdd(bBase, b.CreateAdd(b.CreateMul(row, i32(b, p.swizzleB)),
                                          i32(b, k / line * p.N * p.swizzleB + k % line * eb)));
  }
  llvm::Value* block = b.CreateMul(instruction, i32(b, p.n / (p.swizzleB / eb)));
  return b.CreateAdd(bBase, b.CreateAdd(b.CreateMul(block, i32(b, p.K * p.swizzleB)), i32(b, k * p.swizzleB)));
}

// The leading byte offset of a swizzled K-major operand is not read (one instruction's 32 bytes of K lie in one
// line); 16 encodes 1.
constexpr int64_t kUnusedLeading = 16;

llvm::Value* bDescriptor(IRBuilder& b, const WgmmaDotPlan& p, llvm::Value* start) {
  return descriptor(b, start, p.bKMajor() ? kUnusedLeading : p.K * p.swizzleB, 8 * p.swizzleB, p.swizzleB);
}

// The shared address of the buffer `load` reads, as a 32-bit shared-window address.
llvm::Value* bufferAddress(KernelLowering& L, const ir::Op& load) {
  return L.builder().CreatePtrToInt(L.sharedStage(load.operand(0), load.operand(1)), L.builder().getInt32Ty());
}

// The dot's whole issue (WgmmaGroup): operands[i] is issue i's A (descriptor or four registers) and B descriptor;
// `d` the accumulator C, `slices` of n / 2 registers. The result: the accumulator D, `pending` groups in flight.
Regs issueGroup(IRBuilder& b, const WgmmaGroup& group, const std::vector<std::vector<llvm::Value*>>& operands,
                const Regs& d) {
  if (static_cast<int>(d.size()) != group.registers() || static_cast<int>(operands.size()) != group.issues())
    throw Error("internal error: a wgmma group of " + std::to_string(group.registers()) + " registers and " +
                std::to_string(group.issues()) + " issues given " + std::to_string(d.size()) + " and " +
                std::to_string(operands.size()));
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> params;
  for (const std::vector<llvm::Value*>& issue : operands)
    for (llvm::Value* v : issue) args.push_back(v);
  args.push_back(i32(b, 1));  // scale-d: D = A * B + D
  args.insert(args.end(), d.begin(), d.end());
  for (llvm::Value* v : args) params.push_back(v->getType());
  std::vector<llvm::Type*> floats(d.size(), b.getFloatTy());
  llvm::InlineAsm* asmGroup =
      llvm::InlineAsm::get(llvm::FunctionType::get(llvm::StructType::get(b.getContext(), floats), params, false),
                           wgmmaGroupAsm(group), wgmmaGroupConstraints(group), /*hasSideEffects=*/true);
  llvm::Value* out = b.CreateCall(asmGroup, args);
  Regs result;
  for (size_t i = 0; i < d.size(); ++i) result.push_back(b.CreateExtractValue(out, {static_cast<unsigned>(i)}));
  return result;
}

// wgmma.wait_group `pending` passing `registers` (f32) through, at most kWgmmaMaxWaitRegisters per wait (a later
// wait of the same depth returns at once); one wait even with no registers.
Regs waitGroup(IRBuilder& b, const Regs& registers, int64_t pending) {
  Regs result;
  for (size_t first = 0; first == 0 || first < registers.size(); first += kWgmmaMaxWaitRegisters) {
    const Regs part(registers.begin() + static_cast<std::ptrdiff_t>(first),
                    registers.begin() + static_cast<std::ptrdiff_t>(std::min(registers.size(), first + kWgmmaMaxWaitRegisters)));
    std::vector<llvm::Type*> types(part.size(), b.getFloatTy());
    llvm::StructType* waitResult = llvm::StructType::get(b.getContext(), types);
    llvm::InlineAsm* waitAsm =
        llvm::InlineAsm::get(llvm::FunctionType::get(waitResult, types, false), wgmmaWaitAsm(static_cast<int>(pending)),
                             wgmmaWaitConstraints(static_cast<int>(part.size())), true);
    llvm::Value* waited = b.CreateCall(waitAsm, part);
    for (size_t i = 0; i < part.size(); ++i) result.push_back(b.CreateExtractValue(waited, {static_cast<unsigned>(i)}));
  }
  return result;
}

// How many groups a dot read from its buffers leaves in flight: its `pending` (pipeline-loops sets 1 in loops it
// pipelines; its result is then only accumulated into, carried, or waited for by a dot_wait, as the verifier
// checks), else 0.
int64_t pendingGroups(const ir::Op& dot) {
  const int64_t pending = dot.hasAttr("pending") ? dot.intAttr("pending") : 0;
  if (pending > kWgmmaMaxPendingGroups)
    throw Error(dot.describe() + ": at most " + std::to_string(kWgmmaMaxPendingGroups) +
                    " wgmma groups may stay pending, not " + std::to_string(pending), dot.loc());
  return pending;
}

// The operand buffers sit on 1024-byte boundaries of the shared memory (allocate-shared-memory), where their
// swizzle patterns, which the hardware applies to address bits, begin: so must the shared memory itself.
void alignSharedMemory(KernelLowering& L) {
  llvm::cast<llvm::GlobalVariable>(L.hooks().sharedMemoryBase(L.builder()))->setAlignment(llvm::Align(1024));
}

// The dot report's name of a plan's instruction (KernelLowering::noteDot).
std::string wgmmaName(const WgmmaDotPlan& p) {
  std::string name = "wgmma m64n" + std::to_string(p.n) + "k" + std::to_string(p.k) + " " + ir::scalarKindName(p.input);
  if (p.inputB != p.input) name += std::string(" x ") + ir::scalarKindName(p.inputB);
  return name + (p.aInRegisters ? " (A from registers)" : "");
}

// A chained dot (wgmmaChainedDotPlan): the accumulator in the chained layout, whose registers of each 16-row block
// of a warp are the block's 16 x N wgmma accumulator fragment (fragment columns 8j in order: registers 4j..4j+3),
// and A packed from its registers as mma.sync takes it, or read from its buffer; one mma_async per row block and
// K step. With A in the buffer, warp w's row block i is rows 16 w + 16 num_warps i, so a warpgroup's four blocks
// are 64 consecutive rows of the buffer, whose rows within each 16-row block are permuted as the fragment's.
bool lowerChainedWgmmaDot(KernelLowering& L, const ir::Op& op, const WgmmaDotPlan& p) {
  const ir::Value* a = op.operand(0);
  const ir::Value* acc = op.operand(2);
  const ThreadMap& cmap = L.mapOf(acc->type(), op.name());
  std::optional<MmaAccumulatorPlan> plan = planMmaAccumulator(cmap);
  if (!plan || static_cast<int64_t>(plan->fragmentCols.size()) != p.N / kMmaN) return false;
  // A warpgroup's instructions share B: every warp must cover all N columns (warps step along M only).
  for (const Coords& basis : cmap.warpBases)
    if (basis[1] != 0) return false;
  std::optional<std::vector<int64_t>> aFrom;
  const ir::Op* aLoad = nullptr;
  if (p.aInRegisters) {
    aFrom = planMmaOperandARegisters(L.mapOf(a->type(), op.name()), cmap, *plan);
    if (!aFrom) return false;
  } else {
    aLoad = transforms::dotOperandBuffer(op, 0);
    if (!aLoad || ir::Layout::fromAttr(*aLoad->operand(0)->type().encoding()) != wgmmaOperandLayout(p, 0) ||
        plan->rowBases != kChainedRows)
      return false;
    for (size_t bit = 0; bit < cmap.warpBases.size(); ++bit)
      if (cmap.warpBases[bit] != Coords{kMmaM << bit, 0}) return false;
    for (size_t i = 0; i < plan->fragmentRows.size(); ++i)
      if (plan->fragmentRows[i] != static_cast<int64_t>(i) * kMmaM * static_cast<int64_t>(cmap.numWarps)) return false;
  }
  // Where fragment f's four registers go among the instructions' accumulators: row block by row block, each in
  // column order (fragment columns 8j are registers 4j..4j+3 of its instruction).
  if (static_cast<int64_t>(plan->fragmentRows.size()) != p.repeatsM ||
      static_cast<int64_t>(plan->fragments.size()) != p.repeatsM * (p.N / kMmaN))
    return false;
  std::vector<size_t> position(plan->fragments.size());
  std::vector<bool> taken(plan->fragments.size(), false);
  for (size_t f = 0; f < plan->fragments.size(); ++f) {
    const MmaFragment& fragment = plan->fragments[f];
    const auto row = std::find(plan->fragmentRows.begin(), plan->fragmentRows.end(), fragment.row);
    if (fragment.col % kMmaN || fragment.col < 0 || fragment.col >= p.N) return false;
    const size_t cell = static_cast<size_t>(row - plan->fragmentRows.begin()) * static_cast<size_t>(p.N / kMmaN) +
                        static_cast<size_t>(fragment.col / kMmaN);
    if (taken[cell]) return false;
    taken[cell] = true;
    position[f] = 4 * cell;
  }

  IRBuilder& b = L.builder();
  llvm::Value* bBase = bufferAddress(L, *transforms::dotOperandBuffer(op, 1));
  const WgmmaMma mma{static_cast<int>(p.n), wgmmaInput(p.input), wgmmaInput(p.inputB), false, !p.bKMajor(),
                     p.aInRegisters};
  llvm::Value* aBase = aLoad ? bufferAddress(L, *aLoad) : nullptr;
  llvm::Value* groupRow = aLoad ? b.CreateMul(b.CreateUDiv(L.warpId(), i32(b, 4)), i32(b, kWgmmaM)) : nullptr;
  // A's descriptor for row block i at K offset k: the warpgroup's 64 rows of the block round.
  auto aDescriptor = [&](size_t i, int64_t k) {
    const int64_t line = p.swizzleA / p.elementBytes;
    llvm::Value* row = b.CreateAdd(groupRow, i32(b, static_cast<int64_t>(i) * kMmaM * static_cast<int64_t>(cmap.numWarps)));
    llvm::Value* start = b.CreateAdd(aBase, b.CreateAdd(b.CreateMul(row, i32(b, p.swizzleA)),
                                                        i32(b, k / line * p.M * p.swizzleA + k % line * p.elementBytes)));
    return descriptor(b, start, kUnusedLeading, 8 * p.swizzleA, p.swizzleA);
  };
  Regs d(plan->fragments.size() * 4);
  const Regs& accRegs = L.get(acc);
  for (size_t f = 0; f < plan->fragments.size(); ++f)
    for (int s = 0; s < 4; ++s) d[position[f] + s] = accRegs[plan->fragments[f].regs[s]];
  // Every operand is computed before the group's wgmma.fence: a register that an mma_async reads must not be
  // written between the fence and it (ptxas would otherwise insert a warpgroup.arrive before each such mma_async).
  const int64_t steps = p.K / p.k;
  std::vector<std::vector<llvm::Value*>> operands;  // per step, per row block
  for (int64_t step = 0; step < steps; ++step) {
    llvm::Value* descB = bDescriptor(b, p, bStart(b, p, bBase, i32(b, 0), step * p.k));
    for (size_t i = 0; i < plan->fragmentRows.size(); ++i) {
      operands.push_back(aFrom ? packMmaOperandA(L, a, *aFrom, i * static_cast<size_t>(steps) + static_cast<size_t>(step))
                               : std::vector<llvm::Value*>{aDescriptor(i, step * p.k)});
      operands.back().push_back(descB);
    }
  }
  alignSharedMemory(L);
  // Issue i is row block i % rows: the rows are the group's slices. A dot left in flight (its `pending`) takes A
  // from registers only where pipeline-loops found that the next iteration rewrites them after a dot that waits
  // for every group.
  const WgmmaGroup group{mma, static_cast<int>(plan->fragmentRows.size()), static_cast<int>(steps),
                         static_cast<int>(pendingGroups(op))};
  const Regs waited = issueGroup(b, group, operands, d);
  Regs result;  // in the accumulator's register order
  for (const auto& [fragment, slot] : plan->regSlot) result.push_back(waited[position[fragment] + slot]);
  L.set(op.result(0), std::move(result));
  L.noteDot(op, wgmmaName(p));
  return true;
}

}  // namespace

bool lowerWgmmaDot(KernelLowering& L, const ir::Op& op) {
  const ir::Value* acc = op.operand(2);
  if (op.result(0)->type() != acc->type()) return false;
  const ThreadMap& cmap = L.mapOf(acc->type(), op.name());
  transforms::PassOptions options;
  options.numWarps = static_cast<int>(cmap.numWarps);
  options.warpSize = static_cast<int>(cmap.warpSize);
  options.arch = "sm_90a";  // the layouts below say whether the policy chose wgmma for this kernel's arch
  if (std::optional<WgmmaDotPlan> chained = wgmmaChainedDotPlan(op, options)) {
    const ir::Op* bLoad = transforms::dotOperandBuffer(op, 1);
    if (!bLoad || ir::Layout::fromAttr(*bLoad->operand(0)->type().encoding()) != wgmmaOperandLayout(*chained, 1))
      return false;
    return lowerChainedWgmmaDot(L, op, *chained);
  }
  std::optional<WgmmaDotPlan> plan = wgmmaBufferDotPlan(op, options);
  if (!plan) return false;
  const ir::Op* loads[2] = {transforms::dotOperandBuffer(op, 0), transforms::dotOperandBuffer(op, 1)};

  IRBuilder& b = L.builder();
  const WgmmaDotPlan& p = *plan;
  llvm::Value* aBase = bufferAddress(L, *loads[0]);
  llvm::Value* bBase = bufferAddress(L, *loads[1]);
  llvm::Value* group = b.CreateUDiv(L.warpId(), i32(b, 4));
  llvm::Value* groupM = b.CreateURem(group, i32(b, p.warpgroupsM));
  llvm::Value* groupN = b.CreateUDiv(group, i32(b, p.warpgroupsM));
  // A [M, K], K-major: line = row (swizzle bytes of K), column blocks of M lines.
  const int64_t eb = p.elementBytes;
  auto aStart = [&](int64_t repeat, int64_t k) {
    llvm::Value* row = b.CreateAdd(i32(b, repeat * p.warpgroupsM * kWgmmaM), b.CreateMul(groupM, i32(b, kWgmmaM)));
    const int64_t line = p.swizzleA / eb;
    llvm::Value* inStage =
        b.CreateAdd(b.CreateMul(row, i32(b, p.swizzleA)), i32(b, k / line * p.M * p.swizzleA + k % line * eb));
    return b.CreateAdd(aBase, inStage);
  };

  const WgmmaMma mma{static_cast<int>(p.n), wgmmaInput(p.input), wgmmaInput(p.inputB), false, !p.bKMajor()};
  alignSharedMemory(L);
  // Issue order: K step, then repeat (m, n), which is slice n + repeatsN * m of the accumulator.
  std::vector<std::vector<llvm::Value*>> operands;
  for (int64_t k = 0; k < p.K; k += p.k)
    for (int64_t m = 0; m < p.repeatsM; ++m)
      for (int64_t n = 0; n < p.repeatsN; ++n) {
        llvm::Value* descA = descriptor(b, aStart(m, k), kUnusedLeading, 8 * p.swizzleA, p.swizzleA);
        llvm::Value* instruction = b.CreateAdd(i32(b, n * p.warpgroupsN), groupN);
        operands.push_back({descA, bDescriptor(b, p, bStart(b, p, bBase, instruction, k))});
      }
  const WgmmaGroup dotGroup{mma, static_cast<int>(p.repeatsM * p.repeatsN), static_cast<int>(p.K / p.k),
                         static_cast<int>(pendingGroups(op))};
  L.set(op.result(0), issueGroup(b, dotGroup, operands, L.get(acc)));
  L.noteDot(op, wgmmaName(p));
  return true;
}

std::vector<llvm::Value*> NVPTXHooks::dotWait(IRBuilder& b, const std::vector<llvm::Value*>& registers,
                                              int64_t pending) {
  if (!asyncDots_) return registers;  // mma.sync dots are synchronous
  if (pending > kWgmmaMaxPendingGroups)
    throw Error("at most " + std::to_string(kWgmmaMaxPendingGroups) + " wgmma groups may stay pending, not " +
                std::to_string(pending));
  // Only f32 registers can be a wgmma's (i32 accumulators are mma.sync's, which is synchronous): they pass through
  // the wait; the others are returned as they are.
  Regs floats;
  for (llvm::Value* r : registers)
    if (r->getType()->isFloatTy()) floats.push_back(r);
  const Regs waited = waitGroup(b, floats, pending);
  Regs result;
  size_t next = 0;
  for (llvm::Value* r : registers) result.push_back(r->getType()->isFloatTy() ? waited[next++] : r);
  return result;
}

}  // namespace tessera::backends::nvptx
