// NVPTXHooks::lowerDot on Hopper's wgmma, for the dots WgmmaPlan.h admits once their layouts say so: the
// accumulator in wgmma's fragment layout, both operands read from their shared buffers in the NVMMA layouts by
// matrix descriptors. Per dot: fence.proxy.async (the buffers were written through the generic proxy, wgmma reads
// through the async one), wgmma.fence, one mma_async per warpgroup repeat per K step (16 or 32; the accumulator
// chained through them), commit_group, and wait_group 0 passing the accumulator through, so that nothing reads
// it, and no copy overwrites the stage, before the products are complete.
#include <llvm/IR/InlineAsm.h>

#include "backends/common/KernelLowering.h"
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

void emitAsm(IRBuilder& b, std::string_view text) {
  llvm::FunctionType* type = llvm::FunctionType::get(b.getVoidTy(), false);
  b.CreateCall(llvm::InlineAsm::get(type, std::string(text), "", /*hasSideEffects=*/true));
}

// The 64-bit shared-memory matrix descriptor (PTX ISA, wgmma matrix descriptor): start address, leading and
// stride byte offsets (each >> 4 in 14 bits), swizzle mode in bits 62-63 (1: 128 B, 2: 64 B, 3: 32 B).
llvm::Value* descriptor(IRBuilder& b, llvm::Value* address, int64_t leadingBytes, int64_t strideBytes, int64_t swizzle) {
  const uint64_t mode = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
  const uint64_t fixed = (uint64_t(leadingBytes >> 4) & 0x3FFF) << 16 | (uint64_t(strideBytes >> 4) & 0x3FFF) << 32 |
                         mode << 62;
  llvm::Value* start = b.CreateZExt(b.CreateLShr(b.CreateAnd(address, i32(b, 0x3FFFF)), i32(b, 4)), b.getInt64Ty());
  return b.CreateOr(start, b.getInt64(fixed));
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
  std::optional<WgmmaDotPlan> plan = wgmmaDotPlan(op, options);
  if (!plan || ir::Layout::ofType(acc->type()) != wgmmaAccumulatorLayout(*plan, options.numWarps)) return false;
  const ir::Op* loads[2];
  for (unsigned i = 0; i < 2; ++i) {
    loads[i] = transforms::dotOperandBuffer(op, i);
    if (!loads[i] || ir::Layout::fromAttr(*loads[i]->operand(0)->type().encoding()) != wgmmaOperandLayout(*plan, i))
      return false;
  }

  IRBuilder& b = L.builder();
  const WgmmaDotPlan& p = *plan;
  // The operand buffers sit on 1024-byte boundaries of the shared memory (allocate-shared-memory), where their
  // swizzle patterns, which the hardware applies to address bits, begin: so must the shared memory itself.
  llvm::cast<llvm::GlobalVariable>(L.hooks().sharedMemoryBase(b))->setAlignment(llvm::Align(1024));
  auto address = [&](const ir::Op* load) {
    return b.CreatePtrToInt(L.sharedStage(load->operand(0), load->operand(1)), b.getInt32Ty());
  };
  llvm::Value* aBase = address(loads[0]);
  llvm::Value* bBase = address(loads[1]);
  llvm::Value* group = b.CreateUDiv(L.warpId(), i32(b, 4));
  llvm::Value* groupM = b.CreateURem(group, i32(b, p.warpgroupsM));
  llvm::Value* groupN = b.CreateUDiv(group, i32(b, p.warpgroupsM));
  // A K-major operand ([rows, K] of A, [K, rows] of B): line = row (swizzle bytes of K), column blocks of `rows`
  // lines. An N-major B [K, N]: line = k (n elements or 64), column blocks of K lines (the leading byte offset).
  const int64_t eb = p.elementBytes;
  auto kMajorStart = [&](llvm::Value* base, llvm::Value* row, int64_t k, int64_t rows, int64_t swizzle) {
    const int64_t line = swizzle / eb;
    llvm::Value* inStage =
        b.CreateAdd(b.CreateMul(row, i32(b, swizzle)), i32(b, k / line * rows * swizzle + k % line * eb));
    return b.CreateAdd(base, inStage);
  };
  auto aStart = [&](int64_t repeat, int64_t k) {
    llvm::Value* row = b.CreateAdd(i32(b, repeat * p.warpgroupsM * kWgmmaM), b.CreateMul(groupM, i32(b, kWgmmaM)));
    return kMajorStart(aBase, row, k, p.M, p.swizzleA);
  };
  auto bStart = [&](int64_t repeat, int64_t k) {
    llvm::Value* instruction = b.CreateAdd(i32(b, repeat * p.warpgroupsN), groupN);  // its columns: n from here
    if (p.bKMajor()) return kMajorStart(bBase, b.CreateMul(instruction, i32(b, p.n)), k, p.N, p.swizzleB);
    llvm::Value* block = b.CreateMul(instruction, i32(b, p.n / (p.swizzleB / eb)));
    llvm::Value* inStage = b.CreateAdd(b.CreateMul(block, i32(b, p.K * p.swizzleB)), i32(b, k * p.swizzleB));
    return b.CreateAdd(bBase, inStage);
  };

  const WgmmaMma mma{static_cast<int>(p.n), wgmmaInput(p.input), wgmmaInput(p.inputB), false, !p.bKMajor()};
  const int64_t perMma = p.n / 2;
  std::vector<llvm::Type*> floats(perMma, b.getFloatTy());
  llvm::StructType* mmaResult = llvm::StructType::get(L.context(), floats);
  std::vector<llvm::Type*> mmaParams = {b.getInt64Ty(), b.getInt64Ty(), b.getInt32Ty()};
  mmaParams.insert(mmaParams.end(), floats.begin(), floats.end());
  llvm::InlineAsm* mmaAsm = llvm::InlineAsm::get(llvm::FunctionType::get(mmaResult, mmaParams, false),
                                                 wgmmaMmaAsm(mma), wgmmaMmaConstraints(mma.n), true);

  Regs d = L.get(acc);
  emitAsm(b, kProxyFenceAsm);
  emitAsm(b, kWgmmaFenceAsm);
  // The leading byte offset of a swizzled K-major operand is not read (one instruction's 32 bytes of K lie in one
  // line); 16 encodes 1.
  const int64_t unusedLeading = 16;
  for (int64_t k = 0; k < p.K; k += p.k)
    for (int64_t m = 0; m < p.repeatsM; ++m)
      for (int64_t n = 0; n < p.repeatsN; ++n) {
        llvm::Value* descA = descriptor(b, aStart(m, k), unusedLeading, 8 * p.swizzleA, p.swizzleA);
        llvm::Value* descB = descriptor(b, bStart(n, k), p.bKMajor() ? unusedLeading : p.K * p.swizzleB,
                                        8 * p.swizzleB, p.swizzleB);
        const int64_t first = perMma * (n + p.repeatsN * m);
        std::vector<llvm::Value*> args = {descA, descB, i32(b, 1)};
        args.insert(args.end(), d.begin() + first, d.begin() + first + perMma);
        llvm::Value* out = b.CreateCall(mmaAsm, args);
        for (int64_t i = 0; i < perMma; ++i) d[first + i] = b.CreateExtractValue(out, {static_cast<unsigned>(i)});
      }
  emitAsm(b, kWgmmaCommitAsm);
  std::vector<llvm::Type*> all(d.size(), b.getFloatTy());
  llvm::StructType* waitResult = llvm::StructType::get(L.context(), all);
  llvm::InlineAsm* waitAsm = llvm::InlineAsm::get(llvm::FunctionType::get(waitResult, all, false), wgmmaWaitAsm(0),
                                                  wgmmaWaitConstraints(static_cast<int>(d.size())), true);
  llvm::Value* waited = b.CreateCall(waitAsm, d);
  Regs result;
  for (size_t i = 0; i < d.size(); ++i) result.push_back(b.CreateExtractValue(waited, {static_cast<unsigned>(i)}));
  L.set(op.result(0), std::move(result));
  return true;
}

}  // namespace tessera::backends::nvptx
