#include "jit/TuningProgress.h"

#include <unistd.h>

#include <iostream>

namespace tessera::jit {

std::ostream* defaultProgressStream() { return ::isatty(STDERR_FILENO) ? &std::cerr : nullptr; }

TuningProgress::TuningProgress(std::ostream* out, std::string subject, size_t configs)
    : out_(out), subject_(std::move(subject)), configs_(configs) {}

void TuningProgress::compiled(bool pruned) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++compiled_;
  pruned_ += pruned;
  redraw();
}

void TuningProgress::benchmarkStarting(size_t survivors) {
  std::lock_guard<std::mutex> lock(mutex_);
  survivors_ = survivors;
  redraw();
}

void TuningProgress::benchmarked() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++benchmarked_;
  redraw();
}

void TuningProgress::finished(const std::string& winner) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!out_) return;
  // The final state stays on screen, on its own line.
  *out_ << "\r\033[K" << "tessera autotune " << subject_ << ": " << "best {" << winner
        << "}\n" << std::flush;
}

void TuningProgress::redraw() {
  if (!out_) return;
  *out_ << "\r\033[K" << "tessera autotune " << subject_ << ": compiled " << compiled_ << "/" << configs_
        << ", pruned " << pruned_;
  if (survivors_) *out_ << ", benchmarked " << benchmarked_ << "/" << survivors_;
  *out_ << std::flush;
}

}  // namespace tessera::jit
