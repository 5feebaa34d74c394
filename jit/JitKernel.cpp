#include "jit/JitKernel.h"

#include "backends/Target.h"
#include "ir/EnvFlag.h"
#include "ir/Printer.h"
#include "jit/Compiler.h"
#include "jit/Timings.h"
#include "jit/Version.h"

namespace tessera::jit {

namespace {
// Targets are stateless; one per name for the whole process.
const backends::Target& targetNamed(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<backends::Target>> targets;
  std::lock_guard<std::mutex> lock(mutex);
  auto& t = targets[name];
  if (!t) t = backends::createTarget(name);
  return *t;
}
}  // namespace

JitKernel::JitKernel(KernelDef def, KernelCache& cache, CudaDriver& driver)
    : JitKernel(std::move(def), cache, driver, HipRuntime::instance()) {}

JitKernel::JitKernel(KernelDef def, KernelCache& cache, CudaDriver& driver, HipRuntime& hip)
    : def_(std::move(def)), cache_(cache), cuda_(makeCudaDeviceRuntime(driver)), hip_(makeHipDeviceRuntime(hip)) {}

JitKernel::~JitKernel() = default;

Specialization JitKernel::specialize(const std::vector<KernelArg>& args, const Constants& constants,
                                     const LaunchOptions& options) const {
  Specialization s;
  s.constants = constants;
  s.args = argumentFacts(def_.name(), def_.runtimeParams(), args);
  s.numWarps = options.numWarps;
  s.numStages = options.numStages;
  s.target = resolveTarget(options.target);
  s.arch = options.arch.empty() ? targetNamed(s.target).defaultArch() : options.arch;
  s.fastMath = options.fastMath;
  s.persistent = options.persistent || options.pingPong;
  s.warpSpecialize = options.warpSpecialize || options.pingPong;
  s.pingPong = options.pingPong;
  checkMatrixInstrSize("kernel '" + def_.name() + "'", options.matrixInstrSize);
  // Only AMD has the choice: elsewhere the option leaves one cache entry.
  s.matrixInstrSize = s.target == "amdgpu" ? options.matrixInstrSize : 0;
  s.clusterDims = options.clusterDims;
  // A switch to measure the turns' worth (docs/JIT.md), not a launch option: read at every launch, so that a
  // benchmark can compile the kernel both ways in one process.
  s.consumerTurns = !envFlag("TESSERA_NO_CONSUMER_TURNS");
  return s;
}

std::unique_ptr<ir::Module> JitKernel::specializedIR(const Specialization& s) const {
  std::unique_ptr<ir::Module> m;
  StageTimings(def_.name(), s.target, s.arch).time("trace", [&] {
    m = def_.trace(s.constants, descriptorTypes(def_.runtimeParams(), s.args));
  });
  applySpecialization(*m->functions()[0], s.args);
  return m;
}

std::shared_ptr<const CompiledKernel> JitKernel::compileSpecialization(const Specialization& s, KeptIR kept) {
  std::unique_ptr<ir::Module> m = specializedIR(s);
  const ir::Function& f = *m->functions()[0];
  const backends::Target& target = targetNamed(s.target);
  backends::TargetOptions options;
  options.arch = s.arch;
  options.numWarps = s.numWarps;
  options.numStages = s.numStages;
  options.fastMath = s.fastMath;
  options.persistent = s.persistent;
  options.warpSpecialize = s.warpSpecialize;
  options.consumerTurns = s.consumerTurns;
  options.pingPong = s.pingPong;
  options.matrixInstrSize = s.matrixInstrSize;
  options.clusterDims = s.clusterDims;
  CacheKeyInputs keyInputs;
  // With locations: the compiled kernel carries them (PTX .loc, the emulator's findings), so kernels that differ
  // only in where they were written must not share an entry.
  keyInputs.irText = ir::print(f, {.locations = true});
  keyInputs.target = s.target;
  keyInputs.arch = s.arch;
  keyInputs.format = target.binaryFormat();
  keyInputs.numWarps = s.numWarps;
  keyInputs.options = std::string("fast_math=") + (s.fastMath ? "1" : "0") + ";num_stages=" + std::to_string(s.numStages) +
                       (s.persistent ? ";persistent" : "") +
                       (s.warpSpecialize ? ";warp_specialize" : "") + (s.pingPong ? ";ping_pong" : "") +
                       (s.consumerTurns ? "" : ";no_consumer_turns") +
                       (s.matrixInstrSize ? ";matrix_instr_nonkdim=" + std::to_string(s.matrixInstrSize) : "") +
                       (s.clusterDims != std::array<int, 3>{1, 1, 1} ? ";cluster=" + clusterShapeText(s.clusterDims)
                                                                      : "");
  // A launch's entry keeps fewer texts than an inspection's (KeptIR): the two do not stand in for each other.
  keyInputs.options += kept == KeptIR::All ? ";ir=all" : kept == KeptIR::ForLaunch ? ";ir=launch" : ";ir=emulator";
  keyInputs.compilerVersion = compilerVersion();
  keyInputs.toolchain = target.toolchainIdentity();
  return cache_.getOrCompile(keyInputs, [&] { return compile(f, target, options, kept); });
}

std::shared_ptr<const CompiledKernel> JitKernel::compileOnly(const std::vector<KernelArg>& args,
                                                             const Constants& constants, const LaunchOptions& options,
                                                             KeptIR kept) {
  return compileSpecialization(specialize(args, constants, options), kept);
}

DeviceRuntime& JitKernel::runtimeFor(const std::string& target) const {
  return selectRuntime(target, {cuda_.get(), hip_.get()});
}

// "auto" becomes the first target with a device; explicit names pass through (compileOnly needs no device).
std::string JitKernel::resolveTarget(const std::string& target) const {
  return target == "auto" ? runtimeFor(target).target() : target;
}

LaunchOptions JitKernel::resolveForLaunch(const LaunchOptions& options) const {
  LaunchOptions resolved = options;
  DeviceRuntime* runtime = options.runtime;
  if (runtime) {
    resolved.target = runtime->target();
  } else {
    resolved.target = resolveTarget(options.target);
    for (DeviceRuntime* r : {cuda_.get(), hip_.get()})
      if (r->target() == resolved.target) runtime = r;
  }
  if (!runtime)
    throw Error("cannot launch kernel '" + def_.name() + "': unknown GPU target '" + resolved.target +
                "': expected 'auto', 'nvptx' or 'amdgpu'");
  if (!runtime->available())
    throw Error("cannot launch kernel '" + def_.name() + "': " + runtime->apiName() +
                " is not available: " + runtime->unavailableReason());
  if (resolved.arch.empty()) resolved.arch = runtime->nativeArch();
  resolved.runtime = runtime;
  return resolved;
}

LoadedKernel& JitKernel::prepare(const std::vector<KernelArg>& args, const Constants& constants,
                                 const LaunchOptions& options) {
  LaunchOptions resolved = resolveForLaunch(options);
  Specialization s = specialize(args, constants, resolved);
  std::pair<uint64_t, std::string> key{resolved.runtime->instanceId(), s.key()};
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = loaded_.find(key);
  if (it == loaded_.end()) {
    std::vector<ir::Type> paramTypes;
    const std::vector<ParamInfo> params = def_.runtimeParams();
    for (size_t i = 0; i < params.size(); ++i)
      paramTypes.push_back(s.args[i].descriptorType ? s.args[i].descriptorType : params[i].type);
    std::shared_ptr<const CompiledKernel> compiled = compileSpecialization(s, keptForLaunchOn(*resolved.runtime));
    it = loaded_.emplace(key, std::make_unique<LoadedKernel>(std::move(compiled), paramTypes,
                                                             *resolved.runtime)).first;
  }
  return *it->second;
}

void JitKernel::launch(const LaunchGrid& grid, const std::vector<KernelArg>& args, const Constants& constants,
                       const LaunchOptions& options) {
  prepare(args, constants, options).launch(grid, args, options.stream);
}

size_t JitKernel::loadedVariants() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loaded_.size();
}

}  // namespace tessera::jit
