// Converting Python launch arguments to interpreter arguments, with Python exceptions for every mismatch:
// TypeError for a wrong kind or dtype, ValueError for non-contiguous or read-only arrays and bad grids.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "backends/interpreter/Interpreter.h"

namespace tessera::python {

namespace py = pybind11;

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

// One argument for a parameter of type `param` (named `name` in messages).
inline interp::Arg convertArg(ir::Type param, const std::string& name, py::handle value) {
  if (param.isPtr()) {
    if (py::hasattr(value, "__cuda_array_interface__"))
      throw py::type_error("argument '" + name +
                           "' is a GPU array; GPU launches need the CUDA JIT (backend='cuda'), while this launch runs "
                           "on the interpreter, which takes numpy arrays");
    if (!py::isinstance<py::array>(value))
      throw py::type_error("argument '" + name + "' must be a numpy array for " + param.str() + ", got " +
                           py::str(py::type::of(value)).cast<std::string>());
    py::array arr = py::reinterpret_borrow<py::array>(value);
    ir::Type elem = param.pointee();
    if (!dtypeMatches(elem, arr.dtype()))
      throw py::type_error("argument '" + name + "' must be a " + expectedDtype(elem) + " array (parameter type " +
                           param.str() + "), got dtype " + py::str(arr.dtype()).cast<std::string>());
    if (!(arr.flags() & py::array::c_style))
      throw py::value_error("argument '" + name + "' must be C-contiguous (use numpy.ascontiguousarray)");
    if (!arr.writeable())
      throw py::value_error("argument '" + name + "' is read-only; the kernel may write through it");
    return interp::Buffer{arr.mutable_data(), static_cast<size_t>(arr.nbytes())};
  }
  if (param.isFloat()) {
    if (!py::isinstance<py::float_>(value) && !py::isinstance<py::int_>(value))
      throw py::type_error("argument '" + name + "' must be a number (" + param.str() + ")");
    return value.cast<double>();
  }
  if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
    try {
      return value.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error("argument '" + name + "' does not fit in 64 bits");
    }
  }
  throw py::type_error("argument '" + name + "' must be an int (" + param.str() + "), got " +
                       py::str(py::type::of(value)).cast<std::string>());
}

inline std::vector<interp::Arg> convertArgs(const std::vector<ir::Type>& params, const std::vector<std::string>& names,
                                            const py::sequence& args) {
  if (py::len(args) != params.size())
    throw py::type_error("expected " + std::to_string(params.size()) + " arguments, got " + std::to_string(py::len(args)));
  std::vector<interp::Arg> out;
  for (size_t i = 0; i < params.size(); ++i)
    out.push_back(convertArg(params[i], i < names.size() ? names[i] : "#" + std::to_string(i), args[i]));
  return out;
}

inline interp::Grid toGrid(const py::sequence& grid) {
  size_t n = py::len(grid);
  if (n < 1 || n > 3) throw py::value_error("the grid must have 1 to 3 dimensions, got " + std::to_string(n));
  interp::Grid g{1, 1, 1};
  for (size_t i = 0; i < n; ++i) {
    if (!py::isinstance<py::int_>(grid[i])) throw py::type_error("grid dimensions must be ints");
    g[i] = grid[i].cast<int64_t>();
    if (g[i] <= 0) throw py::value_error("grid dimensions must be positive, got " + std::to_string(g[i]));
  }
  return g;
}

}  // namespace tessera::python
