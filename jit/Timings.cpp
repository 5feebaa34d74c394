#include "jit/Timings.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "ir/EnvFlag.h"

namespace tessera::jit {

StageTimings::StageTimings(const std::string& kernel, const std::string& target, const std::string& arch)
    : enabled_(envFlag("TESSERA_TIMINGS")), subject_("@" + kernel + " " + target + " " + arch) {}

void StageTimings::report(const std::string& stage, double seconds) const {
  if (!enabled_) return;
  char milliseconds[32];
  std::snprintf(milliseconds, sizeof milliseconds, "%.3f", seconds * 1e3);
  // One write per line, so that the lines of kernels compiled on several threads do not interleave.
  std::cerr << ("tessera timing: " + subject_ + ": " + stage + ": " + milliseconds + " ms\n") << std::flush;
}

void StageTimings::time(const std::string& stage, const std::function<void()>& body) const {
  auto start = std::chrono::steady_clock::now();
  body();
  report(stage, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace tessera::jit
