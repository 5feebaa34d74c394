// Converting Python launch arguments to interpreter arguments, with Python exceptions for every mismatch:
// TypeError for a wrong kind, dtype or device, ValueError for non-contiguous or read-only arrays, out-of-range
// integers and bad grids. Nothing that reaches the interpreter can be silently reinterpreted. Pointer
// parameters take numpy arrays and host arrays that speak DLPack (torch CPU tensors).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <limits>
#include <string>
#include <vector>

#include "DLPack.h"
#include "backends/interpreter/Interpreter.h"

namespace tessera::python {

namespace py = pybind11;

inline std::string typeName(py::handle value) { return py::str(py::type::of(value).attr("__name__")).cast<std::string>(); }

// The numpy dtype an array passed for `ptr<elem>` must have. bf16 and fp8 have no numpy dtype: pass their bit
// patterns as uint16 / uint8 arrays.
inline bool dtypeMatches(ir::Type elem, const py::dtype& dt) {
  char kind = dt.kind();
  int size = static_cast<int>(dt.itemsize());
  if (elem.isBool()) return kind == 'b' && size == 1;
  if (elem.isFP8()) return (kind == 'u' || kind == 'i') && size == 1;
  if (elem.scalarKind() == ir::ScalarKind::BF16) return kind == 'u' && size == 2;
  if (elem.isFloat()) return kind == 'f' && size * 8 == elem.bitWidth();
  if (elem.isSigned()) return kind == 'i' && size * 8 == elem.bitWidth();
  return kind == 'u' && size * 8 == elem.bitWidth();
}

inline std::string expectedDtype(ir::Type elem) {
  switch (elem.scalarKind()) {
    case ir::ScalarKind::I1: return "bool";
    case ir::ScalarKind::BF16: return "uint16 (bfloat16 bit patterns)";
    case ir::ScalarKind::F8E4M3: case ir::ScalarKind::F8E5M2: return "uint8 (fp8 bit patterns)";
    case ir::ScalarKind::F16: return "float16";
    case ir::ScalarKind::F32: return "float32";
    case ir::ScalarKind::F64: return "float64";
    default: return (elem.isSigned() ? "int" : "uint") + std::to_string(elem.bitWidth());
  }
}

// Whether `strides` (in bytes, or in elements when itemsize is 1) describe a C-contiguous array of `shape`.
// Dimensions of extent 1 may have any stride (torch gives them arbitrary ones).
inline bool isCContiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t itemsize) {
  int64_t expected = itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return true;  // an empty array is trivially contiguous
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// A pointer argument from an array in host memory that speaks DLPack (a torch CPU tensor). The capsule is dropped
// at once, unconsumed: the producer keeps the memory while `value` lives, and the caller's argument list holds
// it for the whole (synchronous) run.
inline interp::Arg fromHostDLPack(ir::Type param, const std::string& name, py::handle value) {
  py::tuple device = value.attr("__dlpack_device__")();
  int type = device[0].cast<int>();
  if (type == kDLCUDA || type == kDLCUDAManaged || type == kDLROCM) {
    const bool rocm = type == kDLROCM;
    throw py::type_error("argument '" + name + "' is a GPU array (DLPack device " + (rocm ? "rocm:" : "cuda:") +
                         py::str(device[1]).cast<std::string>() + "); GPU launches need the " +
                         (rocm ? "HIP JIT (backend='hip')" : "CUDA JIT (backend='cuda')") +
                         ", while this launch runs on the host");
  }
  if (type != kDLCPU)
    throw py::type_error("argument '" + name + "' is on DLPack device type " + std::to_string(type) +
                         ", not in host memory; this launch runs on the host and takes numpy arrays or CPU tensors");
  py::capsule capsule;
  try {
    capsule = value.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    throw py::type_error("argument '" + name + "' could not be exported through DLPack: " + e.what());
  }
  const DLPackTensor& t = capsule.get_pointer<DLPackManagedTensor>()->tensor;
  ir::Type elem = param.pointee();
  if (!dlpackDtypeMatches(elem, t.dtype))
    throw py::type_error("argument '" + name + "' must be a " + expectedDtype(elem) + " tensor (parameter type " +
                         param.str() + "), got " + dlpackDtypeName(t.dtype));
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  if (t.strides && !isCContiguous(shape, std::vector<int64_t>(t.strides, t.strides + t.ndim), 1))
    throw py::value_error("argument '" + name + "' must be C-contiguous (e.g. tensor.contiguous())");
  size_t elements = 1;
  for (int64_t extent : shape) elements *= static_cast<size_t>(extent);
  return interp::Buffer{static_cast<char*>(t.data) + t.byteOffset, elements * (t.dtype.bits / 8)};
}

// Python ints, bools and anything with __index__ (numpy integer scalars), but not floats.
inline bool isIntegerLike(py::handle value) { return PyIndex_Check(value.ptr()) != 0; }

// operator.index(value), or a TypeError saying what `what` must be: types with __index__ may still refuse
// (a numpy array of several elements, a float tensor), and their own message names no argument.
inline py::int_ toIndex(py::handle value, const std::string& what) {
  PyObject* index = PyNumber_Index(value.ptr());
  if (!index) {
    py::error_already_set cause;
    throw py::type_error(what + " must be an int, got " + typeName(value) + " (" + cause.what() + ")");
  }
  return py::reinterpret_steal<py::int_>(index);
}

// Python floats, ints and numpy floating scalars (np.float32 is not a subclass of float).
inline bool isRealLike(py::handle value) {
  static PyObject* numpyFloating = py::object(py::module_::import("numpy").attr("floating")).release().ptr();  // kept for life
  return PyFloat_Check(value.ptr()) || isIntegerLike(value) || PyObject_IsInstance(value.ptr(), numpyFloating) == 1;
}

// A real number as a double (Python's float()); `what` names it when that fails (an int beyond a double's range).
inline double toDouble(py::handle value, const std::string& what) {
  double d = PyFloat_AsDouble(value.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    py::error_already_set cause;
    throw py::value_error(what + " = " + py::str(value).cast<std::string>().substr(0, 40) +
                          " does not fit in a double (" + cause.what() + ")");
  }
  return d;
}

// An integer argument for a parameter of integer type `param`, rejected (not wrapped) when out of its range.
inline int64_t convertInt(ir::Type param, const std::string& name, py::handle value) {
  py::int_ index = toIndex(value, "argument '" + name + "'");
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  unsigned bits = param.bitWidth();
  if (!overflow && param.isBool()) {
    if (v == 0 || v == 1) return v;
  } else if (!overflow && param.isSigned()) {
    int64_t lo = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    int64_t hi = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    if (v >= lo && v <= hi) return v;
  } else if (param.isUnsigned() && overflow >= 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
    if (PyErr_Occurred()) PyErr_Clear();
    else if (bits >= 64 || u < (1ULL << bits)) return static_cast<int64_t>(u);
  }
  throw py::value_error("argument '" + name + "' = " + py::str(index).cast<std::string>() + " does not fit in " +
                        param.str());
}

// numpy.ma.MaskedArray: an ndarray whose mask a kernel would silently ignore.
inline bool isMaskedArray(py::handle value) {
  static PyObject* masked = py::object(py::module_::import("numpy.ma").attr("MaskedArray")).release().ptr();  // kept for life
  return PyObject_IsInstance(value.ptr(), masked) == 1;
}

inline interp::Arg convertArg(ir::Type param, const std::string& name, py::handle value);

// A sequence of ints (a descriptor's shape, strides or block), named `what` in messages.
inline std::vector<int64_t> toInt64s(py::handle value, const std::string& what) {
  if (!PySequence_Check(value.ptr()) || py::isinstance<py::str>(value))
    throw py::type_error(what + " must be a sequence of ints, got " + typeName(value));
  std::vector<int64_t> out;
  for (py::handle v : py::reinterpret_borrow<py::sequence>(value)) out.push_back(toIndex(v, what).cast<int64_t>());
  return out;
}

// Whether `value` is a tessera.TensorDescriptor (python/tessera/descriptor.py).
inline bool isTensorDescriptor(py::handle value) {
  return py::hasattr(value, "array") && py::hasattr(value, "block_shape") && py::hasattr(value, "strides");
}

// The parameter type a descriptor parameter of `element`s takes for `value`: tensordesc<its block x element>.
inline ir::Type descriptorTypeOf(ir::Type element, const std::string& name, py::handle value) {
  if (!isTensorDescriptor(value))
    throw py::type_error("argument '" + name + "' must be a tessera.TensorDescriptor of " + element.str() + ", got " +
                         typeName(value));
  std::vector<int64_t> block = toInt64s(value.attr("block_shape"), "the block_shape of argument '" + name + "'");
  if (auto why = ir::Type::checkDescriptorBlock(block))
    throw py::value_error("argument '" + name + "': " + *why);
  return ir::Type::tensorDesc(block, element);
}

// A tessera.TensorDescriptor for a parameter of type `param` (tensordesc<...>): its array as a pointer argument
// would be (dtype, contiguity, writability), its shape and strides (in elements) and its block.
// A descriptor's shape and strides must stay inside its array (`arrayBytes` long), or a TMA copy on a GPU would
// read or write past it: the farthest element it reaches, sum of (shape[d] - 1) * strides[d], must exist. Shapes
// and strides that are not positive are left to descriptorError, which names them.
inline void checkDescriptorSpan(const std::string& name, const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& strides, ir::Type element, uint64_t arrayBytes) {
  if (shape.size() != strides.size()) return;
  uint64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0 || strides[d] <= 0) return;
    last += static_cast<uint64_t>(shape[d] - 1) * static_cast<uint64_t>(strides[d]);
  }
  const uint64_t elements = arrayBytes / static_cast<uint64_t>(element.storageBytes());
  if (last >= elements)
    throw py::value_error("argument '" + name + "': its shape and strides reach element " + std::to_string(last) +
                          " of an array of " + std::to_string(elements) + " elements");
}

inline interp::TensorDesc convertDescriptor(ir::Type param, const std::string& name, py::handle value) {
  if (descriptorTypeOf(param.element(), name, value) != param)
    throw py::value_error("argument '" + name + "' reads blocks of " + param.str() + "; its block_shape differs");
  interp::Arg array = convertArg(ir::Type::ptr(param.element()), name, value.attr("array"));
  interp::TensorDesc d{std::get<interp::Buffer>(array),
                       toInt64s(value.attr("shape"), "the shape of argument '" + name + "'"),
                       toInt64s(value.attr("strides"), "the strides of argument '" + name + "'"), param.blockShape()};
  checkDescriptorSpan(name, d.shape, d.strides, param.element(), d.buffer.bytes);
  return d;
}

// One argument for a parameter of type `param` (named `name` in messages).
inline interp::Arg convertArg(ir::Type param, const std::string& name, py::handle value) {
  if (param.isTensorDesc()) return convertDescriptor(param, name, value);
  if (param.isPtr()) {
    if (!py::isinstance<py::array>(value)) {  // arrays first: hasattr() on an array costs a caught AttributeError
      if (py::hasattr(value, "__cuda_array_interface__"))
        throw py::type_error("argument '" + name +
                             "' is a GPU array; GPU launches need the CUDA JIT (backend='cuda'), while this launch "
                             "runs on the interpreter, which takes numpy arrays");
      if (py::hasattr(value, "__dlpack__") && py::hasattr(value, "__dlpack_device__"))
        return fromHostDLPack(param, name, value);
      throw py::type_error("argument '" + name + "' must be a numpy array or a CPU tensor for " + param.str() +
                           ", got " + typeName(value));
    }
    py::array arr = py::reinterpret_borrow<py::array>(value);
    ir::Type elem = param.pointee();
    if (!dtypeMatches(elem, arr.dtype()))
      throw py::type_error("argument '" + name + "' must be a " + expectedDtype(elem) + " array (parameter type " +
                           param.str() + "), got dtype " + py::str(arr.dtype()).cast<std::string>());
    // Kind and size match, but the bytes would be read in the wrong order: a silently wrong result otherwise.
    if (!arr.dtype().attr("isnative").cast<bool>())
      throw py::type_error("argument '" + name + "' must be a " + expectedDtype(elem) + " array in native byte order, "
                           "got dtype " + py::str(arr.dtype().attr("str")).cast<std::string>() +
                           " (use array.astype(array.dtype.newbyteorder('=')))");
    if (isMaskedArray(value))
      throw py::value_error("argument '" + name + "' is a masked array, whose mask a launch cannot honour "
                            "(pass array.filled(...) or array.data)");
    if (!(arr.flags() & py::array::c_style))
      throw py::value_error("argument '" + name + "' must be C-contiguous (use numpy.ascontiguousarray)");
    if (!arr.writeable())
      throw py::value_error("argument '" + name + "' is read-only; the kernel may write through it");
    return interp::Buffer{arr.mutable_data(), static_cast<size_t>(arr.nbytes())};
  }
  if (param.isFloat()) {
    if (py::isinstance<py::array>(value) || !isRealLike(value))
      throw py::type_error("argument '" + name + "' must be a number (" + param.str() + "), got " + typeName(value));
    return toDouble(value, "argument '" + name + "'");
  }
  if (param.isInt()) {
    if (py::isinstance<py::array>(value) || !isIntegerLike(value))
      throw py::type_error("argument '" + name + "' must be an int (" + param.str() + "), got " + typeName(value));
    return convertInt(param, name, value);
  }
  throw py::type_error("argument '" + name + "' has type " + param.str() + ", which a launch cannot pass");
}

inline std::vector<interp::Arg> convertArgs(const std::vector<ir::Type>& params, const std::vector<std::string>& names,
                                            const py::sequence& args) {
  if (py::len(args) != params.size())
    throw py::type_error("expected " + std::to_string(params.size()) + " arguments, got " + std::to_string(py::len(args)));
  std::vector<interp::Arg> out;
  out.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    out.push_back(convertArg(params[i], i < names.size() ? names[i] : "#" + std::to_string(i), args[i]));
  return out;
}

// A launch grid: an int, or a sequence of 1 to 3 ints, each in [1, 2^31 - 1] (program ids are i32).
// Sequences (a numpy array of grid sizes included) are read as sequences even when their type has __index__.
inline interp::Grid toGrid(py::handle grid) {
  bool sequence = PySequence_Check(grid.ptr()) && !py::isinstance<py::str>(grid) && !py::isinstance<py::bytes>(grid);
  if (isIntegerLike(grid) && !sequence) return toGrid(py::make_tuple(grid));
  Py_ssize_t n = sequence ? PySequence_Size(grid.ptr()) : -1;
  if (n < 0) {
    PyErr_Clear();
    throw py::type_error("the grid must be an int or a tuple of 1 to 3 ints, got " + typeName(grid));
  }
  if (n < 1 || n > 3) throw py::value_error("the grid must have 1 to 3 dimensions, got " + std::to_string(n));
  py::sequence dims = py::reinterpret_borrow<py::sequence>(grid);
  interp::Grid g{1, 1, 1};
  for (Py_ssize_t i = 0; i < n; ++i) {
    py::object d = dims[i];
    if (!isIntegerLike(d)) throw py::type_error("grid dimensions must be ints, got " + typeName(d));
    py::int_ index = toIndex(d, "grid dimension " + std::to_string(i));
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow || v <= 0 || v > std::numeric_limits<int32_t>::max())
      throw py::value_error("grid dimension " + std::to_string(i) + " must be in [1, 2^31 - 1], got " +
                            py::str(d).cast<std::string>());
    g[i] = v;
  }
  return g;
}

}  // namespace tessera::python
