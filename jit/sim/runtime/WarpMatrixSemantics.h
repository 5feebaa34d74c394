// What the runtime needs from the warp-level matrix semantics (mma.sync / MFMA products, ldmatrix and stmatrix
// fragments, WarpMatrix.{h,cpp}, written separately from the ISA documents). The runtime gathers the lanes'
// registers and row addresses when the collective completes and hands them over lane-major: register r of lane l
// at [l * registers + r]. Row reads and writes go back through the runtime, so the shared-memory checks and
// bank-conflict counters see every row.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

namespace tessera::sim {

class WarpMatrixSemantics {
 public:
  struct Shape {
    uint32_t lanes = 0;                // 32 (mma.sync) or 64 (MFMA)
    uint32_t a = 0, b = 0, c = 0;      // 32-bit registers per lane of A, B and C (= D)
  };
  using RowRead = std::function<void(uint32_t lane, uint64_t address, uint32_t bytes, void* dst)>;
  using RowWrite = std::function<void(uint32_t lane, uint64_t address, uint32_t bytes, const void* src)>;

  // The operand sizes of an MmaKind, or nullopt for a kind it does not implement.
  virtual std::optional<Shape> shape(uint32_t kind) const = 0;
  // D = A * B + C over the whole warp.
  virtual void mma(uint32_t kind, std::span<const uint32_t> a, std::span<const uint32_t> b,
                   std::span<const uint32_t> c, std::span<uint32_t> d) const = 0;
  // ldmatrix.m8n8.x{matrices}[.trans].b16 over 32 lanes: rowAddress[l] is lane l's row address, `out` receives
  // 32 x `matrices` registers.
  virtual void ldmatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress,
                        const RowRead& read, std::span<uint32_t> out) const = 0;
  // stmatrix.m8n8.x{matrices}[.trans].b16, the inverse: `in` holds 32 x `matrices` registers, each row is written
  // through `write` on behalf of the lane that gave its address.
  virtual void stmatrix(uint32_t matrices, bool transpose, std::span<const uint64_t> rowAddress,
                        std::span<const uint32_t> in, const RowWrite& write) const = 0;

 protected:
  ~WarpMatrixSemantics() = default;
};

}  // namespace tessera::sim
