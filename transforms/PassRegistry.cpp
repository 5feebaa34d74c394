#include <map>

#include "transforms/PassManager.h"

namespace tessera::transforms {

using PassFactory = std::unique_ptr<Pass> (*)();

// Sorted by name, so registeredPassNames() and error messages list passes in a stable order.
static const std::map<std::string, PassFactory>& registry() {
  static const std::map<std::string, PassFactory> passes = {
      {"canonicalize", &createCanonicalizePass},
      {"cse", &createCSEPass},
      {"dce", &createDCEPass},
  };
  return passes;
}

std::unique_ptr<Pass> createPass(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second();
}

std::vector<std::string> registeredPassNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace tessera::transforms
