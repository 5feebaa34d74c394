// Traced control flow.
//
//   for (auto k : range(0, K, BK)) { acc += ...; }      // an IR `for`; variables assigned in the body
//                                                      // become loop-carried values
//   if_(x > 0, [&] { y = x; }, [&] { y = -x; });        // an IR `if`; assigned variables become results
//   while_([&] { return i < n; }, [&] { i = i * 2; });  // an IR `while`
//
// In eager mode these simply run: range iterates over concrete integers, if_ calls one lambda.
// Inside a traced loop body, `break`, `continue` and `return` are not supported (the body is traced once).
#pragma once

#include <functional>

#include "tessera/Tensor.h"

namespace tessera {

class Range {
 public:
  class iterator {
   public:
    Tensor operator*() const;
    iterator& operator++();
    bool operator!=(const iterator& other);
   private:
    friend class Range;
    explicit iterator(Range* r) : range_(r) {}
    Range* range_;
  };

  Range(const TArg& lb, const TArg& ub, const TArg& step, SourceLoc loc);
  Range(const Range&) = delete;
  ~Range();
  iterator begin();
  iterator end() { return iterator(this); }

 private:
  friend class iterator;
  SourceLoc loc_;
  // Tracing.
  ir::Op* forOp_ = nullptr;
  uint64_t frameId_ = 0;
  int state_ = 0;  // 0 = not begun, 1 = tracing the body, 2 = finished
  Tensor iv_;
  // Eager.
  int64_t cur_ = 0, ub_ = 0, step_ = 1;
  ir::Type ivType_;
};

Range range(const TArg& ub, SourceLoc loc = SourceLoc::current());
Range range(const TArg& lb, const TArg& ub, SourceLoc loc = SourceLoc::current());
Range range(const TArg& lb, const TArg& ub, const TArg& step, SourceLoc loc = SourceLoc::current());

void if_(const TArg& cond, const std::function<void()>& then, SourceLoc loc = SourceLoc::current());
void if_(const TArg& cond, const std::function<void()>& then, const std::function<void()>& otherwise,
         SourceLoc loc = SourceLoc::current());
void while_(const std::function<Tensor()>& cond, const std::function<void()>& body,
            SourceLoc loc = SourceLoc::current());

}  // namespace tessera
