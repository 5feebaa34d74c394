// NVPTXLayoutPolicy::warpRoles: how a warp-specialized program splits its registers (sm_90a, setmaxnreg).
//
// setmaxnreg moves registers between the warps of one program, which starts with the count ptxas gives every thread
// at entry: the lowering declares one program per multiprocessor (.maxntid, .minnctapersm 1), so that count is the
// register file over the program's threads, in steps of 8, at most 255. The producers keep kProducerRegisters each
// and the consumers take the rest (in steps of 8, at most 256): asking for more than the program holds would block
// setmaxnreg.inc forever.
#include "backends/nvptx/MmaLayoutPolicy.h"
#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

constexpr int64_t kWarpgroupWarps = 4;       // wgmma and setmaxnreg work on warpgroups
constexpr int64_t kProducerWarps = kWarpgroupWarps;  // one warpgroup: setmaxnreg is per warpgroup
// The fewest setmaxnreg allows. The producer (one thread issuing TMA copies and waiting on mbarriers, and in a
// persistent kernel the tile index) fits: ptxas reports 0 spills at 24 for every warp-specialized and ping-pong
// row of kernel_resources (FlashAttention-3 gives its producer warpgroup 24 beside two consumer warpgroups). With
// 8 consumer warps they get 240 registers instead of the 232 CUTLASS's producer figure of 40 left, which removed
// the 32 B of spills of the persistent causal 128x128 d128 attention.
constexpr int64_t kProducerRegisters = 24;
constexpr int64_t kRegisterFile = 65536;     // 32-bit registers of a multiprocessor
constexpr int64_t kMaxThreads = 1024;        // of a program
constexpr int64_t kWarpSize = 32;

}  // namespace

std::optional<transforms::LayoutPolicy::WarpRoles> NVPTXLayoutPolicy::warpRoles(int64_t consumerWarps) const {
  const std::string arch = options_.arch.empty() ? "sm_90a" : options_.arch;  // NVPTXTarget::defaultArch
  if (arch != "sm_90a") return std::nullopt;
  if (consumerWarps % 4)
    throw Error("warp_specialize needs num_warps to be a multiple of 4 (whole consumer warpgroups), got " +
                std::to_string(consumerWarps));
  const int64_t threads = (consumerWarps + kProducerWarps) * kWarpSize;
  if (threads > kMaxThreads)
    throw Error("warp_specialize adds " + std::to_string(kProducerWarps) + " producer warps to " +
                std::to_string(consumerWarps) + ", more than a program's " + std::to_string(kMaxThreads) + " threads");
  const int64_t atEntry = std::min<int64_t>(255, kRegisterFile / threads) / 8 * 8;
  const int64_t rest = atEntry * threads - kProducerWarps * kWarpSize * kProducerRegisters;
  return WarpRoles{kProducerWarps, kProducerRegisters,
                   std::min<int64_t>(256, rest / (consumerWarps * kWarpSize) / 8 * 8), kWarpgroupWarps};
}

}  // namespace tessera::backends::nvptx
