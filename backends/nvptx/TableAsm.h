// Emitting an entry of the inline-asm table (InlineAsmTable.h) by its operation name: the backend's only way
// to emit inline asm outside the wgmma strings (WgmmaAsm.h), so that the emulator, which accepts only the table's
// strings, can run every kernel.
#pragma once

#include <string_view>
#include <vector>

#include "backends/common/LoweringHooks.h"

namespace tessera::backends::nvptx {

// Calls the table's asm for `operation` on `args`, returning `result` (void or the asm's result type).
llvm::Value* callTableAsm(IRBuilder& b, std::string_view operation, llvm::Type* result,
                          const std::vector<llvm::Value*>& args);

}  // namespace tessera::backends::nvptx
