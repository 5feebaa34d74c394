// Passes and the pass manager. A pass rewrites one Function in place. The pass manager runs a pipeline of
// passes, verifies after each (optional), and can print the IR after every pass: set
// TESSERA_PRINT_IR_AFTER_ALL=1 (to stderr) or PassManager::setPrintAfterAll.
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

class PassManager {
 public:
  PassManager();  // reads TESSERA_PRINT_IR_AFTER_ALL
  void add(std::unique_ptr<Pass> p);
  // Adds a pass by its registered name; throws tessera::Error listing the known names if unknown.
  void add(const std::string& name);
  void setPrintAfterAll(bool on, std::ostream* os = nullptr);  // os null = std::cerr
  void setVerifyEach(bool on) { verifyEach_ = on; }
  // Called after each pass with (pass name, IR text); used by the JIT to keep every stage's IR.
  void setAfterPassCallback(std::function<void(const std::string&, const std::string&)> cb) { callback_ = std::move(cb); }
  void run(ir::Function& f);
  void run(ir::Module& m);

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  bool printAfterAll_ = false;
  std::ostream* printStream_ = nullptr;
  bool verifyEach_ = true;
  std::function<void(const std::string&, const std::string&)> callback_;
};

// Parameters of the target-independent GPU passes (layouts depend on the warp size and the warp count).
class LayoutPolicy;  // transforms/AssignLayouts.h

struct PassOptions {
  int numWarps = 4;
  int warpSize = 32;  // 32 on NVIDIA, 64 on AMD
  // The target's layout preferences for assign-layouts (e.g. tensor-core accumulators); null = the default.
  std::shared_ptr<const LayoutPolicy> layoutPolicy;
};

// Registry of passes by name (add new passes to the table in PassRegistry.cpp).
std::unique_ptr<Pass> createPass(const std::string& name, const PassOptions& options = {});  // null if unknown
std::vector<std::string> registeredPassNames();

std::unique_ptr<Pass> createCanonicalizePass();  // constant folding + algebraic simplification
std::unique_ptr<Pass> createCSEPass();           // common subexpression elimination of pure ops
std::unique_ptr<Pass> createDCEPass();           // removes unused pure ops, dead loop-carried values

// GPU passes (docs/Layouts.md), in pipeline order.
std::unique_ptr<Pass> createCoalescePass(const PassOptions& options);       // memory ops: widest coalesced layout
std::unique_ptr<Pass> createAssignLayoutsPass(const PassOptions& options);  // every tile value gets a layout
std::unique_ptr<Pass> createRemoveLayoutConversionsPass();                  // folds/rematerializes/hoists converts
std::unique_ptr<Pass> createAllocateSharedMemoryPass(const PassOptions& options);  // smem_offset/smem_bytes
std::unique_ptr<Pass> createInsertBarriersPass();  // barriers between conflicting shared-memory accesses

}  // namespace tessera::transforms
