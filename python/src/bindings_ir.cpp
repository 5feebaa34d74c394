// Python access to the tile IR: textual round trips, verification, passes, the interpreter, and a builder.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "backends/interpreter/Interpreter.h"
#include "ir/Builder.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/Pipeline.h"
#include "ArgConversion.h"

namespace py = pybind11;
using namespace tessera;

namespace {

ir::Type parseTypeText(const std::string& text) {
  // A type is parsed as the argument type of a one-line function: the parser's type grammar, and its errors.
  auto m = ir::parseModule("func @t(%a: " + text + ") {\n  return\n}\n", "<type>");
  return m->functions()[0]->argument(0)->type();
}

ir::Attr toAttr(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return ir::Attr::boolean(v.cast<bool>());
  if (py::isinstance<py::int_>(v)) return ir::Attr::integer(v.cast<int64_t>());
  if (py::isinstance<py::float_>(v)) return ir::Attr::floating(v.cast<double>());
  if (py::isinstance<py::str>(v)) return ir::Attr::string(v.cast<std::string>());
  if (py::isinstance<ir::Type>(v)) return ir::Attr::type(v.cast<ir::Type>());
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::vector<ir::Attr> elems;
    for (py::handle e : v) elems.push_back(toAttr(e));
    return ir::Attr::array(std::move(elems));
  }
  throw py::type_error("unsupported attribute value: " + py::repr(v).cast<std::string>());
}

// Function-level builder state held by Python: the function under construction and an insertion point.
struct PyBuilder {
  std::unique_ptr<ir::Module> module = std::make_unique<ir::Module>();
  ir::Function* function = nullptr;
  ir::Builder builder;
  std::vector<ir::Block*> regionStack;
};

// Module.run_passes: the pass manager over the whole module, keeping the module's text after each pass.
std::vector<std::pair<std::string, std::string>> runPasses(ir::Module& mod, const std::string& spec, int numWarps,
                                                           int warpSize) {
  transforms::PassManager pm;
  transforms::addPasses(pm, spec, transforms::PassOptions{numWarps, warpSize});
  std::vector<std::pair<std::string, std::string>> irAfterPass;
  pm.setAfterPassCallback([&](const std::string& pass, double, const auto& ir) { irAfterPass.emplace_back(pass, ir()); });
  pm.run(mod);
  return irAfterPass;
}

}  // namespace

void bindIR(py::module_& m) {
  py::class_<ir::Type>(m, "Type")
      .def(py::init(&parseTypeText), py::arg("text"), "Parses a type: Type('tile<128xf32>')")
      .def_property_readonly("shape", &ir::Type::shape)
      .def_property_readonly("element", &ir::Type::element)
      .def("is_tile", &ir::Type::isTile)
      .def("is_ptr", &ir::Type::isPtr)
      .def("__eq__", [](const ir::Type& a, const ir::Type& b) { return a == b; })
      .def("__hash__", [](const ir::Type& t) { return ir::TypeHash()(t); })
      .def("__str__", &ir::Type::str)
      .def("__repr__", [](const ir::Type& t) { return "Type('" + t.str() + "')"; });

  py::class_<ir::Value>(m, "Value")
      .def_property_readonly("type", &ir::Value::type)
      .def("__repr__", [](const ir::Value& v) { return "<Value : " + v.type().str() + ">"; });

  py::class_<ir::Op>(m, "Op")
      .def_property_readonly("name", [](const ir::Op& op) { return std::string(op.name()); })
      .def_property_readonly("results", &ir::Op::results, py::return_value_policy::reference_internal)
      .def("result", &ir::Op::result, py::arg("index") = 0, py::return_value_policy::reference_internal)
      .def("__str__", [](const ir::Op& op) { return ir::print(op); });

  py::class_<ir::Function>(m, "Function")
      .def_property_readonly("name", &ir::Function::name)
      .def("__str__", [](const ir::Function& f) { return ir::print(f); })
      .def("verify", [](const ir::Function& f) { ir::verify(f); });

  py::class_<ir::Module>(m, "Module")
      .def_property_readonly("functions",
                             [](const ir::Module& mod) {
                               std::vector<ir::Function*> fs;
                               for (auto& f : mod.functions()) fs.push_back(f.get());
                               return fs;
                             },
                             py::return_value_policy::reference_internal)
      .def("__str__", [](const ir::Module& mod) { return ir::print(mod); })
      .def("print", [](const ir::Module& mod, bool locations) { return ir::print(mod, ir::PrintOptions{locations}); },
           py::arg("locations") = false)
      .def("verify", [](const ir::Module& mod) { ir::verify(mod); })
      .def("clone", [](const ir::Module& mod) { return mod.clone(); })
      .def("run_passes", &runPasses, py::arg("passes"), py::arg("num_warps") = 4, py::arg("warp_size") = 32,
           "Runs passes on this module (in place), verifying after each; returns [(pass name, module IR text "
           "after it)]. `passes` is a list of names or a comma-separated string; 'default' names the JIT's "
           "pipeline (target-independent layouts)")
      .def("run_passes",
           [](ir::Module& mod, const std::vector<std::string>& passes, int numWarps, int warpSize) {
             std::string spec;
             for (const std::string& p : passes) spec += (spec.empty() ? "" : ",") + p;
             return runPasses(mod, spec, numWarps, warpSize);
           },
           py::arg("passes"), py::arg("num_warps") = 4, py::arg("warp_size") = 32)
      .def("interpret",
           [](const ir::Module& mod, py::handle grid, const py::sequence& args, const std::string& function) {
             if (mod.functions().empty()) throw py::value_error("the module has no function to run");
             const ir::Function* f = function.empty() ? mod.functions()[0].get() : mod.lookup(function);
             if (!f) throw py::value_error("no function named '" + function + "'");
             std::vector<ir::Type> params = f->argumentTypes();
             std::vector<std::string> names;
             for (unsigned i = 0; i < params.size(); ++i) {
               const std::string& hint = f->argument(i)->nameHint();
               names.push_back(hint.empty() ? "#" + std::to_string(i) : hint);
             }
             std::vector<interp::Arg> converted = tessera::python::convertArgs(params, names, args);
             interp::Grid g = tessera::python::toGrid(grid);
             py::gil_scoped_release release;
             interp::run(*f, converted, g);
           },
           py::arg("grid"), py::arg("args"), py::arg("function") = "",
           "Runs a function on the reference interpreter over numpy arrays, ints and floats");

  m.def("parse", [](const std::string& text, const std::string& name) { return ir::parseModule(text, name); },
        py::arg("text"), py::arg("filename") = "<python>", "Parses textual tile IR (errors carry line:column)");
  m.def("pass_names", &transforms::registeredPassNames);

  // A small builder: enough to construct any op generically from Python (tests and tools).
  py::class_<PyBuilder>(m, "Builder")
      .def(py::init<>())
      .def("function",
           [](PyBuilder& b, const std::string& name, const std::vector<ir::Type>& argTypes) {
             b.function = b.module->addFunction(std::make_unique<ir::Function>(name, argTypes));
             b.builder.setInsertionPointToEnd(b.function->body());
             return b.function->body()->arguments();
           },
           py::arg("name"), py::arg("arg_types"), py::return_value_policy::reference_internal,
           "Starts a function; returns its argument values")
      .def("op",
           [](PyBuilder& b, const std::string& name, const std::vector<ir::Value*>& operands,
              const std::vector<ir::Type>& resultTypes, const py::dict& attrs) {
             auto kind = ir::opKindFromName(name);
             if (!kind) throw py::value_error("unknown op '" + name + "'");
             if (!b.function) throw py::value_error("call function() first");
             for (ir::Value* v : operands)
               if (!v) throw py::type_error("op '" + name + "': operands must be Values, got None");
             ir::AttrDict dict;
             for (auto [k, v] : attrs) dict[k.cast<std::string>()] = toAttr(v);
             return b.builder.create(*kind, operands, resultTypes, std::move(dict));
           },
           py::arg("name"), py::arg("operands") = std::vector<ir::Value*>{}, py::arg("result_types") = std::vector<ir::Type>{},
           py::arg("attrs") = py::dict(), py::return_value_policy::reference_internal,
           "Appends an op: b.op('add', [x, y], [Type('f32')])")
      .def("enter_region",
           [](PyBuilder& b, ir::Op* op, unsigned index, const std::vector<ir::Type>& argTypes) {
             if (!op) throw py::type_error("enter_region needs an Op, got None");
             if (index >= op->numRegions())
               throw py::value_error("op '" + std::string(op->name()) + "' has " + std::to_string(op->numRegions()) +
                                     " regions; there is no region " + std::to_string(index));
             ir::Block* region = op->region(index);
             for (ir::Type t : argTypes) region->addArgument(t);
             b.regionStack.push_back(b.builder.block());
             b.builder.setInsertionPointToEnd(region);
             return region->arguments();
           },
           py::arg("op"), py::arg("index") = 0, py::arg("arg_types") = std::vector<ir::Type>{},
           py::return_value_policy::reference_internal, "Moves the insertion point into a region; returns its arguments")
      .def("exit_region",
           [](PyBuilder& b) {
             if (b.regionStack.empty()) throw py::value_error("not inside a region");
             b.builder.setInsertionPointToEnd(b.regionStack.back());
             b.regionStack.pop_back();
           })
      .def("finish",
           [](PyBuilder& b) {
             if (!b.function) throw py::value_error("call function() first");
             ir::verify(*b.module);
             auto done = std::move(b.module);
             b.module = std::make_unique<ir::Module>();
             b.function = nullptr;
             return done;
           },
           "Verifies and returns the module built so far");
}
