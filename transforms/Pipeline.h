// The default pass pipeline: the tile-IR passes every kernel goes through between tracing and LLVM. The JIT,
// `tessera-opt -p default` and Python's `module.run_passes("default")` all build it here, so the list exists once.
#pragma once

#include <string>
#include <vector>

#include "transforms/PassManager.h"

namespace tessera::transforms {

// Adds the default pipeline to `pm`: cleanup, layouts, cleanup again, shared memory (Pipeline.cpp says why).
void addDefaultPipeline(PassManager& pm, const PassOptions& options);

// Adds the passes named in `spec`, a comma-separated list in which each name is a registered pass or
// "default" (the pipeline above), e.g. "default" or "canonicalize,cse". Throws tessera::Error for an unknown
// name, listing the passes and pipelines there are.
void addPasses(PassManager& pm, const std::string& spec, const PassOptions& options);

// The names addPasses knows besides single passes ("default").
std::vector<std::string> pipelineNames();

}  // namespace tessera::transforms
