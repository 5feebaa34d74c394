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

// The load or desc_load that operand #index of `dot` comes from through single-use casts and layout conversions
// (a desc_load also through views, isDescriptorBlockView, then without casts),
// the one the pass would copy (whether or not the target asks for it); null when there is none. Its layout tells a
// target which dimension the copy can land contiguously, so that the buffer may be laid out that way.
const ir::Op* dotOperandSourceLoad(const ir::Op& dot, unsigned index);
// Whether that source is a desc_load whose block the operand reads transposed (through a `trans`; see
// dotOperandSourceLoad): the operand's contiguous dimension is then dimension 0, the block's innermost.
bool dotOperandSourceTransposed(const ir::Op& dot, unsigned index);

// Whether `op` is a view through which a descriptor block may reach a dot and still be copied by TMA: a reshape
// that only drops or adds unit dimensions, or a transpose of a 2-d tile. Either keeps the block's bytes where the
// copy lands them; only the buffer's shape and layout say how the dot reads them.
bool isDescriptorBlockView(const ir::Op& op);

}  // namespace tessera::transforms
