// setmaxnreg (PTX ISA, sm_90a) as the emulator checks it: each thread's register count as far as setmaxnreg made it
// known (unknown before the first: the compiler's allocation is not modelled), and the executions of each
// warpgroup, so that the k-th setmaxnreg of every warp of a warpgroup can be compared with the first warp's k-th
// (.sync.aligned: all warps of the warpgroup execute the same one). It changes nothing else.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::sim {

class RegisterCounts {
 public:
  struct Execution {
    bool increase = false;
    uint32_t registers = 0;
    uint32_t site = 0;
    uint32_t warp = 0;  // the first warp of its warpgroup to execute it
    bool operator==(const Execution& o) const {
      return increase == o.increase && registers == o.registers && site == o.site;
    }
  };

  void beginProgram(uint32_t threads, uint32_t warps, uint32_t warpSize);
  // The thread's count, 0 while unknown.
  uint32_t& current(uint32_t thread) { return current_[thread]; }
  // Records `e` as the thread's next setmaxnreg; returns the execution of the same index its warpgroup recorded
  // first (possibly `e` itself).
  const Execution& join(uint32_t thread, const Execution& e);
  // Whether a finding about the thread's latest setmaxnreg is the first for its warp (one per warp and execution).
  bool firstReportOfWarp(uint32_t thread);

 private:
  uint32_t warpSize_ = 32;
  std::vector<uint32_t> current_;
  std::vector<uint32_t> executed_;                 // per thread: setmaxnregs so far
  std::vector<uint32_t> reported_;                 // per warp: 1 + the execution index last reported
  std::vector<std::vector<Execution>> byGroup_;    // per warpgroup: the k-th setmaxnreg as its first warp ran it
};

}  // namespace tessera::sim
