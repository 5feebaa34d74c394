#include "backends/nvptx/TableAsm.h"

#include <llvm/IR/InlineAsm.h>

#include "backends/nvptx/InlineAsmTable.h"
#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

const InlineAsmEntry& tableEntry(std::string_view operation) {
  for (const InlineAsmEntry& e : kInlineAsmTable)
    if (e.operation == operation) return e;
  throw Error("internal error: no inline asm '" + std::string(operation) + "' in backends/nvptx/InlineAsmTable.h");
}

}  // namespace

llvm::Value* callTableAsm(IRBuilder& b, std::string_view operation, llvm::Type* result,
                          const std::vector<llvm::Value*>& args) {
  const InlineAsmEntry& e = tableEntry(operation);
  std::vector<llvm::Type*> params;
  for (llvm::Value* a : args) params.push_back(a->getType());
  llvm::InlineAsm* asmValue = llvm::InlineAsm::get(llvm::FunctionType::get(result, params, false),
                                                   std::string(e.asmString), std::string(e.constraints),
                                                   /*hasSideEffects=*/true);
  return b.CreateCall(asmValue, args);
}

}  // namespace tessera::backends::nvptx
