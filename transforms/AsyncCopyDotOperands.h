// What async-copy-dot-operands (PassManager.h: createAsyncCopyDotOperandsPass) does to a dot's operands, for the
// targets' layout policies, which decide before the pass runs.
#pragma once

#include "ir/IR.h"

namespace tessera::transforms {

// Whether operand #index of `dot` is read from a shared buffer holding exactly its elements (no cast between):
// it is a local_load already, or a load the pass turns into an asynchronous copy (reached through layout
// conversions only), provided the target asks for a shared layout for it.
bool dotOperandInSharedBuffer(const ir::Op& dot, unsigned index);

}  // namespace tessera::transforms
