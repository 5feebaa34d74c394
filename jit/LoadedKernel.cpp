#include "jit/LoadedKernel.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "backends/common/DescriptorParameter.h"
#include "ir/Error.h"
#include "ir/FloatFormats.h"
#include "jit/Specialization.h"
#include "jit/Timings.h"

namespace tessera::jit {

namespace {
constexpr int64_t kDefaultDynamicSharedLimit = 48 * 1024;  // above this a kernel must opt in

template <class T>
std::vector<uint8_t> bytesOf(T v) {
  std::vector<uint8_t> out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

// The fields of a descriptor parameter (backends/common/DescriptorParameter.h): base, shape, strides as 64-bit integers.
std::vector<uint8_t> descriptorFieldBytes(const ir::TensorDescriptorFields& d) {
  const int rank = static_cast<int>(d.shape.size());
  std::vector<uint8_t> out(static_cast<size_t>(backends::descriptorParamBytes(rank, /*withTensorMap=*/false)));
  std::memcpy(out.data() + backends::kDescriptorBaseOffset, &d.base, 8);
  for (int i = 0; i < rank; ++i) {
    std::memcpy(out.data() + backends::descriptorShapeOffset(i), &d.shape[i], 8);
    std::memcpy(out.data() + backends::descriptorStrideOffset(rank, i), &d.strides[i], 8);
  }
  return out;
}

// The tensor map of descriptor `d` in TMA's terms: dimensions innermost first, strides in bytes, the box the
// block (its innermost extent clipped to the swizzle span: backends/common/DescriptorParameter.h).
TensorMapRequest tensorMapRequest(const ir::TensorDescriptorFields& d, ir::Type element, int swizzleBytes) {
  TensorMapRequest r;
  r.element = element;
  r.rank = static_cast<uint32_t>(d.shape.size());
  r.base = d.base;
  r.swizzleBytes = swizzleBytes;
  for (uint32_t i = 0; i < r.rank; ++i) {
    const size_t dim = r.rank - 1 - i;  // TMA's dimension i is the tile's dimension rank - 1 - i
    r.dims[i] = static_cast<uint64_t>(d.shape[dim]);
    r.byteStrides[i] = static_cast<uint64_t>(d.strides[dim] * element.storageBytes());
    r.box[i] = static_cast<uint32_t>(d.block[dim]);
  }
  r.byteStrides[0] = 0;  // the element itself
  // A swizzled box is no wider than the swizzle span; the kernel copies a wider block as several boxes.
  r.box[0] = static_cast<uint32_t>(backends::tensorMapInnerBox(r.box[0], element.storageBytes(), swizzleBytes));
  return r;
}
}  // namespace

std::vector<uint8_t> packKernelArgument(ir::Type t, const KernelArg& arg, const std::string& kernelName, size_t index) {
  auto mismatch = [&](const char* want) {
    return Error("kernel '" + kernelName + "': argument " + std::to_string(index) + " (" + t.str() + ") must be " +
                 want);
  };
  if (t.isTile()) throw Error("kernel '" + kernelName + "': argument " + std::to_string(index) + " is a tile");
  if (t.isTensorDesc()) {
    if (arg.kind() != KernelArg::Kind::TensorDescriptor) throw mismatch("a tensor descriptor");
    const ir::TensorDescriptorFields& d = arg.descriptor();
    std::optional<std::string> why = ir::descriptorError(d, t.element());
    if (!why && d.block != t.blockShape()) why = "its block differs from the one the kernel was compiled for";
    if (why) throw Error("kernel '" + kernelName + "': descriptor argument " + std::to_string(index) + ": " + *why);
    return descriptorFieldBytes(d);
  }
  if (arg.kind() == KernelArg::Kind::TensorDescriptor) throw mismatch("a pointer or number, not a tensor descriptor");
  if (t.isPtr()) {
    if (arg.kind() != KernelArg::Kind::Pointer) throw mismatch("a device pointer");
    return bytesOf<uint64_t>(arg.pointerValue());
  }
  uint64_t bits;
  if (t.isFloat()) {
    if (arg.kind() != KernelArg::Kind::Float) throw mismatch("a floating-point number");
    bits = ir::encodeFloat(t.scalarKind(), arg.floatValue());
  } else {
    if (arg.kind() != KernelArg::Kind::Int) throw mismatch("an integer");
    bits = static_cast<uint64_t>(arg.intValue());  // the low bytes are the value in any integer width
  }
  switch (t.storageBytes()) {
    case 1: return bytesOf<uint8_t>(static_cast<uint8_t>(bits));
    case 2: return bytesOf<uint16_t>(static_cast<uint16_t>(bits));
    case 4: return bytesOf<uint32_t>(static_cast<uint32_t>(bits));
    default: return bytesOf<uint64_t>(bits);
  }
}

LoadedKernel::LoadedKernel(std::shared_ptr<const CompiledKernel> kernel, std::vector<ir::Type> paramTypes,
                           CudaDriver& driver)
    : kernel_(std::move(kernel)),
      paramTypes_(std::move(paramTypes)),
      ownedRuntime_(makeCudaDeviceRuntime(driver)),
      runtime_(*ownedRuntime_) {
  load();
}

LoadedKernel::LoadedKernel(std::shared_ptr<const CompiledKernel> kernel, std::vector<ir::Type> paramTypes,
                           DeviceRuntime& runtime)
    : kernel_(std::move(kernel)), paramTypes_(std::move(paramTypes)), runtime_(runtime) {
  load();
}

void LoadedKernel::load() {
  if (kernel_->format != runtime_.binaryFormat())
    throw Error("kernel '" + kernel_->name + "' was compiled for " + kernel_->target + " (" + kernel_->format +
                "); the " + runtime_.apiName() + " runtime loads only " + runtime_.binaryFormat());
  // Loading PTX is where the CUDA driver compiles it to machine code (its built-in ptxas).
  const char* stage = kernel_->format == "ptx" ? "ptxas and load module" : "load module";
  StageTimings(kernel_->name, kernel_->target, kernel_->arch).time(stage, [&] {
    module_ = runtime_.loadModule(*kernel_);
  });
  try {
    function_ = runtime_.getFunction(module_, kernel_->name);
    if (runtime_.launchesWithDynamicSharedMemory() && kernel_->sharedBytes > kDefaultDynamicSharedLimit)
      runtime_.raiseSharedMemoryLimit(function_, kernel_->sharedBytes, kernel_->name);
    if (kernel_->persistent)
      residentPrograms_ = runtime_.residentPrograms(function_, static_cast<unsigned>(kernel_->threadsPerProgram()),
                                                    dynamicSharedBytes(), kernel_->name);
  } catch (...) {
    runtime_.unloadModule(module_);
    throw;
  }
}

LoadedKernel::~LoadedKernel() { runtime_.unloadModule(module_); }

int LoadedKernel::registersPerThread() const { return runtime_.registersPerThread(function_, kernel_->name); }
int LoadedKernel::localBytesPerThread() const { return runtime_.localBytesPerThread(function_, kernel_->name); }

int64_t LoadedKernel::dynamicSharedBytes() const {
  return runtime_.launchesWithDynamicSharedMemory() ? kernel_->sharedBytes : 0;
}

LaunchGrid LoadedKernel::persistentGrid(const LaunchGrid& grid) const {
  const std::string& name = kernel_->name;
  if (!kernel_->persistent) throw Error("kernel '" + name + "' is not persistent");
  // The tile index is an i32 in the kernel.
  const int64_t maxTiles = (int64_t(1) << 31) - 1;
  int64_t tiles = 1;
  for (int d = 0; d < 3; ++d) {
    if (grid[d] <= 0 || grid[d] > maxTiles)
      throw Error("kernel '" + name + "': launch grid dimension " + std::to_string(d) + " is " +
                  std::to_string(grid[d]) + "; it must be between 1 and " + std::to_string(maxTiles));
    tiles *= grid[d];
    if (tiles > maxTiles)
      throw Error("kernel '" + name + "' is persistent, and its launch grid " + std::to_string(grid[0]) + "x" +
                  std::to_string(grid[1]) + "x" + std::to_string(grid[2]) + " has more than 2^31 - 1 tiles");
  }
  return {std::min(tiles, residentPrograms_), 1, 1};
}

void LoadedKernel::launch(const LaunchGrid& grid, const std::vector<KernelArg>& args, DeviceStream stream) {
  const std::string& name = kernel_->name;
  if (args.size() != paramTypes_.size())
    throw Error("kernel '" + name + "' takes " + std::to_string(paramTypes_.size()) + " arguments, got " +
                std::to_string(args.size()));
  // A persistent kernel runs the grid's tiles on the programs the GPU holds at once.
  const LaunchGrid programs = kernel_->persistent ? persistentGrid(grid) : grid;
  // CUDA's grid limits: x < 2^31, y and z < 2^16.
  const int64_t limits[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  unsigned g[3];
  for (int d = 0; d < 3; ++d) {
    if (programs[d] <= 0 || programs[d] > limits[d])
      throw Error("kernel '" + name + "': launch grid dimension " + std::to_string(d) + " is " +
                  std::to_string(programs[d]) + "; it must be between 1 and " + std::to_string(limits[d]));
    g[d] = static_cast<unsigned>(programs[d]);
  }
  std::vector<std::vector<uint8_t>> storage;
  storage.reserve(args.size() + 3);
  std::vector<void*> params;
  for (size_t i = 0; i < args.size(); ++i) storage.push_back(packKernelArgument(paramTypes_[i], args[i], name, i));
  if (kernel_->persistent)  // the grid the tiles come from, after the kernel's own arguments
    for (int d = 0; d < 3; ++d) storage.push_back(bytesOf<int32_t>(static_cast<int32_t>(grid[d])));
  // Descriptors the kernel copies with TMA carry the runtime's encoding of their tensor map after their fields.
  for (const auto& [param, swizzle] : kernel_->tensorMaps) {
    if (param >= args.size() || !paramTypes_[param].isTensorDesc())
      throw Error("kernel '" + name + "': its tensor map " + std::to_string(param) + " is not a descriptor parameter");
    const ir::Type t = paramTypes_[param];
    const TensorMapBytes map = runtime_.encodeTensorMap(tensorMapRequest(args[param].descriptor(), t.element(), swizzle), name);
    std::vector<uint8_t>& bytes = storage[param];
    bytes.resize(static_cast<size_t>(backends::descriptorParamBytes(static_cast<int>(t.blockShape().size()), /*withTensorMap=*/true)));
    std::memcpy(bytes.data() + backends::kDescriptorMapOffset, map.data(), map.size());
  }
  // Each parameter's bytes start at the strictest alignment a parameter declares (a descriptor carrying a tensor
  // map: 64 bytes). A driver copies them into the parameter space, which honours it; the emulator reads them in
  // place, so they must be aligned here as the compiled kernel assumes.
  struct alignas(backends::kTensorMapAlign) Chunk {
    uint8_t bytes[backends::kTensorMapAlign];
  };
  std::vector<std::vector<Chunk>> aligned;
  aligned.reserve(storage.size());
  for (const std::vector<uint8_t>& bytes : storage) {
    aligned.emplace_back((bytes.size() + sizeof(Chunk) - 1) / sizeof(Chunk));
    std::memcpy(aligned.back().data(), bytes.data(), bytes.size());
    params.push_back(aligned.back().data());
  }
  unsigned block[3] = {static_cast<unsigned>(kernel_->threadsPerProgram()), 1, 1};
  void** parameters = params.empty() ? nullptr : params.data();
  if (kernel_->clusterDims == std::array<int, 3>{1, 1, 1}) {
    runtime_.launch(function_, g, block, static_cast<unsigned>(dynamicSharedBytes()), stream, parameters, name);
    return;
  }
  unsigned cluster[3];
  for (int d = 0; d < 3; ++d) {
    cluster[d] = static_cast<unsigned>(kernel_->clusterDims[d]);
    if (g[d] % cluster[d] != 0)
      throw Error("kernel '" + name + "': launch grid " + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" +
                  std::to_string(g[2]) + " is not a whole number of its clusters of " +
                  clusterShapeText(kernel_->clusterDims) + " programs");
  }
  runtime_.launchClusters(function_, g, block, cluster, static_cast<unsigned>(dynamicSharedBytes()), stream,
                          parameters, name);
}

}  // namespace tessera::jit
