// The emulator's fibers (jit/sim/runtime/Fiber.h): both context switches (the x86-64 assembly one and the
// ucontext fallback) pass values back and forth, keep callee-saved state and each fiber's floating-point
// control, align the stack for calls, let exceptions live inside a fiber, and fault on a stack overflow.
#include <gtest/gtest.h>

#include <cfenv>
#include <cstdint>
#include <memory>
#include <string>
#include <stdexcept>
#include <vector>

#include "jit/sim/runtime/Fiber.h"

namespace tessera::sim {
namespace {

template <class Switch>
struct PingPong {
  using Fiber = BasicFiber<Switch>;
  typename BasicFiber<Switch>::Context host;
  Fiber* fiber = nullptr;
  std::vector<int> trace;
  int rounds = 0;

  static void entry(void* arg) {
    auto* self = static_cast<PingPong*>(arg);
    // Locals that must survive switches (callee-saved registers and the fiber's own stack).
    uint64_t a = 0x1111, b = 0x2222, c = 0x3333;
    for (int i = 0; i < self->rounds; ++i) {
      self->trace.push_back(i);
      a = a * 3 + i;
      b ^= a;
      c += b;
      self->fiber->suspendTo(self->host);
    }
    self->trace.push_back(static_cast<int>((a + b + c) % 1000));
    self->fiber->exitTo(self->host);
    ADD_FAILURE() << "a finished fiber was resumed";
  }
};

template <class Switch>
class SimFiberTest : public ::testing::Test {};

#if defined(__x86_64__)
using Switches = ::testing::Types<AsmContextSwitch, UcontextSwitch>;
#else
using Switches = ::testing::Types<UcontextSwitch>;
#endif
TYPED_TEST_SUITE(SimFiberTest, Switches);

TYPED_TEST(SimFiberTest, PingPongKeepsLocalsAcrossSwitches) {
  PingPong<TypeParam> p;
  BasicFiber<TypeParam> fiber(64 * 1024);
  p.fiber = &fiber;
  p.rounds = 5;
  fiber.arm(&PingPong<TypeParam>::entry, &p);
  uint64_t expectA = 0x1111, expectB = 0x2222, expectC = 0x3333;
  for (int i = 0; i < 5; ++i) {
    fiber.resumeFrom(p.host);
    ASSERT_EQ(p.trace.size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(p.trace.back(), i);
    expectA = expectA * 3 + i;
    expectB ^= expectA;
    expectC += expectB;
  }
  fiber.resumeFrom(p.host);
  EXPECT_EQ(p.trace.back(), static_cast<int>((expectA + expectB + expectC) % 1000));
}

TYPED_TEST(SimFiberTest, RearmingRestartsFromTheTop) {
  PingPong<TypeParam> p;
  BasicFiber<TypeParam> fiber(64 * 1024);
  p.fiber = &fiber;
  p.rounds = 3;
  fiber.arm(&PingPong<TypeParam>::entry, &p);
  fiber.resumeFrom(p.host);  // abandoned in its first round
  fiber.arm(&PingPong<TypeParam>::entry, &p);
  fiber.resumeFrom(p.host);
  EXPECT_EQ(p.trace, (std::vector<int>{0, 0}));
}

template <class Switch>
struct Chain {
  typename BasicFiber<Switch>::Context host;
  std::vector<BasicFiber<Switch>*> fibers;
  std::vector<int> order;
  struct Arg {
    Chain* chain;
    int index;
  };
  static void entry(void* p) {
    auto* arg = static_cast<Arg*>(p);
    Chain* c = arg->chain;
    c->order.push_back(arg->index);
    size_t next = static_cast<size_t>(arg->index) + 1;
    if (next < c->fibers.size()) c->fibers[arg->index]->exitTo(*c->fibers[next]);
    else c->fibers[arg->index]->exitTo(c->host);
  }
};

TYPED_TEST(SimFiberTest, FibersSwitchDirectlyToEachOther) {
  Chain<TypeParam> chain;
  std::vector<std::unique_ptr<BasicFiber<TypeParam>>> owned;
  std::vector<typename Chain<TypeParam>::Arg> args(4);
  for (int i = 0; i < 4; ++i) {
    owned.push_back(std::make_unique<BasicFiber<TypeParam>>(64 * 1024));
    chain.fibers.push_back(owned.back().get());
    args[i] = {&chain, i};
  }
  for (int i = 0; i < 4; ++i) owned[i]->arm(&Chain<TypeParam>::entry, &args[i]);
  owned[0]->resumeFrom(chain.host);
  EXPECT_EQ(chain.order, (std::vector<int>{0, 1, 2, 3}));
}

template <class Switch>
struct RoundingProbe {
  typename BasicFiber<Switch>::Context host;
  BasicFiber<Switch>* fiber = nullptr;
  int modeAtStart = -1;
  static void entry(void* arg) {
    auto* self = static_cast<RoundingProbe*>(arg);
    self->modeAtStart = std::fegetround();
    std::fesetround(FE_UPWARD);  // this fiber's own mode
    self->fiber->suspendTo(self->host);
    self->modeAtStart = std::fegetround();  // still its own after the host changed its mode
    self->fiber->exitTo(self->host);
  }
};

TYPED_TEST(SimFiberTest, EachContextKeepsItsFloatingPointControl) {
  RoundingProbe<TypeParam> probe;
  BasicFiber<TypeParam> fiber(64 * 1024);
  probe.fiber = &fiber;
  fiber.arm(&RoundingProbe<TypeParam>::entry, &probe);
  int hostMode = std::fegetround();
  fiber.resumeFrom(probe.host);
  EXPECT_EQ(std::fegetround(), hostMode) << "the fiber's rounding mode leaked into the host context";
  std::fesetround(FE_DOWNWARD);
  fiber.resumeFrom(probe.host);
  EXPECT_EQ(probe.modeAtStart, FE_UPWARD);
  EXPECT_EQ(std::fegetround(), FE_DOWNWARD);
  std::fesetround(hostMode);
}

#if defined(__x86_64__)
TEST(SimFiberAsm, FreshFiberStartsWithDefaultFloatingPointControl) {
  // ucontext copies the creator's environment; the assembly switch starts every fiber from the defaults.
  RoundingProbe<AsmContextSwitch> probe;
  BasicFiber<AsmContextSwitch> fiber(64 * 1024);
  probe.fiber = &fiber;
  int hostMode = std::fegetround();
  std::fesetround(FE_TOWARDZERO);
  fiber.arm(&RoundingProbe<AsmContextSwitch>::entry, &probe);
  fiber.resumeFrom(probe.host);
  std::fesetround(hostMode);
  EXPECT_EQ(probe.modeAtStart, FE_TONEAREST);
}
#endif

template <class Switch>
struct AlignmentAndExceptions {
  typename BasicFiber<Switch>::Context host;
  BasicFiber<Switch>* fiber = nullptr;
  uintptr_t frame = 1;  // 16-byte aligned when every call on the way kept the ABI's stack alignment
  std::string caught;
  [[gnu::noinline]] static void thrower() { throw std::runtime_error("inside the fiber"); }
  static void entry(void* arg) {
    auto* self = static_cast<AlignmentAndExceptions*>(arg);
    // The frame address rather than a local's: under ASan, locals may live on its fake stack, off the fiber's.
    self->frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    try {
      thrower();
    } catch (const std::exception& e) {
      self->caught = e.what();
    }
    self->fiber->exitTo(self->host);
  }
};

TYPED_TEST(SimFiberTest, StackIsAlignedAndExceptionsUnwindWithinTheFiber) {
  AlignmentAndExceptions<TypeParam> probe;
  BasicFiber<TypeParam> fiber(64 * 1024);
  probe.fiber = &fiber;
  fiber.arm(&AlignmentAndExceptions<TypeParam>::entry, &probe);
  fiber.resumeFrom(probe.host);
  EXPECT_EQ(probe.frame % 16, 0u);
  EXPECT_EQ(probe.caught, "inside the fiber");
  EXPECT_TRUE(fiber.stack().contains(probe.frame, 16));
}

template <class Switch>
struct Exits {
  typename BasicFiber<Switch>::Context host;
  BasicFiber<Switch>* fiber = nullptr;
  int runs = 0;
  static void entry(void* arg) {
    auto* self = static_cast<Exits*>(arg);
    ++self->runs;
    self->fiber->exitTo(self->host);
  }
};

TYPED_TEST(SimFiberTest, AnExitedFiberRunsAgainOnceRearmed) {
  Exits<TypeParam> exits;
  BasicFiber<TypeParam> fiber(64 * 1024);
  exits.fiber = &fiber;
  for (int run = 1; run <= 3; ++run) {
    fiber.arm(&Exits<TypeParam>::entry, &exits);
    fiber.resumeFrom(exits.host);
    EXPECT_EQ(exits.runs, run);
  }
}

#if defined(TESSERA_SIM_ASAN_FIBERS)
// Under AddressSanitizer, which is told of every switch (FiberSanitizer.h). The probes are dynamic stack
// allocations: ASan keeps those on the real stack between poisoned redzones (fixed-size locals may live on its
// fake stack instead), and a frame that never returns leaves its redzones poisoned.
template <class Switch>
struct RedzoneProbe {
  typename BasicFiber<Switch>::Context host;
  BasicFiber<Switch>* fiber = nullptr;
  const char* redzone = nullptr;  // just past a 32-byte dynamic stack allocation
  bool poisonedInFrame = false;
  bool poisonedLater = true;

  // Makes the allocation, then leaves the frame without returning: by throwing, or by switching away for good.
  [[gnu::noinline]] static void allocateThenLeave(RedzoneProbe* self, bool throwing) {
    volatile size_t bytes = 32;  // not a constant: a constant-size allocation could become a fixed local
    auto* buffer = static_cast<char*>(__builtin_alloca(bytes));
    buffer[0] = 1;
    self->redzone = buffer + bytes;
    self->poisonedInFrame = __asan_address_is_poisoned(self->redzone);
    if (throwing) throw std::runtime_error("unwinds the frame");
    self->fiber->suspendTo(self->host);
    ADD_FAILURE() << "an abandoned fiber was resumed";
  }
  static void throwAndCatch(void* arg) {
    auto* self = static_cast<RedzoneProbe*>(arg);
    try {
      allocateThenLeave(self, true);
    } catch (const std::exception&) {
    }
    self->poisonedLater = __asan_address_is_poisoned(self->redzone);
    self->fiber->exitTo(self->host);
  }
  static void suspendInside(void* arg) { allocateThenLeave(static_cast<RedzoneProbe*>(arg), false); }
  static void probeAtStart(void* arg) {
    auto* self = static_cast<RedzoneProbe*>(arg);
    self->poisonedLater = __asan_address_is_poisoned(self->redzone);
    self->fiber->exitTo(self->host);
  }
};

TYPED_TEST(SimFiberTest, AsanUnpoisonsTheFramesAnExceptionUnwindsOnAFiber) {
  RedzoneProbe<TypeParam> probe;
  BasicFiber<TypeParam> fiber(64 * 1024);
  probe.fiber = &fiber;
  fiber.arm(&RedzoneProbe<TypeParam>::throwAndCatch, &probe);
  fiber.resumeFrom(probe.host);
  EXPECT_TRUE(probe.poisonedInFrame);
  EXPECT_FALSE(probe.poisonedLater) << "ASan did not know the fiber's stack when the exception was thrown";
}

// Only the assembly switch needs the re-arm's unpoisoning: ASan's own swapcontext interceptor already clears the
// stack it switches to, so the ucontext case passes with or without FiberSanitizer.
TYPED_TEST(SimFiberTest, AsanForgetsAnAbandonedRunWhenTheFiberIsRearmed) {
  RedzoneProbe<TypeParam> probe;
  BasicFiber<TypeParam> fiber(64 * 1024);
  probe.fiber = &fiber;
  fiber.arm(&RedzoneProbe<TypeParam>::suspendInside, &probe);
  fiber.resumeFrom(probe.host);
  EXPECT_TRUE(probe.poisonedInFrame);
  fiber.arm(&RedzoneProbe<TypeParam>::probeAtStart, &probe);
  fiber.resumeFrom(probe.host);
  EXPECT_FALSE(probe.poisonedLater) << "the abandoned run's redzones were still poisoned";
}

template <class Switch>
struct FakeStackProbe {
  typename BasicFiber<Switch>::Context host;
  BasicFiber<Switch>* fiber = nullptr;
  void* onFiber = nullptr;
  static void entry(void* arg) {
    auto* self = static_cast<FakeStackProbe*>(arg);
    self->onFiber = __asan_get_current_fake_stack();
    self->fiber->exitTo(self->host);
  }
};

TYPED_TEST(SimFiberTest, AsanGivesEachFiberItsOwnFakeStack) {
  void* onHost = __asan_get_current_fake_stack();
  if (!onHost) GTEST_SKIP() << "ASan's use-after-return checks are off (detect_stack_use_after_return=0)";
  FakeStackProbe<TypeParam> probe;
  BasicFiber<TypeParam> fiber(64 * 1024);
  probe.fiber = &fiber;
  fiber.arm(&FakeStackProbe<TypeParam>::entry, &probe);
  fiber.resumeFrom(probe.host);
  EXPECT_NE(probe.onFiber, nullptr);
  EXPECT_NE(probe.onFiber, onHost) << "the fiber's frames went to the host thread's fake stack";
  EXPECT_EQ(__asan_get_current_fake_stack(), onHost);
}
#endif

struct Overflow {
  Fiber::Context host;
  // Deep enough to overflow any test stack; the bound only keeps the compiler from calling it infinite.
  [[gnu::noinline]] static int recurse(int depth) {
    volatile char frame[4096];
    frame[0] = static_cast<char>(depth);
    return depth > (1 << 20) ? 0 : recurse(depth + 1) + frame[0];
  }
  static void entry(void*) { recurse(0); }
};

TEST(SimFiberDeathTest, StackOverflowFaultsOnTheGuard) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Overflow o;
        Fiber fiber(64 * 1024);
        fiber.arm(&Overflow::entry, &o);
        fiber.resumeFrom(o.host);
      },
      "");
}

TEST(SimFiberStack, ReleasedStacksAreReused) {
  std::byte* bottom;
  {
    FiberStack s = acquireFiberStack(96 * 1024);
    bottom = s.bottom();
    EXPECT_EQ(s.bytes(), 96u * 1024);
    s.bottom()[0] = std::byte{1};
    s.top()[-1] = std::byte{2};
    releaseFiberStack(std::move(s));
  }
  FiberStack again = acquireFiberStack(96 * 1024);
  EXPECT_EQ(again.bottom(), bottom);
  EXPECT_TRUE(again.contains(reinterpret_cast<uint64_t>(bottom), 96 * 1024));
  EXPECT_FALSE(again.contains(reinterpret_cast<uint64_t>(bottom) - 1, 2));
  EXPECT_FALSE(again.contains(reinterpret_cast<uint64_t>(again.top()) - 4, 8));
  releaseFiberStack(std::move(again));
}

}  // namespace
}  // namespace tessera::sim
