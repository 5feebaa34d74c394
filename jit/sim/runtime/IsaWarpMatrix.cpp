#include "jit/sim/runtime/IsaWarpMatrix.h"

#include "ir/Error.h"
#include "jit/sim/runtime/WarpMatrix.h"

namespace tessera::sim {

namespace {

class IsaWarpMatrix final : public WarpMatrixSemantics {
 public:
  std::optional<Shape> shape(uint32_t kind) const override {
    try {
      const MmaShape& s = mmaShape(static_cast<MmaKind>(kind));
      return Shape{s.lanes, s.registersOf(MmaOperand::A), s.registersOf(MmaOperand::B), s.registersOf(MmaOperand::C)};
    } catch (const Error&) {
      return std::nullopt;  // not an MmaKind
    }
  }
  void mma(uint32_t kind, std::span<const uint32_t> a, std::span<const uint32_t> b, std::span<const uint32_t> c,
           std::span<uint32_t> d) const override {
    executeMma(static_cast<MmaKind>(kind), a, b, c, d);
  }
  void ldmatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress, const RowRead& read,
                std::span<uint32_t> out) const override {
    executeLdMatrix(matrices, transpose, rowAddress, read, out);
  }
  void stmatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress, std::span<const uint32_t> in,
                const RowWrite& write) const override {
    executeStMatrix(matrices, transpose, rowAddress, in, write);
  }
};

}  // namespace

const WarpMatrixSemantics& isaWarpMatrix() {
  static const IsaWarpMatrix semantics;
  return semantics;
}

}  // namespace tessera::sim
