#include "jit/KfdTopology.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

namespace tessera::jit {

std::optional<std::string> gfxArchName(long long v) {
  if (v <= 0) return std::nullopt;
  long long major = v / 10000, minor = v / 100 % 100, stepping = v % 100;
  if (minor > 15 || stepping > 15) return std::nullopt;  // each is one hex digit in the name
  const char* hex = "0123456789abcdef";
  return "gfx" + std::to_string(major) + hex[minor] + hex[stepping];
}

std::vector<KfdGpu> kfdGpus(const std::filesystem::path& nodes) {
  std::error_code ec;
  std::vector<std::pair<long long, std::filesystem::path>> numbered;
  for (const auto& entry : std::filesystem::directory_iterator(nodes, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) continue;
    numbered.emplace_back(std::stoll(name), entry.path());
  }
  std::sort(numbered.begin(), numbered.end());  // node 10 after node 9
  std::vector<KfdGpu> gpus;
  for (const auto& [index, dir] : numbered) {
    std::ifstream in(dir / "properties");
    std::map<std::string, long long> properties;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string key;
      long long value = 0;
      if (fields >> key >> value) properties[key] = value;
    }
    std::optional<std::string> arch = gfxArchName(properties["gfx_target_version"]);
    if (!arch) continue;
    const long long simds = properties["simd_count"], perUnit = properties["simd_per_cu"];
    gpus.push_back({*arch, perUnit > 0 ? static_cast<int>(simds / perUnit) : 0});
  }
  return gpus;
}

std::vector<std::string> kfdGpuArchs(const std::filesystem::path& nodes) {
  std::vector<std::string> archs;
  for (const KfdGpu& gpu : kfdGpus(nodes)) archs.push_back(gpu.arch);
  return archs;
}

}  // namespace tessera::jit
