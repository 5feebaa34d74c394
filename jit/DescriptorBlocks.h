// How the block of a tensor descriptor argument follows an autotune config. A descriptor's block is fixed by the
// launch's argument, yet a matmul's A block is (BM, BK) of whichever config runs; the autotuner re-blocks such
// arguments per config, dimension by dimension from a number or a Const's value:
//
//   AutotuneOptions options;
//   options.descriptorBlocks = {{"a", {"BM", "BK"}}, {"b", {"BK", "BN"}}};   // Python: descriptor_blocks=
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "jit/KernelArg.h"
#include "jit/TuneConfig.h"
#include "tessera/Kernel.h"

namespace tessera::jit {

using BlockDim = std::variant<int64_t, std::string>;                   // a number, or a Const parameter's name
using DescriptorBlocks = std::map<std::string, std::vector<BlockDim>>;  // descriptor parameter -> its block

// Throws tessera::Error, naming the kernel, when a name is not a descriptor parameter of `def`, a block is empty
// or longer than 5 dimensions, a number is not positive, or a name is not a Const parameter.
void validateDescriptorBlocks(const KernelDef& def, const DescriptorBlocks& blocks);

// `args` with each descriptor argument `blocks` names reading the block `config` gives it (a Const's value from
// the config, else from `launchConstants`). Throws when a Const is set by neither, or a block's rank differs from
// the descriptor's.
std::vector<KernelArg> argsForConfig(const KernelDef& def, const DescriptorBlocks& blocks, const TuneConfig& config,
                                     const Constants& launchConstants, std::vector<KernelArg> args);

// "a=(BM,BK);b=(BK,BN)": stable, part of the tuning cache key (the same configs re-blocked otherwise are other
// kernels).
std::string descriptorBlocksText(const DescriptorBlocks& blocks);

}  // namespace tessera::jit
