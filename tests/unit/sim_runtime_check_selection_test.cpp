// Selectable checks (runtime/Checks.h), like compute-sanitizer's tools: one hand-written kernel plants a bug for
// each of memcheck (a misaligned load), racecheck (warps writing the same shared word with no barrier between),
// initcheck (a read of a shared word nothing wrote) and synccheck (a thread exiting before a barrier). With every
// check on each is reported; turning one off hides its bug alone while the others still report; bounds stay.
#include "SimRuntimeTestUtil.h"
#include "ir/Error.h"

namespace {

using namespace simtest;

enum PlantedSite : uint32_t { kMisalignedLoad, kRacingStore, kUnwrittenLoad, kBarrierSite, kPastTheEnd };
SiteTable plantedSites() {
  return {site(SiteKind::Load, AddressSpace::Global, 4, "load", 60),
          site(SiteKind::Store, AddressSpace::Shared, 4, "store", 61),
          site(SiteKind::Load, AddressSpace::Shared, 4, "load", 62),
          syncSite(SiteKind::Barrier, "barrier", 63),
          site(SiteKind::Load, AddressSpace::Global, 4, "load", 64)};
}

void everyBugClass(void** params) {
  const char* in = static_cast<const char*>(params[0]);
  const uint32_t tid = __tsim_thread_id(0);
  if (tid == 0) {
    (void)load<uint32_t>(in + 2, kMisalignedLoad);   // memcheck: 4 bytes at a 2-byte boundary
    (void)load<uint32_t>(in + 64, kPastTheEnd);      // outside the 64-byte allocation: always reported
  }
  store(shared<uint32_t>(0), tid, kRacingStore);      // racecheck: both warps, no barrier between
  if (tid == 1) (void)load<uint32_t>(shared<uint32_t>(5), kUnwrittenLoad);  // initcheck: nothing wrote word 5
  if (tid == 37) return;                               // synccheck: the barrier misses one thread
  __tsim_barrier(kBarrierSite);
}

Report launchWith(Checks checks) {
  alignas(16) static char in[64] = {};
  void* params[] = {in};
  LaunchConfig c = config({{addr(in), sizeof in}});
  c.checks = checks;
  return launch(program("planted", 2, 64, plantedSites(), &everyBugClass), {1, 1, 1}, params, c);
}

constexpr FindingKind kPlanted[] = {FindingKind::Misaligned, FindingKind::SharedRace,
                                    FindingKind::UninitializedSharedRead, FindingKind::BarrierDivergence};

TEST(SimRuntimeCheckSelection, EveryCheckReportsItsPlantedBugByDefault) {
  Report r = launchWith(Checks());
  for (FindingKind kind : kPlanted) EXPECT_GT(r.findingCount(kind), 0u) << findingKindName(kind) << "\n" << r.str();
  EXPECT_EQ(r.findingCount(FindingKind::GlobalOutOfBounds), 1u);
  EXPECT_EQ(firstFinding(r, FindingKind::Misaligned)->line, 60u);
  EXPECT_EQ(firstFinding(r, FindingKind::SharedRace)->line, 61u);
  EXPECT_EQ(firstFinding(r, FindingKind::UninitializedSharedRead)->line, 62u);
  EXPECT_EQ(firstFinding(r, FindingKind::BarrierDivergence)->line, 63u);
}

TEST(SimRuntimeCheckSelection, EachCheckTurnedOffAloneHidesOnlyItsBug) {
  bool Checks::*fields[] = {&Checks::memcheck, &Checks::racecheck, &Checks::initcheck, &Checks::synccheck};
  for (size_t off = 0; off < 4; ++off) {
    Checks checks;
    checks.*fields[off] = false;
    Report r = launchWith(checks);
    for (size_t k = 0; k < 4; ++k) {
      if (k == off) EXPECT_EQ(r.findingCount(kPlanted[k]), 0u) << checks.str() << "\n" << r.str();
      else EXPECT_GT(r.findingCount(kPlanted[k]), 0u) << checks.str() << ": " << findingKindName(kPlanted[k]);
    }
    EXPECT_EQ(r.findingCount(FindingKind::GlobalOutOfBounds), 1u) << checks.str();
  }
}

TEST(SimRuntimeCheckSelection, NoneLeavesOnlyWhatCannotBePerformed) {
  Report r = launchWith(Checks(false));
  EXPECT_EQ(r.findingCount(), 1u) << r.str();
  EXPECT_EQ(r.findingCount(FindingKind::GlobalOutOfBounds), 1u);
}

TEST(SimRuntimeCheckSelection, NamesParseAndPrint) {
  EXPECT_EQ(Checks().str(), "all");
  EXPECT_EQ(Checks(false).str(), "none");
  Checks some(false);
  some.racecheck = some.synccheck = true;
  EXPECT_EQ(some.str(), "racecheck,synccheck");
  EXPECT_EQ(Checks::parse("racecheck,synccheck"), some);
  EXPECT_EQ(Checks::parse("all"), Checks());
  EXPECT_EQ(Checks::parse("none"), Checks(false));
  EXPECT_EQ(Checks::parse("synccheck,racecheck").str(), "racecheck,synccheck");
  try {
    Checks::parse("memcheck,leakcheck");
    FAIL() << "an unknown check must be an error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(e.message().find("unknown check 'leakcheck'"), std::string::npos) << e.message();
  }
  EXPECT_THROW(Checks::parse(""), tessera::Error);
}

}  // namespace
