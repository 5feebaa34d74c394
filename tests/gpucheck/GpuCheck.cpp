#include "tests/gpucheck/GpuCheck.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/Target.h"
#include "backends/interpreter/Interpreter.h"
#include "ir/FloatFormats.h"
#include "jit/CudaDriver.h"
#include "jit/JitKernel.h"

namespace tessera::gpucheck {

namespace {

// Device copies of a check's buffers, released when the check ends (also when it throws).
class DeviceCopies {
 public:
  explicit DeviceCopies(jit::DeviceRuntime& runtime) : runtime_(runtime) {}
  ~DeviceCopies() {
    for (jit::DeviceAddress p : addresses_) runtime_.release(p);
  }
  DeviceCopies(const DeviceCopies&) = delete;
  DeviceCopies& operator=(const DeviceCopies&) = delete;

  jit::DeviceAddress add(const std::vector<uint8_t>& bytes) {
    addresses_.push_back(runtime_.allocate(bytes.size()));
    runtime_.copyToDevice(addresses_.back(), bytes.data(), bytes.size());
    return addresses_.back();
  }
  std::vector<uint8_t> toHost(size_t index, size_t bytes) const {
    std::vector<uint8_t> host(bytes);
    runtime_.copyToHost(host.data(), addresses_[index], bytes);
    return host;
  }

 private:
  jit::DeviceRuntime& runtime_;
  std::vector<jit::DeviceAddress> addresses_;
};

// A per-thread figure the runtime may be unable to report (HIP's module API has none).
template <class Query>
std::optional<int> ifReported(Query query) {
  try {
    return query();
  } catch (const Error&) {
    return std::nullopt;
  }
}

size_t elementBytes(ir::ScalarKind k) { return static_cast<size_t>(ir::Type::scalar(k).storageBytes()); }

// The element at `i` as a double (floats decoded exactly; integers by their signedness).
double elementValue(ir::ScalarKind k, const uint8_t* base, size_t i) {
  const uint8_t* p = base + i * elementBytes(k);
  uint64_t bits = 0;
  std::memcpy(&bits, p, elementBytes(k));
  if (ir::Type::scalar(k).isFloat()) return ir::decodeFloat(k, bits);
  switch (k) {
    case ir::ScalarKind::I8: return static_cast<int8_t>(bits);
    case ir::ScalarKind::I16: return static_cast<int16_t>(bits);
    case ir::ScalarKind::I32: return static_cast<int32_t>(bits);
    case ir::ScalarKind::I64: return static_cast<double>(static_cast<int64_t>(bits));
    default: return static_cast<double>(bits);
  }
}

void compareBuffer(const Tolerance& caseTolerance, size_t index, const HostBuffer& ref, const std::vector<uint8_t>& gpu,
                   CheckResult& r, const std::string& gotName, const std::string& referenceName) {
  const size_t width = elementBytes(ref.element), n = ref.bytes.size() / width;
  const bool isFloat = ir::Type::scalar(ref.element).isFloat();
  const Tolerance tol = ref.tolerance.value_or(caseTolerance);
  for (size_t i = 0; i < n; ++i) {
    double want = elementValue(ref.element, ref.bytes.data(), i);
    double got = elementValue(ref.element, gpu.data(), i);
    const bool sameBits = std::memcmp(ref.bytes.data() + i * width, gpu.data() + i * width, width) == 0;
    double err;
    if (!isFloat) {
      err = sameBits ? 0 : INFINITY;  // integers compare bit for bit (64-bit values do not fit a double exactly)
    } else if (std::isnan(want) || std::isnan(got)) {
      err = std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
    } else if (tol.bitExact) {
      err = sameBits ? 0 : INFINITY;
    } else if (std::isinf(want) || std::isinf(got)) {
      err = want == got ? 0 : INFINITY;
    } else {
      err = std::fabs(got - want) / (tol.atol + tol.rtol * std::fabs(want));
    }
    r.worstError = std::max(r.worstError, err);
    if (err > 1) {
      if (r.mismatches++ == 0) {
        std::ostringstream os;
        os.precision(9);
        os << "buffer " << index << " [" << i << "]: " << gotName << " " << got << ", " << referenceName << " "
           << want;
        if (isFloat && got == want) os << " (bits differ)";
        r.firstMismatch = os.str();
      }
    }
  }
}

// The case's buffers, copied so a run can change them.
std::vector<HostBuffer> buffersOf(const std::vector<CheckArg>& args) {
  std::vector<HostBuffer> buffers;
  for (const CheckArg& a : args)
    if (const auto* b = std::get_if<HostBuffer>(&a)) buffers.push_back(*b);
  return buffers;
}

// The case's arguments for a host run (interpreter or eager) over `buffers` (from buffersOf).
std::vector<interp::Arg> hostArgs(const std::vector<CheckArg>& caseArgs, std::vector<HostBuffer>& buffers) {
  std::vector<interp::Arg> args;
  size_t next = 0;
  for (const CheckArg& a : caseArgs) {
    if (std::holds_alternative<HostBuffer>(a)) {
      HostBuffer& b = buffers[next++];
      args.push_back(interp::Buffer{b.bytes.data(), b.bytes.size()});
    } else if (const auto* i = std::get_if<int64_t>(&a)) {
      args.push_back(*i);
    } else {
      args.push_back(std::get<double>(a));
    }
  }
  return args;
}

// Device copies of a launch's arguments and the kernel loaded through the runtime: launch() runs it on them.
class DeviceLaunch {
 public:
  DeviceLaunch(const std::vector<CheckArg>& args, const jit::LaunchGrid& grid, std::string kernelName,
               jit::DeviceRuntime& runtime)
      : hostArgs_(args), grid_(grid), kernelName_(std::move(kernelName)), runtime_(runtime), copies_(runtime) {
    for (const CheckArg& a : args) {
      if (const auto* b = std::get_if<HostBuffer>(&a))
        args_.push_back(jit::KernelArg::pointer(copies_.add(b->bytes), b->bytes.size()));  // sized: offsets32
      else if (const auto* i = std::get_if<int64_t>(&a))
        args_.push_back(*i);
      else
        args_.push_back(std::get<double>(a));
    }
  }

  // The case's kernel specialized for the device copies, compiled for the runtime's target and native arch.
  // `plant` (CheckOptions::plant) may change the compiled kernel before it is loaded.
  void compileAndLoad(const CheckCase& c, jit::KernelCache& cache,
                      const std::function<void(jit::CompiledKernel&)>& plant = {}) {
    jit::LaunchOptions options;
    options.numWarps = c.numWarps;
    options.numStages = c.numStages;
    options.persistent = c.persistent;
    options.matrixInstrSize = c.matrixInstrSize;
    options.target = runtime_.target();
    options.arch = runtime_.nativeArch();
    std::vector<ir::Type> paramTypes;
    for (const ParamInfo& p : c.kernel.runtimeParams()) paramTypes.push_back(p.type);
    std::shared_ptr<const jit::CompiledKernel> compiled =
        jit::JitKernel(c.kernel, cache).compileOnly(args_, c.constants, options);
    if (plant) {
      auto planted = std::make_shared<jit::CompiledKernel>(*compiled);  // the cache's entry stays as it was
      plant(*planted);
      compiled = std::move(planted);
    }
    load(std::move(compiled), paramTypes);
  }
  void load(std::shared_ptr<const jit::CompiledKernel> compiled, const std::vector<ir::Type>& paramTypes) {
    compiled_ = std::move(compiled);
    loaded_ = std::make_unique<jit::LoadedKernel>(compiled_, paramTypes, runtime_);
  }

  void launch() {
    loaded_->launch(grid_, args_);
    runtime_.synchronize(nullptr, kernelName_);
  }
  std::vector<HostBuffer> buffers() const {
    std::vector<HostBuffer> out;
    for (const CheckArg& a : hostArgs_)
      if (const auto* b = std::get_if<HostBuffer>(&a)) {
        out.push_back(*b);
        out.back().bytes = copies_.toHost(out.size() - 1, b->bytes.size());
      }
    return out;
  }
  const std::shared_ptr<const jit::CompiledKernel>& compiled() const { return compiled_; }
  jit::LoadedKernel& loaded() { return *loaded_; }

 private:
  const std::vector<CheckArg>& hostArgs_;
  jit::LaunchGrid grid_;
  std::string kernelName_;
  jit::DeviceRuntime& runtime_;
  DeviceCopies copies_;
  std::vector<jit::KernelArg> args_;
  std::shared_ptr<const jit::CompiledKernel> compiled_;
  std::unique_ptr<jit::LoadedKernel> loaded_;
};

}  // namespace

std::vector<HostBuffer> runOnInterpreter(const CheckCase& c, std::ostream* debugOut) {
  std::vector<HostBuffer> buffers = buffersOf(c.args);
  c.kernel.runInterpreter(c.grid, hostArgs(c.args, buffers), c.constants, debugOut);
  return buffers;
}

std::vector<HostBuffer> runEager(const CheckCase& c, std::ostream* debugOut) {
  std::vector<HostBuffer> buffers = buffersOf(c.args);
  c.kernel.runEager(c.grid, hostArgs(c.args, buffers), c.constants, debugOut);
  return buffers;
}

std::vector<HostBuffer> interpretFunction(const ir::Function& f, const jit::LaunchGrid& grid,
                                          const std::vector<CheckArg>& args, std::ostream* debugOut) {
  std::vector<HostBuffer> buffers = buffersOf(args);
  interp::run(f, hostArgs(args, buffers), grid, debugOut);
  return buffers;
}

DeviceRun runOnDevice(const CheckCase& c, jit::KernelCache& cache, jit::DeviceRuntime& runtime) {
  DeviceLaunch device(c.args, c.grid, c.kernel.name(), runtime);
  device.compileAndLoad(c, cache);
  device.launch();
  return DeviceRun{device.compiled(), device.buffers()};
}

std::shared_ptr<const jit::CompiledKernel> compileAfterPasses(const ir::Function& f, const std::string& target,
                                                              const std::string& arch, int numWarps) {
  std::unique_ptr<backends::Target> t = backends::createTarget(target);
  auto kernel = std::make_shared<jit::CompiledKernel>();
  kernel->name = f.name();
  kernel->target = target;
  kernel->arch = arch;
  kernel->format = t->binaryFormat();
  kernel->numWarps = numWarps;
  kernel->warpSize = t->warpSize();
  if (f.attrs().count("smem_bytes")) kernel->sharedBytes = f.attrs().at("smem_bytes").getInt();
  backends::TargetOptions options;
  options.arch = arch;
  options.numWarps = numWarps;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = t->lowerToLLVM(f, context, options);
  t->optimize(*module, options);
  llvm::raw_string_ostream os(kernel->optimizedLLVMIR);
  module->print(os, nullptr);
  return kernel;
}

std::vector<HostBuffer> launchCompiled(std::shared_ptr<const jit::CompiledKernel> compiled,
                                       const std::vector<ir::Type>& paramTypes, const jit::LaunchGrid& grid,
                                       const std::vector<CheckArg>& args, jit::DeviceRuntime& runtime) {
  DeviceLaunch device(args, grid, compiled->name, runtime);
  device.load(std::move(compiled), paramTypes);
  device.launch();
  return device.buffers();
}

void compareBuffers(const std::vector<HostBuffer>& reference, const std::vector<HostBuffer>& got,
                    const Tolerance& caseTolerance, CheckResult& r, const std::string& gotName,
                    const std::string& referenceName) {
  for (size_t i = 0; i < reference.size(); ++i)
    compareBuffer(caseTolerance, i, reference[i], got[i].bytes, r, gotName, referenceName);
}

CheckResult checkAgainstInterpreter(const CheckCase& c, jit::KernelCache& cache, jit::DeviceRuntime& runtime,
                                    const CheckOptions& checkOptions) {
  CheckResult r;
  r.name = c.name;
  try {
    const std::vector<HostBuffer> reference = runOnInterpreter(c);
    DeviceLaunch device(c.args, c.grid, c.kernel.name(), runtime);
    device.compileAndLoad(c, cache, checkOptions.plant);
    r.registers = ifReported([&] { return device.loaded().registersPerThread(); });
    r.localBytes = ifReported([&] { return device.loaded().localBytesPerThread(); });
    r.sharedBytes = device.compiled()->sharedBytes;
    device.launch();

    r.status = CheckResult::Status::Pass;
    compareBuffers(reference, device.buffers(), Tolerance{c.atol, c.rtol}, r);
    if (r.mismatches) r.status = CheckResult::Status::Fail;

    if (!checkOptions.timeLaunch) return r;
    // Time one more launch (results no longer compared: atomics and in-place updates would differ).
    auto start = std::chrono::steady_clock::now();
    device.launch();
    r.launchMilliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  } catch (const jit::KernelTimeout& e) {
    r.status = CheckResult::Status::Error;
    r.message = e.what();
    r.deviceHung = true;
  } catch (const std::exception& e) {
    r.status = CheckResult::Status::Error;
    r.message = e.what();
  }
  return r;
}

std::string formatCheckTable(const std::vector<CheckResult>& results) {
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %-6s %11s %9s %5s %6s %7s  %s\n", "case", "result", "worst/tol", "launch ms",
                "regs", "local", "smem", "detail");
  os << line << std::string(110, '-') << "\n";
  int pass = 0, fail = 0, error = 0;
  for (const CheckResult& r : results) {
    const char* status = r.status == CheckResult::Status::Pass ? "PASS" : r.status == CheckResult::Status::Fail ? "FAIL"
                                                                                                              : "ERROR";
    (r.status == CheckResult::Status::Pass ? pass : r.status == CheckResult::Status::Fail ? fail : error)++;
    std::string detail = r.status == CheckResult::Status::Error ? r.message
                         : r.mismatches ? std::to_string(r.mismatches) + " mismatches; first " + r.firstMismatch
                                        : "";
    if (auto nl = detail.find('\n'); nl != std::string::npos) detail = detail.substr(0, nl) + " ...";
    auto figure = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("-"); };
    char ms[32] = "-";
    if (r.launchMilliseconds) std::snprintf(ms, sizeof ms, "%.4f", *r.launchMilliseconds);
    std::snprintf(line, sizeof line, "%-44s %-6s %11.3g %9s %5s %6s %7lld  %s\n", r.name.c_str(), status,
                  r.worstError, ms, figure(r.registers).c_str(), figure(r.localBytes).c_str(),
                  static_cast<long long>(r.sharedBytes), detail.c_str());
    os << line;
  }
  os << std::string(110, '-') << "\n"
     << results.size() << " cases: " << pass << " passed, " << fail << " failed, " << error << " errors\n";
  return os.str();
}

}  // namespace tessera::gpucheck
