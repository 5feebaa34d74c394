// The JIT compile pipeline: verified tile IR in, a loadable GPU artifact out. jit/Compiler.cpp reads top to
// bottom as the list of stages; each stage's IR is kept in the result (and dumped when asked, see docs/JIT.md).
#pragma once

#include <string>
#include <vector>

#include "backends/Target.h"
#include "ir/IR.h"
#include "jit/CompiledKernel.h"

namespace tessera::jit {

// Compiles a copy of `f` for `target` (the input is not modified). Throws tessera::Error naming the failing
// stage: a pass missing from the registry, invalid IR after a pass, or an op the target cannot lower.
CompiledKernel compile(const ir::Function& f, const backends::Target& target, const backends::TargetOptions& options);

// The passes compile() runs, in order, between the first and the last verification.
const std::vector<std::string>& pipelinePassNames();

// Names of pipeline passes not (yet) in the pass registry; empty when the pipeline can run.
std::vector<std::string> missingPipelinePasses();

}  // namespace tessera::jit
