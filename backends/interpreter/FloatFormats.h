// The float formats live in ir/FloatFormats.h. These interp:: spellings remain only for the GPU check harness
// (jit/GpuCheck.cpp, jit/check/Cases.h), which a parallel change is moving; delete this header once it includes
// ir/FloatFormats.h.
#pragma once

#include "ir/FloatFormats.h"

namespace tessera::interp {

using ir::decodeBF16;
using ir::decodeF16;
using ir::decodeF32;
using ir::decodeF64;
using ir::decodeF8E4M3;
using ir::decodeF8E5M2;
using ir::encodeBF16;
using ir::encodeF16;
using ir::encodeF32;
using ir::encodeF64;
using ir::encodeF8E4M3;
using ir::encodeF8E5M2;
using ir::roundToF8E4M3;
using ir::roundToF8E5M2;

}  // namespace tessera::interp
