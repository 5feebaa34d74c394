// The kernel's atomics performed as host atomics (programs run in parallel on several host threads): integer
// operations as single read-modify-writes, float add/max/min (f16, f32, f64) and signed min/max as
// compare-and-swap loops. Values travel as raw bits, zero-extended to 64 bits.
#pragma once

#include <cstdint>
#include <optional>

namespace tessera::sim {

// The old value; nullopt when (op, bytes) is not an operation of the ABI (float ops take 2, 4 or 8 bytes,
// integer ops 1, 2, 4 or 8).
std::optional<uint64_t> hostAtomicRmw(uint32_t op, void* address, uint64_t value, uint32_t bytes);
// The old value; nullopt for a width other than 1, 2, 4 or 8.
std::optional<uint64_t> hostAtomicCas(void* address, uint64_t expected, uint64_t desired, uint32_t bytes);

}  // namespace tessera::sim
