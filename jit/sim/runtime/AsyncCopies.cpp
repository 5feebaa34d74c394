#include "jit/sim/runtime/AsyncCopies.h"

namespace tessera::sim {

void AsyncCopies::beginProgram() {
  for (PerThread& t : threads_) {
    t.copies.clear();
    t.committed = 0;
  }
}

void AsyncCopies::issue(uint32_t thread, AsyncCopy copy) {
  copy.group = kOpenGroup;
  threads_[thread].copies.push_back(copy);
}

void AsyncCopies::commit(uint32_t thread) {
  PerThread& t = threads_[thread];
  ++t.committed;
  for (AsyncCopy& c : t.copies)
    if (c.group == kOpenGroup) c.group = t.committed;
}

}  // namespace tessera::sim
