// Python access to the JIT: compile a kernel's specialization without a GPU (PTX, LLVM IR, the tile IR after
// every pass) and launch kernels through jit::JitKernel on GPU arrays, or on host arrays copied in and back (HIP,
// the emulator). The choice of backend, the grid callable and the producer's stream (torch) are decided in
// python/tessera/kernel.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <memory>

#include "CudaArgConversion.h"
#include "jit/CudaDriver.h"
#include "jit/DeviceRuntime.h"
#include "jit/HipRuntime.h"
#include "jit/JitKernel.h"
#include "jit/KernelResources.h"
#include "jit/KernelTimer.h"
#include "jit/sim/SimRuntime.h"

namespace py = pybind11;
using namespace tessera;

Constants constantsFromPython(const KernelDef& k, const py::dict& d);  // bindings_kernel.cpp

// A fact stands in for an argument: compileOnly only reads the facts, never the value (docs/JIT.md).
// 16: a pointer aligned to 16 bytes or an integer divisible by 16; 8: an integer divisible by 8 (not 16); 1: an
// integer equal to 1; None: no fact; a descriptor's block shape.
jit::KernelArg argumentForFact(const ParamInfo& p, py::handle fact) {
  if (p.kind == ParamKind::TensorDescriptor) {
    // A tessera.TensorDescriptor stands for itself, at an aligned stand-in address (the autotuner passes them).
    if (python::isTensorDescriptor(fact))
      return jit::KernelArg::tensorDescriptor(
          256, python::toInt64s(fact.attr("shape"), "the shape of descriptor '" + p.name + "'"),
          python::toInt64s(fact.attr("strides"), "the strides of descriptor '" + p.name + "'"),
          python::toInt64s(fact.attr("block_shape"), "the block of descriptor '" + p.name + "'"));
    // Otherwise its one fact is its block (a sequence of ints): a contiguous tensor of one block stands in.
    const std::vector<int64_t> block = python::toInt64s(fact, "specialization of descriptor '" + p.name + "'");
    std::vector<int64_t> strides(block.size(), 1);
    for (size_t d = block.size(); d-- > 1;) strides[d - 1] = strides[d] * block[d];
    return jit::KernelArg::tensorDescriptor(256, block, strides, block);
  }
  int64_t f = 0;
  if (!fact.is_none()) {
    if (!python::isIntegerLike(fact)) throw py::type_error("specialization of '" + p.name + "' must be 16, 8, 1 or None");
    py::int_ index = python::toIndex(fact, "specialization of '" + p.name + "'");
    int overflow = 0;
    f = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow || (f != 16 && f != 8 && f != 1))
      throw py::value_error("specialization of '" + p.name + "' must be 16, 8, 1 or None, got " +
                            py::str(index).cast<std::string>());
  }
  if (p.kind == ParamKind::Pointer) {
    if (f == 1 || f == 8)
      throw py::value_error("pointer '" + p.name + "' can only be specialized as 16 (aligned) or None");
    // An array of fewer than 2^31 elements, as Python launches find (they pass arrays, so sizes are known: the
    // offsets32 fact); a larger array gets a variant of its own, with 64-bit pointer arithmetic.
    constexpr uint64_t kStandInBytes = 4096;
    return jit::KernelArg::pointer(f == 16 ? 256 : 260, kStandInBytes);
  }
  if (p.type.isFloat()) {
    if (f != 0) throw py::value_error("float argument '" + p.name + "' carries no specialization facts");
    return jit::KernelArg(0.0);
  }
  if (p.type.isBool()) return jit::KernelArg(int64_t(f == 1));
  return jit::KernelArg(int64_t(f == 0 ? 3 : f));  // 3: divisible by neither 16 nor 8, not 1; fits every int type
}

namespace {

using CompiledPtr = std::shared_ptr<const jit::CompiledKernel>;

jit::LaunchOptions launchOptions(int numWarps, const std::string& target, const std::string& arch, bool fastMath,
                                 int numStages, bool persistent, bool warpSpecialize, bool pingPong,
                                 int matrixInstrSize) {
  jit::LaunchOptions o;
  o.matrixInstrSize = matrixInstrSize;
  o.persistent = persistent;
  o.warpSpecialize = warpSpecialize;
  o.pingPong = pingPong;
  o.numWarps = numWarps;
  o.numStages = numStages;
  o.target = target;
  o.arch = arch;
  o.fastMath = fastMath;
  return o;
}

void checkArgumentCount(const KernelDef& def, const py::sequence& args) {
  if (py::len(args) != def.runtimeParams().size())
    throw py::type_error("kernel '" + def.name() + "' takes " + std::to_string(def.runtimeParams().size()) +
                         " runtime arguments, got " + std::to_string(py::len(args)));
}

// A launch's arguments with its host arrays (numpy arrays, CPU tensors through DLPack; the arrays of tensor
// descriptors) to be staged through device buffers: their pointer and descriptor arguments are filled in by
// withStagedArrays.
struct StagedArgs {
  std::vector<jit::KernelArg> kernelArgs;
  std::vector<std::pair<interp::Buffer, size_t>> arrays;  // (host memory, argument index)
};

// Copies the host arrays to device buffers, runs `onDevice` with the kernel's arguments rebased on them (GIL
// released), and copies the arrays back when `copyBack`; the buffers are released however it ends.
void withStagedArrays(jit::DeviceRuntime& runtime, StagedArgs staged,
                      const std::function<void(const std::vector<jit::KernelArg>&)>& onDevice, bool copyBack) {
  struct Buffers {
    jit::DeviceRuntime& runtime;
    std::vector<jit::DeviceAddress> addresses;
    ~Buffers() {
      for (jit::DeviceAddress a : addresses) runtime.release(a);
    }
  } buffers{runtime, {}};
  for (const auto& [array, index] : staged.arrays) {
    buffers.addresses.push_back(runtime.allocate(std::max<size_t>(array.bytes, 1)));
    runtime.copyToDevice(buffers.addresses.back(), array.data, array.bytes);
    jit::KernelArg& arg = staged.kernelArgs[index];
    arg = arg.kind() == jit::KernelArg::Kind::TensorDescriptor
              ? jit::KernelArg::tensorDescriptor(buffers.addresses.back(), arg.descriptor().shape,
                                                 arg.descriptor().strides, arg.descriptor().block)
              : jit::KernelArg::pointer(buffers.addresses.back(), array.bytes);  // sized: offsets32
  }
  {
    py::gil_scoped_release release;
    onDevice(staged.kernelArgs);
  }
  if (!copyBack) return;
  for (size_t i = 0; i < staged.arrays.size(); ++i)
    runtime.copyToHost(staged.arrays[i].first.data, buffers.addresses[i], staged.arrays[i].first.bytes);
}

// A GPU array argument of a launch through `target`'s API: for nvptx __cuda_array_interface__ or DLPack on a CUDA
// device, for amdgpu DLPack on a ROCm device.
jit::KernelArg gpuArrayArg(const std::string& target, ir::Type pointerType, const std::string& name, py::handle value,
                           bool descriptor, python::CudaLaunchContext& ctx, std::vector<py::object>& capsules) {
  const bool hip = target == "amdgpu";
  if (!hip && py::hasattr(value, "__cuda_array_interface__"))
    return python::fromCudaArrayInterface(pointerType, name, value, ctx);
  std::optional<int> dev = hip ? python::dlpackRocmDevice(value) : python::dlpackCudaDevice(value);
  if (dev && py::hasattr(value, "__dlpack__")) return python::fromDLPack(pointerType, name, value, *dev, ctx, capsules);
  throw py::type_error("argument '" + name + "' must be a GPU array (" +
                       (hip ? "DLPack on a ROCm device" : "__cuda_array_interface__ or DLPack on a CUDA device") +
                       ") or a numpy array for " + pointerType.str() + (descriptor ? " (the descriptor's array)" : "") +
                       ", got " + python::typeName(value));
}

// Launches through `target`'s GPU API ("nvptx": CUDA, "amdgpu": HIP) with GPU arrays, or with numpy arrays staged
// through device buffers (copied in, launched, synchronized and copied back), never a mix of the two.
void launchOnGpu(jit::JitKernel& kernel, py::handle grid, const py::sequence& args, const py::dict& constantsDict,
                 int numWarps, py::object stream, const std::string& arch, bool fastMath, int numStages,
                 bool persistent, bool warpSpecialize, bool pingPong, int matrixInstrSize, const std::string& target) {
  const KernelDef& def = kernel.definition();
  const std::vector<ParamInfo>& params = def.runtimeParams();
  checkArgumentCount(def, args);
  if (target != "nvptx" && target != "amdgpu")
    throw py::value_error("target must be 'nvptx' or 'amdgpu', got '" + target + "'");
  interp::Grid g = python::toGrid(grid);
  Constants constants = constantsFromPython(def, constantsDict);

  python::CudaLaunchContext ctx;
  ctx.devicePrefix = target == "amdgpu" ? "rocm" : "cuda";
  std::vector<py::object> capsules;  // DLPack exports, alive until the launch is enqueued
  StagedArgs staged;  // the arguments; the numpy arrays among them are copied in and back around the launch
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamInfo& p = params[i];
    if (p.kind != ParamKind::TensorDescriptor && !p.type.isPtr()) {
      staged.kernelArgs.push_back(python::scalarKernelArg(p.type, p.name, args[i]));
      continue;
    }
    // A pointer's array is the argument; a descriptor's is its .array, whose address the descriptor's tensor map
    // starts at (the driver encodes it at launch, jit/LoadedKernel.cpp).
    const bool descriptor = p.kind == ParamKind::TensorDescriptor;
    std::vector<int64_t> shape, strides, block;
    py::object value = py::reinterpret_borrow<py::object>(args[i]);
    if (descriptor) {
      const ir::Type type = python::descriptorTypeOf(p.type, p.name, value);
      shape = python::toInt64s(value.attr("shape"), "the shape of argument '" + p.name + "'");
      strides = python::toInt64s(value.attr("strides"), "the strides of argument '" + p.name + "'");
      block = type.blockShape();
      value = value.attr("array");
    }
    const ir::Type pointerType = descriptor ? ir::Type::ptr(p.type) : p.type;
    jit::KernelArg arg = jit::KernelArg::pointer(0);  // a staged array's address comes with its device buffer
    uint64_t arrayBytes = 0;
    if (py::isinstance<py::array>(value)) {
      if (ctx.firstHostArg.empty()) ctx.firstHostArg = p.name;
      python::checkMixing(ctx);
      // The same checks as an interpreter launch (dtype, contiguity, writable); the copy comes below.
      python::convertArg(pointerType, p.name, value);
      py::array host = py::reinterpret_borrow<py::array>(value);  // alive in `args` for the whole call
      arrayBytes = static_cast<uint64_t>(host.nbytes());
      staged.arrays.push_back({interp::Buffer{host.mutable_data(), static_cast<size_t>(arrayBytes)}, i});
    } else {
      arg = gpuArrayArg(target, pointerType, p.name, value, descriptor, ctx, capsules);
      if (ctx.firstGpuArg.empty()) ctx.firstGpuArg = p.name;
      python::checkMixing(ctx);
      arrayBytes = arg.pointerBytes().value_or(0);
    }
    if (descriptor) {
      python::checkDescriptorSpan(p.name, shape, strides, p.type, arrayBytes);
      arg = jit::KernelArg::tensorDescriptor(arg.pointerValue(), shape, strides, block);
    }
    staged.kernelArgs.push_back(std::move(arg));
  }
  // The CUDA driver works on $TESSERA_CUDA_DEVICE; the HIP runtime on device 0, the current one (Tessera never
  // selects another).
  int launchDevice = 0;
  if (target == "nvptx") {
    jit::CudaDriver& driver = jit::CudaDriver::instance();
    if (!driver.available())
      throw Error("cannot launch kernel '" + def.name() + "': CUDA is not available: " + driver.unavailableReason());
    const char* deviceEnv = std::getenv("TESSERA_CUDA_DEVICE");
    launchDevice = deviceEnv && *deviceEnv ? std::atoi(deviceEnv) : 0;
  } else if (!jit::HipRuntime::instance().available()) {
    throw Error("cannot launch kernel '" + def.name() + "': HIP is not available: " +
                jit::HipRuntime::instance().unavailableReason());
  }
  jit::DeviceRuntime& runtime = kernel.runtimeFor(target);
  if (ctx.device && *ctx.device != launchDevice)
    throw py::value_error("argument '" + ctx.deviceArg + "' is on " + ctx.devicePrefix + ":" +
                          std::to_string(*ctx.device) + " but Tessera launches on " + ctx.devicePrefix + ":" +
                          std::to_string(launchDevice) +
                          (target == "nvptx" ? " (set TESSERA_CUDA_DEVICE before the first launch)"
                                             : " (HIP launches use the current device, 0)"));

  // An explicit stream (torch's current stream) wins over the producer's __cuda_array_interface__ stream;
  // 1 and 2 are CUDA's legacy and per-thread default stream handles, valid as they are.
  uint64_t streamValue = !stream.is_none() ? stream.cast<uint64_t>() : ctx.stream.value_or(0);
  jit::LaunchOptions options = launchOptions(numWarps, target, arch, fastMath, numStages, persistent,
                                             warpSpecialize, pingPong, matrixInstrSize);
  options.stream = jit::DeviceStream::fromHandle(reinterpret_cast<void*>(streamValue));

  const bool hostArrays = !staged.arrays.empty();
  withStagedArrays(
      runtime, std::move(staged),
      [&](const std::vector<jit::KernelArg>& deviceArgs) {
        kernel.launch({g[0], g[1], g[2]}, deviceArgs, constants, options);
        if (hostArrays) runtime.synchronize(options.stream, def.name());  // before the copies back
      },
      /*copyBack=*/true);
}

// Checks every argument as an interpreter launch does (dtype, contiguity, writability, integer ranges), before
// any device is touched.
StagedArgs stageHostArrays(const KernelDef& def, const py::sequence& args, const std::string& where) {
  const std::vector<ParamInfo>& params = def.runtimeParams();
  checkArgumentCount(def, args);
  StagedArgs staged;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamInfo& p = params[i];
    if (p.kind == ParamKind::TensorDescriptor) {  // its array is staged; runStaged rebases it on the copy
      const interp::TensorDesc d =
          python::convertDescriptor(python::descriptorTypeOf(p.type, p.name, args[i]), p.name, args[i]);
      staged.arrays.emplace_back(d.buffer, i);
      staged.kernelArgs.push_back(jit::KernelArg::tensorDescriptor(0, d.shape, d.strides, d.block));
      continue;
    }
    if (!p.type.isPtr()) {
      staged.kernelArgs.push_back(python::scalarKernelArg(p.type, p.name, args[i]));
      continue;
    }
    if (python::isGpuArray(args[i]))
      throw py::type_error("argument '" + p.name + "' is a GPU array; launches on " + where +
                           " take host arrays (numpy arrays or CPU tensors), which they copy in and back");
    staged.arrays.emplace_back(std::get<interp::Buffer>(python::convertArg(p.type, p.name, args[i])), i);
    staged.kernelArgs.push_back(jit::KernelArg::pointer(0));
  }
  return staged;
}

void runStaged(jit::JitKernel& kernel, const interp::Grid& g, StagedArgs staged, const Constants& constants,
               jit::DeviceRuntime& runtime, const jit::LaunchOptions& options) {
  withStagedArrays(
      runtime, std::move(staged),
      [&](const std::vector<jit::KernelArg>& args) {
        kernel.launch({g[0], g[1], g[2]}, args, constants, options);
        runtime.synchronize(options.stream, kernel.definition().name());
      },
      /*copyBack=*/true);
}

// A launch on host arrays through `target`'s runtime (HIP launches on them, and tessera.autotune times them on
// either GPU), checked before any device is touched: what launch_staged and time_staged share.
struct TargetLaunch {
  StagedArgs staged;
  interp::Grid grid;
  Constants constants;
  jit::DeviceRuntime* runtime;
  jit::LaunchOptions options;
};
TargetLaunch targetLaunch(jit::JitKernel& kernel, py::handle grid, const py::sequence& args,
                          const py::dict& constantsDict, int numWarps, const std::string& target,
                          const std::string& arch, bool fastMath, int numStages, bool persistent, bool warpSpecialize,
                          bool pingPong, int matrixInstrSize) {
  const KernelDef& def = kernel.definition();
  TargetLaunch l{stageHostArrays(def, args, target), python::toGrid(grid), constantsFromPython(def, constantsDict),
                 nullptr,
                 launchOptions(numWarps, target, arch, fastMath, numStages, persistent, warpSpecialize, pingPong,
                               matrixInstrSize)};
  try {
    l.runtime = &kernel.runtimeFor(target);
  } catch (const Error& e) {
    throw Error("cannot launch kernel '" + def.name() + "': " + e.message());
  }
  return l;
}

void launchStaged(jit::JitKernel& kernel, py::handle grid, const py::sequence& args, const py::dict& constantsDict,
                  int numWarps, const std::string& target, const std::string& arch, bool fastMath, int numStages,
                  bool persistent, bool warpSpecialize, bool pingPong, int matrixInstrSize) {
  TargetLaunch l = targetLaunch(kernel, grid, args, constantsDict, numWarps, target, arch, fastMath, numStages,
                                persistent, warpSpecialize, pingPong, matrixInstrSize);
  runStaged(kernel, l.grid, std::move(l.staged), l.constants, *l.runtime, l.options);
}

// do_bench of a launch on host arrays through `target`'s runtime, with its events (tessera.autotune's clock for host
// arrays on a GPU): the arrays are copied in once and only the launches are timed; nothing is copied back.
double timeStaged(jit::JitKernel& kernel, py::handle grid, const py::sequence& args, const py::dict& constantsDict,
                  int numWarps, const std::string& target, const std::string& arch, bool fastMath, int numStages,
                  bool persistent, bool warpSpecialize, bool pingPong, int matrixInstrSize) {
  TargetLaunch l = targetLaunch(kernel, grid, args, constantsDict, numWarps, target, arch, fastMath, numStages,
                                persistent, warpSpecialize, pingPong, matrixInstrSize);
  // One clock per runtime for the process (its flush buffer and events), never destroyed, as bench_launch's.
  static std::map<uint64_t, jit::ClockTimer*> timers;
  jit::ClockTimer*& timer = timers[l.runtime->instanceId()];
  if (!timer) {
    std::unique_ptr<jit::TimingClock> clock = l.runtime->makeTimingClock();
    if (!clock)
      throw Error("kernel '" + kernel.definition().name() + "': the " + l.runtime->apiName() +
                  " runtime has no clock to time it");
    timer = new jit::ClockTimer(std::move(clock));
  }
  double ms = 0;
  withStagedArrays(
      *l.runtime, std::move(l.staged),
      [&](const std::vector<jit::KernelArg>& deviceArgs) {
        ms = timer->milliseconds([&] { kernel.launch({l.grid[0], l.grid[1], l.grid[2]}, deviceArgs, l.constants,
                                                     l.options); });
      },
      /*copyBack=*/false);
  return ms;
}

// Launches with host arrays on the emulator (jit/sim/SimRuntime.h), whose device memory is host memory too: the
// copies give each array an allocation of its own, which is what the emulator's bounds checks see.
void launchSim(jit::JitKernel& kernel, py::handle grid, const py::sequence& args, const py::dict& constantsDict,
               int numWarps, sim::SimRuntime& runtime, bool fastMath, int numStages, bool persistent,
               bool warpSpecialize, bool pingPong, int matrixInstrSize) {
  const KernelDef& def = kernel.definition();
  StagedArgs staged = stageHostArrays(def, args, "the emulator");
  interp::Grid g = python::toGrid(grid);
  Constants constants = constantsFromPython(def, constantsDict);
  jit::LaunchOptions options = launchOptions(numWarps, runtime.target(), runtime.nativeArch(), fastMath, numStages, persistent,
                                             warpSpecialize, pingPong, matrixInstrSize);
  options.runtime = &runtime;
  runStaged(kernel, g, std::move(staged), constants, runtime, options);
}

}  // namespace

void bindJit(py::module_& m) {
  py::class_<jit::CompiledKernel, std::shared_ptr<jit::CompiledKernel>>(m, "CompiledKernel",
                                                                         "A kernel compiled by the JIT")
      .def_readonly("name", &jit::CompiledKernel::name)
      .def_readonly("target", &jit::CompiledKernel::target)
      .def_readonly("arch", &jit::CompiledKernel::arch)
      .def_readonly("format", &jit::CompiledKernel::format, "'ptx' or 'hsaco'")
      .def_readonly("num_warps", &jit::CompiledKernel::numWarps)
      .def_readonly("warp_size", &jit::CompiledKernel::warpSize)
      .def_readonly("shared_bytes", &jit::CompiledKernel::sharedBytes, "Dynamic shared memory per program")
      .def_readonly("persistent", &jit::CompiledKernel::persistent,
                    "Whether its programs loop over the grid's tiles (compiled with persistent=True)")
      .def_readonly("producer_warps", &jit::CompiledKernel::producerWarps,
                    "Warps a program runs beyond num_warps: its producer warpgroup (warp_specialize=True), else 0")
      .def_readonly("consumer_groups", &jit::CompiledKernel::consumerGroups,
                    "Groups of num_warps consumer warps, each on its own tiles: 2 with ping_pong=True, else 1")
      .def_property_readonly(
          "dots",
          [](const jit::CompiledKernel& k) {
            py::list dots;
            for (const jit::DotReport& d : k.dots)
              dots.append(py::dict(py::arg("location") = d.location, py::arg("instruction") = d.instruction,
                                   py::arg("note") = d.note));
            return dots;
          },
          "How each dot runs, in program order: [{'location', 'instruction', 'note'}], the note saying why a faster "
          "instruction was passed over (or why no tensor core runs it), else ''")
      .def_property_readonly("binary", [](const jit::CompiledKernel& k) { return py::bytes(k.binary); })
      .def_property_readonly("ptx",
                             [](const jit::CompiledKernel& k) {
                               if (k.format != "ptx")
                                 throw py::attribute_error("a " + k.target + " kernel has no PTX (its binary is " +
                                                           k.format + "; see .binary)");
                               return k.binary;
                             })
      .def_readonly("llvm_ir", &jit::CompiledKernel::llvmIR, "LLVM IR as lowered, before LLVM's optimizations")
      .def_readonly("optimized_llvm_ir", &jit::CompiledKernel::optimizedLLVMIR)
      .def_readonly("ir_stages", &jit::CompiledKernel::irAfterPass, "[(stage, tile IR text)] in pipeline order")
      .def(
          "resources",
          [](const jit::CompiledKernel& k, const std::string& ptxas) {
            const jit::KernelResources r = jit::kernelResources(k, ptxas);
            py::dict d;
            for (const auto& [name, value] : r.figures) d[py::str(name)] = value;
            d["source"] = r.source;
            return d;
          },
          py::arg("ptxas") = "",
          "What the kernel uses, as the tool that decides it says: for PTX, ptxas -v (registers, spill_store_bytes, "
          "spill_load_bytes, stack_bytes, static_shared_bytes; ptxas from `ptxas`, $TESSERA_PTXAS, the CUDA toolkit "
          "or PATH); for AMDGPU, the code object's metadata (vgprs, agprs, sgprs, vgpr_spills, sgpr_spills, "
          "lds_bytes, scratch_bytes). 'source' names the tool. Raises when ptxas is not installed.")
      .def("__repr__", [](const jit::CompiledKernel& k) {
        return "<tessera compiled kernel " + k.name + " for " + k.target + " " + k.arch + ", " +
               std::to_string(k.numWarps) + " warps, " + std::to_string(k.sharedBytes) + " B shared>";
      });

  py::class_<jit::JitKernel>(m, "JitKernel", "A kernel on the CUDA JIT: compiles per specialization, launches")
      .def(py::init([](const KernelDef& def) { return std::make_unique<jit::JitKernel>(def); }))
      .def(
          "compile",
          [](jit::JitKernel& k, const py::sequence& facts, const py::dict& constants, int numWarps,
             const std::string& target, const std::string& arch, bool fastMath, sim::SimRuntime* simRuntime,
             int numStages, bool persistent, bool warpSpecialize, bool pingPong, int matrixInstrSize) {
            const std::vector<ParamInfo>& params = k.definition().runtimeParams();
            if (py::len(facts) != params.size())
              throw py::value_error("expected one specialization fact per runtime parameter (" +
                                    std::to_string(params.size()) + "), got " + std::to_string(py::len(facts)));
            std::vector<jit::KernelArg> args;
            for (size_t i = 0; i < params.size(); ++i) args.push_back(argumentForFact(params[i], facts[i]));
            Constants c = constantsFromPython(k.definition(), constants);
            jit::LaunchOptions options =
                launchOptions(numWarps, target, arch, fastMath, numStages, persistent, warpSpecialize, pingPong,
                              matrixInstrSize);
            if (simRuntime) {
              options.target = simRuntime->target();
              options.arch = simRuntime->nativeArch();
              options.runtime = simRuntime;
            }
            CompiledPtr compiled;
            {
              py::gil_scoped_release release;
              // For the emulator, also load it there (rewritten and compiled for the host), so that what the
              // emulator cannot run fails now; launches of this specialization reuse it.
              if (simRuntime) k.prepare(args, c, options);
              compiled = k.compileOnly(args, c, options);
            }
            return std::const_pointer_cast<jit::CompiledKernel>(compiled);  // exposed read-only
          },
          py::arg("facts"), py::arg("constants"), py::arg("num_warps"), py::arg("target"), py::arg("arch"),
          py::arg("fast_math"), py::arg("sim_runtime") = nullptr, py::arg("num_stages") = 3,
          py::arg("persistent") = false, py::arg("warp_specialize") = false, py::arg("ping_pong") = false,
          py::arg("matrix_instr_nonkdim") = 0,
          "Compiles without a GPU (for sim_runtime's target and arch, and loads it there, when given); facts: per "
          "runtime parameter 16 (aligned / divisible by 16), 8 (divisible by 8), 1 or None")
      .def("launch", &launchOnGpu, py::arg("grid"), py::arg("args"), py::arg("constants"), py::arg("num_warps"),
           py::arg("stream"), py::arg("arch"), py::arg("fast_math"), py::arg("num_stages") = 3,
           py::arg("persistent") = false, py::arg("warp_specialize") = false, py::arg("ping_pong") = false,
           py::arg("matrix_instr_nonkdim") = 0, py::arg("target") = "nvptx",
           "Launches on GPU arrays of `target`'s API (nvptx: CUDA, amdgpu: HIP), or on numpy arrays copied in and "
           "back")
      .def("launch_staged", &launchStaged, py::arg("grid"), py::arg("args"), py::arg("constants"),
           py::arg("num_warps"), py::arg("target"), py::arg("arch"), py::arg("fast_math"), py::arg("num_stages") = 3,
           py::arg("persistent") = false, py::arg("warp_specialize") = false, py::arg("ping_pong") = false,
           py::arg("matrix_instr_nonkdim") = 0,
           "Launches on host arrays through `target`'s runtime (copies in, launches, synchronizes, copies back)")
      .def("time_staged", &timeStaged, py::arg("grid"), py::arg("args"), py::arg("constants"), py::arg("num_warps"),
           py::arg("target"), py::arg("arch"), py::arg("fast_math"), py::arg("num_stages") = 3,
           py::arg("persistent") = false, py::arg("warp_specialize") = false, py::arg("ping_pong") = false,
           py::arg("matrix_instr_nonkdim") = 0,
           "do_bench of a launch on host arrays through `target`'s runtime's events: the arrays are copied in "
           "once, only the launches are timed, nothing is copied back (ms, median)")
      .def("launch_sim", &launchSim, py::arg("grid"), py::arg("args"), py::arg("constants"), py::arg("num_warps"),
           py::arg("runtime"), py::arg("fast_math"), py::arg("num_stages") = 3,
           py::arg("persistent") = false, py::arg("warp_specialize") = false, py::arg("ping_pong") = false,
           py::arg("matrix_instr_nonkdim") = 0,
           "Launches on host arrays under the emulator `runtime` (tessera._C.sim_runtime), copying them in and back")
      .def_property_readonly("loaded_variants", &jit::JitKernel::loadedVariants);

  m.def("cuda_available", [] { return jit::CudaDriver::instance().available(); });
  m.def("cuda_unavailable_reason", [] { return jit::CudaDriver::instance().unavailableReason(); });
  m.def("cuda_arch", [] { return jit::CudaDriver::instance().nativeArch(); },
        "The arch CUDA launches compile for: the GPU's (sm_90a on compute capability 9.0)");
  m.def("hip_available", [] { return jit::HipRuntime::instance().available(); });
  m.def("hip_unavailable_reason", [] { return jit::HipRuntime::instance().unavailableReason(); });
  m.def("cuda_synchronize", [] {
    py::gil_scoped_release release;
    jit::CudaDriver::instance().synchronize(nullptr);
  });
}
