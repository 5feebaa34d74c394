#include <map>

#include "transforms/AssignLayouts.h"
#include "transforms/PassManager.h"

namespace tessera::transforms {

using PassFactory = std::unique_ptr<Pass> (*)(const PassOptions&);

// Sorted by name, so registeredPassNames() and error messages list passes in a stable order.
static const std::map<std::string, PassFactory>& registry() {
  static const std::map<std::string, PassFactory> passes = {
      {"allocate-shared-memory", [](const PassOptions& o) { return createAllocateSharedMemoryPass(o); }},
      {"assign-layouts",
       [](const PassOptions& o) { return o.layoutPolicy ? createAssignLayoutsPass(o, o.layoutPolicy) : createAssignLayoutsPass(o); }},
      {"async-copy-dot-operands", [](const PassOptions& o) { return createAsyncCopyDotOperandsPass(o); }},
      {"canonicalize", [](const PassOptions&) { return createCanonicalizePass(); }},
      {"canonicalize-pointers", [](const PassOptions&) { return createCanonicalizePointersPass(); }},
      {"coalesce", [](const PassOptions& o) { return createCoalescePass(o); }},
      {"cse", [](const PassOptions&) { return createCSEPass(); }},
      {"dce", [](const PassOptions&) { return createDCEPass(); }},
      {"expand-descriptor-loads", [](const PassOptions& o) { return createExpandDescriptorLoadsPass(o); }},
      {"insert-barriers", [](const PassOptions&) { return createInsertBarriersPass(); }},
      {"make-persistent", [](const PassOptions&) { return createMakePersistentPass(); }},
      {"order-consumer-groups", [](const PassOptions& o) { return createOrderConsumerGroupsPass(o); }},
      {"ping-pong-consumers", [](const PassOptions& o) { return createPingPongConsumersPass(o); }},
      {"pipeline-loops", [](const PassOptions& o) { return createPipelineLoopsPass(o); }},
      {"remove-layout-conversions", [](const PassOptions&) { return createRemoveLayoutConversionsPass(); }},
      {"sink-to-uses", [](const PassOptions&) { return createSinkToUsesPass(); }},
      {"stage-copies-in-registers", [](const PassOptions& o) { return createStageCopiesInRegistersPass(o); }},
      {"transpose-loads", [](const PassOptions&) { return createTransposeLoadsPass(); }},
  };
  return passes;
}

std::unique_ptr<Pass> createPass(const std::string& name, const PassOptions& options) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second(options);
}

std::vector<std::string> registeredPassNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace tessera::transforms
