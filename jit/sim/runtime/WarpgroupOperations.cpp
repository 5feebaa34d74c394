#include "jit/sim/runtime/WarpgroupOperations.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "jit/sim/runtime/MemoryAccess.h"
#include "jit/sim/runtime/WarpgroupMatrix.h"
#include "jit/sim/runtime/Worker.h"

namespace tessera::sim {

namespace {

constexpr uint32_t kWarpsPerGroup = 4;

// Checks that the program is made of whole warpgroups of 32-lane warps, then arrives.
void arrive(SimThread& t, CollectiveKind kind, uint32_t site, const char* what) {
  Worker& w = *t.worker;
  w.site(t, site);
  if (w.runner.warpSize() != 32 || w.runner.numWarps() % kWarpsPerGroup)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return std::string(what) + " needs warpgroups of 4 warps of 32 lanes; this program has " +
             std::to_string(w.runner.numWarps()) + " warps of " + std::to_string(w.runner.warpSize());
    });
  w.runner.groupCollective(t, kind, kWarpsPerGroup, site);
}

// The element format of a WgmmaInputKind (SimABI.h); nullopt for another value.
std::optional<MatrixElement> inputElement(uint32_t kind) {
  switch (kind) {
    case kWgmmaF16: return MatrixElement::F16;
    case kWgmmaBF16: return MatrixElement::BF16;
    case kWgmmaE4M3: return MatrixElement::E4M3;
    case kWgmmaE5M2: return MatrixElement::E5M2;
    default: return std::nullopt;
  }
}

WgmmaGroups::Warpgroup& groupOf(Worker& w, uint32_t firstWarp) { return w.wgmma.warpgroups[firstWarp / kWarpsPerGroup]; }

void commit(WgmmaGroups::Warpgroup& g) {
  ++g.committed;
  for (WgmmaGroups::Operation& op : g.incomplete)
    if (op.group == WgmmaGroups::kOpenGroup) op.group = g.committed;
  for (auto& [issue, last] : g.lastExecution)
    if (last.group == WgmmaGroups::kOpenGroup) last.group = g.committed;
}

void wait(Worker& w, WgmmaGroups::Warpgroup& g, uint32_t pendingGroups) {
  if (g.committed > pendingGroups) g.completed = std::max(g.completed, g.committed - pendingGroups);
  std::erase_if(g.incomplete, [&](const WgmmaGroups::Operation& op) {
    if (!g.complete(op.group)) return false;
    for (uint32_t chunk : op.chunks) w.sharedChecker.endOperandRead(chunk, 16);
    return true;
  });
  g.fenced = false;  // the accumulators are the threads' again: the next mma_async needs a fence
}

// One operand's element encodings (rows x K, row-major by (row, k), K = 32 bytes of elements), read chunk by chunk
// through the checks as the warpgroup's first thread; the chunks read are added to `chunks`.
std::vector<uint16_t> readOperand(Worker& w, const SimThread& reader, const WgmmaOperand& operand, uint32_t site,
                                  std::vector<uint32_t>& chunks) {
  const uint32_t K = 32 / operand.elementBytes;
  std::vector<uint32_t> addresses(size_t{operand.rows} * K);
  for (uint32_t row = 0; row < operand.rows; ++row)
    for (uint32_t k = 0; k < K; ++k) addresses[size_t{row} * K + k] = wgmmaElementAddress(operand, row, k);
  std::vector<uint32_t> own;
  for (uint32_t a : addresses) own.push_back(a & ~15u);
  std::sort(own.begin(), own.end());
  own.erase(std::unique(own.begin(), own.end()), own.end());
  std::vector<uint32_t> readable;
  const uint64_t base = reinterpret_cast<uint64_t>(w.sharedBase());
  for (uint32_t chunk : own) {
    uint8_t bytes[16];
    LaneAccess unused;
    if (readSharedRow(w, reader, base + chunk, 16, bytes, site, unused)) readable.push_back(chunk);
  }
  std::vector<uint16_t> values(addresses.size(), 0);
  for (size_t i = 0; i < addresses.size(); ++i)
    if (std::binary_search(readable.begin(), readable.end(), addresses[i] & ~15u))
      std::memcpy(&values[i], w.sharedBase() + addresses[i], operand.elementBytes);  // little-endian: low byte first
  chunks.insert(chunks.end(), readable.begin(), readable.end());
  return values;
}

// A (64 x K, row-major) from the warpgroup's registers: each thread's four words, two 16-bit elements each.
std::vector<uint16_t> registerOperand(const SimThread* threads, uint32_t K) {
  std::vector<uint16_t> values(size_t{kWgmmaM} * K);
  for (uint32_t t = 0; t < kWarpgroupThreads; ++t) {
    const uint32_t* words = static_cast<const WgmmaArrival*>(threads[t].arrival.operands)->a;
    for (uint32_t e = 0; e < 8; ++e) {
      const MatrixPosition p = wgmmaRegisterAElement(t, e);
      values[size_t{p.row} * K + p.col] = static_cast<uint16_t>(words[e / 2] >> (16 * (e % 2)));
    }
  }
  return values;
}

void resolveMma(Worker& w, SimThread* threads, uint32_t firstWarp, uint32_t site) {
  WgmmaGroups::Warpgroup& g = groupOf(w, firstWarp);
  const auto& first = *static_cast<const WgmmaArrival*>(threads[0].arrival.operands);
  for (uint32_t i = 1; i < kWarpgroupThreads; ++i)
    if (!(*static_cast<const WgmmaArrival*>(threads[i].arrival.operands) == first)) {
      w.report(FindingKind::InvalidCall, &threads[i], site, nullptr,
               "passes wgmma.mma_async operands (descriptors, scale-d) that differ from warp " +
                   std::to_string(firstWarp) + " lane 0's; the emulator uses lane 0's");
      break;
    }
  if (!g.fenced)
    w.report(FindingKind::WgmmaMissingFence, &threads[0], site, nullptr,
             "no wgmma.fence since the warpgroup's last wgmma.wait_group (or its start): the accumulator registers "
             "may still be in use by other instructions");
  const std::optional<MatrixElement> inputA = inputElement(first.inputA), inputB = inputElement(first.inputB);
  const bool eightBit = inputA && elementBits(*inputA) == 8;
  const bool aInRegisters = first.a != nullptr;
  if (!inputA || !inputB || elementBits(*inputA) != elementBits(*inputB) || (!eightBit && *inputA != *inputB) ||
      (eightBit && (first.transposes || aInRegisters)) || (aInRegisters && (first.transposes & 1)) || first.n < 8 ||
      first.n > 256 || first.n % 8)
    w.fail(threads[0], FindingKind::InvalidCall, site, [&] {
      return "wgmma.mma_async m64n" + std::to_string(first.n) + " with input kinds " + std::to_string(first.inputA) +
             ", " + std::to_string(first.inputB) + ", transposes " + std::to_string(first.transposes) +
             (aInRegisters ? " and A in registers" : "") +
             " (f16 or bf16 alike, or e4m3/e5m2 K-major from shared memory; A in registers: 16-bit, not transposed; "
             "n a multiple of 8 up to 256)";
    });
  const uint32_t elementBytes = elementBits(*inputA) / 8;
  const uint32_t K = wgmmaK(*inputA);
  const WgmmaOperand a{decodeMatrixDescriptor(first.descA), (first.transposes & 1) != 0, kWgmmaM, elementBytes};
  const WgmmaOperand b{decodeMatrixDescriptor(first.descB), (first.transposes & 2) != 0, first.n, elementBytes};
  for (const WgmmaOperand* op : {&a, &b})
    if ((op == &b || !aInRegisters) && op->descriptor.baseOffset)
      w.report(FindingKind::Unsupported, &threads[0], site, nullptr,
               "a matrix descriptor with base offset " + std::to_string(op->descriptor.baseOffset) +
                   " (a start address off its swizzle pattern) is not modelled; read as 0");
  WgmmaGroups::Operation op;
  const std::vector<uint16_t> aValues =
      aInRegisters ? registerOperand(threads, K) : readOperand(w, threads[0], a, site, op.chunks);
  const std::vector<uint16_t> bRows = readOperand(w, threads[0], b, site, op.chunks);
  std::vector<uint16_t> bValues(bRows.size());  // B[k][n] from the operand's (n, k) order
  for (uint32_t n = 0; n < first.n; ++n)
    for (uint32_t k = 0; k < K; ++k) bValues[size_t{k} * first.n + n] = bRows[size_t{n} * K + k];
  const uint32_t registers = first.n / 2;
  w.scratchC.resize(size_t{kWarpgroupThreads} * registers);
  w.scratchD.resize(w.scratchC.size());
  for (uint32_t i = 0; i < kWarpgroupThreads; ++i)
    std::memcpy(&w.scratchC[size_t{i} * registers], static_cast<const WgmmaArrival*>(threads[i].arrival.operands)->c,
                registers * sizeof(uint32_t));
  executeWgmma(first.n, *inputA, *inputB, aValues, bValues, first.scaleD != 0, w.scratchC, w.scratchD);
  for (uint32_t i = 0; i < kWarpgroupThreads; ++i)
    std::memcpy(static_cast<const WgmmaArrival*>(threads[i].arrival.operands)->d, &w.scratchD[size_t{i} * registers],
                registers * sizeof(uint32_t));
  if (w.checks.tracksSharedMemory())
    for (uint32_t chunk : op.chunks) w.sharedChecker.beginOperandRead(chunk, 16);
  else
    op.chunks.clear();
  g.incomplete.push_back(std::move(op));
  g.lastExecution[first.issue] = {WgmmaGroups::kOpenGroup, site};
  for (uint32_t warp = 0; warp < kWarpsPerGroup; ++warp) w.counters.addInstruction(site, InstructionClass::Mma);
}

}  // namespace

void WgmmaGroups::beginProgram() {
  for (Warpgroup& g : warpgroups) g = Warpgroup{};
}

void wgmmaFence(SimThread& t, uint32_t site) { arrive(t, CollectiveKind::WgmmaFence, site, "wgmma.fence"); }

void wgmmaCommit(SimThread& t, uint32_t site) { arrive(t, CollectiveKind::WgmmaCommit, site, "wgmma.commit_group"); }

void wgmmaWait(SimThread& t, uint32_t pendingGroups, uint32_t site) {
  t.arrival.op = pendingGroups;
  arrive(t, CollectiveKind::WgmmaWait, site, "wgmma.wait_group");
}

void wgmmaMma(SimThread& t, const WgmmaArrival& operands, uint32_t site) {
  t.arrival.operands = &operands;
  arrive(t, CollectiveKind::WgmmaMma, site, "wgmma.mma_async");
}

void wgmmaRegisterRead(SimThread& t, uint32_t issue, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  if (w.wgmma.warpgroups.empty()) return;  // no warpgroups: no wgmma.mma_async ever ran
  const WgmmaGroups::Warpgroup& g = w.wgmma.warpgroups[t.warp / kWarpsPerGroup];
  auto last = g.lastExecution.find(issue);
  if (last == g.lastExecution.end() || g.complete(last->second.group)) return;
  w.report(FindingKind::WgmmaRegisterRead, &t, site, nullptr,
           "reads an accumulator register of the wgmma.mma_async at " + w.describeSite(last->second.site) +
               ", which no wgmma.wait_group has completed (its registers are undefined until then)");
}

void resolveWarpgroupCollective(Worker& w, uint32_t firstWarp, const PendingCollective& c) {
  WgmmaGroups::Warpgroup& g = groupOf(w, firstWarp);
  SimThread* threads = w.runner.warpThreads(firstWarp);  // the warpgroup's 128 threads are consecutive
  switch (c.kind) {
    case CollectiveKind::WgmmaFence: g.fenced = true; break;
    case CollectiveKind::WgmmaCommit: commit(g); break;
    case CollectiveKind::WgmmaWait:
      wait(w, g, threads[0].arrival.op);
      // The operand reads it completed were recorded as the first thread's: the others now follow them.
      if (w.checks.tracksSharedMemory())
        for (uint32_t i = 1; i < kWarpsPerGroup * w.runner.warpSize(); ++i)
          w.sharedChecker.orderAfter(threads[i].index, threads[0].index);
      break;
    case CollectiveKind::WgmmaMma: resolveMma(w, threads, firstWarp, c.site); break;
    default: break;
  }
}

void dropIncompleteWgmmas(Worker& w) {
  for (WgmmaGroups::Warpgroup& g : w.wgmma.warpgroups)
    for (const WgmmaGroups::Operation& op : g.incomplete)
      for (uint32_t chunk : op.chunks) w.sharedChecker.endOperandRead(chunk, 16);
}

}  // namespace tessera::sim
