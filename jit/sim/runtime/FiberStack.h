// Stacks for the emulator's fibers: mmap'ed, committed lazily by the OS page by page, with an inaccessible guard
// region below them so that an overflow faults instead of corrupting a neighbour. A process-wide pool keeps
// released stacks for the next program or launch (mapping 256 stacks per program would cost more than running
// many small programs).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::sim {

inline constexpr size_t kDefaultFiberStackBytes = 256 * 1024;
// Large enough that a frame with a big spilled register tile does not jump over it without touching it.
inline constexpr size_t kFiberStackGuardBytes = 64 * 1024;

class FiberStack {
 public:
  FiberStack() = default;
  // Maps `bytes` (rounded up to pages) of stack plus the guard below it; throws tessera::Error when out of memory.
  explicit FiberStack(size_t bytes);
  ~FiberStack();
  FiberStack(FiberStack&& other) noexcept;
  FiberStack& operator=(FiberStack&& other) noexcept;
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  // The usable range [bottom, top): stacks grow down from top.
  std::byte* bottom() const { return bottom_; }
  std::byte* top() const { return bottom_ + bytes_; }
  size_t bytes() const { return bytes_; }
  bool contains(uint64_t address, uint64_t bytes) const {
    uint64_t lo = reinterpret_cast<uint64_t>(bottom_);
    return address >= lo && address - lo <= bytes_ && bytes <= bytes_ - (address - lo);
  }

 private:
  void release();
  std::byte* mapping_ = nullptr;  // guard region first, then the stack
  std::byte* bottom_ = nullptr;
  size_t bytes_ = 0;
};

// Takes a stack of at least `bytes` from the process-wide pool (or maps a new one).
FiberStack acquireFiberStack(size_t bytes);
// Gives a stack back to the pool for reuse.
void releaseFiberStack(FiberStack stack);

}  // namespace tessera::sim
