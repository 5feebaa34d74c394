// The interface every GPU backend implements (NVPTX today, AMDGPU next). Backend-internal: it may name LLVM
// types, and nothing under frontend/ includes it.
//
// The JIT pipeline (jit/Compiler.cpp) runs the target-independent passes with the target's warp size, then
// asks the target to lower the laid-out IR to LLVM IR and to emit the loadable artifact.
#pragma once

#include <memory>
#include <string>

#include "ir/IR.h"
#include "transforms/PassManager.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::backends {

struct TargetOptions {
  std::string arch;        // "sm_90a", "sm_80", "gfx942"...; empty = the target's default
  int numWarps = 4;
  bool fastMath = true;    // approximate exp2/log2/rsqrt/division where the vendor compilers use them
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const char* name() const = 0;     // "nvptx", "amdgpu"
  virtual int warpSize() const = 0;         // 32 or 64
  virtual std::string defaultArch() const = 0;
  virtual std::string binaryFormat() const = 0;  // "ptx" or "hsaco"

  // The layouts this target's lowering wants for particular ops (tensor-core dot accumulators, ...), used by
  // assign-layouts; null means the target-independent default.
  virtual std::shared_ptr<const transforms::LayoutPolicy> layoutPolicy(const transforms::PassOptions&) const {
    return nullptr;
  }

  // Lowers a function whose tiles all carry layouts and whose shared-memory buffers have offsets (the output
  // of the layout and allocation passes) to an LLVM module holding one kernel named after the function.
  // Throws tessera::Error naming the op for anything it cannot lower.
  virtual std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                                    const TargetOptions& opts) const = 0;
  // Optimizes the module and emits the artifact: PTX text, or an ELF code object.
  virtual std::string emitBinary(llvm::Module& m, const TargetOptions& opts) const = 0;
  // Optimizes the module as emitBinary does and prints the target's assembly text (what llc -filetype=asm prints),
  // for tools and tests. The default suits targets whose artifact already is assembly (PTX).
  virtual std::string emitAssembly(llvm::Module& m, const TargetOptions& opts) const { return emitBinary(m, opts); }
};

// "nvptx" or "amdgpu"; throws tessera::Error for an unknown name.
std::unique_ptr<Target> createTarget(const std::string& name);

}  // namespace tessera::backends
