// A fiber: a stack and a suspended execution context on it. The emulator runs each GPU thread of a program as one
// fiber; fibers switch cooperatively (ContextSwitch.h) and never migrate between host threads.
#pragma once

#include <cstddef>
#include <utility>

#include "jit/sim/runtime/ContextSwitch.h"
#include "jit/sim/runtime/FiberStack.h"

namespace tessera::sim {

template <class Switch>
class BasicFiber {
 public:
  using Context = typename Switch::Context;

  explicit BasicFiber(size_t stackBytes) : stack_(acquireFiberStack(stackBytes)) {}
  ~BasicFiber() { releaseFiberStack(std::move(stack_)); }
  // A context may point into itself (ucontext): fibers stay where they were made.
  BasicFiber(const BasicFiber&) = delete;
  BasicFiber& operator=(const BasicFiber&) = delete;

  // Arms the fiber to run entry(arg) from the top of its stack when next resumed; whatever it was doing before
  // is abandoned. The entry must never return: it ends by switching away for good.
  void arm(FiberEntry entry, void* arg) { Switch::make(context_, stack_, entry, arg); }
  // Saves the running context into `from` and runs this fiber.
  void resumeFrom(Context& from) { Switch::swap(from, context_); }
  // Called on this fiber: saves it and resumes `to` (another fiber's context or a host thread's).
  void suspendTo(const Context& to) { Switch::swap(context_, to); }
  void suspendTo(BasicFiber& next) { Switch::swap(context_, next.context_); }

  const FiberStack& stack() const { return stack_; }

 private:
  FiberStack stack_;
  Context context_;
};

using Fiber = BasicFiber<NativeContextSwitch>;

}  // namespace tessera::sim
