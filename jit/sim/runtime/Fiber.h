// A fiber: a stack and a suspended execution context on it. The emulator runs each GPU thread of a program as one
// fiber; fibers switch cooperatively (ContextSwitch.h) and never migrate between host threads. Every switch goes
// through switchContexts, which tells AddressSanitizer of it (FiberSanitizer.h; nothing without ASan).
#pragma once

#include <cstddef>
#include <utility>

#include "jit/sim/runtime/ContextSwitch.h"
#include "jit/sim/runtime/FiberSanitizer.h"
#include "jit/sim/runtime/FiberStack.h"

namespace tessera::sim {

template <class Switch>
class BasicFiber {
 public:
  // A suspended execution context: a fiber's, or a host thread's (default-constructed, filled by the switch).
  struct Context {
    typename Switch::Context machine;
    [[no_unique_address]] FiberSanitizer sanitizer;
  };

  explicit BasicFiber(size_t stackBytes) : stack_(acquireFiberStack(stackBytes)) {
    context_.sanitizer.setStack(stack_.bottom(), stack_.bytes());
  }
  ~BasicFiber() { releaseFiberStack(std::move(stack_)); }
  // A context may point into itself (ucontext), and a fresh one to its fiber: fibers stay where they were made.
  BasicFiber(const BasicFiber&) = delete;
  BasicFiber& operator=(const BasicFiber&) = delete;

  // Arms the fiber to run entry(arg) from the top of its stack when next resumed; whatever it was doing before
  // is abandoned. The entry must never return: it ends by switching away for good (exitTo).
  void arm(FiberEntry entry, void* arg) {
    entry_ = entry;
    arg_ = arg;
    context_.sanitizer.clearStack();
    Switch::make(context_.machine, stack_, &BasicFiber::start, this);
  }
  // Saves the running context into `from` and runs this fiber.
  void resumeFrom(Context& from) { switchContexts(from, context_, false); }
  // Called on this fiber: saves it and resumes `to` (another fiber's context or a host thread's).
  void suspendTo(const Context& to) { switchContexts(context_, to, false); }
  void suspendTo(BasicFiber& next) { switchContexts(context_, next.context_, false); }
  // Called on this fiber as its last switch: it runs again only once re-armed.
  void exitTo(const Context& to) { switchContexts(context_, to, true); }
  void exitTo(BasicFiber& next) { switchContexts(context_, next.context_, true); }

  const FiberStack& stack() const { return stack_; }

 private:
  static void start(void* self) {
    auto* fiber = static_cast<BasicFiber*>(self);
    fiber->context_.sanitizer.arrive();
    fiber->entry_(fiber->arg_);
  }
  static void switchContexts(Context& from, const Context& to, bool fromEnds) {
    from.sanitizer.leave(to.sanitizer, fromEnds);
    Switch::swap(from.machine, to.machine);
    from.sanitizer.arrive();  // resumed: someone switched back to `from`
  }

  FiberStack stack_;
  Context context_;
  FiberEntry entry_ = nullptr;
  void* arg_ = nullptr;
};

using Fiber = BasicFiber<NativeContextSwitch>;

}  // namespace tessera::sim
