#include "backends/common/DebugLocations.h"

#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Module.h>

namespace tessera::backends {

DebugLocations::DebugLocations(llvm::Module& m, llvm::Function& kernel, const ir::Function& f, bool directivesOnly)
    : module_(m), builder_(m) {
  llvm::DIFile* where = file(f.loc().file);
  builder_.createCompileUnit(llvm::dwarf::DW_LANG_C_plus_plus_14, where, "tessera", /*isOptimized=*/true, "", 0, "",
                             directivesOnly ? llvm::DICompileUnit::DebugDirectivesOnly
                                            : llvm::DICompileUnit::LineTablesOnly);
  llvm::DISubroutineType* type = builder_.createSubroutineType(builder_.getOrCreateTypeArray({}));
  subprogram_ = builder_.createFunction(where, kernel.getName(), kernel.getName(), where, f.loc().line, type,
                                        f.loc().line, llvm::DINode::FlagZero,
                                        llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
  kernel.setSubprogram(subprogram_);
  opTable_ = m.getOrInsertNamedMetadata(kOpTableMetadata);
  if (!m.getModuleFlag("Debug Info Version"))
    m.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
}

llvm::DIFile* DebugLocations::file(const std::string& path) {
  const std::string name = path.empty() ? "<unknown>" : path;
  auto it = files_.find(name);
  if (it != files_.end()) return it->second;
  return files_[name] = builder_.createFile(name, "");
}

llvm::DILocation* DebugLocations::enter(const ir::Op& op) {
  const Location& loc = op.loc();
  llvm::DIFile* where = loc.file.empty() ? subprogram_->getFile() : file(loc.file);
  llvm::DILexicalBlock* block = builder_.createLexicalBlock(subprogram_, where, loc.line, loc.col);
  llvm::LLVMContext& ctx = module_.getContext();
  opTable_->addOperand(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, op.name()), block}));
  return llvm::DILocation::get(ctx, loc.line, loc.col, block);
}

void DebugLocations::finalize() { builder_.finalize(); }

DebugLocations::OpScope::OpScope(DebugLocations& locations, const ir::Op& op, llvm::IRBuilderBase& b)
    : b_(b), saved_(b.getCurrentDebugLocation()) {
  b.SetCurrentDebugLocation(locations.enter(op));
}

DebugLocations::OpScope::~OpScope() { b_.SetCurrentDebugLocation(saved_); }

void stripSourceLocations(llvm::Module& m) {
  if (llvm::NamedMDNode* table = m.getNamedMetadata(kOpTableMetadata)) m.eraseNamedMetadata(table);
  llvm::StripDebugInfo(m);
}

OpTable::OpTable(const llvm::Module& m) {
  const llvm::NamedMDNode* table = m.getNamedMetadata(kOpTableMetadata);
  if (!table) return;
  for (const llvm::MDNode* entry : table->operands()) {
    if (entry->getNumOperands() != 2) continue;
    const auto* name = llvm::dyn_cast<llvm::MDString>(entry->getOperand(0));
    const llvm::Metadata* scope = entry->getOperand(1);
    if (name && scope) opOfScope_[scope] = name->getString().str();
  }
}

OpSource OpTable::find(const llvm::Instruction& inst) const {
  OpSource source;
  const llvm::DILocation* loc = inst.getDebugLoc().get();
  if (!loc) return source;
  // Code inlined from a function with its own debug info is attributed to the call site in the kernel.
  while (const llvm::DILocation* outer = loc->getInlinedAt()) loc = outer;
  source.line = loc->getLine();
  source.column = loc->getColumn();
  for (const llvm::DIScope* s = loc->getScope(); s; s = s->getScope()) {
    auto it = opOfScope_.find(s);
    if (it == opOfScope_.end()) continue;
    source.op = it->second;
    // Optimizations that cannot keep a call's line give it line 0 in the same scope: the op's block has it.
    if (source.line == 0)
      if (const auto* block = llvm::dyn_cast<llvm::DILexicalBlock>(s)) {
        source.line = block->getLine();
        source.column = block->getColumn();
      }
    break;
  }
  if (source.line != 0) {
    const llvm::DIScope* scope = loc->getScope();
    std::string dir = scope->getDirectory().str(), name = scope->getFilename().str();
    source.file = dir.empty() || (!name.empty() && name[0] == '/') ? name : dir + "/" + name;
  }
  return source;
}

}  // namespace tessera::backends
