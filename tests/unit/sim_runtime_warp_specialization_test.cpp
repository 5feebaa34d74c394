// The emulator's pieces of warp specialization on hand-written kernels of two warpgroups (a consumer warpgroup,
// warps 0-3, and a producer warpgroup, warps 4-7): named barriers with thread counts (bar.sync id, count), which
// let the consumers synchronize after the producers exited; setmaxnreg and its PTX rules; and racecheck's
// happens-before through mbarriers, which orders a producer's plain shared stores before the consumers' reads
// (through the "full" barriers) and the consumers' reads before the producer's next stores into the stage (through
// the "empty" barriers). Each correct kernel reports nothing; each planted bug is reported where it is.
#include "SimRuntimeTestUtil.h"

namespace {

using namespace simtest;

constexpr uint32_t kWarps = 8;
constexpr uint32_t kConsumers = 128;  // warps 0-3
constexpr uint32_t kStages = 2;
constexpr uint32_t kIterations = 6;
constexpr uint32_t kBufferWord = 16;  // shared words: full[2], empty[2] (8 bytes each), then the stages

enum Sites : uint32_t {
  kInit, kArriveFull, kArriveEmpty, kWaitFull, kWaitEmpty, kBar, kNamedBar, kSetMaxDec, kSetMaxInc, kSStore, kSLoad,
  kGStore, kNamedArrive
};
SiteTable sites() {
  return {syncSite(SiteKind::Mbarrier, "mbarrier_alloc", 60),  syncSite(SiteKind::Mbarrier, "async_tma_copy", 61),
          syncSite(SiteKind::Mbarrier, "mbarrier_arrive", 62), syncSite(SiteKind::Mbarrier, "mbarrier_wait", 63),
          syncSite(SiteKind::Mbarrier, "mbarrier_wait", 64),   syncSite(SiteKind::Barrier, "barrier", 65),
          syncSite(SiteKind::Barrier, "barrier", 66),          syncSite(SiteKind::Barrier, "warp_specialize", 67),
          syncSite(SiteKind::Barrier, "warp_specialize", 68),
          site(SiteKind::Store, AddressSpace::Shared, 4, "local_store", 69),
          site(SiteKind::Load, AddressSpace::Shared, 4, "local_load", 70),
          site(SiteKind::Store, AddressSpace::Global, 4, "store", 71),
          syncSite(SiteKind::Barrier, "turn_pass", 72)};
}

uint64_t fullBarrier(uint32_t stage) { return addr(shared<uint64_t>(stage)); }
uint64_t emptyBarrier(uint32_t stage) { return addr(shared<uint64_t>(kStages + stage)); }
uint32_t* stageWords(uint32_t stage) { return shared<uint32_t>(kBufferWord + stage * kConsumers); }

// ---- a producer thread fills the stages with plain stores; every consumer reads its word of each stage.
enum class Planted { None, NoFullWait, NoEmptyWait, BarrierZeroAfterExit, NoNamedBarrier };
Planted gPlanted = Planted::None;  // the tests run one host thread

void producerConsumer(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0);
  if (tid == 0)
    for (uint32_t s = 0; s < kStages; ++s) {
      __tsim_mbarrier_init(fullBarrier(s), 1, kInit);
      __tsim_mbarrier_init(emptyBarrier(s), kConsumers, kInit);
    }
  __tsim_barrier(kBar);
  if (tid >= kConsumers) {
    __tsim_setmaxnreg(0, 40, kSetMaxDec);
    if (tid != kConsumers) return;
    for (uint32_t i = 0; i < kIterations; ++i) {
      const uint32_t s = i % kStages;
      // Iteration i - S released the stage; a fresh barrier's "previous phase" (parity 1) counts as completed.
      if (gPlanted != Planted::NoEmptyWait) __tsim_mbarrier_try_wait_parity(emptyBarrier(s), ((i / kStages) & 1) ^ 1, kWaitEmpty);
      for (uint32_t w = 0; w < kConsumers; ++w) store(stageWords(s) + w, 1000 * i + w, kSStore);
      __tsim_mbarrier_arrive(fullBarrier(s), 1, 0, kArriveFull);
    }
    return;
  }
  __tsim_setmaxnreg(1, 232, kSetMaxInc);
  for (uint32_t i = 0; i < kIterations; ++i) {
    const uint32_t s = i % kStages;
    if (gPlanted != Planted::NoFullWait) __tsim_mbarrier_try_wait_parity(fullBarrier(s), (i / kStages) & 1, kWaitFull);
    store(out + i * kConsumers + tid, load<uint32_t>(stageWords(s) + tid, kSLoad), kGStore);
    __tsim_mbarrier_arrive(emptyBarrier(s), 1, 0, kArriveEmpty);
  }
  // The consumers' epilogue exchanges words through shared memory: the producers are gone, so only a barrier of the
  // consumers' 128 threads can order it.
  uint32_t* exchange = shared<uint32_t>(kBufferWord + kStages * kConsumers);
  store(exchange + tid, tid, kSStore);
  if (gPlanted == Planted::BarrierZeroAfterExit) __tsim_barrier(kBar);
  else if (gPlanted != Planted::NoNamedBarrier) __tsim_named_barrier(1, kConsumers, kNamedBar);
  store(out + kIterations * kConsumers + tid, load<uint32_t>(exchange + (tid + 1) % kConsumers, kSLoad), kGStore);
}

Report runProducerConsumer(Planted planted, std::vector<uint32_t>& out) {
  gPlanted = planted;
  out.assign((kIterations + 1) * kConsumers, 0xDEADBEEF);
  void* params[] = {out.data()};
  const uint32_t sharedBytes = 4 * (kBufferWord + (kStages + 1) * kConsumers);
  return launch(program("warp_specialized", kWarps, sharedBytes, sites(), &producerConsumer), {2, 1, 1}, params,
                config({range(out)}));
}

TEST(SimWarpSpecialization, ProducerAndConsumersOrderedByMbarriersAndANamedBarrierAreClean) {
  std::vector<uint32_t> out;
  Report r = runProducerConsumer(Planted::None, out);
  EXPECT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(r.findings.size(), 0u) << r.str();
  for (uint32_t i = 0; i < kIterations; ++i)
    for (uint32_t t = 0; t < kConsumers; ++t) ASSERT_EQ(out[i * kConsumers + t], 1000 * i + t) << i << " " << t;
  for (uint32_t t = 0; t < kConsumers; ++t) ASSERT_EQ(out[kIterations * kConsumers + t], (t + 1) % kConsumers);
  EXPECT_EQ(r.total.barriers, 2u * 2) << "per program: barrier 0 after the init and the consumers' barrier 1";
}

TEST(SimWarpSpecialization, ConsumersReadingBeforeTheFullPhaseRaceWithTheProducer) {
  std::vector<uint32_t> out;
  Report r = runProducerConsumer(Planted::NoFullWait, out);
  EXPECT_TRUE(r.failed());
  // Whether a read comes before the producer's first store of the stage (uninitialized) or after it without the
  // phase that publishes it (a race) depends on the order the threads run in; either is a finding at the read.
  const size_t reported =
      r.findingCount(FindingKind::SharedRace) + r.findingCount(FindingKind::UninitializedSharedRead);
  EXPECT_GT(reported, 0u) << r.str();
  for (const Finding& f : r.findings) {
    if (f.kind == FindingKind::SharedRace || f.kind == FindingKind::UninitializedSharedRead) {
      EXPECT_TRUE(f.line == 70u || f.line == 69u) << f.message;
    }
  }
}

TEST(SimWarpSpecialization, ProducerRefillingAStageWithoutItsEmptyPhaseRacesWithTheReaders) {
  std::vector<uint32_t> out;
  Report r = runProducerConsumer(Planted::NoEmptyWait, out);
  ASSERT_GT(r.findingCount(FindingKind::SharedRace), 0u) << r.str();
  const Finding* race = firstFinding(r, FindingKind::SharedRace);
  EXPECT_EQ(race->kernel, "warp_specialized");
  EXPECT_TRUE(race->line == 69u || race->line == 70u) << race->message;
}

TEST(SimWarpSpecialization, BarrierZeroAfterTheProducersExitedIsDivergence) {
  std::vector<uint32_t> out;
  Report r = runProducerConsumer(Planted::BarrierZeroAfterExit, out);
  ASSERT_GT(r.findingCount(FindingKind::BarrierDivergence), 0u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
  EXPECT_EQ(f->line, 65u);
  EXPECT_NE(f->message.find("128 of 256 threads reached it"), std::string::npos) << f->message;
}

TEST(SimWarpSpecialization, ConsumerExchangeWithoutTheNamedBarrierIsARace) {
  std::vector<uint32_t> out;
  Report r = runProducerConsumer(Planted::NoNamedBarrier, out);
  ASSERT_GT(r.findingCount(FindingKind::SharedRace), 0u) << r.str();
  // A thread that runs ahead of its neighbour also reads its word before it is written.
  EXPECT_EQ(r.findingCount(),
            r.findingCount(FindingKind::SharedRace) + r.findingCount(FindingKind::UninitializedSharedRead))
      << r.str();
}

// ---- named barriers: ids, counts, and a barrier whose count never arrives.
struct NamedCase {
  uint32_t id, count;
  uint32_t arrivingWarps;  // warps 0 .. arrivingWarps-1 arrive; the others exit at once
};
NamedCase gNamed;

void namedBarrierKernel(void**) {
  if (__tsim_thread_id(0) / 32 >= gNamed.arrivingWarps) return;
  __tsim_named_barrier(gNamed.id, gNamed.count, kNamedBar);
}

Report runNamed(NamedCase c) {
  gNamed = c;
  return launch(program("named", kWarps, 64, sites(), &namedBarrierKernel), {1, 1, 1}, nullptr, config({}));
}

TEST(SimWarpSpecialization, NamedBarrierOfSomeWarpsCompletesWithTheOthersExited) {
  for (uint32_t id : {1u, 7u, 15u}) {
    Report r = runNamed({id, 96, 3});
    EXPECT_FALSE(r.failed()) << id << ": " << r.str();
    EXPECT_EQ(r.total.barriers, 1u);
  }
  // Two rounds of 64 threads each complete barrier 2 with 128 arrivals.
  Report twice = runNamed({2, 64, 4});
  EXPECT_FALSE(twice.failed()) << twice.str();
  EXPECT_EQ(twice.total.barriers, 2u);
}

TEST(SimWarpSpecialization, NamedBarrierThatNeverCompletesIsAHang) {
  Report r = runNamed({3, 128, 3});  // waits for 128 threads; 96 arrive
  ASSERT_EQ(r.findingCount(FindingKind::BarrierDivergence), 1u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
  EXPECT_EQ(f->line, 66u);
  EXPECT_NE(f->message.find("barrier 3 never completes: 96 of the 128 threads it waits for arrived"),
            std::string::npos)
      << f->message;
}

TEST(SimWarpSpecialization, NamedBarrierIdsAndCountsOutsideThePtxRulesAreInvalid) {
  Report badId = runNamed({16, 128, 4});
  ASSERT_GT(badId.findingCount(FindingKind::InvalidCall), 0u) << badId.str();
  EXPECT_NE(firstFinding(badId, FindingKind::InvalidCall)->message.find("bar.sync 16, 128: a CTA has barriers 0 to 15"),
            std::string::npos)
      << badId.str();
  Report badCount = runNamed({1, 100, 4});
  ASSERT_GT(badCount.findingCount(FindingKind::InvalidCall), 0u) << badCount.str();
  EXPECT_NE(firstFinding(badCount, FindingKind::InvalidCall)
                ->message.find("the thread count must be a positive multiple of the warp size (32)"),
            std::string::npos)
      << badCount.str();
  Report tooMany = runNamed({1, 288, 8});
  EXPECT_GT(tooMany.findingCount(FindingKind::InvalidCall), 0u) << tooMany.str();
}

void countsDisagree(void**) {
  const uint32_t warp = __tsim_thread_id(0) / 32;
  __tsim_named_barrier(4, warp == 0 ? 64 : 128, kNamedBar);
}

TEST(SimWarpSpecialization, ArrivalsWithDifferentCountsAreDivergence) {
  Report r = launch(program("counts", 4, 64, sites(), &countsDisagree), {1, 1, 1}, nullptr, config({}));
  ASSERT_GT(r.findingCount(FindingKind::BarrierDivergence), 0u) << r.str();
  bool named = false;
  for (const Finding& f : r.findings)
    named = named || f.message.find("every arrival must give the same count") != std::string::npos;
  EXPECT_TRUE(named) << r.str();
}

// ---- bar.arrive: two groups of two warps take turns (order-consumer-groups' ping-pong). Group g's turn is barrier
// 2 + g of both groups' 128 threads: g waits there (bar.sync), the other group arrives (bar.arrive) to hand it over.
// Group 1 hands group 0 the first turn; group 0 takes back the last one. In its turn, each group's first thread
// adds 1 to a shared counter: plain loads and stores that only the turns order.
enum class TurnBug { None, NoFirstPass, NoLastWait, ArriveAtBarrierZero, WriteAfterPassing };
TurnBug gTurnBug = TurnBug::None;
constexpr uint32_t kTurnGroupThreads = 64, kTurns = 5;

void takeTurns(void** params) {
  uint32_t* out = static_cast<uint32_t*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0), group = tid / kTurnGroupThreads, next = (group + 1) % 2;
  uint32_t* counter = shared<uint32_t>(0);
  if (tid == 0) store(counter, 0u, kSStore);
  __tsim_barrier(kBar);
  if (group == 1 && gTurnBug != TurnBug::NoFirstPass)
    __tsim_named_barrier_arrive(gTurnBug == TurnBug::ArriveAtBarrierZero ? 0 : 2, 2 * kTurnGroupThreads, kNamedArrive);
  for (uint32_t i = 0; i < kTurns; ++i) {
    __tsim_named_barrier(2 + group, 2 * kTurnGroupThreads, kNamedBar);
    if (tid % kTurnGroupThreads == 0) store(counter, load<uint32_t>(counter, kSLoad) + 1, kSStore);
    __tsim_named_barrier_arrive(2 + next, 2 * kTurnGroupThreads, kNamedArrive);
    // Passing the turn orders what came before it, not what comes after: this write races with the next group's.
    if (gTurnBug == TurnBug::WriteAfterPassing && tid % kTurnGroupThreads == 0) store(counter, 100u, kSStore);
  }
  if (group == 0 && gTurnBug != TurnBug::NoLastWait) __tsim_named_barrier(2, 2 * kTurnGroupThreads, kNamedBar);
  if (tid == 0) store(out, load<uint32_t>(counter, kSLoad), kGStore);
}

Report runTurns(TurnBug bug, uint32_t& result) {
  gTurnBug = bug;
  std::vector<uint32_t> out{0xDEADBEEF};
  void* params[] = {out.data()};
  Report r = launch(program("turns", 4, 64, sites(), &takeTurns), {1, 1, 1}, params, config({range(out)}));
  result = out[0];
  return r;
}

// The first finding of `kind`: at `line`, its message holding `text`.
const Finding* expectFirstFinding(const Report& r, FindingKind kind, uint32_t line, const std::string& text) {
  const Finding* f = firstFinding(r, kind);
  EXPECT_NE(f, nullptr) << r.str();
  if (!f) return nullptr;
  EXPECT_EQ(f->line, line) << f->message;
  EXPECT_NE(f->message.find(text), std::string::npos) << f->message;
  return f;
}

TEST(SimWarpSpecialization, GroupsTakingTurnsThroughArrivalsAreOrderedAndClean) {
  uint32_t out = 0;
  Report r = runTurns(TurnBug::None, out);
  EXPECT_FALSE(r.failed()) << r.str();
  EXPECT_EQ(r.findings.size(), 0u) << r.str();
  EXPECT_EQ(out, 2 * kTurns);
  // Barrier 0 once, then per turn one completion of a turn barrier, and group 0's last.
  EXPECT_EQ(r.total.barriers, 1u + 2 * kTurns + 1);
}

TEST(SimWarpSpecialization, AGroupWaitingForATurnNobodyPassesIsAHang) {
  uint32_t out = 0;
  Report r = runTurns(TurnBug::NoFirstPass, out);
  // Group 0 waits for the first turn, group 1 for group 0's pass: both hang.
  ASSERT_EQ(r.findingCount(FindingKind::BarrierDivergence), 2u) << r.str();
  expectFirstFinding(r, FindingKind::BarrierDivergence, 66,
                     "barrier 2 never completes: 64 of the 128 threads it waits for arrived");
}

TEST(SimWarpSpecialization, ALastPassThatNobodyTakesIsReported) {
  uint32_t out = 0;
  Report r = runTurns(TurnBug::NoLastWait, out);
  // (Group 0 also reads the counter without waiting for group 1's last turn: a race besides.)
  ASSERT_EQ(r.findingCount(FindingKind::BarrierDivergence), 1u) << r.str();
  const Finding* f = expectFirstFinding(r, FindingKind::BarrierDivergence, 72,
                                        "barrier 2: 64 of the 128 threads it counts arrived without waiting "
                                        "(bar.arrive) and no thread waited there before the program ended");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->warp == 2u || f->warp == 3u) << "a thread of group 1, which passed the last turn: " << f->warp;
}

TEST(SimWarpSpecialization, ArrivingAtBarrierZeroIsInvalid) {
  uint32_t out = 0;
  Report r = runTurns(TurnBug::ArriveAtBarrierZero, out);
  ASSERT_GT(r.findingCount(FindingKind::InvalidCall), 0u) << r.str();
  expectFirstFinding(r, FindingKind::InvalidCall, 72, "bar.arrive 0, 128: barrier 0 is the one every thread waits at");
}

TEST(SimWarpSpecialization, AnArrivalOrdersOnlyWhatCameBeforeIt) {
  uint32_t out = 0;
  Report r = runTurns(TurnBug::WriteAfterPassing, out);
  ASSERT_GT(r.findingCount(FindingKind::SharedRace), 0u) << r.str();
  const Finding* race = firstFinding(r, FindingKind::SharedRace);
  EXPECT_EQ(race->kernel, "turns");
  EXPECT_TRUE(race->line == 69u || race->line == 70u) << race->message;
}

void arrivalCountsDisagree(void**) {
  const uint32_t warp = __tsim_thread_id(0) / 32;
  if (warp == 0) __tsim_named_barrier(5, 128, kNamedBar);
  else __tsim_named_barrier_arrive(5, warp == 1 ? 128 : 64, kNamedArrive);
}

TEST(SimWarpSpecialization, AnArrivalWithAnotherCountIsDivergence) {
  Report r = launch(program("arrivals", 4, 64, sites(), &arrivalCountsDisagree), {1, 1, 1}, nullptr, config({}));
  ASSERT_GT(r.findingCount(FindingKind::BarrierDivergence), 0u) << r.str();
  const Finding* f = firstFinding(r, FindingKind::BarrierDivergence);
  EXPECT_NE(f->message.find("bar.arrive 5, 64 while"), std::string::npos) << f->message;
}

// ---- setmaxnreg
struct SetMaxCase {
  uint32_t producerRegisters, consumerRegisters;
  uint32_t oddWarpRegisters;  // warp 5's count when nonzero (the others of its warpgroup use producerRegisters)
  uint32_t consumerSecondInc; // a second .inc of the consumers when nonzero
};
SetMaxCase gSetMax;

void setMaxKernel(void**) {
  const uint32_t warp = __tsim_thread_id(0) / 32;
  if (warp >= 4) {
    __tsim_setmaxnreg(0, warp == 5 && gSetMax.oddWarpRegisters ? gSetMax.oddWarpRegisters : gSetMax.producerRegisters,
                      kSetMaxDec);
    return;
  }
  __tsim_setmaxnreg(1, gSetMax.consumerRegisters, kSetMaxInc);
  if (gSetMax.consumerSecondInc) __tsim_setmaxnreg(1, gSetMax.consumerSecondInc, kSetMaxInc);
}

Report runSetMax(SetMaxCase c, uint32_t warps = kWarps) {
  gSetMax = c;
  return launch(program("setmaxnreg", warps, 64, sites(), &setMaxKernel), {1, 1, 1}, nullptr, config({}));
}

std::string firstInvalid(const Report& r) {
  const Finding* f = firstFinding(r, FindingKind::InvalidCall);
  return f ? f->message : "no finding:\n" + r.str();
}

TEST(SimWarpSpecialization, SetMaxNRegFollowsThePtxRules) {
  Report ok = runSetMax({40, 232, 0, 240});
  EXPECT_FALSE(ok.failed()) << ok.str();
  EXPECT_EQ(ok.findings.size(), 0u) << ok.str();

  EXPECT_EQ(firstInvalid(runSetMax({20, 232, 0, 0})),
            "setmaxnreg.dec 20: the register count must be a multiple of 8 from 24 to 256");
  EXPECT_EQ(firstInvalid(runSetMax({40, 100, 0, 0})),
            "setmaxnreg.inc 100: the register count must be a multiple of 8 from 24 to 256");
  EXPECT_EQ(firstInvalid(runSetMax({40, 264, 0, 0})),
            "setmaxnreg.inc 264: the register count must be a multiple of 8 from 24 to 256");
  EXPECT_EQ(firstInvalid(runSetMax({40, 232, 0, 200})), "setmaxnreg.inc 200: lowers the warp's count of 232 registers");
  const std::string odd = firstInvalid(runSetMax({40, 232, 48, 0}));
  EXPECT_NE(odd.find("of the same warpgroup executed setmaxnreg.dec"), std::string::npos) << odd;
  EXPECT_NE(odd.find("every warp of the warpgroup executes the same"), std::string::npos) << odd;
  const std::string partial = firstInvalid(runSetMax({40, 232, 0, 0}, 6));
  EXPECT_NE(partial.find(": needs whole warpgroups; the program has 6 warps"), std::string::npos) << partial;
}

TEST(SimWarpSpecialization, ASetMaxNRegFindingIsReportedOncePerWarp) {
  Report r = runSetMax({20, 232, 0, 0});
  EXPECT_EQ(r.findingCount(FindingKind::InvalidCall), 4u) << "one per producer warp\n" << r.str();
}

}  // namespace
