// NVPTXHooks' warp-wide matrix transfers for the shared-memory exchange: ldmatrix through its LLVM intrinsics, and
// stmatrix (sm_90), which LLVM 19 has no intrinsic for, as the InlineAsmTable.h entries the emulator implements.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "backends/nvptx/NVPTXHooks.h"
#include "backends/nvptx/TableAsm.h"
#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

void requireMatrixCount(int64_t matrices) {
  if (matrices != 1 && matrices != 2 && matrices != 4)
    throw Error("internal error: ldmatrix/stmatrix move 1, 2 or 4 matrices, not " + std::to_string(matrices));
}

}  // namespace

std::vector<llvm::Value*> NVPTXHooks::loadMatrices(IRBuilder& b, llvm::Value* rowAddress, int64_t matrices) {
  requireMatrixCount(matrices);
  namespace I = llvm::Intrinsic;
  const llvm::Intrinsic::ID id = matrices == 1   ? I::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16
                                 : matrices == 2 ? I::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16
                                                 : I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
  llvm::Function* f = llvm::Intrinsic::getDeclaration(&module(b), id, {rowAddress->getType()});
  llvm::Value* result = b.CreateCall(f, {rowAddress});
  if (matrices == 1) return {result};
  std::vector<llvm::Value*> words;
  for (unsigned m = 0; m < matrices; ++m) words.push_back(b.CreateExtractValue(result, {m}));
  return words;
}

void NVPTXHooks::storeMatrices(IRBuilder& b, llvm::Value* rowAddress, const std::vector<llvm::Value*>& words) {
  requireMatrixCount(static_cast<int64_t>(words.size()));
  if (!tensorMaps_) throw Error("internal error: stmatrix needs sm_90 or later");
  // The asm takes the 32-bit shared address, as the shared window is 32-bit.
  std::vector<llvm::Value*> args = {b.CreatePtrToInt(rowAddress, b.getInt32Ty())};
  args.insert(args.end(), words.begin(), words.end());
  callTableAsm(b, "stmatrix.x" + std::to_string(words.size()), b.getVoidTy(), args);
}

}  // namespace tessera::backends::nvptx
