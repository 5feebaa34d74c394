// Python access to kernels written in the C++ DSL: their parameters, tracing, and launches on the
// interpreter or in eager mode. The Triton-style launch syntax is in python/tessera/__init__.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ArgConversion.h"
#include "tessera/python.h"
#include "tutorials/kernels/layernorm.h"
#include "tutorials/kernels/matmul.h"
#include "tutorials/kernels/softmax.h"
#include "tutorials/kernels/vector_add.h"

namespace py = pybind11;
using namespace tessera;

namespace {

Constants toConstants(const KernelDef& k, const py::dict& d) {
  Constants c;
  for (auto [key, value] : d) {
    std::string name = key.cast<std::string>();
    if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) c[name] = value.cast<int64_t>();
    else if (py::isinstance<py::float_>(value)) c[name] = value.cast<double>();
    else throw py::type_error("Const parameter '" + name + "' of kernel '" + k.name() + "' must be an int, bool or float");
  }
  return c;
}

std::vector<interp::Arg> runtimeArgs(const KernelDef& k, const py::sequence& args) {
  std::vector<ir::Type> types;
  std::vector<std::string> names;
  for (const ParamInfo& p : k.runtimeParams()) {
    types.push_back(p.type);
    names.push_back(p.name);
  }
  if (py::len(args) != types.size())
    throw py::type_error("kernel '" + k.name() + "' takes " + std::to_string(types.size()) + " runtime arguments, got " +
                         std::to_string(py::len(args)));
  return python::convertArgs(types, names, args);
}

const char* kindName(ParamKind k) {
  switch (k) {
    case ParamKind::Pointer: return "pointer";
    case ParamKind::Scalar: return "scalar";
    case ParamKind::Constant: return "constant";
  }
  return "";
}

}  // namespace

void bindKernels(py::module_& m) {
  py::class_<KernelDef>(m, "KernelDef")
      .def_property_readonly("name", &KernelDef::name)
      .def_property_readonly("params",
                             [](const KernelDef& k) {
                               py::list out;
                               for (const ParamInfo& p : k.params())
                                 out.append(py::make_tuple(p.name, kindName(p.kind), p.type.str()));
                               return out;
                             },
                             "[(name, 'pointer' | 'scalar' | 'constant', type)]")
      .def("trace", [](const KernelDef& k, const py::dict& constants) { return k.trace(toConstants(k, constants)); },
           py::arg("constants"), "Traces the kernel for these Const values; returns a verified ir.Module")
      .def("run_interpreter",
           [](const KernelDef& k, const py::sequence& grid, const py::sequence& args, const py::dict& constants) {
             interp::Grid g = python::toGrid(grid);
             std::vector<interp::Arg> a = runtimeArgs(k, args);
             Constants c = toConstants(k, constants);
             py::gil_scoped_release release;
             k.runInterpreter(g, a, c);
           },
           py::arg("grid"), py::arg("args"), py::arg("constants"))
      .def("run_eager",
           [](const KernelDef& k, const py::sequence& grid, const py::sequence& args, const py::dict& constants) {
             interp::Grid g = python::toGrid(grid);
             std::vector<interp::Arg> a = runtimeArgs(k, args);
             Constants c = toConstants(k, constants);
             py::gil_scoped_release release;
             k.runEager(g, a, c);
           },
           py::arg("grid"), py::arg("args"), py::arg("constants"));

  // The tutorial kernels, bound one line each as any user module would.
  py::module_ kernels = m.def_submodule("kernels", "The tutorial kernels");
  python::bind(kernels, tutorials::vector_add_kernel());
  python::bind(kernels, tutorials::softmax_kernel());
  python::bind(kernels, tutorials::layernorm_fwd_kernel());
  python::bind(kernels, tutorials::matmul_kernel());
}
