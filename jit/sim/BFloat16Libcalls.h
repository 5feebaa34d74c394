// The compiler-rt conversions to bf16 that the host's code generator may call while it legalizes bf16 operations
// the host has no instructions for, and that the host's C runtime may lack (libgcc before GCC 13). The rewriting
// expands bf16 arithmetic and conversions inline (HostMath.cpp), but LLVM's optimizer and instruction selection
// can form bf16 operations again (InstCombine narrows maxnum(fpext a, fpext b) to maxnum.bf16, and an fcmp of
// such a result stays bf16); HostJit resolves the libcalls those need to these. Both round to nearest even, NaN
// to a quiet NaN with the input's sign and high payload bits, as the inline expansion does.
#pragma once

#include "jit/sim/HostJit.h"

namespace tessera::sim {

// {"__truncsfbf2", ...}, {"__truncdfbf2", ...}: for HostJit's symbol table.
const RuntimeSymbols& bfloat16Libcalls();

}  // namespace tessera::sim
