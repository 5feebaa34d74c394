#include "jit/sim/runtime/ContextSwitch.h"

#include <cstdint>
#include <cstring>

#include "jit/sim/runtime/FiberStack.h"

#if defined(__x86_64__)
extern "C" void tessera_sim_context_start();
#endif

namespace tessera::sim {

#if defined(__x86_64__)
namespace {
// A fresh fiber starts with the default floating-point environment (round to nearest, exceptions masked, no
// flush-to-zero), whatever the host thread that runs it set for itself.
constexpr uint32_t kDefaultMxcsr = 0x1F80;
constexpr uint16_t kDefaultX87ControlWord = 0x037F;
}  // namespace

void AsmContextSwitch::make(Context& context, const FiberStack& stack, FiberEntry entry, void* arg) {
  // The frame tessera_sim_swap_context pops, laid out as its pushes leave it (ContextSwitchX86_64.S).
  auto top = reinterpret_cast<uintptr_t>(stack.top()) & ~uintptr_t{15};
  auto* slot = reinterpret_cast<uint64_t*>(top);
  slot[-1] = reinterpret_cast<uint64_t>(&tessera_sim_context_start);  // resumed by `ret`
  slot[-2] = 0;                                                      // rbp
  slot[-3] = 0;                                                      // rbx
  slot[-4] = reinterpret_cast<uint64_t>(entry);                      // r12
  slot[-5] = reinterpret_cast<uint64_t>(arg);                        // r13
  slot[-6] = 0;                                                      // r14
  slot[-7] = 0;                                                      // r15
  uint64_t fpControl = kDefaultMxcsr | uint64_t{kDefaultX87ControlWord} << 32;
  slot[-8] = fpControl;
  context.stackPointer = &slot[-8];
}
#endif

namespace {
// makecontext passes int arguments only: the entry and its argument travel as two 32-bit halves each.
void ucontextStart(unsigned entryLo, unsigned entryHi, unsigned argLo, unsigned argHi) {
  auto entry = reinterpret_cast<FiberEntry>(uintptr_t{entryLo} | uintptr_t{entryHi} << 32);
  auto* arg = reinterpret_cast<void*>(uintptr_t{argLo} | uintptr_t{argHi} << 32);
  entry(arg);
  __builtin_trap();  // entries never return
}
}  // namespace

void UcontextSwitch::make(Context& context, const FiberStack& stack, FiberEntry entry, void* arg) {
  std::memset(&context.state, 0, sizeof(context.state));
  getcontext(&context.state);
  context.state.uc_stack.ss_sp = stack.bottom();
  context.state.uc_stack.ss_size = stack.bytes();
  context.state.uc_link = nullptr;
  auto e = reinterpret_cast<uintptr_t>(entry);
  auto a = reinterpret_cast<uintptr_t>(arg);
  makecontext(&context.state, reinterpret_cast<void (*)()>(&ucontextStart), 4, static_cast<unsigned>(e),
              static_cast<unsigned>(e >> 32), static_cast<unsigned>(a), static_cast<unsigned>(a >> 32));
}

void UcontextSwitch::swap(Context& from, const Context& to) { swapcontext(&from.state, &to.state); }

}  // namespace tessera::sim
