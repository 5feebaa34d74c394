#include "jit/GpuCheck.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "backends/interpreter/FloatFormats.h"
#include "backends/interpreter/Interpreter.h"
#include "jit/JitKernel.h"

namespace tessera::jit {

namespace {

size_t elementBytes(ir::ScalarKind k) {
  ir::Type t = ir::Type::scalar(k);
  return t.isBool() ? 1 : static_cast<size_t>(t.bitWidth() / 8);
}

// The element at `i` as a double (floats decoded exactly; integers by their signedness).
double elementValue(ir::ScalarKind k, const uint8_t* base, size_t i) {
  const uint8_t* p = base + i * elementBytes(k);
  uint64_t bits = 0;
  std::memcpy(&bits, p, elementBytes(k));
  switch (k) {
    case ir::ScalarKind::F16: return interp::decodeF16(static_cast<uint16_t>(bits));
    case ir::ScalarKind::BF16: return interp::decodeBF16(static_cast<uint16_t>(bits));
    case ir::ScalarKind::F32: return interp::decodeF32(static_cast<uint32_t>(bits));
    case ir::ScalarKind::F64: return interp::decodeF64(bits);
    case ir::ScalarKind::F8E4M3: return interp::decodeF8E4M3(static_cast<uint8_t>(bits));
    case ir::ScalarKind::F8E5M2: return interp::decodeF8E5M2(static_cast<uint8_t>(bits));
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

CheckResult checkAgainstInterpreter(const CheckCase& c, KernelCache& cache, CudaDriver& driver) {
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

    // The GPU, from the same initial contents.
    std::vector<DeviceBuffer> device;
    std::vector<KernelArg> gpuArgs;
    for (const CheckArg& a : c.args)
      if (const auto* b = std::get_if<HostBuffer>(&a)) device.push_back(DeviceBuffer::fromHost(b->bytes, driver));
    next = 0;
    for (const CheckArg& a : c.args) {
      if (std::holds_alternative<HostBuffer>(a)) gpuArgs.push_back(device[next++]);
      else if (const auto* i = std::get_if<int64_t>(&a)) gpuArgs.push_back(*i);
      else gpuArgs.push_back(std::get<double>(a));
    }
    JitKernel kernel(c.kernel, cache, driver);
    LaunchOptions options;
    options.numWarps = c.numWarps;
    LoadedKernel& loaded = kernel.prepare(gpuArgs, c.constants, options);
    r.registers = loaded.registersPerThread();
    r.localBytes = loaded.localBytesPerThread();
    r.sharedBytes = loaded.compiled().sharedBytes;
    loaded.launch(c.grid, gpuArgs);
    driver.synchronize(nullptr, c.kernel.name());

    r.status = CheckResult::Status::Pass;
    for (size_t i = 0; i < device.size(); ++i) {
      std::vector<uint8_t> got(device[i].bytes());
      device[i].copyToHost(got.data(), got.size());
      compareBuffer(c, i, reference[i], got, r);
    }
    if (r.mismatches) r.status = CheckResult::Status::Fail;

    // Time one more launch (results no longer compared: atomics and in-place updates would differ).
    cu::Event start = driver.createEvent(), end = driver.createEvent();
    driver.recordEvent(start, nullptr);
    loaded.launch(c.grid, gpuArgs);
    driver.recordEvent(end, nullptr);
    r.gpuMilliseconds = driver.elapsedMilliseconds(start, end);
    driver.destroyEvent(start);
    driver.destroyEvent(end);
  } catch (const std::exception& e) {
    r.status = CheckResult::Status::Error;
    r.message = e.what();
  }
  return r;
}

std::string formatCheckTable(const std::vector<CheckResult>& results) {
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %-6s %11s %9s %5s %6s %7s  %s\n", "case", "result", "worst/tol", "gpu ms",
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
    std::snprintf(line, sizeof line, "%-44s %-6s %11.3g %9.4f %5d %6d %7lld  %s\n", r.name.c_str(), status,
                  r.worstError, r.gpuMilliseconds, r.registers, r.localBytes, static_cast<long long>(r.sharedBytes),
                  detail.c_str());
    os << line;
  }
  os << std::string(110, '-') << "\n"
     << results.size() << " cases: " << pass << " passed, " << fail << " failed, " << error << " errors\n";
  return os.str();
}

}  // namespace tessera::jit
