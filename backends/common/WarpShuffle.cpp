#include "backends/common/WarpShuffle.h"

#include <functional>

namespace tessera::backends {

namespace {

// `v` as an integer of its width, each 32-bit piece moved by `move32`, then back to `v`'s type.
llvm::Value* shuffleAsI32Pieces(IRBuilder& b, llvm::Value* v, const std::function<llvm::Value*(llvm::Value*)>& move32) {
  llvm::Type* t = v->getType();
  llvm::Value* bits = v;
  if (t->isPointerTy()) bits = b.CreatePtrToInt(v, b.getInt64Ty());
  unsigned width = bits->getType()->getPrimitiveSizeInBits();
  if (!bits->getType()->isIntegerTy()) bits = b.CreateBitCast(bits, b.getIntNTy(width));
  llvm::Value* result;
  if (width <= 32) {
    result = b.CreateTrunc(move32(b.CreateZExt(bits, b.getInt32Ty())), b.getIntNTy(width));
  } else {
    llvm::Value* lo = b.CreateTrunc(bits, b.getInt32Ty());
    llvm::Value* hi = b.CreateTrunc(b.CreateLShr(bits, b.getInt64(32)), b.getInt32Ty());
    lo = b.CreateZExt(move32(lo), b.getInt64Ty());
    hi = b.CreateZExt(move32(hi), b.getInt64Ty());
    result = b.CreateOr(lo, b.CreateShl(hi, b.getInt64(32)));
  }
  if (t->isPointerTy()) return b.CreateIntToPtr(result, t);
  return b.CreateBitCast(result, t);
}

}  // namespace

llvm::Value* shuffleXor(IRBuilder& b, LoweringHooks& hooks, llvm::Value* v, int laneMask) {
  return shuffleAsI32Pieces(b, v, [&](llvm::Value* piece) { return hooks.shuffleXorI32(b, piece, laneMask); });
}

llvm::Value* shuffleIdx(IRBuilder& b, LoweringHooks& hooks, llvm::Value* v, llvm::Value* lane) {
  return shuffleAsI32Pieces(b, v, [&](llvm::Value* piece) { return hooks.shuffleIdxI32(b, piece, lane); });
}

}  // namespace tessera::backends
