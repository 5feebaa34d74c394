#include "jit/Autotuner.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ir/Error.h"
#include "jit/ParallelFor.h"
#include "jit/TuningProgress.h"
#include "jit/Version.h"

namespace tessera::jit {

namespace {

std::string joinKey(const TuningKey& key) {
  std::string s;
  for (const auto& [name, value] : key) s += (s.empty() ? "" : ", ") + name + "=" + value;
  return s;
}

std::string identityOf(const KernelDef& def) {
  std::string s = def.name() + "(";
  for (const ParamInfo& p : def.params())
    s += p.name + (p.kind == ParamKind::Constant ? ": const " : ": ") + p.type.str() + ";";
  return s + ")";
}

std::string messageOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& error) {
    return error.message();
  } catch (const std::exception& error) {
    return error.what();
  }
}

}  // namespace

std::optional<size_t> fixedConfigFromEnvironment() {
  const char* env = std::getenv("TESSERA_AUTOTUNE_CONFIG");
  if (!env || !*env) return std::nullopt;
  const std::string text = env;
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
    throw Error("TESSERA_AUTOTUNE_CONFIG must be the index of a config (0, 1, ...), got '" + text + "'");
  return std::stoul(text);
}

Autotuner::Autotuner(const KernelDef& def, std::vector<TuneConfig> configs, std::vector<std::string> keyNames,
                     AutotuneOptions options)
    : kernelName_(def.name()), kernelIdentity_(identityOf(def)), configs_(std::move(configs)),
      keyNames_(std::move(keyNames)), options_(std::move(options)), cache_(options_.cacheDirectory) {
  validateTuneConfigs(def, configs_);
  validateDescriptorBlocks(def, options_.descriptorBlocks);
  const std::string subject = "autotune of kernel '" + kernelName_ + "'";
  if (keyNames_.empty())
    throw Error(subject + ": the key names no launch argument (name the arguments whose values change the best "
                "config, e.g. M, N, K)");
  for (const std::string& name : keyNames_) {
    const std::vector<ParamInfo>& params = def.params();
    auto param = std::find_if(params.begin(), params.end(), [&](const ParamInfo& p) { return p.name == name; });
    if (param == params.end()) throw Error(subject + ": key '" + name + "' is not a parameter of the kernel");
    if (std::count(keyNames_.begin(), keyNames_.end(), name) > 1)
      throw Error(subject + ": key '" + name + "' is named twice");
  }
  if (options_.fixedConfig && *options_.fixedConfig >= configs_.size())
    throw Error(subject + ": fixed config " + std::to_string(*options_.fixedConfig) + " does not exist (there are " +
                std::to_string(configs_.size()) + " configs)");
}

std::optional<TuningReport> Autotuner::lastReport() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastReport_;
}

size_t Autotuner::select(const TuningKey& key, const std::string& device, const TuningHooks& hooks) {
  std::vector<std::string> names;
  for (const auto& [name, value] : key) names.push_back(name);
  if (names != keyNames_)
    throw Error("autotune of kernel '" + kernelName_ + "': the launch's key values name " + joinKey(key) +
                ", expected values for the key's arguments in order");
  const std::string keyText = joinKey(key);
  std::lock_guard<std::mutex> lock(mutex_);  // one tuning at a time: concurrent launches wait for the winner
  if (options_.fixedConfig) {
    lastReport_ = TuningReport{keyText, *options_.fixedConfig, TuningReport::Source::Fixed, {}};
    return *options_.fixedConfig;
  }
  std::string configsText;
  for (const TuneConfig& c : configs_) configsText += "{" + c.str() + "}";
  if (!options_.descriptorBlocks.empty()) configsText += " blocks " + descriptorBlocksText(options_.descriptorBlocks);
  const std::string cacheKey = tuningCacheKey({kernelIdentity_, configsText, keyText, device, compilerVersion()});
  if (auto it = chosen_.find(cacheKey); it != chosen_.end()) {
    lastReport_ = TuningReport{keyText, it->second, TuningReport::Source::Cached, {}};
    return it->second;
  }
  if (std::optional<TuningRecord> r = cache_.load(cacheKey);
      r && r->index < configs_.size() && configs_[r->index].str() == r->config) {
    chosen_[cacheKey] = r->index;
    lastReport_ = TuningReport{keyText, r->index, TuningReport::Source::Cached, {}};
    return r->index;
  }
  return tune(keyText, cacheKey, hooks);
}

size_t Autotuner::tune(const std::string& keyText, const std::string& cacheKey, const TuningHooks& hooks) {
  if (!hooks.cannotBenchmark.empty()) throw Error(hooks.cannotBenchmark);
  const size_t n = configs_.size();
  TuningProgress progress(options_.quiet ? nullptr : options_.progress ? options_.progress : defaultProgressStream(),
                          "@" + kernelName_ + " " + keyText, n);
  std::vector<ConfigOutcome> outcomes(n);
  std::vector<std::exception_ptr> errors =
      parallelFor(n, options_.compileThreads ? options_.compileThreads : defaultCompileThreads(), [&](size_t i) {
        outcomes[i].rejected = hooks.prepare(i);
        progress.compiled(!outcomes[i].rejected.empty());
      });
  std::vector<size_t> survivors;
  for (size_t i = 0; i < n; ++i) {
    if (errors[i]) {
      outcomes[i].rejected = "failed to compile: " + messageOf(errors[i]);
      progress.compiled(true);
    }
    if (outcomes[i].rejected.empty()) survivors.push_back(i);
  }
  progress.benchmarkStarting(survivors.size());
  for (size_t i : survivors) {
    try {
      const double ms = hooks.benchmark(i);
      if (!std::isfinite(ms) || ms < 0) throw Error("the timer measured " + std::to_string(ms) + " ms");
      outcomes[i].ms = ms;
    } catch (const Error& e) {
      outcomes[i].rejected = "failed to run: " + e.message();
    }
    progress.benchmarked();
  }
  std::optional<size_t> winner;
  for (size_t i : survivors)
    if (outcomes[i].ms && (!winner || *outcomes[i].ms < *outcomes[*winner].ms)) winner = i;
  if (!winner) {
    std::string why;
    for (size_t i = 0; i < n; ++i)
      why += "\n  config " + std::to_string(i) + " {" + configs_[i].str() + "}: " + outcomes[i].rejected;
    throw Error("autotune of kernel '" + kernelName_ + "' for " + keyText + ": no config can run:" + why);
  }
  cache_.store(cacheKey, {*winner, configs_[*winner].str()});
  chosen_[cacheKey] = *winner;
  lastReport_ = TuningReport{keyText, *winner, TuningReport::Source::Benchmarked, std::move(outcomes)};
  progress.finished(configs_[*winner].str());
  return *winner;
}

}  // namespace tessera::jit
