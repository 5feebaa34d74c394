// A stand-in for libcuda.so.1 that runs nothing and records everything, so that the CUDA launch path (Python's
// and C++'s argument conversion, staging copies, tensor-map encoding, launch geometry) is tested on machines
// without a GPU. Tessera loads it through TESSERA_LIBCUDA. Device memory is host memory, so a host address works
// as a "GPU array" address. Each call that matters appends one JSON line to the file TESSERA_FAKE_CUDA_LOG names:
//
//   {"call": "cuLaunchKernel", "kernel": "f", "grid": [..], "block": [..], "shared": N, "params": ["hex", ...]}
//
// (cuLaunchKernelEx, a launch in thread-block clusters, logs the same with "cluster": [..] after the block.)
//
// A launch's parameters are cut at the sizes the module's PTX declares for the kernel (.param lines), as the real
// driver does. cuTensorMapEncodeTiled checks its arguments with the driver's documented rules and writes a
// recognizable 128-byte map: "TSRMAP" and the encode's sequence number, then the fields.
//
// TESSERA_FAKE_CUDA_CC (default 90) is the device's compute capability; TESSERA_FAKE_CUDA_FAIL names one entry
// point that fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701), to test how failures are reported;
// TESSERA_FAKE_CUDA_HANG names a kernel that never finishes once launched, as a deadlocked one would: from then on
// cuStreamQuery says CUDA_ERROR_NOT_READY, and cuStreamSynchronize, which on a GPU would wait forever, fails with
// CUDA_ERROR_LAUNCH_TIMEOUT (702) so that a test without a time limit fails rather than hangs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "jit/CudaDriver.h"  // the driver types, so that every entry point has the type Tessera calls it with
#include "tests/fake_common/Recording.h"

namespace {

using namespace tessera::jit::cu;

constexpr Result kInvalidValue = 1, kNotFound = 500, kOutOfResources = 701, kLaunchTimeout = 702;

struct FakeFunction {
  std::string name;
  std::vector<size_t> paramBytes;
};
struct FakeModule {
  std::string ptx;
  std::vector<std::unique_ptr<FakeFunction>> functions;  // a module's functions go with it, as in CUDA
};

int tensorMapsEncoded = 0;
bool hungKernelLaunched = false;  // a launch of TESSERA_FAKE_CUDA_HANG's kernel happened

// Whether the work launched so far never finishes: TESSERA_FAKE_CUDA_HANG's kernel was launched while it was set
// (unsetting it brings the device back, so that later tests in the process find it idle).
bool hung() {
  const char* hang = std::getenv("TESSERA_FAKE_CUDA_HANG");
  if (!hang || !*hang) hungKernelLaunched = false;
  return hungKernelLaunched;
}

void log(const std::string& line) { tessera::fake::appendToLog("TESSERA_FAKE_CUDA_LOG", line); }

bool failing(const char* call) { return tessera::fake::failing("TESSERA_FAKE_CUDA_FAIL", call); }

template <typename T>
std::string jsonList(const T* values, size_t n) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < n; ++i) s << (i ? ", " : "") << values[i];
  s << "]";
  return s.str();
}

// The byte sizes of `kernel`'s parameters, from its .entry in `ptx`; false when the module has no such entry.
bool entryParameters(const std::string& ptx, const std::string& kernel, std::vector<size_t>& sizes) {
  const size_t entry = ptx.find(".entry " + kernel + "(");
  if (entry == std::string::npos) return false;
  const size_t end = ptx.find(')', entry);
  const std::string list = ptx.substr(entry, end - entry);
  static const std::regex param(R"(\.param\s+(?:\.align\s+\d+\s+)?\.([a-z])(\d+)\s+\w+(?:\[(\d+)\])?)");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), param); it != std::sregex_iterator(); ++it) {
    const size_t elementBytes = std::stoul((*it)[2]) / 8;
    sizes.push_back((*it)[3].matched ? elementBytes * std::stoul((*it)[3]) : elementBytes);
  }
  return true;
}

}  // namespace

extern "C" {

Result cuInit(unsigned) { return kSuccess; }
Result cuDriverGetVersion(int* v) {
  *v = 13000;
  return kSuccess;
}
Result cuDeviceGetCount(int* n) {
  *n = 1;
  return kSuccess;
}
Result cuDeviceGet(Device* d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}
Result cuDeviceGetName(char* name, int length, Device) {
  std::snprintf(name, static_cast<size_t>(length), "Tessera fake CUDA driver");
  return kSuccess;
}
static int computeCapability() {
  const char* ccEnv = std::getenv("TESSERA_FAKE_CUDA_CC");
  return ccEnv && *ccEnv ? std::atoi(ccEnv) : 90;
}
Result cuDeviceGetAttribute(int* value, int attribute, Device) {
  const int cc = computeCapability();
  switch (attribute) {
    case 16: *value = 132; break;          // multiprocessors (an H100 SXM's)
    case 75: *value = cc / 10; break;      // compute capability, major
    case 76: *value = cc % 10; break;      // minor
    case 97: *value = 232448; break;       // shared memory per block, opt-in (sm_90)
    default: *value = 0; break;
  }
  return kSuccess;
}
Result cuDevicePrimaryCtxRetain(Context* context, Device) {
  static int primary;
  *context = reinterpret_cast<Context>(&primary);
  return kSuccess;
}
Result cuDevicePrimaryCtxRelease_v2(Device) { return kSuccess; }
Result cuCtxSetCurrent(Context) { return kSuccess; }
Result cuCtxSynchronize() { return kSuccess; }

Result cuModuleLoadDataEx(Module* module, const void* image, unsigned, int*, void**) {
  if (failing("cuModuleLoadDataEx")) return kOutOfResources;
  const char* text = static_cast<const char*>(image);
  if (!std::strstr(text, ".version") || !std::strstr(text, ".target")) return kInvalidValue;  // not PTX
  *module = reinterpret_cast<Module>(new FakeModule{text, {}});
  log("{\"call\": \"cuModuleLoadDataEx\", \"ptx_bytes\": " + std::to_string(std::strlen(text)) + "}");
  return kSuccess;
}
Result cuModuleUnload(Module module) {
  delete reinterpret_cast<FakeModule*>(module);
  return kSuccess;
}
Result cuModuleGetFunction(Function* function, Module module, const char* name) {
  auto f = std::make_unique<FakeFunction>(FakeFunction{name, {}});
  auto* m = reinterpret_cast<FakeModule*>(module);
  if (!entryParameters(m->ptx, name, f->paramBytes)) return kNotFound;
  *function = reinterpret_cast<Function>(f.get());
  m->functions.push_back(std::move(f));
  return kSuccess;
}
Result cuFuncGetAttribute(int* value, int attribute, Function) {
  *value = attribute == 4 ? 128 : 0;  // 128 registers; no static shared or local memory
  return kSuccess;
}
Result cuFuncSetAttribute(Function function, int attribute, int value) {
  log("{\"call\": \"cuFuncSetAttribute\", \"kernel\": \"" + reinterpret_cast<FakeFunction*>(function)->name +
      "\", \"attribute\": " + std::to_string(attribute) + ", \"value\": " + std::to_string(value) + "}");
  return kSuccess;
}
Result cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Function, int threads, size_t sharedBytes) {
  const size_t byShared = sharedBytes ? 233472 / sharedBytes : 32;
  const size_t byThreads = 2048 / static_cast<size_t>(threads);
  *blocks = static_cast<int>(byShared < byThreads ? byShared : byThreads);
  return kSuccess;
}

// Logs a launch of `call` (with its cluster shape when it has one) and plays a hang where asked.
static Result recordLaunch(const char* call, Function function, const unsigned grid[3], const unsigned block[3],
                           const unsigned* cluster, unsigned shared, Stream stream, void** params) {
  const auto* f = reinterpret_cast<FakeFunction*>(function);
  auto triple = [](const unsigned* v) {
    return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
  };
  std::string line = "{\"call\": \"" + std::string(call) + "\", \"kernel\": \"" + f->name + "\", \"grid\": " +
                     triple(grid) + ", \"block\": " + triple(block) +
                     (cluster ? ", \"cluster\": " + triple(cluster) : std::string()) +
                     ", \"shared\": " + std::to_string(shared) +
                     ", \"stream\": " + std::to_string(reinterpret_cast<uintptr_t>(stream)) + ", \"params\": [";
  for (size_t i = 0; i < f->paramBytes.size(); ++i)
    line += std::string(i ? ", " : "") + "\"" + tessera::fake::hex(params[i], f->paramBytes[i]) + "\"";
  log(line + "]}");
  const char* hang = std::getenv("TESSERA_FAKE_CUDA_HANG");
  if (hang && f->name == hang) hungKernelLaunched = true;
  return kSuccess;
}

Result cuLaunchKernel(Function function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, Stream stream, void** params, void** extra) {
  if (failing("cuLaunchKernel")) return kOutOfResources;
  if (extra || !params) return kInvalidValue;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return recordLaunch("cuLaunchKernel", function, grid, block, nullptr, shared, stream, params);
}

// Launches with attributes: only the cluster shape is known here. As the driver does, it refuses clusters before
// sm_90 (CUDA_ERROR_NOT_SUPPORTED), and a grid that is not a whole number of clusters or clusters of more than 8
// programs (CUDA_ERROR_INVALID_CLUSTER_SIZE).
Result cuLaunchKernelEx(const LaunchConfig* config, Function function, void** params, void** extra) {
  constexpr Result kNotSupported = 801, kInvalidClusterSize = 912;
  if (failing("cuLaunchKernelEx")) return kOutOfResources;
  if (!config || extra || !params || (config->numAttrs && !config->attrs)) return kInvalidValue;
  const unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  const unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  const unsigned* cluster = nullptr;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id != kLaunchAttributeClusterDimension) return kInvalidValue;
    cluster = config->attrs[i].value;
  }
  if (cluster) {
    if (computeCapability() < 90) return kNotSupported;
    if (cluster[0] * cluster[1] * cluster[2] > 8) return kInvalidClusterSize;
    for (int d = 0; d < 3; ++d)
      if (cluster[d] == 0 || grid[d] % cluster[d] != 0) return kInvalidClusterSize;
  }
  return recordLaunch("cuLaunchKernelEx", function, grid, block, cluster, config->sharedMemBytes, config->hStream,
                      params);
}

Result cuMemAlloc_v2(DevicePtr* ptr, size_t bytes) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);  // cuMemAlloc aligns to 256 bytes at least
  if (!p) return 2;                                              // CUDA_ERROR_OUT_OF_MEMORY
  *ptr = reinterpret_cast<uint64_t>(p);
  log("{\"call\": \"cuMemAlloc\", \"address\": " + std::to_string(*ptr) + ", \"bytes\": " + std::to_string(bytes) + "}");
  return kSuccess;
}
Result cuMemFree_v2(DevicePtr ptr) {
  std::free(reinterpret_cast<void*>(ptr));
  return kSuccess;
}
Result cuMemcpyHtoD_v2(DevicePtr dst, const void* src, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return kSuccess;
}
Result cuMemcpyDtoH_v2(void* dst, DevicePtr src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}
Result cuMemcpyDtoD_v2(DevicePtr dst, DevicePtr src, size_t bytes) {
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}
Result cuMemsetD8_v2(DevicePtr dst, unsigned char value, size_t bytes) {
  std::memset(reinterpret_cast<void*>(dst), value, bytes);
  return kSuccess;
}

Result cuStreamCreate(Stream* stream, unsigned) {
  static int streams[64];
  static int next = 0;
  *stream = reinterpret_cast<Stream>(&streams[next++ % 64]);
  return kSuccess;
}
Result cuStreamDestroy_v2(Stream) { return kSuccess; }
Result cuStreamSynchronize(Stream) {
  if (hung()) return kLaunchTimeout;
  return failing("cuStreamSynchronize") ? kOutOfResources : kSuccess;
}
Result cuStreamQuery(Stream) {
  if (hung()) return kNotReady;
  return failing("cuStreamQuery") ? kOutOfResources : kSuccess;
}
Result cuEventCreate(Event* event, unsigned) {
  static int events[64];
  static int next = 0;
  *event = reinterpret_cast<Event>(&events[next++ % 64]);
  return kSuccess;
}
Result cuEventDestroy_v2(Event) { return kSuccess; }
Result cuEventRecord(Event, Stream) { return kSuccess; }
Result cuEventSynchronize(Event) { return kSuccess; }
Result cuEventElapsedTime(float* ms, Event, Event) {
  *ms = 0.001f;
  return kSuccess;
}

Result cuGetErrorName(Result result, const char** name) {
  switch (result) {
    case kSuccess: *name = "CUDA_SUCCESS"; break;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case kOutOfResources: *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
    case kLaunchTimeout: *name = "CUDA_ERROR_LAUNCH_TIMEOUT"; break;
    case kNotReady: *name = "CUDA_ERROR_NOT_READY"; break;
    default: *name = nullptr; return kInvalidValue;
  }
  return kSuccess;
}
Result cuGetErrorString(Result result, const char** text) {
  switch (result) {
    case kInvalidValue: *text = "invalid argument"; break;
    case kNotFound: *text = "named symbol not found"; break;
    case kOutOfResources: *text = "too many resources requested for launch"; break;
    case kLaunchTimeout: *text = "the launch timed out and was terminated"; break;
    case kNotReady: *text = "device not ready"; break;
    default: *text = "no error"; break;
  }
  return kSuccess;
}

// The rules of the CUDA driver API's reference for cuTensorMapEncodeTiled (tiled mode, no interleave): rank 1-5,
// a 16-byte-aligned address, dimensions of 1 to 2^32, strides that are multiples of 16 below 2^40, box dimensions
// of 1 to 256, an inner box of a multiple of 16 bytes, no more than the swizzle span when swizzled
// (32, 64, 128 bytes for swizzle 1, 2, 3), element strides of 1 to 8.
Result cuTensorMapEncodeTiled(TensorMap* map, int dataType, unsigned rank, void* address, const uint64_t* dims,
                           const uint64_t* byteStrides, const uint32_t* box, const uint32_t* elementStrides,
                           int interleave, int swizzle, int l2Promotion, int oobFill) {
  if (failing("cuTensorMapEncodeTiled")) return kOutOfResources;
  static const int elementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};  // CUtensorMapDataType 0-12
  if (rank < 1 || rank > 5 || dataType < 0 || dataType > 12 || interleave != 0 || swizzle < 0 || swizzle > 3)
    return kInvalidValue;
  if (reinterpret_cast<uintptr_t>(address) % 16) return kInvalidValue;
  const uint64_t innerBoxBytes = static_cast<uint64_t>(box[0]) * elementBytes[dataType];
  if (innerBoxBytes % 16 || (swizzle && innerBoxBytes > (16u << swizzle))) return kInvalidValue;
  for (unsigned d = 0; d < rank; ++d) {
    if (dims[d] == 0 || dims[d] > (1ull << 32) || box[d] == 0 || box[d] > 256 || elementStrides[d] == 0 ||
        elementStrides[d] > 8)
      return kInvalidValue;
    if (d + 1 < rank && (byteStrides[d] % 16 || byteStrides[d] >= (1ull << 40))) return kInvalidValue;
  }
  const int sequence = ++tensorMapsEncoded;
  unsigned char bytes[128] = {};
  std::memcpy(bytes, "TSRMAP", 6);
  std::memcpy(bytes + 8, &sequence, sizeof sequence);
  std::memcpy(map, bytes, sizeof bytes);
  log("{\"call\": \"cuTensorMapEncodeTiled\", \"sequence\": " + std::to_string(sequence) +
      ", \"data_type\": " + std::to_string(dataType) + ", \"rank\": " + std::to_string(rank) +
      ", \"address\": " + std::to_string(reinterpret_cast<uintptr_t>(address)) + ", \"dims\": " + jsonList(dims, rank) +
      ", \"byte_strides\": " + jsonList(byteStrides, rank - 1) + ", \"box\": " + jsonList(box, rank) +
      ", \"swizzle\": " + std::to_string(swizzle) + ", \"l2_promotion\": " + std::to_string(l2Promotion) +
      ", \"oob_fill\": " + std::to_string(oobFill) + ", \"map\": \"" + tessera::fake::hex(bytes, sizeof bytes) + "\"}");
  return kSuccess;
}

}  // extern "C"
