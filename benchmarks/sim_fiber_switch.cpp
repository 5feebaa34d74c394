// The cost of one fiber context switch in the emulator (jit/sim/runtime/Fiber.h): two fibers hand control to
// each other N times, as lanes of a warp do at every warp collective. Prints nanoseconds per switch for the
// native switch (x86-64 assembly where available) and for the ucontext fallback.
//   sim_fiber_switch [switches]   (default 10000000)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "jit/sim/runtime/Fiber.h"

using namespace tessera::sim;

namespace {

template <class Switch>
struct PingPong {
  typename BasicFiber<Switch>::Context host;
  BasicFiber<Switch>* fibers[2] = {};
  long remaining = 0;

  struct Arg {
    PingPong* self;
    int index;
  };
  static void entry(void* p) {
    auto* arg = static_cast<Arg*>(p);
    PingPong* self = arg->self;
    BasicFiber<Switch>& me = *self->fibers[arg->index];
    BasicFiber<Switch>& other = *self->fibers[1 - arg->index];
    while (--self->remaining > 0) me.suspendTo(other);
    me.exitTo(self->host);
  }
};

template <class Switch>
double nsPerSwitch(long switches) {
  PingPong<Switch> p;
  BasicFiber<Switch> a(64 * 1024), b(64 * 1024);
  p.fibers[0] = &a;
  p.fibers[1] = &b;
  p.remaining = switches;
  typename PingPong<Switch>::Arg args[2] = {{&p, 0}, {&p, 1}};
  a.arm(&PingPong<Switch>::entry, &args[0]);
  b.arm(&PingPong<Switch>::entry, &args[1]);
  auto start = std::chrono::steady_clock::now();
  a.resumeFrom(p.host);
  auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(switches);
}

}  // namespace

int main(int argc, char** argv) {
  long switches = argc > 1 ? std::atol(argv[1]) : 10000000;
  if (switches < 2) {
    std::fprintf(stderr, "usage: sim_fiber_switch [switches >= 2]\n");
    return 2;
  }
#if defined(__x86_64__)
  std::printf("assembly (x86-64): %.2f ns per switch (%ld switches)\n", nsPerSwitch<AsmContextSwitch>(switches),
              switches);
#endif
  long slow = switches / 10 > 2 ? switches / 10 : 2;
  std::printf("ucontext:          %.2f ns per switch (%ld switches)\n", nsPerSwitch<UcontextSwitch>(slow), slow);
  return 0;
}
