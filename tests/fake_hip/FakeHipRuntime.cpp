// A stand-in for libamdhip64.so that runs nothing and records everything, so that the HIP launch path (JitKernel's
// and the AOT loader's: code-object loading, kernel lookup, argument packing, launch geometry, waits) is tested on
// machines without an AMD GPU. Tessera loads it through TESSERA_LIBAMDHIP. Device memory is host memory. Each
// call that matters appends one JSON line to the file TESSERA_FAKE_HIP_LOG names:
//
//   {"call": "hipModuleLaunchKernel", "kernel": "f", "grid": [..], "block": [..], "shared": N, "params": ["hex"..]}
//
// It checks what a real HIP runtime checks, from the code object's own metadata (the NT_AMDGPU_METADATA note):
// - hipModuleLoadData takes a 64-bit AMDGPU ELF for the device's arch (TESSERA_FAKE_HIP_ARCH, default gfx90a),
//   and fails with hipErrorNoBinaryForGpu for another arch, as HIP does (the AOT loader relies on it);
// - hipModuleGetFunction finds only kernels the metadata lists;
// - a launch's parameters are cut at the sizes of the kernel's explicit arguments (the hidden_* ones are the
//   runtime's), and a block larger than the kernel's .max_flat_workgroup_size fails with hipErrorInvalidValue.
//
// Its device has a clock for events to read: every launch takes 10 ms of device time per program of its grid, so
// that an autotuner timing configs on it sees the ones with fewer programs as faster.
//
// TESSERA_FAKE_HIP_FAIL names one entry point that fails with hipErrorLaunchOutOfResources (701), to test how
// failures are reported; TESSERA_FAKE_HIP_HANG names a kernel that never finishes once launched: from then on
// hipStreamQuery says hipErrorNotReady, and hipStreamSynchronize, which on a GPU would wait forever, fails with
// hipErrorLaunchTimeOut (702) so that a test without a time limit fails rather than hangs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include "jit/HipRuntime.h"
#include "tests/fake_common/Recording.h"

namespace {

// The runtime's types as Tessera declares them (jit/HipRuntime.h), so that every entry point has the type Tessera
// calls it with (a sanitizer checks calls through function pointers).
using tessera::jit::hip::Error, tessera::jit::hip::Module, tessera::jit::hip::Function, tessera::jit::hip::Stream,
    tessera::jit::hip::Event;
constexpr Error kSuccess = 0, kInvalidValue = 1, kInvalidImage = 200, kNoBinaryForGpu = 209, kNotFound = 500,
                kNotReady = 600, kOutOfResources = 701, kLaunchTimeout = 702;

struct FakeKernel {
  std::string name;
  std::vector<size_t> explicitArgBytes;  // the arguments a launch passes, in order
  int64_t maxFlatWorkgroupSize = 1024;
  int64_t ldsBytes = 0;
};
struct FakeModule {
  std::vector<std::unique_ptr<FakeKernel>> kernels;
};

bool hungKernelLaunched = false;
double deviceClockMs = 0;  // the device time the work launched so far takes
constexpr double kMsPerProgram = 10;  // long enough that do_bench times few repetitions

// Whether the work launched so far never finishes (unsetting TESSERA_FAKE_HIP_HANG brings the device back).
bool hung() {
  const char* hang = std::getenv("TESSERA_FAKE_HIP_HANG");
  if (!hang || !*hang) hungKernelLaunched = false;
  return hungKernelLaunched;
}

void log(const std::string& line) { tessera::fake::appendToLog("TESSERA_FAKE_HIP_LOG", line); }

bool failing(const char* call) { return tessera::fake::failing("TESSERA_FAKE_HIP_FAIL", call); }

std::string deviceArch() {
  const char* arch = std::getenv("TESSERA_FAKE_HIP_ARCH");
  return arch && *arch ? arch : "gfx90a";
}

// A field of the ELF64 header at byte `offset` (the host is little-endian, as AMDGPU code objects are).
template <typename T>
T headerField(const void* image, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(image) + offset, sizeof value);
  return value;
}

int64_t number(const llvm::msgpack::DocNode& node) {
  if (node.getKind() == llvm::msgpack::Type::UInt) return static_cast<int64_t>(node.getUInt());
  if (node.getKind() == llvm::msgpack::Type::Int) return node.getInt();
  return -1;
}

// The kernels of a metadata note's map, for a code object of `arch`; an error code when it is for another arch or
// says less than a loader needs.
Error kernelsOf(llvm::msgpack::MapDocNode& root, const std::string& arch, FakeModule& module) {
  using llvm::msgpack::Type;
  // "amdgcn-amd-amdhsa--gfx90a", with ":feature+" suffixes when the code object has target features.
  const std::string target =
      root["amdhsa.target"].getKind() == Type::String ? root["amdhsa.target"].getString().str() : "";
  const std::string prefix = "amdgcn-amd-amdhsa--" + arch;
  if (target.rfind(prefix, 0) != 0 || (target.size() > prefix.size() && target[prefix.size()] != ':'))
    return kNoBinaryForGpu;
  if (root["amdhsa.kernels"].getKind() != Type::Array) return kInvalidImage;
  for (llvm::msgpack::DocNode& entry : root["amdhsa.kernels"].getArray()) {
    if (entry.getKind() != Type::Map) return kInvalidImage;
    llvm::msgpack::MapDocNode k = entry.getMap();
    if (k[".name"].getKind() != Type::String || k[".args"].getKind() != Type::Array) return kInvalidImage;
    auto kernel = std::make_unique<FakeKernel>();
    kernel->name = k[".name"].getString().str();
    kernel->maxFlatWorkgroupSize = number(k[".max_flat_workgroup_size"]);
    kernel->ldsBytes = number(k[".group_segment_fixed_size"]);
    if (kernel->maxFlatWorkgroupSize < 1 || kernel->ldsBytes < 0) return kInvalidImage;
    for (llvm::msgpack::DocNode& arg : k[".args"].getArray()) {
      if (arg.getKind() != Type::Map) return kInvalidImage;
      llvm::msgpack::MapDocNode a = arg.getMap();
      if (a[".value_kind"].getKind() != Type::String || number(a[".size"]) < 0) return kInvalidImage;
      if (a[".value_kind"].getString().starts_with("hidden_")) continue;  // the runtime's own arguments
      kernel->explicitArgBytes.push_back(static_cast<size_t>(number(a[".size"])));
    }
    module.kernels.push_back(std::move(kernel));
  }
  return kSuccess;
}

// The kernels the code object's metadata note lists, for a code object of `arch`; an error code otherwise.
Error readKernels(const void* image, const std::string& arch, FakeModule& module) {
  const char* ident = static_cast<const char*>(image);
  if (std::memcmp(ident, "\x7f" "ELF", 4) != 0 || ident[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 ||
      headerField<uint16_t>(image, 18) != llvm::ELF::EM_AMDGPU)  // e_machine
    return kInvalidImage;
  // hipModuleLoadData gets no size: like HIP, take the ELF's extent from its header. The section headers come
  // last in what ld.lld writes (e_shoff, e_shentsize, e_shnum).
  const size_t extent = headerField<uint64_t>(image, 40) +
                        size_t{headerField<uint16_t>(image, 58)} * headerField<uint16_t>(image, 60);
  auto object =
      llvm::object::ELF64LEObjectFile::create(llvm::MemoryBufferRef(llvm::StringRef(ident, extent), "code object"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return kInvalidImage;
  }
  const auto& elf = object->getELFFile();
  auto sections = elf.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return kInvalidImage;
  }
  for (const auto& section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto& note : elf.notes(section, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      llvm::msgpack::Document doc;
      const bool read =
          doc.readFromBlob(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false) &&
          doc.getRoot().getKind() == llvm::msgpack::Type::Map;
      llvm::consumeError(std::move(err));
      if (!read) return kInvalidImage;
      llvm::msgpack::MapDocNode root = doc.getRoot().getMap();
      return kernelsOf(root, arch, module);
    }
    llvm::consumeError(std::move(err));
  }
  return kInvalidImage;
}

// The device time an event holds (-1: not recorded).
double& recordedAt(Event event) { return *reinterpret_cast<double*>(event); }

}  // namespace

extern "C" {

Error hipInit(unsigned) { return kSuccess; }
Error hipGetDeviceCount(int* n) {
  *n = 1;
  return kSuccess;
}

Error hipModuleLoadData(Module* module, const void* image) {
  if (failing("hipModuleLoadData")) return kOutOfResources;
  if (!module || !image) return kInvalidValue;
  auto m = std::make_unique<FakeModule>();
  const std::string arch = deviceArch();
  const Error e = readKernels(image, arch, *m);
  log("{\"call\": \"hipModuleLoadData\", \"device_arch\": \"" + arch + "\", \"result\": " + std::to_string(e) + "}");
  if (e != kSuccess) return e;
  *module = reinterpret_cast<Module>(m.release());
  return kSuccess;
}
Error hipModuleUnload(Module module) {
  delete reinterpret_cast<FakeModule*>(module);
  return kSuccess;
}
Error hipModuleGetFunction(Function* function, Module module, const char* name) {
  for (const auto& k : reinterpret_cast<FakeModule*>(module)->kernels)
    if (k->name == name) {
      *function = reinterpret_cast<Function>(k.get());
      return kSuccess;
    }
  return kNotFound;
}
Error hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Function function, int threads,
                                                         size_t dynamicLds) {
  const auto* k = reinterpret_cast<FakeKernel*>(function);
  const size_t lds = static_cast<size_t>(k->ldsBytes) + dynamicLds;
  const size_t byLds = lds ? 65536 / lds : 32;  // a CDNA compute unit's 64 KB of LDS
  const size_t byThreads = 2048 / static_cast<size_t>(threads);
  *blocks = static_cast<int>(byLds < byThreads ? byLds : byThreads);
  return kSuccess;
}

Error hipModuleLaunchKernel(Function function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shared, Stream stream, void** params, void** extra) {
  if (failing("hipModuleLaunchKernel")) return kOutOfResources;
  const auto* k = reinterpret_cast<FakeKernel*>(function);
  if (extra || (!params && !k->explicitArgBytes.empty())) return kInvalidValue;
  if (static_cast<int64_t>(bx) * by * bz > k->maxFlatWorkgroupSize) return kInvalidValue;
  std::string line = "{\"call\": \"hipModuleLaunchKernel\", \"kernel\": \"" + k->name + "\", \"grid\": [" +
                     std::to_string(gx) + ", " + std::to_string(gy) + ", " + std::to_string(gz) + "], \"block\": [" +
                     std::to_string(bx) + ", " + std::to_string(by) + ", " + std::to_string(bz) +
                     "], \"shared\": " + std::to_string(shared) + ", \"lds\": " + std::to_string(k->ldsBytes) +
                     ", \"stream\": " + std::to_string(reinterpret_cast<uintptr_t>(stream)) + ", \"params\": [";
  for (size_t i = 0; i < k->explicitArgBytes.size(); ++i)
    line += std::string(i ? ", " : "") + "\"" + tessera::fake::hex(params[i], k->explicitArgBytes[i]) + "\"";
  log(line + "]}");
  const char* hang = std::getenv("TESSERA_FAKE_HIP_HANG");
  if (hang && k->name == hang) hungKernelLaunched = true;
  deviceClockMs += kMsPerProgram * gx * gy * gz;
  return kSuccess;
}

Error hipMalloc(void** p, size_t bytes) {
  if (failing("hipMalloc")) return kOutOfResources;
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!*p) return 2;  // hipErrorOutOfMemory
  log("{\"call\": \"hipMalloc\", \"address\": " + std::to_string(reinterpret_cast<uintptr_t>(*p)) +
      ", \"bytes\": " + std::to_string(bytes) + "}");
  return kSuccess;
}
Error hipFree(void* p) {
  std::free(p);
  return kSuccess;
}
Error hipMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  if (kind < 0 || kind > 4) return kInvalidValue;  // hipMemcpyHostToHost .. hipMemcpyDefault
  std::memmove(dst, src, bytes);
  return kSuccess;
}

Error hipMemset(void* dst, int value, size_t bytes) {
  if (failing("hipMemset")) return kOutOfResources;
  std::memset(dst, value, bytes);
  log("{\"call\": \"hipMemset\", \"bytes\": " + std::to_string(bytes) + "}");
  return kSuccess;
}

// An event is the device time at which it was recorded (one in-order queue: streams are not told apart).
Error hipEventCreate(Event* event) {
  *event = reinterpret_cast<Event>(new double(-1));
  return kSuccess;
}
Error hipEventDestroy(Event event) {
  delete reinterpret_cast<double*>(event);
  return kSuccess;
}
Error hipEventRecord(Event event, Stream) {
  recordedAt(event) = deviceClockMs;
  return kSuccess;
}
Error hipEventSynchronize(Event) { return kSuccess; }  // the recorded work is done
Error hipEventElapsedTime(float* ms, Event start, Event end) {
  if (recordedAt(start) < 0 || recordedAt(end) < 0) return kInvalidValue;  // not recorded
  *ms = static_cast<float>(recordedAt(end) - recordedAt(start));
  return kSuccess;
}

Error hipStreamCreate(Stream* stream) {
  static int streams[64];
  static int next = 0;
  *stream = reinterpret_cast<Stream>(&streams[next++ % 64]);
  return kSuccess;
}
Error hipStreamSynchronize(Stream) {
  if (hung()) return kLaunchTimeout;
  return failing("hipStreamSynchronize") ? kOutOfResources : kSuccess;
}
Error hipStreamQuery(Stream) {
  if (hung()) return kNotReady;
  return failing("hipStreamQuery") ? kOutOfResources : kSuccess;
}

const char* hipGetErrorName(Error e) {
  switch (e) {
    case kSuccess: return "hipSuccess";
    case kInvalidValue: return "hipErrorInvalidValue";
    case kInvalidImage: return "hipErrorInvalidImage";
    case kNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
    case kNotFound: return "hipErrorNotFound";
    case kNotReady: return "hipErrorNotReady";
    case kOutOfResources: return "hipErrorLaunchOutOfResources";
    case kLaunchTimeout: return "hipErrorLaunchTimeOut";
    default: return "hipErrorUnknown";
  }
}
const char* hipGetErrorString(Error e) {
  switch (e) {
    case kSuccess: return "no error";
    case kInvalidValue: return "invalid argument";
    case kInvalidImage: return "device kernel image is invalid";
    case kNoBinaryForGpu: return "no kernel image is available for execution on the device";
    case kNotFound: return "named symbol not found";
    case kNotReady: return "device not ready";
    case kOutOfResources: return "too many resources requested for launch";
    case kLaunchTimeout: return "the launch timed out and was terminated";
    default: return "unknown error";
  }
}

}  // extern "C"
