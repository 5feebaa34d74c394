#include "tests/gpucheck/GpuCheck.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "ir/FloatFormats.h"
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

void compareBuffer(const CheckCase& c, size_t index, const HostBuffer& ref, const std::vector<uint8_t>& gpu,
                   CheckResult& r) {
  const size_t n = ref.bytes.size() / elementBytes(ref.element);
  const bool isFloat = ir::Type::scalar(ref.element).isFloat();
  for (size_t i = 0; i < n; ++i) {
    double want = elementValue(ref.element, ref.bytes.data(), i);
    double got = elementValue(ref.element, gpu.data(), i);
    double err;
    if (!isFloat) {
      // Integers compare bit for bit (64-bit values do not fit a double exactly).
      err = std::memcmp(ref.bytes.data() + i * elementBytes(ref.element), gpu.data() + i * elementBytes(ref.element),
                        elementBytes(ref.element)) == 0 ? 0 : INFINITY;
    } else if (std::isnan(want) || std::isnan(got)) {
      err = std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
    } else if (std::isinf(want) || std::isinf(got)) {
      err = want == got ? 0 : INFINITY;
    } else {
      err = std::fabs(got - want) / (c.atol + c.rtol * std::fabs(want));
    }
    r.worstError = std::max(r.worstError, err);
    if (err > 1) {
      if (r.mismatches++ == 0) {
        std::ostringstream os;
        os.precision(9);
        os << "buffer " << index << " [" << i << "]: gpu " << got << ", interpreter " << want;
        r.firstMismatch = os.str();
      }
    }
  }
}

}  // namespace

CheckResult checkAgainstInterpreter(const CheckCase& c, jit::KernelCache& cache, jit::DeviceRuntime& runtime,
                                    const CheckOptions& checkOptions) {
  CheckResult r;
  r.name = c.name;
  try {
    // Reference: the interpreter on host copies.
    std::vector<HostBuffer> reference;
    std::vector<interp::Arg> interpArgs;
    for (const CheckArg& a : c.args)
      if (const auto* b = std::get_if<HostBuffer>(&a)) reference.push_back(*b);
    size_t next = 0;
    for (const CheckArg& a : c.args) {
      if (std::holds_alternative<HostBuffer>(a)) {
        HostBuffer& b = reference[next++];
        interpArgs.push_back(interp::Buffer{b.bytes.data(), b.bytes.size()});
      } else if (const auto* i = std::get_if<int64_t>(&a)) {
        interpArgs.push_back(*i);
      } else {
        interpArgs.push_back(std::get<double>(a));
      }
    }
    c.kernel.runInterpreter(c.grid, interpArgs, c.constants);

    // The device, from the same initial contents.
    DeviceCopies device(runtime);
    std::vector<jit::KernelArg> deviceArgs;
    for (const CheckArg& a : c.args) {
      if (const auto* b = std::get_if<HostBuffer>(&a))
        deviceArgs.push_back(jit::KernelArg::pointer(device.add(b->bytes)));
      else if (const auto* i = std::get_if<int64_t>(&a))
        deviceArgs.push_back(*i);
      else
        deviceArgs.push_back(std::get<double>(a));
    }
    // Compiled for the runtime's target and its device's arch, and loaded through the runtime.
    jit::LaunchOptions options;
    options.numWarps = c.numWarps;
    options.target = runtime.target();
    options.arch = runtime.nativeArch();
    std::vector<ir::Type> paramTypes;
    for (const ParamInfo& p : c.kernel.runtimeParams()) paramTypes.push_back(p.type);
    std::shared_ptr<const jit::CompiledKernel> compiled =
        jit::JitKernel(c.kernel, cache).compileOnly(deviceArgs, c.constants, options);
    if (checkOptions.plant) {
      auto planted = std::make_shared<jit::CompiledKernel>(*compiled);  // the cache's entry stays as it was
      checkOptions.plant(*planted);
      compiled = std::move(planted);
    }
    jit::LoadedKernel loaded(std::move(compiled), paramTypes, runtime);
    r.registers = ifReported([&] { return loaded.registersPerThread(); });
    r.localBytes = ifReported([&] { return loaded.localBytesPerThread(); });
    r.sharedBytes = loaded.compiled().sharedBytes;
    loaded.launch(c.grid, deviceArgs);
    runtime.synchronize(nullptr, c.kernel.name());

    r.status = CheckResult::Status::Pass;
    for (size_t i = 0; i < reference.size(); ++i)
      compareBuffer(c, i, reference[i], device.toHost(i, reference[i].bytes.size()), r);
    if (r.mismatches) r.status = CheckResult::Status::Fail;

    if (!checkOptions.timeLaunch) return r;
    // Time one more launch (results no longer compared: atomics and in-place updates would differ).
    auto start = std::chrono::steady_clock::now();
    loaded.launch(c.grid, deviceArgs);
    runtime.synchronize(nullptr, c.kernel.name());
    r.launchMilliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
