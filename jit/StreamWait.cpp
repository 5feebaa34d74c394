#include "jit/StreamWait.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tessera::jit {

double gpuTimeoutSeconds() {
  const char* text = std::getenv("TESSERA_GPU_TIMEOUT");
  if (!text || !*text) return 0;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds >= 0) || !std::isfinite(seconds))
    throw Error(std::string("TESSERA_GPU_TIMEOUT must be a number of seconds (0: no limit), not '") + text + "'");
  return seconds;
}

void pollUntilFinished(const std::function<bool()>& finished, double limitSeconds, const std::string& kernelName) {
  // Spinning first keeps short kernels' host-clock times close to a blocking wait's; then short sleeps leave the
  // CPU to others.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limitSeconds));
  for (int polls = 0;; ++polls) {
    if (finished()) return;
    if (Clock::now() >= deadline) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", limitSeconds);
      throw KernelTimeout((kernelName.empty() ? std::string("the stream's work") : "kernel '" + kernelName + "'") +
                          " has not finished after " + seconds + " s (TESSERA_GPU_TIMEOUT): it may never end (a "
                          "barrier or mbarrier wait that no thread completes) or be far slower than expected. The "
                          "GPU is still running it, and later work on this device waits behind it.");
    }
    if (polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace tessera::jit
