// Liveness over a linear numbering of a function's ops, for shared-memory allocation. Every op gets a number in
// pre-order (an op before the ops of its regions); a region-holding op also has an end number, after all its
// nested ops. A buffer is live over an inclusive interval of numbers.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>

#include "ir/IR.h"

namespace tessera::transforms {

struct LiveInterval {
  int64_t start = 0;
  int64_t end = 0;  // inclusive
  bool overlaps(const LiveInterval& o) const { return start <= o.end && o.start <= end; }
};

class OpNumbering {
 public:
  explicit OpNumbering(ir::Function& f);
  int64_t start(const ir::Op* op) const;  // throws tessera::Error for an op not in the function
  int64_t end(const ir::Op* op) const;    // == start for ops without regions
  // The interval over which `v` is live: from its definition (a block argument: its owner's start) to its last
  // use; a use inside a loop (for/while) that does not contain the definition extends it to the loop's end,
  // since the value must survive the back edge.
  LiveInterval valueInterval(const ir::Value* v) const;
  // A shared buffer's interval: its value's, extended over the uses of every local_load from it. A dot reads the
  // buffer of an operand a local_load defines where the dot runs (the lowering never stages that operand through
  // registers), so the buffer must outlive the local_load; other users of a local_load only make this longer.
  LiveInterval bufferInterval(const ir::Value* buffer) const;
  // An op's scratch: live only while the op runs.
  LiveInterval scratchInterval(const ir::Op* op) const { return {start(op), end(op)}; }

 private:
  void number(ir::Block& block);
  std::unordered_map<const ir::Op*, std::pair<int64_t, int64_t>> numbers_;
  int64_t next_ = 0;
};

}  // namespace tessera::transforms
