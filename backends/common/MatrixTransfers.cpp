#include "backends/common/MatrixTransfers.h"

#include <llvm/ADT/bit.h>

namespace tessera::backends {

std::optional<MatrixTransferPlan> planMatrixTransfers(const MatrixTransferSide& side) {
  const size_t rank = side.shape.size();
  const int64_t regs = static_cast<int64_t>(side.regParts.size());
  if (side.elementBytes != 2 || side.laneBases.size() != 5 || rank == 0 || regs < 2 ||
      !llvm::has_single_bit(static_cast<uint64_t>(regs)))
    return std::nullopt;
  if (rank > 1 && side.pitchElements % 8 != 0) return std::nullopt;  // rows 16-byte aligned
  auto column = [&](int64_t c) {
    Coords v(rank, 0);
    v.back() = c;
    return v;
  };
  if (side.laneBases[0] != column(2) || side.laneBases[1] != column(4)) return std::nullopt;
  const int registerBits = llvm::countr_zero(static_cast<uint64_t>(regs));
  auto basis = [&](int bit) { return xorCoords(side.regParts[int64_t(1) << bit], side.regParts[0]); };
  int pairBit = -1;
  for (int k = 0; k < registerBits && pairBit < 0; ++k)
    if (basis(k) == column(1)) pairBit = k;
  if (pairBit < 0) return std::nullopt;
  // Everything else moves whole 8-column rows.
  std::vector<Coords> rowMoves(side.laneBases.begin() + 2, side.laneBases.end());
  rowMoves.insert(rowMoves.end(), side.warpBases.begin(), side.warpBases.end());
  rowMoves.push_back(side.regParts[0]);
  for (int k = 0; k < registerBits; ++k)
    if (k != pairBit) rowMoves.push_back(basis(k));
  for (const Coords& c : rowMoves)
    if (c.back() % 8 != 0) return std::nullopt;

  std::vector<int> matrixBits;
  for (int k = 0; k < registerBits && matrixBits.size() < 2; ++k)
    if (k != pairBit) matrixBits.push_back(k);
  MatrixTransferPlan plan;
  plan.addressLaneBases = {side.laneBases[2], side.laneBases[3], side.laneBases[4], Coords(rank, 0), Coords(rank, 0)};
  for (size_t i = 0; i < matrixBits.size(); ++i) plan.addressLaneBases[3 + i] = basis(matrixBits[i]);
  const int64_t matrices = int64_t(1) << matrixBits.size();
  int64_t moved = int64_t(1) << pairBit;
  for (int k : matrixBits) moved |= int64_t(1) << k;
  // The registers of one instruction are written (or read) together: each is its thread's to write, and all of
  // them lie in one round the lowering knows.
  auto usable = [&](int64_t r, int64_t first) {
    return side.rounds[r] && side.rounds[r] == side.rounds[first] && (side.owners.empty() || side.owners[r]);
  };
  for (int64_t first = 0; first < regs; ++first) {
    if ((first & moved) != 0) continue;
    MatrixInstruction inst;
    inst.firstRegister = first;
    for (int64_t m = 0; m < matrices; ++m) {
      int64_t low = first;
      for (size_t i = 0; i < matrixBits.size(); ++i)
        if (m >> i & 1) low |= int64_t(1) << matrixBits[i];
      const int64_t high = low | int64_t(1) << pairBit;
      if (!usable(low, first) || !usable(high, first)) return std::nullopt;
      inst.words.emplace_back(low, high);
    }
    inst.round = *side.rounds[first];
    plan.instructions.push_back(std::move(inst));
  }
  return plan;
}

}  // namespace tessera::backends
