#include "jit/sim/runtime/WarpOperations.h"

#include <array>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "jit/sim/runtime/MemoryAccess.h"
#include "jit/sim/runtime/WarpCollectives.h"
#include "jit/sim/runtime/WarpMatrixSemantics.h"
#include "jit/sim/runtime/WarpgroupOperations.h"
#include "jit/sim/runtime/Worker.h"

namespace tessera::sim {

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// A PTX member mask must name the calling lane.
void checkMask(SimThread& t, uint64_t mask, uint32_t site, const char* what) {
  if (!(mask >> t.lane & 1))
    t.worker->fail(t, FindingKind::InvalidCall, site, [&] {
      return std::string(what) + " with mask " + hex(mask) + ", which leaves out the calling lane " +
             std::to_string(t.lane);
    });
}

void requireWarpOf32(SimThread& t, uint32_t site, const char* what) {
  if (t.worker->runner.warpSize() != 32)
    t.worker->fail(t, FindingKind::InvalidCall, site, [&] {
      return std::string(what) + " needs 32-lane warps; this program has " +
             std::to_string(t.worker->runner.warpSize()) + "-lane waves";
    });
}

const WarpMatrixSemantics& matrixSemantics(SimThread& t, uint32_t site) {
  const WarpMatrixSemantics* m = t.worker->launch.config.matrix;
  if (!m)
    t.worker->fail(t, FindingKind::Unsupported, site,
                   "warp matrix operations need the warp-matrix semantics, which this launch was not given");
  return *m;
}

}  // namespace

void barrier(SimThread& t, uint32_t site) {
  t.worker->site(t, site);
  t.worker->runner.barrier(t, site);
}

void warpSync(SimThread& t, uint32_t mask, uint32_t site) {
  t.worker->site(t, site);
  checkMask(t, mask, site, "bar.warp.sync");
  t.worker->runner.collective(t, CollectiveKind::WarpSync, mask, site);
}

namespace {

// Checks a bar.sync or bar.arrive at barrier `id` of `count` threads (kTsimAllThreads: every thread) and returns
// the count, or reports why it is invalid.
uint32_t checkNamedBarrier(SimThread& t, const char* instruction, uint32_t id, uint32_t count, uint32_t site) {
  Worker& w = *t.worker;
  ProgramRunner& r = w.runner;
  const bool all = count == kTsimAllThreads;
  auto describe = [&] {
    return std::string(instruction) + " " + std::to_string(id) + (all ? "" : ", " + std::to_string(count));
  };
  if (id >= ProgramRunner::kNamedBarriers)
    w.fail(t, FindingKind::InvalidCall, site, [&] { return describe() + ": a CTA has barriers 0 to 15"; });
  if (!all && (count == 0 || count % r.warpSize() || count > r.numThreads()))
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return describe() + ": the thread count must be a positive multiple of the warp size (" +
             std::to_string(r.warpSize()) + ") and at most the program's " + std::to_string(r.numThreads()) +
             " threads";
    });
  const uint32_t threads = all ? r.numThreads() : count;
  const ProgramRunner::NamedBarrier& n = r.namedBarrierState(id);
  if (n.expected && n.expected != threads)
    w.fail(t, FindingKind::BarrierDivergence, site, [&] {
      return describe() + " while " + std::to_string(n.waiters.size() + n.arrivals) + " threads arrived at barrier " +
             std::to_string(id) + ", which waits for " + std::to_string(n.expected) + " threads (" +
             w.describeSite(n.site) + "); every arrival must give the same count";
    });
  return threads;
}

}  // namespace

void namedBarrier(SimThread& t, uint32_t id, uint32_t count, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  ProgramRunner& r = w.runner;
  if (id == 0 && (count == kTsimAllThreads || count == r.numThreads()) && id < ProgramRunner::kNamedBarriers)
    return r.barrier(t, site);  // barrier 0's semantics (Sim.md)
  r.namedBarrier(t, id, checkNamedBarrier(t, "bar.sync", id, count, site), site);
}

void namedBarrierArrive(SimThread& t, uint32_t id, uint32_t count, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  if (id == 0)
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "bar.arrive 0, " + std::to_string(count) + ": barrier 0 is the one every thread waits at (bar.sync 0, "
             "__syncthreads); arrive at a named barrier, 1 to 15";
    });
  w.runner.namedBarrierArrive(t, id, checkNamedBarrier(t, "bar.arrive", id, count, site), site);
}

void setMaxRegisters(SimThread& t, bool increase, uint32_t registers, uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  const std::string name = std::string("setmaxnreg.") + (increase ? "inc" : "dec") + " " + std::to_string(registers);
  auto finding = [&](const std::string& why) {
    if (w.registerCounts.firstReportOfWarp(t.index)) w.report(FindingKind::InvalidCall, &t, site, nullptr, name + ": " + why);
  };
  const RegisterCounts::Execution& group =
      w.registerCounts.join(t.index, {increase, registers, site, t.warp});
  if (registers < 24 || registers > 256 || registers % 8)
    finding("the register count must be a multiple of 8 from 24 to 256");
  else if (w.runner.numWarps() % 4)
    finding("needs whole warpgroups; the program has " + std::to_string(w.runner.numWarps()) + " warps");
  else if (!(group == RegisterCounts::Execution{increase, registers, site, t.warp}))
    finding("warp " + std::to_string(group.warp) + " of the same warpgroup executed setmaxnreg." +
            (group.increase ? "inc " : "dec ") + std::to_string(group.registers) + " at " +
            w.describeSite(group.site) + " instead (.sync.aligned: every warp of the warpgroup executes the same)");
  uint32_t& current = w.registerCounts.current(t.index);
  if (current && (increase ? registers < current : registers > current))
    finding(std::string(increase ? "lowers" : "raises") + " the warp's count of " + std::to_string(current) +
            " registers");
  current = registers;
}

uint32_t shuffle(SimThread& t, uint32_t mode, uint32_t mask, uint32_t value, uint32_t laneOrDelta,
                 uint32_t clampSegment, uint32_t* valid, uint32_t site) {
  t.worker->site(t, site);
  requireWarpOf32(t, site, "shfl.sync");
  if (mode > kShuffleBfly)
    t.worker->fail(t, FindingKind::InvalidCall, site, [&] { return "shuffle mode " + std::to_string(mode); });
  checkMask(t, mask, site, "shfl.sync");
  t.arrival.op = mode;
  t.arrival.value = value;
  t.arrival.operand = laneOrDelta;
  t.arrival.clampSegment = clampSegment;
  t.worker->runner.collective(t, CollectiveKind::Shuffle, mask, site);
  if (valid) *valid = t.arrival.valid;
  return t.arrival.result;
}

uint32_t vote(SimThread& t, uint32_t mode, uint32_t mask, uint32_t predicate, uint32_t site) {
  t.worker->site(t, site);
  requireWarpOf32(t, site, "vote.sync");
  if (mode > kVoteBallot)
    t.worker->fail(t, FindingKind::InvalidCall, site, [&] { return "vote mode " + std::to_string(mode); });
  checkMask(t, mask, site, "vote.sync");
  t.arrival.op = mode;
  t.arrival.value = predicate != 0;
  t.worker->runner.collective(t, CollectiveKind::Vote, mask, site);
  return t.arrival.result;
}

uint32_t bpermute(SimThread& t, uint32_t byteAddress, uint32_t value, uint32_t site) {
  t.worker->site(t, site);
  t.arrival.value = value;
  t.arrival.operand = byteAddress;
  // AMD has no member mask: the active lanes take part, taken here as the lanes that have not exited.
  t.worker->runner.collective(t, CollectiveKind::Bpermute, t.worker->runner.liveLanes(t.warp), site);
  return t.arrival.result;
}

namespace {

// ldmatrix and stmatrix arrive alike: the matrix count, .trans, the row this lane addresses; the registers travel in
// `out` (ldmatrix) or `a` (stmatrix).
void matrixTransfer(SimThread& t, CollectiveKind kind, const char* name, uint32_t matrices, uint32_t transpose,
                    uint64_t address, uint32_t site) {
  t.worker->site(t, site);
  requireWarpOf32(t, site, name);
  if (matrices != 1 && matrices != 2 && matrices != 4)
    t.worker->fail(t, FindingKind::InvalidCall, site,
                   [&] { return std::string(name) + " of " + std::to_string(matrices) + " matrices"; });
  matrixSemantics(t, site);
  t.arrival.op = matrices;
  t.arrival.operand = transpose != 0;
  t.arrival.address = address;
  t.worker->runner.collective(t, kind, t.worker->runner.fullWarpMask(), site);
}

}  // namespace

void ldmatrix(SimThread& t, uint32_t matrices, uint32_t transpose, uint64_t address, uint32_t* out, uint32_t site) {
  t.arrival.out = out;
  matrixTransfer(t, CollectiveKind::LdMatrix, "ldmatrix", matrices, transpose, address, site);
}

void stmatrix(SimThread& t, uint32_t matrices, uint32_t transpose, uint64_t address, const uint32_t* in,
              uint32_t site) {
  t.arrival.a = in;
  matrixTransfer(t, CollectiveKind::StMatrix, "stmatrix", matrices, transpose, address, site);
}

void mma(SimThread& t, uint32_t kind, const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d,
         uint32_t site) {
  Worker& w = *t.worker;
  w.site(t, site);
  std::optional<WarpMatrixSemantics::Shape> shape = matrixSemantics(t, site).shape(kind);
  if (!shape)
    w.fail(t, FindingKind::Unsupported, site, [&] { return "mma kind " + std::to_string(kind) + " is not implemented"; });
  if (shape->lanes != w.runner.warpSize())
    w.fail(t, FindingKind::InvalidCall, site, [&] {
      return "mma kind " + std::to_string(kind) + " needs " + std::to_string(shape->lanes) +
             "-lane warps; this program has " + std::to_string(w.runner.warpSize());
    });
  t.arrival.op = kind;
  t.arrival.a = a;
  t.arrival.b = b;
  t.arrival.c = c;
  t.arrival.out = d;
  w.runner.collective(t, CollectiveKind::Mma, w.runner.fullWarpMask(), site);
}

namespace {

void resolveLdMatrix(Worker& w, SimThread* lanes, uint32_t site) {
  const WarpMatrixSemantics& semantics = *w.launch.config.matrix;
  const uint32_t matrices = lanes[0].arrival.op;
  w.scratchRows.assign(32, 0);
  for (uint32_t l = 0; l < 32; ++l) w.scratchRows[l] = lanes[l].arrival.address;
  w.scratchD.assign(size_t{32} * matrices, 0);
  std::array<LaneAccess, 32> counted;
  size_t n = 0;
  semantics.ldmatrix(matrices, lanes[0].arrival.operand != 0, w.scratchRows,
                     [&](uint32_t lane, uint64_t address, uint32_t bytes, void* dst) {
                       LaneAccess a;
                       if (readSharedRow(w, lanes[lane % 32], address, bytes, dst, site, a) && n < counted.size())
                         counted[n++] = a;
                     },
                     w.scratchD);
  for (uint32_t l = 0; l < 32; ++l)
    for (uint32_t r = 0; r < matrices; ++r) lanes[l].arrival.out[r] = w.scratchD[size_t{l} * matrices + r];
  w.counters.addRequest(site, RequestStream::Primary, counted.data(), n);
}

// Each row is a store of the lane that gave its address (its findings name that lane), all of them one request.
void resolveStMatrix(Worker& w, SimThread* lanes, uint32_t site) {
  const WarpMatrixSemantics& semantics = *w.launch.config.matrix;
  const uint32_t matrices = lanes[0].arrival.op;
  w.scratchRows.assign(32, 0);
  for (uint32_t l = 0; l < 32; ++l) w.scratchRows[l] = lanes[l].arrival.address;
  w.scratchA.resize(size_t{32} * matrices);
  for (uint32_t l = 0; l < 32; ++l)
    for (uint32_t r = 0; r < matrices; ++r) w.scratchA[size_t{l} * matrices + r] = lanes[l].arrival.a[r];
  const uint32_t execution = w.matrixStores++;
  std::array<LaneAccess, 32> counted;
  size_t n = 0;
  semantics.stmatrix(matrices, lanes[0].arrival.operand != 0, w.scratchRows, w.scratchA,
                     [&](uint32_t lane, uint64_t address, uint32_t bytes, const void* src) {
                       LaneAccess a;
                       if (writeSharedRow(w, lanes[lane % 32], address, bytes, src, site, execution, a) &&
                           n < counted.size())
                         counted[n++] = a;
                     });
  w.counters.addRequest(site, RequestStream::Primary, counted.data(), n);
}

void resolveMma(Worker& w, SimThread* lanes, uint32_t site) {
  const WarpMatrixSemantics& semantics = *w.launch.config.matrix;
  const uint32_t kind = lanes[0].arrival.op;
  const WarpMatrixSemantics::Shape shape = *semantics.shape(kind);
  const uint32_t n = w.runner.warpSize();
  auto gather = [&](std::vector<uint32_t>& into, uint32_t registers, const uint32_t* CollectiveArrival::*operand) {
    into.resize(size_t{n} * registers);
    for (uint32_t l = 0; l < n; ++l)
      for (uint32_t r = 0; r < registers; ++r) into[size_t{l} * registers + r] = (lanes[l].arrival.*operand)[r];
  };
  gather(w.scratchA, shape.a, &CollectiveArrival::a);
  gather(w.scratchB, shape.b, &CollectiveArrival::b);
  gather(w.scratchC, shape.c, &CollectiveArrival::c);
  w.scratchD.resize(size_t{n} * shape.c);
  semantics.mma(kind, w.scratchA, w.scratchB, w.scratchC, w.scratchD);
  for (uint32_t l = 0; l < n; ++l)
    for (uint32_t r = 0; r < shape.c; ++r) lanes[l].arrival.out[r] = w.scratchD[size_t{l} * shape.c + r];
  w.counters.addInstruction(site, InstructionClass::Mma);
}

}  // namespace

void resolveWarpCollective(Worker& w, uint32_t warp, const PendingCollective& c) {
  SimThread* lanes = w.runner.warpThreads(warp);
  const uint32_t warpSize = w.runner.warpSize();
  switch (c.kind) {
    case CollectiveKind::WarpSync:
      w.warpSynced(warp, c.mask);
      w.counters.addInstruction(c.site, InstructionClass::WarpSync);
      break;
    case CollectiveKind::Shuffle: {
      uint64_t outside = resolveShuffle(lanes, warpSize, c.mask);
      w.counters.addInstruction(c.site, InstructionClass::Shuffle);
      for (uint32_t l = 0; l < warpSize; ++l) {
        if (!(outside >> l & 1)) continue;
        const CollectiveArrival& a = lanes[l].arrival;
        ShuffleSource s = shuffleSource(a.op, l, a.operand, a.clampSegment);
        w.report(FindingKind::ShuffleOutsideMask, &lanes[l], c.site, nullptr,
                 "reads lane " + std::to_string(s.lane) + ", which is not in the mask " + hex(c.mask) +
                     " (the value is undefined; the emulator gives 0)");
      }
      break;
    }
    case CollectiveKind::Vote:
      resolveVote(lanes, warpSize, c.mask);
      w.counters.addInstruction(c.site, InstructionClass::Vote);
      break;
    case CollectiveKind::Bpermute:
      resolveBpermute(lanes, warpSize, c.mask);
      w.counters.addInstruction(c.site, InstructionClass::Shuffle);
      break;
    case CollectiveKind::LdMatrix:
      resolveLdMatrix(w, lanes, c.site);
      break;
    case CollectiveKind::StMatrix:
      resolveStMatrix(w, lanes, c.site);
      break;
    case CollectiveKind::Mma:
      resolveMma(w, lanes, c.site);
      break;
    case CollectiveKind::WgmmaFence:
    case CollectiveKind::WgmmaCommit:
    case CollectiveKind::WgmmaWait:
    case CollectiveKind::WgmmaMma:
      resolveWarpgroupCollective(w, warp, c);
      break;
  }
}

}  // namespace tessera::sim
