// AddressSanitizer and the emulator's fibers. ASan keeps, per host thread, the bounds of the stack it runs on and
// a "fake stack" for its use-after-return checks. A switch it is not told of leaves both wrong: an exception or a
// no-return call on a fiber then cannot unpoison the frames it abandons (ASan prints "ignoring requested
// __asan_handle_no_return" and later reports are false), and one fiber's frames are taken for another's. So each
// context carries a FiberSanitizer, and BasicFiber (Fiber.h) announces every switch before it
// (__sanitizer_start_switch_fiber) and confirms it on arrival (__sanitizer_finish_switch_fiber). Without ASan
// the class is empty and every call compiles to nothing.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_SIM_ASAN_FIBERS 1
#endif
#endif
#if !defined(TESSERA_SIM_ASAN_FIBERS) && defined(__SANITIZE_ADDRESS__)  // GCC's spelling
#define TESSERA_SIM_ASAN_FIBERS 1
#endif

#if defined(TESSERA_SIM_ASAN_FIBERS)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

#include <cassert>
#endif

namespace tessera::sim {

#if defined(TESSERA_SIM_ASAN_FIBERS)

class FiberSanitizer {
 public:
  // This context runs on [bottom, bottom + bytes) (a fiber's stack). A host thread's context is left without
  // bounds: it learns them from ASan on its first switch away.
  void setStack(const void* bottom, size_t bytes) {
    stackBottom_ = bottom;
    stackBytes_ = bytes;
  }
  // The fiber restarts from the top of its stack: whatever its abandoned frames left poisoned goes.
  void clearStack() const { __asan_unpoison_memory_region(stackBottom_, stackBytes_); }

  // On this context, just before it switches to `to`. `forGood`: this context never resumes (until re-armed),
  // so ASan frees its fake stack instead of keeping it.
  void leave(const FiberSanitizer& to, bool forGood) {
    assert(to.stackBytes_ != 0 && "switching to a context whose stack is unknown");
    switchedFrom() = this;
    __sanitizer_start_switch_fiber(forGood ? nullptr : &fakeStack_, to.stackBottom_, to.stackBytes_);
  }
  // On this context, as soon as a switch arrived (its swap returned, or it starts fresh). The context left
  // behind learns its bounds here: a host thread's are known to ASan only.
  void arrive() {
    FiberSanitizer* from = switchedFrom();
    __sanitizer_finish_switch_fiber(fakeStack_, &from->stackBottom_, &from->stackBytes_);
    fakeStack_ = nullptr;
  }

 private:
  // The context the switch under way left (fibers never migrate between host threads).
  static FiberSanitizer*& switchedFrom() {
    static thread_local FiberSanitizer* from = nullptr;
    return from;
  }

  const void* stackBottom_ = nullptr;
  size_t stackBytes_ = 0;
  void* fakeStack_ = nullptr;  // this context's use-after-return frames while it is suspended
};

#else

class FiberSanitizer {
 public:
  void setStack(const void*, size_t) {}
  void clearStack() const {}
  void leave(const FiberSanitizer&, bool) {}
  void arrive() {}
};

#endif

}  // namespace tessera::sim
