#include "backends/common/XorOfBases.h"

namespace tessera::backends {

llvm::Value* xorOfBases(IRBuilder& b, llvm::Value* value, const std::vector<ir::LinearLayout::Basis>& bases) {
  auto i32 = [&](int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); };
  llvm::Value* result = i32(0);
  for (size_t i = 0; i < bases.size();) {
    const int64_t base = bases[i][0];
    if (base == 0) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    int64_t covered = base;
    while (end < bases.size() && bases[end][0] == base << (end - i) && (covered & bases[end][0]) == 0)
      covered |= bases[end++][0];
    const int64_t mask = (int64_t(1) << (end - i)) - 1;
    llvm::Value* bits = b.CreateAnd(b.CreateLShr(value, i32(static_cast<int64_t>(i))), i32(mask));
    result = b.CreateXor(result, b.CreateMul(bits, i32(base)));
    i = end;
  }
  return result;
}

}  // namespace tessera::backends
