// The program runner (jit/sim/runtime/ProgramRunner.h) on its own: threads interleave only at barriers and
// collectives, barriers wait for every live thread, a collective completes when its whole mask arrived (and only
// then), mismatched collectives and deadlocks end the program instead of hanging, and a throwing body is caught.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "jit/sim/runtime/ProgramRunner.h"

namespace tessera::sim {
namespace {

struct Recorder final : ProgramRunner::Events {
  ProgramRunner* runner = nullptr;
  std::vector<std::string> events;
  void barrierReleased(uint32_t site, bool exited, bool mixed) override {
    events.push_back("barrier " + std::to_string(site) + (exited ? " exited" : "") + (mixed ? " mixed" : ""));
  }
  void resolveCollective(uint32_t warp, const PendingCollective& c) override {
    // A sum over the lanes of the mask, given to every lane (what a reduction would compute).
    uint32_t sum = 0;
    for (uint32_t l = 0; l < runner->warpSize(); ++l)
      if (c.mask >> l & 1) sum += runner->threads()[warp * runner->warpSize() + l].arrival.value;
    for (uint32_t l = 0; l < runner->warpSize(); ++l)
      if (c.mask >> l & 1) const_cast<SimThread&>(runner->threads()[warp * runner->warpSize() + l]).arrival.result = sum;
    events.push_back("resolve warp " + std::to_string(warp) + " site " + std::to_string(c.site));
  }
  void collectiveMismatch(const SimThread& t, CollectiveKind kind, uint64_t mask, uint32_t site,
                          const PendingCollective& other) override {
    events.push_back("mismatch lane " + std::to_string(t.lane) + " site " + std::to_string(site) + " vs " +
                     std::to_string(other.site));
  }
  void deadlock() override { events.push_back("deadlock"); }
  void threadFailed(const SimThread& t, const char* what) override {
    events.push_back("failed " + std::to_string(t.index) + ": " + what);
  }
};

struct Fixture {
  Recorder recorder;
  ProgramRunner runner;
  std::vector<std::string> trace;
  std::vector<uint32_t> results;
  Fixture(uint32_t warpSize, uint32_t warps) : runner(warpSize, warps, 64 * 1024, nullptr) {
    recorder.runner = &runner;
    results.assign(runner.numThreads(), 0);
  }
  SimThread& me() { return *currentThreadOrNull(); }
  void run(void (*body)(void*)) { runner.run(body, this, recorder); }
  void log(const std::string& s) { trace.push_back(std::to_string(me().index) + ":" + s); }
};

TEST(SimRuntimeRunner, ThreadsRunToTheBarrierInTurnAndAllPassIt) {
  Fixture f(4, 2);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    f->log("a");
    f->runner.barrier(f->me(), 7);
    f->log("b");
  });
  std::vector<std::string> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(std::to_string(i) + ":a");
  // The last arrival releases the barrier and keeps running; the others follow in arrival order.
  expected.push_back("7:b");
  for (int i = 0; i < 7; ++i) expected.push_back(std::to_string(i) + ":b");
  EXPECT_EQ(f.trace, expected);
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"barrier 7"}));
  EXPECT_EQ(currentThreadOrNull(), nullptr);
}

TEST(SimRuntimeRunner, BarrierAfterAnExitWaitsForTheLiveThreadsAndSaysSomeExited) {
  Fixture f(4, 1);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    if (f->me().index == 3) return;
    f->runner.barrier(f->me(), f->me().index == 0 ? 1 : 2);
    f->log("after");
  });
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"barrier 1 exited mixed"}));
  EXPECT_EQ(f.trace.size(), 3u);
}

TEST(SimRuntimeRunner, CollectiveCompletesWhenItsMaskArrived) {
  Fixture f(8, 2);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    SimThread& t = f->me();
    t.arrival.value = t.index;
    f->runner.collective(t, CollectiveKind::Shuffle, 0xFF, 3);
    f->results[t.index] = t.arrival.result;
  });
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(f.results[i], 0u + 1 + 2 + 3 + 4 + 5 + 6 + 7) << i;
  for (uint32_t i = 8; i < 16; ++i) EXPECT_EQ(f.results[i], 8u + 9 + 10 + 11 + 12 + 13 + 14 + 15) << i;
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"resolve warp 0 site 3", "resolve warp 1 site 3"}));
}

TEST(SimRuntimeRunner, DisjointPartialMasksCompleteSeparately) {
  Fixture f(8, 1);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    SimThread& t = f->me();
    t.arrival.value = 1;
    f->runner.collective(t, CollectiveKind::Vote, t.lane < 3 ? 0x07 : 0xF8, 5);
    f->results[t.index] = t.arrival.result;
  });
  EXPECT_EQ(f.results, (std::vector<uint32_t>{3, 3, 3, 5, 5, 5, 5, 5}));
}

TEST(SimRuntimeRunner, LaneThatNeverArrivesIsADeadlockNotAHang) {
  Fixture f(4, 1);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    if (f->me().lane == 2) return;  // exits: the others wait for it forever
    f->runner.collective(f->me(), CollectiveKind::Shuffle, 0xF, 9);
    f->log("passed");
  });
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"deadlock"}));
  EXPECT_TRUE(f.trace.empty());
  ASSERT_EQ(f.runner.pendingCollectives(0).size(), 1u);
  EXPECT_EQ(f.runner.pendingCollectives(0)[0].arrived, 0xBu);
  EXPECT_EQ(f.runner.threads()[2].state, ThreadState::Exited);
  EXPECT_EQ(f.runner.threads()[1].state, ThreadState::AtCollective);
  EXPECT_TRUE(f.runner.ended());
}

TEST(SimRuntimeRunner, LanesAtDifferentSitesAreAMismatchThatEndsTheProgram) {
  Fixture f(4, 1);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    f->runner.collective(f->me(), CollectiveKind::Shuffle, 0xF, f->me().lane == 1 ? 11 : 10);
    f->log("passed");
  });
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"mismatch lane 1 site 11 vs 10"}));
  EXPECT_TRUE(f.trace.empty());
}

TEST(SimRuntimeRunner, ProgramsRunAgainOnTheSameFibers) {
  Fixture f(4, 1);
  auto body = [](void* p) {
    auto* f = static_cast<Fixture*>(p);
    f->results[f->me().index] += 1;
    f->runner.barrier(f->me(), 0);
  };
  f.run(body);
  f.run(body);
  EXPECT_EQ(f.results, (std::vector<uint32_t>{2, 2, 2, 2}));
  // After a program that ended early, the next starts from scratch.
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    f->runner.endProgram(f->me());
  });
  f.run(body);
  EXPECT_EQ(f.results, (std::vector<uint32_t>{3, 3, 3, 3}));
}

TEST(SimRuntimeRunner, YieldLetsTheOthersRunFirst) {
  Fixture f(2, 1);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    f->log("a");
    if (f->me().index == 0) f->runner.yield(f->me());
    f->log("b");
  });
  EXPECT_EQ(f.trace, (std::vector<std::string>{"0:a", "1:a", "1:b", "0:b"}));
}

TEST(SimRuntimeRunner, AThrowingBodyIsReportedAndEndsTheProgram) {
  Fixture f(2, 1);
  f.run([](void* p) {
    auto* f = static_cast<Fixture*>(p);
    if (f->me().index == 0) throw std::runtime_error("bad kernel");
    f->log("ran");
  });
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"failed 0: bad kernel"}));
  EXPECT_TRUE(f.trace.empty());
}

}  // namespace
}  // namespace tessera::sim
