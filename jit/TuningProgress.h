// The autotuner's progress line on a terminal, rewritten in place as configs compile and run:
//   tessera autotune @matmul M=4096, N=4096, K=4096: compiled 5/8, pruned 2, benchmarked 3/6
// Only when stderr is a terminal by default (logs and CI output stay clean); tests pass their own stream.
#pragma once

#include <mutex>
#include <ostream>
#include <string>

namespace tessera::jit {

// Where progress goes when nothing else is asked for: &std::cerr when stderr is a terminal, else null.
std::ostream* defaultProgressStream();

class TuningProgress {
 public:
  // `out` null: reports nothing.
  TuningProgress(std::ostream* out, std::string subject, size_t configs);

  // Thread-safe: the compile workers report as they finish.
  void compiled(bool pruned);
  void benchmarkStarting(size_t survivors);
  void benchmarked();
  void finished(const std::string& winner);

 private:
  void redraw();

  std::ostream* out_;
  std::string subject_;
  size_t configs_;
  std::mutex mutex_;
  size_t compiled_ = 0, pruned_ = 0, survivors_ = 0, benchmarked_ = 0;
};

}  // namespace tessera::jit
