// The kernel author's source locations in the lowered LLVM IR, and which tile-IR op each instruction came from.
//
// Encoding: the module gets a compile unit (line tables only, or line directives only where the target asks: NVPTX,
// whose PTX then has `.loc`/`.file` and no DWARF sections) and the kernel a DISubprogram. Each tile-IR op gets
// its own distinct DILexicalBlock (at the op's file:line:column) inside the kernel's subprogram, and every
// instruction the lowering emits for the op carries a DILocation in that block. NVPTX turns the locations into
// `.loc`/`.file` line info in the PTX (what cuda-gdb and Nsight Compute show), AMDGPU into its DWARF line table.
// The named metadata `tessera.ops` lists `!{!"<op name>", <its block>}` for every op, so the emulator
// (jit/sim/HostModule.cpp) recovers the op from an instruction's scope.
//
// Why scopes: LLVM's optimizations keep an instruction's DILocation when they move or clone it, and merge the
// locations of instructions they combine into their common scope; per-instruction custom metadata is dropped
// by most of them (instcombine, SROA, GVN, simplifycfg). When two ops' instructions are merged, the merged
// location lies in the kernel's subprogram, not in an op's block: the op is then unknown (OpTable::find returns
// the file:line that survived, possibly none).
#pragma once

#include <map>
#include <string>

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>

#include "ir/IR.h"

namespace llvm {
class Instruction;
}  // namespace llvm

namespace tessera::backends {

inline constexpr const char* kOpTableMetadata = "tessera.ops";

// Attaches the locations while a function is lowered. `finalize` before verifying the module.
class DebugLocations {
 public:
  DebugLocations(llvm::Module& m, llvm::Function& kernel, const ir::Function& f, bool directivesOnly);

  // While alive, every instruction `b` creates carries `op`'s location; the builder's previous location (the
  // enclosing op's, for ops nested in regions) is restored afterwards.
  class OpScope {
   public:
    OpScope(DebugLocations& locations, const ir::Op& op, llvm::IRBuilderBase& b);
    ~OpScope();
    OpScope(const OpScope&) = delete;
    OpScope& operator=(const OpScope&) = delete;

   private:
    llvm::IRBuilderBase& b_;
    llvm::DebugLoc saved_;
  };

  void finalize();

 private:
  llvm::DIFile* file(const std::string& path);
  llvm::DILocation* enter(const ir::Op& op);

  llvm::Module& module_;
  llvm::DIBuilder builder_;
  llvm::DISubprogram* subprogram_ = nullptr;
  llvm::NamedMDNode* opTable_ = nullptr;
  std::map<std::string, llvm::DIFile*> files_;
};

// Removes the source locations and the op table (which refers to them) from `m`.
void stripSourceLocations(llvm::Module& m);

// Where an instruction came from, as far as the optimized module still says.
struct OpSource {
  std::string op;    // the tile-IR op's name ("load", "dot", ...), or "" when unknown
  std::string file;  // the kernel author's file, or ""
  unsigned line = 0, column = 0;
};

// Reads `tessera.ops` back from a (possibly optimized, possibly re-parsed) module.
class OpTable {
 public:
  explicit OpTable(const llvm::Module& m);
  OpSource find(const llvm::Instruction& inst) const;

 private:
  std::map<const llvm::Metadata*, std::string> opOfScope_;
};

}  // namespace tessera::backends
