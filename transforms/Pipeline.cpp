#include "transforms/Pipeline.h"

#include <sstream>

namespace tessera::transforms {

void addDefaultPipeline(PassManager& pm, const PassOptions& options) {
  // A persistent kernel's programs loop over the grid's tiles; everything below sees that loop as any other.
  if (options.persistent) pm.add("make-persistent", options);

  // Descriptor loads become pointer loads first, so that everything below treats the two alike.
  pm.add("expand-descriptor-loads", options);

  // Loop-carried pointer tiles become one carried i32 offset where the launch says i32 offsets are exact
  // (pointer_range = 32): before the cleanup, so that CSE merges the offsets it rebuilds with the traced ones and
  // DCE drops the 64-bit arithmetic it replaced; before the layout passes, which then see (and lay out) only the
  // new form, whose axis facts (contiguity, divisibility) are those of the old one.
  pm.add("canonicalize-pointers", options);
  // A transposed load (attention's dot(q, trans(k))) reads at transposed addresses instead: no transpose is left
  // between it and a dot, which can then read it from a shared buffer. After canonicalize-pointers, whose rebuilt
  // loop addresses transpose where loop-carried pointer tiles would not.
  pm.add("transpose-loads", options);

  // Cleanup of what the frontend traced. Folded constants and merged index arithmetic let the axis analysis
  // see the contiguity and divisibility of pointers, which is what coalescing decides from.
  pm.add("canonicalize", options);
  pm.add("cse", options);
  pm.add("dce", options);

  // Layouts. Memory ops first, because their layout decides whether accesses are wide and coalesced; every
  // other tile value then follows them (or the target's policy, e.g. tensor-core accumulators); last, the
  // conversions that cancel or can be recomputed in place are removed, since each one may cost shared memory.
  pm.add("coalesce", options);
  pm.add("assign-layouts", options);
  pm.add("remove-layout-conversions", options);

  // Cleanup again: the layout passes leave dead conversions and duplicated index arithmetic behind, and
  // anything left here would take registers and shared memory in the next stage.
  pm.add("canonicalize", options);
  pm.add("cse", options);
  pm.add("dce", options);

  // Dot operands the target reads from shared memory are copied there asynchronously, without passing through
  // registers, and loops issue those copies options.numStages - 1 iterations ahead (where the target's copies are
  // a load and a store, the loads start the iteration and the stores end it); the address arithmetic the copies no
  // longer use goes.
  pm.add("async-copy-dot-operands", options);
  pm.add("pipeline-loops", options);
  pm.add("stage-copies-in-registers", options);
  pm.add("dce", options);
  // Values computed long before their use (a causal mask built before the dot it masks) move down to it, so
  // that they do not hold registers through the tensor-core work in between.
  pm.add("sink-to-uses", options);
  // With ping_pong, two groups of consumers each run their own tiles, one group's epilogue beside the other's main
  // loop.
  pm.add("ping-pong-consumers", options);
  // Warp-specialized consumers in several groups take turns issuing attention's Q K^T, so that one group's softmax
  // overlaps the next one's tensor-core work.
  pm.add("order-consumer-groups", options);

  // Shared memory, once the set of ops that need scratch is final: offsets for every buffer (reused where
  // lifetimes do not overlap), then a barrier between every pair of accesses that could race.
  pm.add("allocate-shared-memory", options);
  pm.add("insert-barriers", options);
}

std::vector<std::string> pipelineNames() { return {"default"}; }

void addPasses(PassManager& pm, const std::string& spec, const PassOptions& options) {
  std::stringstream names(spec);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name.empty()) continue;
    if (name == "default") {
      addDefaultPipeline(pm, options);
    } else if (std::unique_ptr<Pass> pass = createPass(name, options)) {
      pm.add(std::move(pass));
    } else {
      auto list = [](const std::vector<std::string>& all) {
        std::string s;
        for (const std::string& n : all) s += (s.empty() ? "" : ", ") + n;
        return s;
      };
      throw Error("unknown pass '" + name + "' (known passes: " + list(registeredPassNames()) +
                  "; pipelines: " + list(pipelineNames()) + ")");
    }
  }
}

}  // namespace tessera::transforms
