#include "ir/OpInfo.h"

#include <unordered_map>
#include <vector>

namespace tessera::ir {

static const OpInfo kOpInfos[] = {
#define OP(Enum, name, operands, results, regions, traits, elements) \
  OpInfo{OpKind::Enum, name, operands, results, regions, static_cast<uint32_t>(traits), elements},
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

bool acceptsElement(ElementTypeSet set, Type t) {
  if (t.isPtr()) return (set & kPointerElements) != 0;
  return (set & elementsOf(t.scalarKind())) != 0;
}

std::string describeElements(ElementTypeSet set) {
  struct Group {
    ElementTypeSet members;
    const char* name;
  };
  const Group groups[] = {{kIntElements, "integer"},
                          {kBoolElements, "i1"},
                          {kFloatElements, "floating-point"},
                          {kPointerElements, "pointer"}};
  std::vector<std::string> names;
  ElementTypeSet rest = set;
  for (const Group& g : groups)
    if ((set & g.members) == g.members) {
      names.push_back(g.name);
      rest &= ~g.members;
    }
  for (unsigned k = 0; k <= static_cast<unsigned>(ScalarKind::F8E5M2); ++k)
    if (rest & elementsOf(static_cast<ScalarKind>(k))) names.push_back(scalarKindName(static_cast<ScalarKind>(k)));
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  if ((set & kIntElements) == kIntElements && !(set & kBoolElements)) s += " (not i1)";
  return s;
}

}  // namespace tessera::ir
