// What async-copy-dot-operands (PassManager.h: createAsyncCopyDotOperandsPass) does to a dot's operands, for the
// targets' layout policies, which decide before the pass runs.
#pragma once

#include "ir/IR.h"

namespace tessera::transforms {

// Whether operand #index of `dot` is read from a shared buffer holding exactly its elements (no cast between):
// it is a local_load already, or a load the pass turns into an asynchronous copy (reached through layout
// conversions only; a load that several dot operands read this way counts too), provided the target asks for a
// shared layout for it (the same for each of them).
bool dotOperandInSharedBuffer(const ir::Op& dot, unsigned index);

// The load or desc_load that operand #index of `dot` comes from through single-use casts and layout conversions,
// the one the pass would copy (whether or not the target asks for it); null when there is none. Its layout tells a
// target which dimension the copy can land contiguously, so that the buffer may be laid out that way.
const ir::Op* dotOperandSourceLoad(const ir::Op& dot, unsigned index);

}  // namespace tessera::transforms
