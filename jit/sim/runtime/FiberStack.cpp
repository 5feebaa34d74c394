#include "jit/sim/runtime/FiberStack.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "ir/Error.h"

namespace tessera::sim {

namespace {

size_t pageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t roundUpToPages(size_t bytes) {
  size_t page = pageBytes();
  return (bytes + page - 1) / page * page;
}

// Released stacks, by size. Bounded so that a launch with huge programs does not pin address space forever.
class StackPool {
 public:
  FiberStack take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = stacks_.size(); i-- > 0;) {
      if (stacks_[i].bytes() == bytes) {
        FiberStack s = std::move(stacks_[i]);
        stacks_[i] = std::move(stacks_.back());
        stacks_.pop_back();
        return s;
      }
    }
    return {};
  }
  void give(FiberStack stack) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stacks_.size() < kMaxPooledStacks) stacks_.push_back(std::move(stack));
  }

 private:
  static constexpr size_t kMaxPooledStacks = 8192;
  std::mutex mutex_;
  std::vector<FiberStack> stacks_;
};

StackPool& pool() {
  static StackPool* p = new StackPool;  // never destroyed: worker threads may release stacks at exit
  return *p;
}

}  // namespace

FiberStack::FiberStack(size_t bytes) {
  bytes_ = roundUpToPages(bytes);
  size_t guard = roundUpToPages(kFiberStackGuardBytes);
  void* p = mmap(nullptr, guard + bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error("sim: cannot map a fiber stack of " + std::to_string(bytes_) + " bytes: " + std::strerror(errno));
  mapping_ = static_cast<std::byte*>(p);
  bottom_ = mapping_ + guard;
  if (mprotect(bottom_, bytes_, PROT_READ | PROT_WRITE) != 0) {
    int err = errno;
    release();
    throw Error(std::string("sim: cannot make a fiber stack writable: ") + std::strerror(err));
  }
}

FiberStack::~FiberStack() { release(); }

FiberStack::FiberStack(FiberStack&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      bottom_(std::exchange(other.bottom_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

FiberStack& FiberStack::operator=(FiberStack&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    bottom_ = std::exchange(other.bottom_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void FiberStack::release() {
  if (mapping_) munmap(mapping_, static_cast<size_t>(bottom_ - mapping_) + bytes_);
  mapping_ = bottom_ = nullptr;
  bytes_ = 0;
}

FiberStack acquireFiberStack(size_t bytes) {
  size_t rounded = roundUpToPages(bytes);
  FiberStack s = pool().take(rounded);
  return s.bytes() ? std::move(s) : FiberStack(rounded);
}

void releaseFiberStack(FiberStack stack) {
  if (stack.bytes()) pool().give(std::move(stack));
}

}  // namespace tessera::sim
