// Converting Python launch arguments to GPU JIT arguments (jit::KernelArg). For CUDA, pointer parameters take GPU
// arrays described by __cuda_array_interface__ (torch, CuPy, Numba) or by DLPack on a CUDA device (JAX, ...); for
// HIP, arrays that DLPack places on a ROCm device (torch's and CuPy's ROCm builds). When the caller asked for
// copies (backend="cuda" with numpy arrays), numpy arrays are staged through device buffers.
// Every mismatch is a Python exception naming the argument: TypeError for a wrong kind, dtype or a mix of host
// and GPU arrays, ValueError for non-contiguous, read-only, masked arrays or arrays on another GPU.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "ArgConversion.h"
#include "DLPack.h"
#include "jit/KernelArg.h"

namespace tessera::python {

// The element type an array must have, as a __cuda_array_interface__ typestr check ("<f4", "|u1", ...).
// bf16 and fp8 have no standard typestr: their bit patterns come as 2- and 1-byte unsigned or void elements.
inline bool typestrMatches(ir::Type elem, const std::string& typestr) {
  if (typestr.size() < 3) return false;
  char kind = typestr[1];
  int size = std::atoi(typestr.c_str() + 2);
  if (elem.isBool()) return kind == 'b' && size == 1;
  if (elem.isFP8()) return (kind == 'u' || kind == 'i' || kind == 'V') && size == 1;
  if (elem.scalarKind() == ir::ScalarKind::BF16) return (kind == 'u' || kind == 'V') && size == 2;
  if (elem.isFloat()) return kind == 'f' && size * 8 == static_cast<int>(elem.bitWidth());
  if (elem.isSigned()) return kind == 'i' && size * 8 == static_cast<int>(elem.bitWidth());
  return kind == 'u' && size * 8 == static_cast<int>(elem.bitWidth());
}

// Where the GPU arguments of one launch live and which stream their producer wants the launch on.
struct CudaLaunchContext {
  std::string devicePrefix = "cuda";  // how messages name the arrays' devices: "cuda:0", "rocm:0"
  std::optional<int> device;          // the device of the first GPU array that said
  std::string deviceArg;              // which argument that was
  std::optional<uint64_t> stream;     // from the first __cuda_array_interface__ that names one
  std::string firstGpuArg, firstHostArg;
};

inline void noteDevice(CudaLaunchContext& ctx, const std::string& name, int device) {
  if (!ctx.device) {
    ctx.device = device;
    ctx.deviceArg = name;
  } else if (*ctx.device != device) {
    throw py::value_error("argument '" + name + "' is on " + ctx.devicePrefix + ":" + std::to_string(device) +
                          " but argument '" + ctx.deviceArg + "' is on " + ctx.devicePrefix + ":" +
                          std::to_string(*ctx.device) + "; all GPU arrays of a launch must be on one device");
  }
}

// The device of an object that implements __dlpack_device__, if it says one of `types`.
inline std::optional<int> dlpackDeviceOf(py::handle value, std::initializer_list<int32_t> types) {
  if (!py::hasattr(value, "__dlpack_device__")) return std::nullopt;
  py::tuple dev = value.attr("__dlpack_device__")();
  const int type = dev[0].cast<int>();
  for (int32_t t : types)
    if (type == t) return dev[1].cast<int>();
  return std::nullopt;
}
inline std::optional<int> dlpackCudaDevice(py::handle value) {
  return dlpackDeviceOf(value, {kDLCUDA, kDLCUDAManaged});
}
inline std::optional<int> dlpackRocmDevice(py::handle value) { return dlpackDeviceOf(value, {kDLROCM}); }

inline void checkMixing(CudaLaunchContext& ctx) {
  if (!ctx.firstGpuArg.empty() && !ctx.firstHostArg.empty())
    throw py::type_error("argument '" + ctx.firstHostArg + "' is a numpy (host) array but argument '" +
                         ctx.firstGpuArg + "' is a GPU array; a launch takes either GPU arrays (it runs on the "
                         "GPU) or numpy arrays (interpreter, or backend='cuda' or 'hip' with copies), not both");
}

// A pointer argument from __cuda_array_interface__.
inline jit::KernelArg fromCudaArrayInterface(ir::Type param, const std::string& name, py::handle value,
                                             CudaLaunchContext& ctx) {
  py::dict cai = value.attr("__cuda_array_interface__");
  ir::Type elem = param.pointee();
  std::string typestr = py::str(cai["typestr"]);
  if (!typestrMatches(elem, typestr))
    throw py::type_error("argument '" + name + "' must be a " + expectedDtype(elem) + " array (parameter type " +
                         param.str() + "), got typestr '" + typestr + "'");
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw py::value_error("argument '" + name + "' is a masked array, which a launch cannot pass");
  std::vector<int64_t> shape;
  for (py::handle d : py::tuple(cai["shape"])) shape.push_back(d.cast<int64_t>());
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    std::vector<int64_t> strides;
    for (py::handle s : py::tuple(cai["strides"])) strides.push_back(s.cast<int64_t>());
    if (!isCContiguous(shape, strides, std::atoi(typestr.c_str() + 2)))
      throw py::value_error("argument '" + name + "' must be C-contiguous (e.g. tensor.contiguous())");
  }
  py::tuple data = cai["data"];
  if (data[1].cast<bool>())
    throw py::value_error("argument '" + name + "' is read-only; the kernel may write through it");
  if (std::optional<int> dev = dlpackCudaDevice(value)) noteDevice(ctx, name, *dev);
  if (!ctx.stream && cai.contains("stream") && !cai["stream"].is_none()) ctx.stream = cai["stream"].cast<uint64_t>();
  // C-contiguous, so the array spans its elements exactly: the launch may specialize on that size (offsets32).
  uint64_t elements = 1;
  for (int64_t d : shape) elements *= static_cast<uint64_t>(d);
  return jit::KernelArg::pointer(data[0].cast<uint64_t>(), elements * static_cast<uint64_t>(elem.storageBytes()));
}

// A pointer argument from a DLPack capsule of an array on a GPU (CUDA or ROCm). The capsule goes to `keepAlive`: the
// producer's memory must outlive the launch call (the capsule's destructor calls the producer's deleter).
inline jit::KernelArg fromDLPack(ir::Type param, const std::string& name, py::handle value, int device,
                                 CudaLaunchContext& ctx, std::vector<py::object>& keepAlive) {
  py::capsule capsule = value.attr("__dlpack__")();
  if (std::string(capsule.name() ? capsule.name() : "") != "dltensor")
    throw py::value_error("argument '" + name + "': __dlpack__() returned a capsule that was already consumed");
  const DLPackTensor& t = capsule.get_pointer<DLPackManagedTensor>()->tensor;
  ir::Type elem = param.pointee();
  if (!dlpackDtypeMatches(elem, t.dtype))
    throw py::type_error("argument '" + name + "' must be a " + expectedDtype(elem) + " array (parameter type " +
                         param.str() + "), got " + dlpackDtypeName(t.dtype));
  if (t.strides) {
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim), strides(t.strides, t.strides + t.ndim);
    if (!isCContiguous(shape, strides, 1))
      throw py::value_error("argument '" + name + "' must be C-contiguous");
  }
  noteDevice(ctx, name, device);
  keepAlive.push_back(capsule);
  uint64_t elements = 1;  // C-contiguous: the array spans exactly its elements (the launch's offsets32 fact)
  for (int d = 0; d < t.ndim; ++d) elements *= static_cast<uint64_t>(t.shape[d]);
  return jit::KernelArg::pointer(reinterpret_cast<uint64_t>(t.data) + t.byteOffset,
                                 elements * static_cast<uint64_t>(elem.storageBytes()));
}

inline bool isGpuArray(py::handle value) {
  return py::hasattr(value, "__cuda_array_interface__") || dlpackCudaDevice(value).has_value() ||
         dlpackRocmDevice(value).has_value();
}

// A scalar argument, checked as for the interpreter.
inline jit::KernelArg scalarKernelArg(ir::Type param, const std::string& name, py::handle value) {
  interp::Arg a = convertArg(param, name, value);
  if (param.isFloat()) return jit::KernelArg(std::get<double>(a));
  return jit::KernelArg(std::get<int64_t>(a));
}

}  // namespace tessera::python
