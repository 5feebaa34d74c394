// assign-layouts: gives every tile value of a function a distributed layout. The interface here is the hook a
// target uses to ask for specific layouts on specific ops (tensor-core operand layouts for `dot`, later).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ir/Layout.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {

// Layouts some ops need regardless of what flows into them. assign-layouts enforces a preference by putting
// convert_layout ops around the op, so the op's operands/results become fixed points ("anchors") that the rest
// of the function's layouts are propagated from.
class LayoutPolicy {
 public:
  virtual ~LayoutPolicy() = default;
  // The layout `op` needs for tile operand #index / tile result #index; nullopt when it has no preference (the
  // op then follows propagation).
  virtual std::optional<ir::Layout> operandLayout(const ir::Op& op, unsigned index) const = 0;
  virtual std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned index) const = 0;
  // The shared layout the target's lowering of `dot` reads operand #index (0: a, 1: b) from when it can take it
  // straight from a shared buffer that asynchronous copies fill (async-copy-dot-operands); nullopt: the operand
  // stays in registers. Targets without asynchronous copies keep the default.
  virtual std::optional<ir::Layout> dotOperandSharedLayout(const ir::Op& dot, unsigned index) const {
    (void)dot, (void)index;
    return std::nullopt;
  }
  // The shared layout the target's lowering of `dot` writes operand #index (0: a, 1: b) in when it stages the
  // operand from registers itself (no buffer holds it); nullopt: unknown. stage-copies-in-registers loads such an
  // operand so that the staging writes vectors.
  virtual std::optional<ir::Layout> dotOperandStagingLayout(const ir::Op& dot, unsigned index) const {
    (void)dot, (void)index;
    return std::nullopt;
  }
  // The distributed layout in which the target's tensor-core lowering of `dot` takes its A operand straight from
  // registers, as instruction fragments (no staging through shared memory); nullopt: A is staged or read from a
  // shared buffer. assign-layouts converts A to it and marks the dot `a_in_registers` (kDotAInRegisters in
  // analysis/SharedScratch.h), so that no scratch is reserved for A and no copy puts it in shared memory.
  virtual std::optional<ir::Layout> dotOperandARegisterLayout(const ir::Op& dot) const {
    (void)dot;
    return std::nullopt;
  }
  // Whether the target copies operand #index of `dot`, when it is a descriptor's block (desc_load), into the
  // shared buffer dotOperandSharedLayout gives with the tensor-memory accelerator (TMA: async_tma_copy), and with
  // which swizzle of the tensor map in bytes (0 none; 32, 64 or 128), the one that makes the box land in that
  // layout; nullopt: the target has no such copy, and expand-descriptor-loads turns the desc_load into a load.
  virtual std::optional<int64_t> dotOperandTmaSwizzle(const ir::Op& dot, unsigned index) const {
    (void)dot, (void)index;
    return std::nullopt;
  }
  // Why dotOperandTmaSwizzle is nullopt for operand #index of `dot`, in words for an error that explains it (the
  // target's own terms); empty when it is not, or when the target has nothing to add.
  virtual std::string dotOperandTmaRefusal(const ir::Op& dot, unsigned index) const {
    (void)dot, (void)index;
    return {};
  }
  // Whether the target's lowering of `dot` can return with its products still in flight, to be waited for by a
  // dot_wait (the dot's `pending`): the tensor cores read its operands from their shared buffers asynchronously.
  // pipeline-loops then keeps one such dot in flight across the iterations of a loop it pipelines.
  virtual bool dotIsAsynchronous(const ir::Op& dot) const {
    (void)dot;
    return false;
  }
  // Whether the target's async_copy moves a piece of `bytes` (aligned to its size, under one mask value)
  // asynchronously (cp.async: 4, 8 or 16); the lowering moves narrower pieces with a load and a store. Where even
  // 16 bytes are not (AMDGPU), stage-copies-in-registers splits the copies pipeline-loops issues ahead into a load
  // and a later local_store; where no copy of a loop is asynchronous, pipeline-loops gives it at most 2 stages.
  virtual bool copiesAsynchronously(int64_t bytes) const {
    (void)bytes;
    return true;
  }
  // How the target splits a program for warp specialization (pipeline-loops with PassOptions::warpSpecialize): the
  // producer warps it adds to the `consumerWarps` the layouts were planned for, and the registers per thread each
  // side keeps (warp_specialize's attributes); nullopt: the target cannot reallocate registers between warps. Throws
  // when the program would be too large.
  struct WarpRoles {
    int64_t producerWarps = 0, producerRegisters = 0, consumerRegisters = 0;
    // The warps that issue tensor-core work as one (a warpgroup for wgmma): the consumers' groups that take turns
    // (order-consumer-groups); 0: they do not.
    int64_t groupWarps = 0;
  };
  virtual std::optional<WarpRoles> warpRoles(int64_t consumerWarps) const {
    (void)consumerWarps;
    return std::nullopt;
  }
  // Whether the target stores descriptor blocks with TMA: expand-descriptor-loads then keeps desc_store, and its
  // lowering stages the block in shared memory for a bulk tensor store; otherwise it becomes a masked store.
  virtual bool storesDescriptorsWithTma() const { return false; }
};

// The target-independent choice: `dot` takes its accumulator/result in the default blocked layout of their shape
// (what an FMA lowering wants) and its a and b operands in whatever layout they arrive (the lowerings stage them
// through shared memory); every other op follows propagation.
class DefaultLayoutPolicy : public LayoutPolicy {
 public:
  explicit DefaultLayoutPolicy(const PassOptions& options) : options_(options) {}
  std::optional<ir::Layout> operandLayout(const ir::Op& op, unsigned index) const override;
  std::optional<ir::Layout> resultLayout(const ir::Op& op, unsigned index) const override;

 private:
  PassOptions options_;
};

// assign-layouts with a target's policy (createAssignLayoutsPass(options) uses DefaultLayoutPolicy).
std::unique_ptr<Pass> createAssignLayoutsPass(const PassOptions& options, std::shared_ptr<const LayoutPolicy> policy);

}  // namespace tessera::transforms
