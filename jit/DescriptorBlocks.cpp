#include "jit/DescriptorBlocks.h"

#include <algorithm>

#include "ir/Error.h"

namespace tessera::jit {

namespace {

const ParamInfo* findParam(const std::vector<ParamInfo>& params, const std::string& name) {
  auto it = std::find_if(params.begin(), params.end(), [&](const ParamInfo& p) { return p.name == name; });
  return it == params.end() ? nullptr : &*it;
}

}  // namespace

void validateDescriptorBlocks(const KernelDef& def, const DescriptorBlocks& blocks) {
  const std::string subject = "autotune of kernel '" + def.name() + "', descriptor_blocks";
  for (const auto& [name, dims] : blocks) {
    const ParamInfo* p = findParam(def.params(), name);
    if (!p || p->kind != ParamKind::TensorDescriptor)
      throw Error(subject + ": '" + name + "' is not a tensor descriptor parameter of the kernel");
    if (dims.empty() || dims.size() > 5)
      throw Error(subject + " of '" + name + "': a block has 1 to 5 dimensions, got " + std::to_string(dims.size()));
    for (const BlockDim& d : dims) {
      if (const int64_t* n = std::get_if<int64_t>(&d); n && *n <= 0)
        throw Error(subject + " of '" + name + "': block dimensions must be positive, got " + std::to_string(*n));
      if (const std::string* c = std::get_if<std::string>(&d)) {
        const ParamInfo* q = findParam(def.params(), *c);
        if (!q || q->kind != ParamKind::Constant)
          throw Error(subject + " of '" + name + "': '" + *c + "' is not a Const parameter of the kernel");
      }
    }
  }
}

std::vector<KernelArg> argsForConfig(const KernelDef& def, const DescriptorBlocks& blocks, const TuneConfig& config,
                                     const Constants& launchConstants, std::vector<KernelArg> args) {
  const std::vector<ParamInfo> runtime = def.runtimeParams();
  for (const auto& [name, dims] : blocks) {
    const auto p = std::find_if(runtime.begin(), runtime.end(), [&](const ParamInfo& q) { return q.name == name; });
    const size_t index = static_cast<size_t>(p - runtime.begin());
    if (p == runtime.end() || index >= args.size() || args[index].kind() != KernelArg::Kind::TensorDescriptor)
      continue;  // a launch with too few arguments is refused by the launch itself, naming what is missing
    std::vector<int64_t> block;
    for (const BlockDim& d : dims) {
      if (const int64_t* n = std::get_if<int64_t>(&d)) {
        block.push_back(*n);
        continue;
      }
      const std::string& c = std::get<std::string>(d);
      const Constants& from = config.constants.count(c) ? config.constants : launchConstants;
      const auto value = from.find(c);
      if (value == from.end() || !std::holds_alternative<int64_t>(value->second))
        throw Error("autotuned kernel '" + def.name() + "', config {" + config.str() + "}: the block of '" + name +
                    "' takes Const '" + c + "', which neither the config nor the launch sets to an integer");
      block.push_back(std::get<int64_t>(value->second));
    }
    const ir::TensorDescriptorFields& d = args[index].descriptor();
    if (block.size() != d.shape.size())
      throw Error("autotuned kernel '" + def.name() + "': descriptor_blocks gives '" + name + "' a block of " +
                  std::to_string(block.size()) + " dimensions; its descriptor has " + std::to_string(d.shape.size()));
    args[index] = KernelArg::tensorDescriptor(d.base, d.shape, d.strides, std::move(block));
  }
  return args;
}

std::string descriptorBlocksText(const DescriptorBlocks& blocks) {
  std::string s;
  for (const auto& [name, dims] : blocks) {
    s += (s.empty() ? "" : ";") + name + "=(";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) s += ",";
      s += std::holds_alternative<int64_t>(dims[i]) ? std::to_string(std::get<int64_t>(dims[i]))
                                                    : std::get<std::string>(dims[i]);
    }
    s += ")";
  }
  return s;
}

}  // namespace tessera::jit
