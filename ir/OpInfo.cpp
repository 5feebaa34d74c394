#include "ir/OpInfo.h"

#include <unordered_map>

namespace tessera::ir {

static const OpInfo kOpInfos[] = {
#define OP(Enum, name, operands, results, regions, traits) \
  OpInfo{OpKind::Enum, name, operands, results, regions, static_cast<uint32_t>(traits)},
#include "ir/Ops.def"
};

const OpInfo& opInfo(OpKind k) { return kOpInfos[static_cast<size_t>(k)]; }
const char* opName(OpKind k) { return opInfo(k).name; }
int numOpKinds() { return static_cast<int>(sizeof(kOpInfos) / sizeof(kOpInfos[0])); }

std::optional<OpKind> opKindFromName(const std::string& name) {
  static const std::unordered_map<std::string, OpKind> byName = [] {
    std::unordered_map<std::string, OpKind> m;
    for (const OpInfo& info : kOpInfos) m.emplace(info.name, info.kind);
    return m;
  }();
  auto it = byName.find(name);
  if (it == byName.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera::ir
