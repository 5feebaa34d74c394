// Saving and resuming execution contexts for the emulator's fibers. Two implementations with one interface:
//  - AsmContextSwitch (x86-64 SysV, ContextSwitchX86_64.S): saves the callee-saved registers, the stack pointer,
//    MXCSR and the x87 control word; a few nanoseconds, no system call.
//  - UcontextSwitch: POSIX ucontext, for other architectures (swapcontext also saves the signal mask: a system
//    call per switch, far too slow for millions of warp-collective switches, but portable).
// NativeContextSwitch is the one the runner uses. Neither lets an exception cross a switch: a fiber's entry must
// catch everything itself and never return (it switches away for good instead).
#pragma once

#include <ucontext.h>

#if defined(__x86_64__)
extern "C" void tessera_sim_swap_context(void** saveStackPointer, void* resumeStackPointer);
#endif

namespace tessera::sim {

class FiberStack;
using FiberEntry = void (*)(void* arg);

#if defined(__x86_64__)
struct AsmContextSwitch {
  struct Context {
    void* stackPointer = nullptr;
  };
  // Arms `context` to run entry(arg) on `stack` when first resumed.
  static void make(Context& context, const FiberStack& stack, FiberEntry entry, void* arg);
  // Saves the running context into `from` and resumes `to`; returns when something resumes `from`.
  static void swap(Context& from, const Context& to) {
    tessera_sim_swap_context(&from.stackPointer, to.stackPointer);
  }
};
#endif

struct UcontextSwitch {
  struct Context {
    ucontext_t state;
  };
  static void make(Context& context, const FiberStack& stack, FiberEntry entry, void* arg);
  static void swap(Context& from, const Context& to);
};

#if defined(__x86_64__)
using NativeContextSwitch = AsmContextSwitch;
#else
using NativeContextSwitch = UcontextSwitch;
#endif

}  // namespace tessera::sim
