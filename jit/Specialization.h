// JIT specialization: which facts about a launch's arguments the compiled kernel may assume. As in Triton, a
// kernel is compiled once per distinct combination of
//   * its Const parameter values,
//   * for each pointer argument: whether its address is 16-byte aligned, and whether the memory behind it is known
//     to hold fewer than 2^31 elements (its size is known only for DeviceBuffers, KernelArg::pointer(addr, bytes)
//     and the arrays the Python runtimes are handed; a bare address keeps 64-bit offsets),
//   * for each integer argument: whether it is divisible by 16, else whether by 8, and whether it equals 1
//     (Triton stops at 16; 8 matters for sizes like 1000: a row of 1000 f16 is still 16-byte aligned, so copies
//     stay vectorized and a ragged matmul needs no more registers than an aligned one),
//   * for each tensor descriptor: its type, tensordesc<block x element> (the block its loads read), and whether
//     every dimension of its shape is divisible by 16,
//   * num_warps, the target, its arch and the compile options.
// (Argument dtypes are fixed by the KernelDef's C++ signature.) The facts become argument attributes of the
// traced function, `divisibility = 16` (or 8) and `equal_to_1 = true`, which the axis analysis and coalescing read (and
// for a descriptor, expand-descriptor-loads: its loads' masks are then constant over runs of 16 elements), and
// `pointer_range = 32`, which lets canonicalize-pointers carry a loop's pointer tiles as one i32 offset.
#pragma once

#include <array>

#include <string>
#include <vector>

#include "ir/IR.h"
#include "jit/KernelArg.h"
#include "tessera/Kernel.h"

namespace tessera::jit {

struct ArgFacts {
  bool divisibleBy16 = false;
  bool equalTo1 = false;  // integers only
  bool offsets32 = false;  // pointers only: fewer than 2^31 elements behind it, so i32 element offsets are exact
  ir::Type descriptorType;  // tensor descriptors only
  bool divisibleBy8 = false;  // integers only: divisible by 8 but not by 16
  bool operator==(const ArgFacts&) const = default;
};

struct Specialization {
  Constants constants;
  std::vector<ArgFacts> args;  // one per runtime parameter
  int numWarps = 4;
  int numStages = 3;
  std::string target;
  std::string arch;
  bool fastMath = true;
  bool persistent = false;
  bool warpSpecialize = false;
  bool pingPong = false;
  bool consumerTurns = true;  // false: TESSERA_NO_CONSUMER_TURNS was set (transforms::PassOptions::consumerTurns)
  int matrixInstrSize = 0;           // AMD's matrix instructions' M and N (LaunchOptions::matrixInstrSize); 0 elsewhere
  std::array<int, 3> clusterDims{1, 1, 1};  // LaunchOptions::clusterDims

  // Canonical text of everything above, e.g. "BLOCK=1024;args=16r32,16r32,_,16;warps=4;stages=3;nvptx;sm_90a;fast"
  // (";persistent" after it for a persistent kernel, then ";warp_specialize" for a warp-specialized one,
  // ";ping_pong" for ping-pong consumers, then ";no_consumer_turns" without consumer turns, then
  // ";matrix_instr_nonkdim=32" where one was asked for on AMDGPU, then ";cluster=2x1x1" for clusters).
  // A pointer known to need only i32 offsets (offsets32) gets the suffix "r32": "16r32", "_r32"; an integer
  // divisible by 8 but not 16 is "8".
  std::string key() const;
  bool operator==(const Specialization&) const = default;
};

// Facts of each runtime argument. Throws tessera::Error (naming the kernel and parameter) when the argument
// count or a kind does not match the parameter list, or an integer does not fit its parameter's type.
std::vector<ArgFacts> argumentFacts(const std::string& kernelName, const std::vector<ParamInfo>& runtimeParams,
                                    const std::vector<KernelArg>& args);

// The descriptor parameter types the facts fix, by parameter name (what KernelDef::trace takes).
DescriptorTypes descriptorTypes(const std::vector<ParamInfo>& runtimeParams, const std::vector<ArgFacts>& facts);

// Records the facts as argument attributes of `f` (whose arguments are the runtime parameters, in order).
void applySpecialization(ir::Function& f, const std::vector<ArgFacts>& facts);

// A cluster shape (LaunchOptions::clusterDims) as keys and messages write it: "2x1x1".
std::string clusterShapeText(const std::array<int, 3>& clusterDims);

}  // namespace tessera::jit
