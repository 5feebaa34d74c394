#include "backends/common/TF32Rounding.h"

namespace tessera::backends {

llvm::Value* roundToTF32(IRBuilder& b, llvm::Value* x) {
  llvm::Value* bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, b.getInt32(13)), b.getInt32(1));
  llvm::Value* rounded = b.CreateAnd(b.CreateAdd(bits, b.CreateAdd(b.getInt32(0xFFF), lsb)), b.getInt32(~0x1FFFu));
  llvm::Value* special = b.CreateICmpEQ(b.CreateAnd(bits, b.getInt32(0x7F800000)), b.getInt32(0x7F800000));
  return b.CreateBitCast(b.CreateSelect(special, bits, rounded), b.getFloatTy());
}

}  // namespace tessera::backends
