// The memory an AMDGPU kernel reads through llvm.amdgcn.dispatch.ptr and llvm.amdgcn.implicitarg.ptr, filled as
// the HSA runtime would for the launch:
//  - the kernel dispatch packet (hsa_kernel_dispatch_packet_t): dimensions in `setup` (byte 2), workgroup sizes as
//    u16 at bytes 4/6/8, grid sizes in work-items as u32 at bytes 12/16/20, the group segment (LDS) size at 28;
//  - the implicit (hidden) arguments of code object v4: global offsets (0) at bytes 0/8/16 and the printf buffer
//    pointer at byte 24 (backends/amdgpu/PrintfBuffer.h);
//  - the printf buffer: u32 bytes used, u32 capacity, then the records the kernel appends.
// The blocks do not move after construction (the kernel holds pointers into them).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "jit/sim/runtime/GlobalMemoryChecker.h"

namespace tessera::sim {

class AmdKernelBlocks {
 public:
  static constexpr uint32_t kPrintfBufferOffset = 24;
  static constexpr uint32_t kPrintfHeaderBytes = 8;

  AmdKernelBlocks(const std::array<uint32_t, 3>& grid, uint32_t workgroupSize, uint32_t sharedBytes,
                  uint32_t printfBufferBytes);
  AmdKernelBlocks(const AmdKernelBlocks&) = delete;
  AmdKernelBlocks& operator=(const AmdKernelBlocks&) = delete;

  const void* dispatchPacket() const { return packet_.data(); }
  const void* implicitArguments() const { return implicit_.data(); }
  const uint8_t* printfBuffer() const { return reinterpret_cast<const uint8_t*>(printf_.data()); }
  // Valid kernel-visible memory (for the global checker; not counted as the kernel's traffic).
  std::vector<MemoryRange> ranges() const;

 private:
  alignas(64) std::array<uint8_t, 64> packet_{};
  alignas(64) std::array<uint8_t, 256> implicit_{};
  std::vector<uint64_t> printf_;  // 8-byte aligned storage
};

}  // namespace tessera::sim
