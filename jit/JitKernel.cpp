#include "jit/JitKernel.h"

#include "backends/Target.h"
#include "ir/Printer.h"
#include "jit/Compiler.h"
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
    : def_(std::move(def)), cache_(cache), driver_(driver) {}

JitKernel::~JitKernel() = default;

Specialization JitKernel::specialize(const std::vector<KernelArg>& args, const Constants& constants,
                                     const LaunchOptions& options) const {
  Specialization s;
  s.constants = constants;
  s.args = argumentFacts(def_.name(), def_.runtimeParams(), args);
  s.numWarps = options.numWarps;
  s.target = options.target;
  s.arch = options.arch.empty() ? targetNamed(options.target).defaultArch() : options.arch;
  s.fastMath = options.fastMath;
  return s;
}

std::unique_ptr<ir::Module> JitKernel::specializedIR(const Specialization& s) const {
  std::unique_ptr<ir::Module> m = def_.trace(s.constants);
  applySpecialization(*m->functions()[0], s.args);
  return m;
}

std::shared_ptr<const CompiledKernel> JitKernel::compileSpecialization(const Specialization& s) {
  std::unique_ptr<ir::Module> m = specializedIR(s);
  const ir::Function& f = *m->functions()[0];
  const backends::Target& target = targetNamed(s.target);
  backends::TargetOptions options;
  options.arch = s.arch;
  options.numWarps = s.numWarps;
  options.fastMath = s.fastMath;
  CacheKeyInputs keyInputs;
  keyInputs.irText = ir::print(f);
  keyInputs.target = s.target;
  keyInputs.arch = s.arch;
  keyInputs.numWarps = s.numWarps;
  keyInputs.options = std::string("fast_math=") + (s.fastMath ? "1" : "0");
  keyInputs.compilerVersion = compilerVersion();
  return cache_.getOrCompile(cacheKey(keyInputs), [&] { return compile(f, target, options); });
}

std::shared_ptr<const CompiledKernel> JitKernel::compileOnly(const std::vector<KernelArg>& args,
                                                             const Constants& constants, const LaunchOptions& options) {
  return compileSpecialization(specialize(args, constants, options));
}

LaunchOptions JitKernel::resolveForLaunch(const LaunchOptions& options) const {
  if (!driver_.available())
    throw Error("cannot launch kernel '" + def_.name() + "': CUDA is not available: " + driver_.unavailableReason());
  LaunchOptions resolved = options;
  if (resolved.arch.empty()) resolved.arch = driver_.nativeArch();
  return resolved;
}

LoadedKernel& JitKernel::prepare(const std::vector<KernelArg>& args, const Constants& constants,
                                 const LaunchOptions& options) {
  Specialization s = specialize(args, constants, resolveForLaunch(options));
  std::string key = s.key();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = loaded_.find(key);
  if (it == loaded_.end()) {
    std::vector<ir::Type> paramTypes;
    for (const ParamInfo& p : def_.runtimeParams()) paramTypes.push_back(p.type);
    it = loaded_.emplace(key, std::make_unique<LoadedKernel>(compileSpecialization(s), paramTypes, driver_)).first;
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
