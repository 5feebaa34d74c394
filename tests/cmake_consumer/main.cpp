// Runs the consumer's kernel (scaled_sum.h) through an installed Tessera: on the reference interpreter always,
// and through the CUDA JIT where a GPU is present; and exports it ahead of time (jit/aot/Export.h) as a user's
// build step would. Exit status 0 only when every result matches a plain loop and the export is complete.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "jit/JitKernel.h"
#include "jit/aot/Export.h"
#include "scaled_sum.h"

namespace {

constexpr int kBlock = 256;
constexpr float kAlpha = 2.5f;

int countMismatches(const std::vector<float>& out, const std::vector<float>& x, const std::vector<float>& y) {
  int bad = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (std::fabs(out[i] - (kAlpha * x[i] + y[i])) > 1e-5f) ++bad;
  return bad;
}

void runOnGpu(const tessera::KernelDef& k, int64_t blocks, const std::vector<float>& x, const std::vector<float>& y,
              std::vector<float>& out) {
  namespace jit = tessera::jit;
  size_t bytes = x.size() * sizeof(float);
  jit::DeviceBuffer dx(bytes), dy(bytes), dout(bytes);
  dx.copyFromHost(x.data(), bytes);
  dy.copyFromHost(y.data(), bytes);
  jit::JitKernel handle(k);
  handle.launch({blocks, 1, 1}, {dx, dy, dout, int64_t(x.size()), double(kAlpha)}, {{"BLOCK", kBlock}}, {});
  jit::CudaDriver::instance().synchronize(nullptr, k.name());
  dout.copyToHost(out.data(), bytes);
}

// The export of an installed Tessera carries the kernel's PTX and its typed launch function.
int checkAheadOfTimeExport(const tessera::KernelDef& k) {
  namespace aot = tessera::jit::aot;
  aot::ExportOptions options;
  options.name = "scaled_sum_aot";
  options.constants = {{"BLOCK", kBlock}};
  options.targets = {aot::parseArchTarget("nvptx:sm_90a")};
  options.cubin = false;  // no ptxas needed
  aot::ExportedKernel e = aot::exportKernel(k, options);
  bool complete = e.binaries.size() == 1 && e.binaries[0] == "nvptx sm_90a ptx" &&
                  e.header.find("int scaled_sum_aot_launch(") != std::string::npos &&
                  e.source.find("static const unsigned char") != std::string::npos;
  std::printf("ahead-of-time export: %s (%zu header bytes, %zu source bytes)\n", complete ? "ok" : "FAIL",
              e.header.size(), e.source.size());
  return complete ? 0 : 1;
}

}  // namespace

int main() {
  if (std::strcmp(tessera::version(), FOUND_TESSERA_VERSION) != 0) {
    std::fprintf(stderr, "libtessera is %s but find_package found %s\n", tessera::version(), FOUND_TESSERA_VERSION);
    return 1;
  }
  const int64_t n = 1000;  // not a multiple of the block: the last program is masked
  std::vector<float> x(n), y(n), out(n, NAN);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.5f * float(i);
    y[i] = 1.0f - float(i % 7);
  }
  tessera::KernelDef k = consumer::scaled_sum_kernel();
  int64_t blocks = (n + kBlock - 1) / kBlock;
  k.runInterpreter({blocks, 1, 1},
                   {tessera::interp::Buffer{x.data(), x.size() * sizeof(float)},
                    tessera::interp::Buffer{y.data(), y.size() * sizeof(float)},
                    tessera::interp::Buffer{out.data(), out.size() * sizeof(float)}, n, double(kAlpha)},
                   {{"BLOCK", kBlock}});
  int bad = countMismatches(out, x, y);
  std::printf("tessera %s, interpreter: %s (%d of %lld wrong)\n", tessera::version(), bad ? "FAIL" : "ok", bad,
              static_cast<long long>(n));
  if (tessera::jit::CudaDriver::instance().available()) {
    std::vector<float> gpuOut(n, NAN);
    runOnGpu(k, blocks, x, y, gpuOut);
    int gpuBad = countMismatches(gpuOut, x, y);
    std::printf("GPU: %s (%d wrong)\n", gpuBad ? "FAIL" : "ok", gpuBad);
    bad += gpuBad;
  } else {
    std::printf("GPU: not run (%s)\n", tessera::jit::CudaDriver::instance().unavailableReason().c_str());
  }
  bad += checkAheadOfTimeExport(k);
  return bad == 0 ? 0 : 1;
}
