#include "jit/AutotunedKernel.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "ir/Error.h"
#include "jit/PtxasUsage.h"

namespace tessera::jit {

namespace {
bool isCuda(const DeviceRuntime* runtime) { return runtime && runtime->apiName() == "CUDA"; }

TuningDevice describeDevice(DeviceRuntime* runtime, const std::string& target, const std::string& arch) {
  TuningDevice d;
  if (isCuda(runtime)) {
    CudaDriver& driver = CudaDriver::instance();
    d.identity = driver.deviceName() + ", CUDA driver " + std::to_string(driver.driverVersion()) + ", " + arch;
    d.checks.maxSharedBytes = driver.maxSharedBytesPerBlockOptin();
    d.inspectLoaded = true;
  } else {
    d.identity = (runtime ? runtime->apiName() : std::string("no device")) + " " + target + " " + arch;
    d.checks.maxSharedBytes = knownSharedMemoryLimit(target, arch);
  }
  if (target == "nvptx") d.checks.ptxas = findPtxas();
  return d;
}
}  // namespace

TuningDevice tuningDeviceFor(DeviceRuntime* runtime, const std::string& target, const std::string& arch) {
  // Asked on every autotuned launch: the driver queries and the search for ptxas run once per device and arch.
  static std::mutex mutex;
  static std::map<std::tuple<uint64_t, std::string, std::string>, TuningDevice> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(runtime ? runtime->instanceId() : 0, target, arch);
  auto it = known.find(key);
  if (it == known.end()) it = known.emplace(key, describeDevice(runtime, target, arch)).first;
  return it->second;
}

std::function<std::string(size_t)> compileAndPrune(JitKernel& jit, const std::vector<TuneConfig>& configs,
                                                   const std::vector<KernelArg>& args, const Constants& constants,
                                                   const LaunchOptions& resolved, const TuningDevice& device,
                                                   const DescriptorBlocks& blocks) {
  return [&jit, &configs, args, constants, resolved, device, blocks](size_t i) {
    const TuneConfig& config = configs.at(i);
    const Constants merged = mergeTuneConstants(config, constants, jit.definition().name());
    const LaunchOptions options = applyTuneOptions(config, resolved);
    const std::vector<KernelArg> configArgs = argsForConfig(jit.definition(), blocks, config, constants, args);
    // Compiled as the launch will be (the same texts kept), so that the launch finds it in the cache.
    const KeptIR kept = options.runtime ? JitKernel::keptForLaunchOn(*options.runtime) : KeptIR::All;
    std::string reason = pruneReason(*jit.compileOnly(configArgs, merged, options, kept), device.checks);
    // Loading reads the compiled kernel from the cache that compileOnly just filled; nothing is launched.
    if (reason.empty() && device.inspectLoaded)
      reason = localMemoryPruneReason(jit.prepare(configArgs, merged, options).localBytesPerThread());
    return reason;
  };
}

TuningKey tuningKeyFor(const KernelDef& def, const std::vector<std::string>& keyNames,
                       const std::vector<KernelArg>& args, const Constants& constants) {
  const std::vector<ParamInfo> runtime = def.runtimeParams();
  TuningKey key;
  for (const std::string& name : keyNames) {
    auto param = std::find_if(runtime.begin(), runtime.end(), [&](const ParamInfo& p) { return p.name == name; });
    if (param != runtime.end()) {
      const size_t index = param - runtime.begin();
      if (index >= args.size())
        throw Error("autotuned kernel '" + def.name() + "': the launch has no argument '" + name + "'");
      const KernelArg& a = args[index];
      if (a.kind() == KernelArg::Kind::Pointer)
        throw Error("autotuned kernel '" + def.name() + "': key '" + name + "' is a pointer; its element type is "
                    "fixed by the kernel's signature, so key on sizes and Consts");
      if (a.kind() == KernelArg::Kind::TensorDescriptor) {  // a descriptor keys on the shape it describes
        std::string shape;
        for (int64_t d : a.descriptor().shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
        key.emplace_back(name, shape);
        continue;
      }
      key.emplace_back(name, a.kind() == KernelArg::Kind::Int ? std::to_string(a.intValue())
                                                              : std::to_string(a.floatValue()));
      continue;
    }
    auto c = constants.find(name);
    if (c == constants.end())
      throw Error("autotuned kernel '" + def.name() + "': key '" + name + "' is a Const the launch does not give");
    key.emplace_back(name, std::holds_alternative<int64_t>(c->second) ? std::to_string(std::get<int64_t>(c->second))
                                                                     : std::to_string(std::get<double>(c->second)));
  }
  return key;
}

AutotunedKernel::AutotunedKernel(KernelDef def, std::vector<TuneConfig> configs, std::vector<std::string> keyNames,
                                 AutotuneOptions options, KernelCache& cache)
    : jit_(def, cache), tuner_(def, std::move(configs), std::move(keyNames), std::move(options)) {}

KernelTimer* AutotunedKernel::timerFor(DeviceRuntime& runtime) {
  if (timer_) return timer_.get();
  auto it = deviceTimers_.find(runtime.instanceId());
  if (it == deviceTimers_.end()) {
    std::unique_ptr<TimingClock> clock = runtime.makeTimingClock();
    it = deviceTimers_.emplace(runtime.instanceId(), clock ? std::make_unique<ClockTimer>(std::move(clock)) : nullptr)
             .first;
  }
  return it->second.get();
}

const TuneConfig& AutotunedKernel::select(const ConfigGrid& grid, const std::vector<KernelArg>& args,
                                          const Constants& constants, const LaunchOptions& options) {
  const KernelDef& def = jit_.definition();
  const std::vector<TuneConfig>& configs = tuner_.configs();
  DeviceRuntime& runtime = options.runtime ? *options.runtime : jit_.runtimeFor(options.target);
  LaunchOptions resolved = options;
  resolved.target = runtime.target();
  if (resolved.arch.empty()) resolved.arch = runtime.nativeArch();
  const TuningDevice device = tuningDeviceFor(&runtime, resolved.target, resolved.arch);
  TuningHooks hooks;
  const DescriptorBlocks& blocks = tuner_.descriptorBlocks();
  hooks.prepare = compileAndPrune(jit_, configs, args, constants, resolved, device, blocks);
  KernelTimer* timer = timerFor(runtime);
  if (!timer)
    hooks.cannotBenchmark = "autotuned kernel '" + def.name() + "': " + runtime.apiName() +
                            " has no clock to tune with; real timing runs on a CUDA or AMD GPU (give the tuner a "
                            "timer with setTimer)";
  hooks.benchmark = [&](size_t i) {
    const Constants merged = mergeTuneConstants(configs[i], constants, def.name());
    const LaunchOptions launchOptions = applyTuneOptions(configs[i], resolved);
    const LaunchGrid g = grid(configs[i]);
    const std::vector<KernelArg> configArgs = argsForConfig(def, blocks, configs[i], constants, args);
    return timer->milliseconds([&] { jit_.launch(g, configArgs, merged, launchOptions); });
  };
  best_ = tuner_.select(tuningKeyFor(def, tuner_.keyNames(), args, constants), device.identity, hooks);
  return configs[*best_];
}

void AutotunedKernel::launch(const ConfigGrid& grid, const std::vector<KernelArg>& args, const Constants& constants,
                             const LaunchOptions& options) {
  const TuneConfig& config = select(grid, args, constants, options);
  const KernelDef& def = jit_.definition();
  jit_.launch(grid(config), argsForConfig(def, tuner_.descriptorBlocks(), config, constants, args),
              mergeTuneConstants(config, constants, def.name()), applyTuneOptions(config, options));
}

std::optional<TuneConfig> AutotunedKernel::bestConfig() const {
  return best_ ? std::optional<TuneConfig>(tuner_.configs()[*best_]) : std::nullopt;
}

}  // namespace tessera::jit
