// tessera._C: the compiled half of the Python package. Python-side conveniences (launch syntax, load(),
// testing.do_bench) live in python/tessera/*.py.
#include <pybind11/pybind11.h>

#include "ir/Error.h"
#include "ir/Version.h"

namespace py = pybind11;

void bindIR(py::module_& m);
void bindKernels(py::module_& m);
void bindJit(py::module_& m);
void bindAot(py::module_& m);
void bindSim(py::module_& m);
void bindAutotune(py::module_& m);

PYBIND11_MODULE(_C, m) {
  m.doc() = "Tessera tile-kernel DSL: compiled core";
  m.attr("__version__") = tessera::version();
  // tessera::Error becomes tessera.Error (a RuntimeError), keeping the located message.
  static py::exception<tessera::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessera::Error& e) {
      error(e.what());
    }
  });
  py::module_ ir = m.def_submodule("ir", "The tile IR: parse, print, verify, build, run passes, interpret");
  bindIR(ir);
  bindKernels(m);
  bindJit(m);
  bindAot(m);
  bindSim(m);
  bindAutotune(m);
}
