// Passes and the pass manager. A pass rewrites one Function in place. The pass manager is the one place that
// runs passes: the JIT, tessera-opt and Python all go through it. It verifies the IR after each pass, times
// each pass, hands (pass, IR, seconds) to an optional callback, and dumps the IR: with TESSERA_DUMP_IR=1 (or
// setDumpIR) it prints the IR it was given and the IR after every pass to stderr (docs/JIT.md, "Dumps and
// timings"). transforms/Pipeline.h builds the default list of passes.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tessera::transforms {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;  // the name tessera-opt uses: "canonicalize", "cse", "dce"
  virtual void run(ir::Function& f) = 0;
};

// Parameters of the target-independent GPU passes (layouts depend on the warp size and the warp count).
class LayoutPolicy;  // transforms/AssignLayouts.h

struct PassOptions {
  int numWarps = 4;
  int warpSize = 32;  // 32 on NVIDIA, 64 on AMD
  // The target's layout preferences for assign-layouts (e.g. tensor-core accumulators); null = the default.
  std::shared_ptr<const LayoutPolicy> layoutPolicy;
  // Shared-memory stages per asynchronously copied buffer in pipelined loops (pipeline-loops); 1: no pipelining.
  int numStages = 3;
  // The most shared memory a program may have (the target's limit); 0 = no limit. Exchanges whose buffer is larger
  // go through their scratch in rounds (analysis/SharedScratch.h).
  int64_t maxSharedBytes = 0;
  // The target's arch ("sm_90a", "gfx942"; empty: the target's default), for layout policies whose choice depends
  // on it (wgmma on sm_90a).
  std::string arch;
  // Make the kernel persistent (make-persistent, first in the default pipeline): programs loop over the grid's tiles.
  bool persistent = false;
  // Warp specialization (pipeline-loops): a producer warpgroup, added to the num_warps consumer warps, issues the TMA
  // copies of the kernel's pipelined loop, and the consumers only wait for them.
  bool warpSpecialize = false;
  // Warp-specialized consumer warpgroups take turns issuing attention's Q K^T (order-consumer-groups); false to
  // measure without (TESSERA_NO_CONSUMER_TURNS=1, tessera-opt --no-consumer-turns).
  bool consumerTurns = true;
  // Ping-pong consumers (ping-pong-consumers, with persistent and warpSpecialize): two groups of num_warps consumer
  // warps, each on its own tiles, taking turns with their main loops and their epilogues.
  bool pingPong = false;
  // The M and N of the matrix instructions dots run on, for targets that offer several (16 or 32; Triton's
  // matrix_instr_nonkdim); 0: the target's choice. Targets without a choice ignore it.
  int matrixInstrSize = 0;
};

class PassManager {
 public:
  // Called after each pass with the pass's name, the wall time of the pass itself (not of verification or
  // printing) and a function printing the IR after it (the function's, or the whole module's when running over a
  // module): printing costs as much as some passes, so only a callback that wants the text pays for it.
  using PrintIR = std::function<std::string()>;
  using AfterPassCallback = std::function<void(const std::string& pass, double seconds, const PrintIR& ir)>;

  PassManager();  // dumps the IR when TESSERA_DUMP_IR is set
  void add(std::unique_ptr<Pass> p);
  // Adds a pass by its registered name; throws tessera::Error listing the known names if unknown.
  void add(const std::string& name, const PassOptions& options = {});
  void setDumpIR(bool on, std::ostream* os = nullptr);  // os null = std::cerr
  void setVerifyEach(bool on) { verifyEach_ = on; }
  void setAfterPassCallback(AfterPassCallback cb) { callback_ = std::move(cb); }
  // The names of the added passes, in the order run() runs them.
  std::vector<std::string> passNames() const;
  // Throws tessera::Error naming the pass (and the function) when a pass fails or leaves invalid IR.
  void run(ir::Function& f);
  // Runs each pass over every function before the next pass, so the callback and the dumps see the module.
  void run(ir::Module& m);

 private:
  void runPipeline(const std::vector<ir::Function*>& functions, const std::function<std::string()>& print,
                   const std::string& scope);
  void dump(const std::string& header, const std::string& text) const;

  std::vector<std::unique_ptr<Pass>> passes_;
  bool dumpIR_ = false;
  std::ostream* dumpStream_ = nullptr;
  bool verifyEach_ = true;
  AfterPassCallback callback_;
};

// Registry of passes by name (add new passes to the table in PassRegistry.cpp).
std::unique_ptr<Pass> createPass(const std::string& name, const PassOptions& options = {});  // null if unknown
std::vector<std::string> registeredPassNames();

// A persistent kernel: the body loops over the launch grid's tiles, passed as three trailing i32 arguments.
std::unique_ptr<Pass> createMakePersistentPass();
std::unique_ptr<Pass> createCanonicalizePass();  // constant folding + algebraic simplification
std::unique_ptr<Pass> createCSEPass();           // common subexpression elimination of pure ops
std::unique_ptr<Pass> createDCEPass();           // removes unused pure ops, dead loop-carried values

// desc_load -> pointer arithmetic over the descriptor's fields and a masked load (every target, before layouts),
// except dot operands the target copies with TMA (LayoutPolicy::dotOperandTmaSwizzle), which stay desc_loads for
// async-copy-dot-operands.
std::unique_ptr<Pass> createExpandDescriptorLoadsPass(const PassOptions& options = {});
// Loop-carried pointer tiles over a pointer_range = 32 argument -> one carried i32 offset (before layouts).
std::unique_ptr<Pass> createCanonicalizePointersPass();

// trans(load) -> a load at transposed addresses, where their expressions transpose for free (before layouts).
std::unique_ptr<Pass> createTransposeLoadsPass();

// GPU passes (docs/Layouts.md), in pipeline order.
std::unique_ptr<Pass> createCoalescePass(const PassOptions& options);       // memory ops: widest coalesced layout
std::unique_ptr<Pass> createAssignLayoutsPass(const PassOptions& options);  // every tile value gets a layout
std::unique_ptr<Pass> createRemoveLayoutConversionsPass();                  // folds/rematerializes/hoists converts
// Loads feeding dot operands -> async_copy into shared buffers + local_load (where the target's policy allows).
std::unique_ptr<Pass> createAsyncCopyDotOperandsPass(const PassOptions& options);
// Issues the asynchronous copies of `for` loops options.numStages - 1 iterations ahead (software pipelining).
std::unique_ptr<Pass> createPipelineLoopsPass(const PassOptions& options);
// Where the target's async_copy is a load and a store: the loads of copies issued ahead start before the
// iteration's work and their stores end it.
std::unique_ptr<Pass> createStageCopiesInRegistersPass(const PassOptions& options);
// Moves register-only pure ops down to their first use where that lengthens no live range.
std::unique_ptr<Pass> createSinkToUsesPass();
// Warp-specialized consumers in several groups take turns issuing the first of chained dots (ping-pong).
std::unique_ptr<Pass> createOrderConsumerGroupsPass(const PassOptions& options);
std::unique_ptr<Pass> createPingPongConsumersPass(const PassOptions& options);
std::unique_ptr<Pass> createAllocateSharedMemoryPass(const PassOptions& options);  // smem_offset/smem_bytes
std::unique_ptr<Pass> createInsertBarriersPass();  // barriers between conflicting shared-memory accesses

}  // namespace tessera::transforms
