// tessera._C.aot: ahead-of-time export (jit/aot/Export.h) for tessera.aot.export.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "jit/aot/Export.h"

namespace py = pybind11;
using namespace tessera;

Constants constantsFromPython(const KernelDef& k, const py::dict& d);  // bindings_kernel.cpp

void bindAot(py::module_& m) {
  py::module_ aot = m.def_submodule("aot", "Ahead-of-time export of kernels as C sources");
  aot.def(
      "export_kernel",
      [](const KernelDef& def, const std::string& outDir, const py::dict& constants,
         const std::vector<std::string>& targets, int numWarps, const std::set<std::string>& divisibleBy16,
         const std::set<std::string>& divisibleBy8, const std::set<std::string>& equalTo1, const std::string& name, bool fastMath, bool cubin,
         const std::string& ptxas) {
        jit::aot::ExportOptions o;
        o.name = name;
        o.constants = constantsFromPython(def, constants);
        for (const std::string& t : targets) o.targets.push_back(jit::aot::parseArchTarget(t));
        o.numWarps = numWarps;
        o.divisibleBy16 = divisibleBy16;
        o.divisibleBy8 = divisibleBy8;
        o.equalTo1 = equalTo1;
        o.fastMath = fastMath;
        o.cubin = cubin;
        o.ptxas = ptxas;
        jit::aot::ExportedKernel e = jit::aot::exportKernel(def, o);
        std::vector<std::string> paths;
        for (const auto& p : jit::aot::writeExport(e, outDir)) paths.push_back(p.string());
        return py::make_tuple(paths, e.binaries);
      },
      py::arg("kernel"), py::arg("out_dir"), py::arg("constants"), py::arg("targets"), py::arg("num_warps"),
      py::arg("divisible_by_16"), py::arg("divisible_by_8"), py::arg("equal_to_1"), py::arg("name"), py::arg("fast_math"), py::arg("cubin"),
      py::arg("ptxas"));
}
