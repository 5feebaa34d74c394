// Binding Tessera kernels into a Python extension module: one line per kernel.
//
//   #include "tessera/python.h"
//   #include "my_kernels.h"
//   PYBIND11_MODULE(my_kernels, m) {
//     tessera::python::bind(m, tessera::kernel("scale", scale, {"x", "out", "n", "alpha", "BLOCK"}));
//   }
//
// Each bound kernel appears as m.<name>, a tessera._C.KernelDef that the Python package wraps for
// Triton-style launches: kernel[grid](*args, BLOCK=..., num_warps=...). The module must link libtessera.so.
#pragma once

#include <pybind11/pybind11.h>

#include "tessera/tessera.h"

namespace tessera::python {

inline void bind(pybind11::module_& m, KernelDef def) {
  // The KernelDef type is registered by tessera._C; a user's module imports it first (_C itself has it already).
  if (!pybind11::detail::get_type_info(typeid(KernelDef))) pybind11::module_::import("tessera._C");
  std::string name = def.name();
  m.attr(name.c_str()) = pybind11::cast(std::move(def));
}

}  // namespace tessera::python
