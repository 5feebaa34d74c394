#include "jit/sim/runtime/HostAtomics.h"

#include <bit>
#include <cmath>
#include <type_traits>

#include "ir/FloatFormats.h"
#include "jit/sim/SimABI.h"

namespace tessera::sim {

namespace {

template <class T>
T atomicUpdate(T* p, auto&& update) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(p, &old, update(old), false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return old;
}

template <class U, class F>
U floatUpdate(U* p, U value, F op) {
  if constexpr (sizeof(U) == 2) {
    // Computed in double (exact for two halves), then rounded once to f16 as the hardware does.
    return atomicUpdate(p, [&](U old) { return ir::encodeF16(op(ir::decodeF16(old), ir::decodeF16(value))); });
  } else {
    using Float = std::conditional_t<sizeof(U) == 4, float, double>;
    return atomicUpdate(p, [&](U old) {
      return std::bit_cast<U>(op(std::bit_cast<Float>(old), std::bit_cast<Float>(value)));
    });
  }
}

template <class U>
std::optional<uint64_t> rmw(uint32_t op, U* p, U v) {
  using S = std::make_signed_t<U>;
  switch (op) {
    case kAtomicXchg: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    case kAtomicAdd: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case kAtomicSub: return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
    case kAtomicAnd: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case kAtomicOr: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    case kAtomicXor: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    case kAtomicMax: return atomicUpdate(p, [&](U old) { return static_cast<S>(old) < static_cast<S>(v) ? v : old; });
    case kAtomicMin: return atomicUpdate(p, [&](U old) { return static_cast<S>(v) < static_cast<S>(old) ? v : old; });
    case kAtomicUMax: return atomicUpdate(p, [&](U old) { return old < v ? v : old; });
    case kAtomicUMin: return atomicUpdate(p, [&](U old) { return v < old ? v : old; });
    case kAtomicFAdd:
    case kAtomicFMax:
    case kAtomicFMin:
      if constexpr (sizeof(U) == 1) {
        return std::nullopt;
      } else {
        // max/min return the number when one operand is NaN, as PTX atom.max.f32 and LLVM's maxnum do.
        if (op == kAtomicFAdd) return floatUpdate(p, v, [](auto a, auto b) { return a + b; });
        if (op == kAtomicFMax) return floatUpdate(p, v, [](auto a, auto b) { return std::fmax(a, b); });
        return floatUpdate(p, v, [](auto a, auto b) { return std::fmin(a, b); });
      }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<uint64_t> hostAtomicRmw(uint32_t op, void* address, uint64_t value, uint32_t bytes) {
  switch (bytes) {
    case 1: return rmw(op, static_cast<uint8_t*>(address), static_cast<uint8_t>(value));
    case 2: return rmw(op, static_cast<uint16_t*>(address), static_cast<uint16_t>(value));
    case 4: return rmw(op, static_cast<uint32_t*>(address), static_cast<uint32_t>(value));
    case 8: return rmw(op, static_cast<uint64_t*>(address), value);
    default: return std::nullopt;
  }
}

namespace {
template <class U>
uint64_t cas(U* p, U expected, U desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;  // the old value either way
}
}  // namespace

std::optional<uint64_t> hostAtomicCas(void* address, uint64_t expected, uint64_t desired, uint32_t bytes) {
  switch (bytes) {
    case 1: return cas(static_cast<uint8_t*>(address), static_cast<uint8_t>(expected), static_cast<uint8_t>(desired));
    case 2: return cas(static_cast<uint16_t*>(address), static_cast<uint16_t>(expected), static_cast<uint16_t>(desired));
    case 4: return cas(static_cast<uint32_t*>(address), static_cast<uint32_t>(expected), static_cast<uint32_t>(desired));
    case 8: return cas(static_cast<uint64_t*>(address), expected, desired);
    default: return std::nullopt;
  }
}

}  // namespace tessera::sim
