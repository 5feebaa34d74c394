#include "jit/TuneConfig.h"

#include <algorithm>
#include <sstream>

#include "ir/Error.h"

namespace tessera::jit {

namespace {
std::string constText(const ConstValue& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  std::ostringstream os;
  os.precision(17);
  os << std::get<double>(v);
  return os.str();
}

bool isPowerOfTwoWarps(int w) { return w >= 1 && w <= 32 && (w & (w - 1)) == 0; }
}  // namespace

std::string TuneConfig::str() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  for (const auto& [name, value] : constants) add(name + "=" + constText(value));
  add("num_warps=" + std::to_string(numWarps));
  for (const auto& [name, value] : options) add(name + "=" + std::to_string(value));
  return s;
}

const std::vector<std::string>& tuneOptionNames() {
  static const std::vector<std::string> names{"fast_math", "matrix_instr_nonkdim", "num_stages", "persistent",
                                               "ping_pong", "warp_specialize"};
  return names;
}

LaunchOptions applyTuneOptions(const TuneConfig& config, LaunchOptions base) {
  base.numWarps = config.numWarps;
  for (const auto& [name, value] : config.options) {
    if (name == "fast_math") base.fastMath = value != 0;
    else if (name == "num_stages") base.numStages = static_cast<int>(value);
    else if (name == "persistent") base.persistent = value != 0;
    else if (name == "warp_specialize") base.warpSpecialize = value != 0;
    else if (name == "ping_pong") base.pingPong = value != 0;
    else if (name == "matrix_instr_nonkdim") base.matrixInstrSize = static_cast<int>(value);
    else throw Error("autotune config {" + config.str() + "}: unknown compile option '" + name + "'");
  }
  return base;
}

Constants mergeTuneConstants(const TuneConfig& config, const Constants& launchConstants, const std::string& kernel) {
  Constants merged = launchConstants;
  for (const auto& [name, value] : config.constants)
    if (!merged.emplace(name, value).second)
      throw Error("autotuned kernel '" + kernel + "': Const '" + name +
                  "' is set by the autotune configs; do not pass it to the launch");
  return merged;
}

void validateTuneConfigs(const KernelDef& def, const std::vector<TuneConfig>& configs) {
  const std::string subject = "autotune of kernel '" + def.name() + "'";
  if (configs.empty()) throw Error(subject + ": no configs to choose from (give at least one)");
  std::vector<std::string> constNames;
  for (const ParamInfo& p : def.params())
    if (p.kind == ParamKind::Constant) constNames.push_back(p.name);
  const std::vector<std::string>& options = tuneOptionNames();
  for (size_t i = 0; i < configs.size(); ++i) {
    const TuneConfig& c = configs[i];
    const std::string where = subject + ", config " + std::to_string(i) + " {" + c.str() + "}";
    for (const auto& [name, value] : c.constants)
      if (std::find(constNames.begin(), constNames.end(), name) == constNames.end())
        throw Error(where + ": '" + name + "' is not a Const parameter of the kernel");
    for (const auto& [name, value] : c.options)
      if (std::find(options.begin(), options.end(), name) == options.end())
        throw Error(where + ": unknown compile option '" + name + "'");
    if (!isPowerOfTwoWarps(c.numWarps))
      throw Error(where + ": num_warps must be a power of two between 1 and 32, got " + std::to_string(c.numWarps));
    for (size_t j = 0; j < i; ++j)
      if (configs[j] == c) throw Error(where + ": repeats config " + std::to_string(j));
  }
}

}  // namespace tessera::jit
