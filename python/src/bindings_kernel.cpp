// Python access to kernels written in the C++ DSL: their parameters, tracing, specializations (traced once per
// set of Const values, then launched on the interpreter as often as wanted) and eager launches. The
// Triton-style launch syntax and the specialization cache are in python/tessera/kernel.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ArgConversion.h"
#include "ir/Printer.h"
#include "tessera/python.h"
#include "tessera/kernels/attention.h"
#include "tessera/kernels/attention_backward.h"
#include "tessera/kernels/dropout.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"

namespace py = pybind11;
using namespace tessera;

// Const values from a Python dict (also used by bindings_jit.cpp).
Constants constantsFromPython(const KernelDef& k, const py::dict& d) {
  Constants c;
  for (auto [key, value] : d) {
    std::string name = key.cast<std::string>();
    std::string what = "Const parameter '" + name + "' of kernel '" + k.name() + "'";
    if (python::isIntegerLike(value)) {
      py::int_ index = python::toIndex(value, what);
      try {
        c[name] = index.cast<int64_t>();
      } catch (const py::cast_error&) {
        throw py::value_error(what + " = " + py::str(index).cast<std::string>() + " does not fit in 64 bits");
      }
    } else if (python::isRealLike(value)) {
      c[name] = python::toDouble(value, what);
    } else throw py::type_error("Const parameter '" + name + "' of kernel '" + k.name() + "' must be an int, bool or float");
  }
  return c;
}

namespace {

struct RuntimeSignature {
  std::vector<ir::Type> types;   // descriptors: their element, until an argument gives the block
  std::vector<std::string> names;
  std::vector<bool> descriptors;
};

RuntimeSignature runtimeSignature(const KernelDef& k) {
  RuntimeSignature sig;
  for (const ParamInfo& p : k.runtimeParams()) {
    sig.types.push_back(p.type);
    sig.names.push_back(p.name);
    sig.descriptors.push_back(p.kind == ParamKind::TensorDescriptor);
  }
  return sig;
}

// The signature of a traced specialization: its function's parameter types, descriptors' blocks included.
RuntimeSignature tracedSignature(const KernelDef& k, const ir::Module& m) {
  RuntimeSignature sig = runtimeSignature(k);
  sig.types = m.functions()[0]->argumentTypes();
  sig.descriptors.assign(sig.types.size(), false);
  return sig;
}

std::vector<interp::Arg> convertRuntimeArgs(const std::string& kernel, const RuntimeSignature& sig,
                                            const py::sequence& args) {
  if (py::len(args) != sig.types.size())
    throw py::type_error("kernel '" + kernel + "' takes " + std::to_string(sig.types.size()) +
                         " runtime arguments, got " + std::to_string(py::len(args)));
  std::vector<ir::Type> types = sig.types;
  for (size_t i = 0; i < types.size(); ++i)
    if (sig.descriptors[i]) types[i] = python::descriptorTypeOf(types[i], sig.names[i], args[i]);
  return python::convertArgs(types, sig.names, args);
}

// Descriptor parameter types from a dict {name: block shape} (what a trace specializes on besides Consts).
DescriptorTypes descriptorsFromPython(const KernelDef& k, const py::dict& blocks) {
  DescriptorTypes types;
  for (const ParamInfo& p : k.runtimeParams()) {
    if (p.kind != ParamKind::TensorDescriptor || !blocks.contains(p.name)) continue;
    std::vector<int64_t> block = python::toInt64s(blocks[py::str(p.name)], "the block of descriptor '" + p.name + "'");
    if (auto why = ir::Type::checkDescriptorBlock(block)) throw py::value_error("descriptor '" + p.name + "': " + *why);
    types[p.name] = ir::Type::tensorDesc(block, p.type);
  }
  return types;
}

// A kernel traced for one set of Const values: what a cached launch runs.
struct Specialization {
  std::string kernel;
  RuntimeSignature signature;
  std::unique_ptr<ir::Module> module;

  void run(py::handle grid, const py::sequence& args) const {
    interp::Grid g = python::toGrid(grid);
    std::vector<interp::Arg> a = convertRuntimeArgs(kernel, signature, args);
    py::gil_scoped_release release;
    interp::run(*module->functions()[0], a, g);
  }
};

const char* kindName(ParamKind k) {
  switch (k) {
    case ParamKind::Pointer: return "pointer";
    case ParamKind::Scalar: return "scalar";
    case ParamKind::Constant: return "constant";
    case ParamKind::TensorDescriptor: return "descriptor";
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
                             "[(name, 'pointer' | 'scalar' | 'constant' | 'descriptor', type)]")
      .def("trace",
           [](const KernelDef& k, const py::dict& constants, const py::dict& descriptors) {
             return k.trace(constantsFromPython(k, constants), descriptorsFromPython(k, descriptors));
           },
           py::arg("constants"), py::arg("descriptors") = py::dict(),
           "Traces the kernel for these Const values (and descriptor blocks, {name: block_shape}); returns a "
           "verified ir.Module")
      .def("run_interpreter",
           [](const KernelDef& k, py::handle grid, const py::sequence& args, const py::dict& constants) {
             interp::Grid g = python::toGrid(grid);
             std::vector<interp::Arg> a = convertRuntimeArgs(k.name(), runtimeSignature(k), args);
             Constants c = constantsFromPython(k, constants);
             py::gil_scoped_release release;
             k.runInterpreter(g, a, c);
           },
           py::arg("grid"), py::arg("args"), py::arg("constants"))
      .def("run_eager",
           [](const KernelDef& k, py::handle grid, const py::sequence& args, const py::dict& constants) {
             interp::Grid g = python::toGrid(grid);
             std::vector<interp::Arg> a = convertRuntimeArgs(k.name(), runtimeSignature(k), args);
             Constants c = constantsFromPython(k, constants);
             py::gil_scoped_release release;
             k.runEager(g, a, c);
           },
           py::arg("grid"), py::arg("args"), py::arg("constants"))
      .def("specialize",
           [](const KernelDef& k, const py::dict& constants, const py::dict& descriptors) {
             std::unique_ptr<ir::Module> m =
                 k.trace(constantsFromPython(k, constants), descriptorsFromPython(k, descriptors));
             RuntimeSignature signature = tracedSignature(k, *m);
             return Specialization{k.name(), std::move(signature), std::move(m)};
           },
           py::arg("constants"), py::arg("descriptors") = py::dict(),
           "Traces the kernel once for these Const values (and descriptor blocks, {name: block_shape}); launch "
           "the result with run()");

  py::class_<Specialization>(m, "Specialization")
      .def_property_readonly("ir", [](const Specialization& s) { return ir::print(*s.module); },
                             "The traced tile IR, as text")
      .def("module", [](const Specialization& s) { return s.module->clone(); },
           "A copy of the traced ir.Module (free to transform)")
      .def("run", &Specialization::run, py::arg("grid"), py::arg("args"),
           "Runs on the reference interpreter: grid is an int or a tuple, args the runtime arguments in order");

  // The tutorial kernels, bound one line each as any user module would.
  py::module_ kernels = m.def_submodule("kernels", "The tutorial kernels");
  python::bind(kernels, tessera::kernels::vector_add_kernel());
  python::bind(kernels, tessera::kernels::softmax_kernel());
  python::bind(kernels, tessera::kernels::layernorm_fwd_kernel());
  python::bind(kernels, tessera::kernels::layernorm_bwd_dx_kernel());
  python::bind(kernels, tessera::kernels::layernorm_bwd_dwdb_kernel());
  python::bind(kernels, tessera::kernels::layernorm_bwd_atomic_kernel());
  python::bind(kernels, tessera::kernels::matmul_kernel());
  python::bind(kernels, tessera::kernels::matmul_kernel_of<tessera::f8e4m3>("f8e4m3"));
  python::bind(kernels, tessera::kernels::matmul_epilogue_kernel());
  python::bind(kernels, tessera::kernels::matmul_epilogue_f16_kernel());
  // TMA and wgmma on sm_90a (tensor descriptors), with C in the input type.
  python::bind(kernels, tessera::kernels::matmul_desc_same_out_kernel<tessera::f16>("f16"));
  python::bind(kernels, tessera::kernels::matmul_desc_same_out_kernel<tessera::bf16>("bf16"));
  // The same with C stored through a descriptor (a TMA store on sm_90).
  python::bind(kernels, tessera::kernels::matmul_desc_tma_c_kernel<tessera::f16>("f16"));
  python::bind(kernels, tessera::kernels::matmul_desc_tma_c_kernel<tessera::bf16>("bf16"));
  python::bind(kernels, tessera::kernels::attention_fwd_kernel());
  python::bind(kernels, tessera::kernels::attention_fwd_bf16_kernel());
  // The same through 3-d tensor descriptors ([batch * heads, seq_len, HEAD_DIM]).
  python::bind(kernels, tessera::kernels::attention_fwd_desc_kernel());
  python::bind(kernels, tessera::kernels::attention_fwd_desc_bf16_kernel());
  python::bind(kernels, tessera::kernels::attention_fwd_desc_overlap_kernel());
  python::bind(kernels, tessera::kernels::attention_fwd_desc_overlap_bf16_kernel());
  // Training: the forward that saves each row's statistics, and the backward's three kernels.
  python::bind(kernels, tessera::kernels::attention_fwd_lse_kernel_of<tessera::f16>(""));
  python::bind(kernels, tessera::kernels::attention_fwd_lse_kernel_of<tessera::bf16>("_bf16"));
  python::bind(kernels, tessera::kernels::attention_bwd_preprocess_kernel_of<tessera::f16>(""));
  python::bind(kernels, tessera::kernels::attention_bwd_preprocess_kernel_of<tessera::bf16>("_bf16"));
  python::bind(kernels, tessera::kernels::attention_bwd_dkdv_kernel_of<tessera::f16>(""));
  python::bind(kernels, tessera::kernels::attention_bwd_dkdv_kernel_of<tessera::bf16>("_bf16"));
  python::bind(kernels, tessera::kernels::attention_bwd_dq_kernel_of<tessera::f16>(""));
  python::bind(kernels, tessera::kernels::attention_bwd_dq_kernel_of<tessera::bf16>("_bf16"));
  python::bind(kernels, tessera::kernels::dropout_kernel());
  python::bind(kernels, tessera::kernels::seeded_dropout_kernel());
}
