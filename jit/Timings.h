// TESSERA_TIMINGS=1 prints the wall time of each stage a kernel goes through on its way to the GPU, one line on
// stderr as each stage ends: tracing, verification, every pass, lowering, LLVM optimization, emission and the
// module load (where the CUDA driver runs ptxas). docs/JIT.md ("Dumps and timings") lists the stages. The line is
//   tessera timing: @vector_add nvptx sm_90a: pass coalesce: 0.052 ms
#pragma once

#include <functional>
#include <string>

namespace tessera::jit {

class StageTimings {
 public:
  // Reports stages of `kernel` compiled for `target` and `arch`, if TESSERA_TIMINGS asks for it.
  StageTimings(const std::string& kernel, const std::string& target, const std::string& arch);

  bool enabled() const { return enabled_; }
  void report(const std::string& stage, double seconds) const;
  // Runs `body` and reports how long it took under `stage` (nothing is reported when it throws).
  void time(const std::string& stage, const std::function<void()>& body) const;

 private:
  bool enabled_;
  std::string subject_;  // "@vector_add nvptx sm_90a"
};

}  // namespace tessera::jit
