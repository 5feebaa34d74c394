// Python access to the emulator (jit/sim/SimRuntime.h): the process-wide runtimes by arch and checks, and the
// report of a launch as plain Python data. python/tessera/sim.py builds tessera.sim on top of it; launches go
// through JitKernel.launch_sim (bindings_jit.cpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "jit/sim/SimRuntime.h"

namespace py = pybind11;
using namespace tessera;

namespace {

py::dict globalCounters(const sim::GlobalAccessCounters& c) {
  py::dict d;
  d["requests"] = c.requests;
  d["sectors"] = c.sectors;
  d["requested_bytes"] = c.requestedBytes;
  d["sectors_per_request"] = c.sectorsPerRequest();
  d["efficiency"] = c.efficiency();
  return d;
}

py::dict sharedCounters(const sim::SharedAccessCounters& c) {
  py::dict d;
  d["requests"] = c.requests;
  d["wavefronts"] = c.wavefronts;
  d["bank_conflicts"] = c.bankConflicts;
  return d;
}

// The counters of a launch or of one op: the headline figures first, then the detail they come from.
py::dict counters(const sim::Counters& c) {
  py::dict d;
  d["global_load_efficiency"] = c.globalLoadEfficiency();
  d["global_store_efficiency"] = c.globalStoreEfficiency();
  d["shared_bank_conflicts"] = c.sharedBankConflicts();
  d["barriers"] = c.barriers;
  d["global_loads"] = globalCounters(c.globalLoad);
  d["global_stores"] = globalCounters(c.globalStore);
  d["shared_loads"] = sharedCounters(c.sharedLoad);
  d["shared_stores"] = sharedCounters(c.sharedStore);
  py::dict widths;
  for (size_t w = 0; w < sim::kAccessWidthClasses; ++w) widths[sim::accessWidthName(w)] = c.globalAccessWidths[w];
  d["global_access_widths"] = widths;
  py::dict instructions;
  for (size_t i = 0; i < sim::kInstructionClassCount; ++i)
    instructions[sim::instructionClassName(static_cast<sim::InstructionClass>(i))] = c.warpInstructions[i];
  d["warp_instructions"] = instructions;
  return d;
}

std::string location(const std::string& file, uint32_t line, uint32_t column) {
  return file.empty() ? "" : file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

py::dict finding(const sim::Finding& f) {
  py::dict d;
  d["kind"] = sim::findingKindName(f.kind);
  d["kernel"] = f.kernel;
  d["program"] = py::make_tuple(f.program[0], f.program[1], f.program[2]);
  d["warp"] = f.hasThread ? py::object(py::int_(f.warp)) : py::object(py::none());
  d["lane"] = f.hasThread ? py::object(py::int_(f.lane)) : py::object(py::none());
  if (f.hasAccess) {
    py::dict access;
    access["space"] = f.space;
    access["address"] = f.address;  // for shared memory: the offset in the program's shared memory
    access["bytes"] = f.bytes;
    access["write"] = f.write;
    d["access"] = access;
  } else {
    d["access"] = py::none();
  }
  d["op"] = f.op;
  d["file"] = f.file;
  d["line"] = f.line;
  d["column"] = f.column;
  d["location"] = location(f.file, f.line, f.column);
  d["instruction"] = f.instruction;
  d["message"] = f.message;
  d["text"] = f.str();
  return d;
}

// The report as (data, counters table, full text): the data a dict, the texts Report's own.
py::tuple report(const sim::Report& r, const sim::SimRuntime& runtime) {
  py::dict d = counters(r.total);
  d["kernel"] = r.kernel;
  d["target"] = runtime.target();
  d["arch"] = runtime.nativeArch();
  py::dict checks;  // each check by name: on or off
  for (const char* name : sim::kCheckNames) checks[name] = runtime.checks().on(name);
  d["checks"] = checks;
  d["grid"] = py::make_tuple(r.grid[0], r.grid[1], r.grid[2]);
  py::list ops;
  for (const sim::OpCounters& op : r.ops) {
    py::dict o = counters(op.counters);
    o["op"] = op.op;
    o["file"] = op.file;
    o["line"] = op.line;
    o["column"] = op.column;
    o["location"] = location(op.file, op.line, op.column);
    ops.append(o);
  }
  d["ops"] = ops;
  py::list findings;
  for (const sim::Finding& f : r.findings) findings.append(finding(f));
  d["findings"] = findings;
  py::dict findingCounts;  // every finding, kept or not, by kind
  for (size_t k = 0; k < sim::kFindingKindCount; ++k)
    if (r.findingCounts[k]) findingCounts[sim::findingKindName(static_cast<sim::FindingKind>(k))] = r.findingCounts[k];
  d["finding_counts"] = findingCounts;
  d["output"] = r.output;
  return py::make_tuple(d, r.countersTable(), r.str());
}

}  // namespace

void bindSim(py::module_& m) {
  // The runtimes live as long as the process: Python holds references, never owns them.
  py::class_<sim::SimRuntime, std::unique_ptr<sim::SimRuntime, py::nodelete>>(
      m, "SimRuntime", "The emulator for one arch and selection of checks (tessera.sim)")
      .def_property_readonly("target", &sim::SimRuntime::target)
      .def_property_readonly("arch", &sim::SimRuntime::nativeArch)
      .def_property_readonly("checks", &sim::SimRuntime::checks)
      .def_property("multiprocessors", &sim::SimRuntime::multiprocessors, &sim::SimRuntime::setMultiprocessors,
                    "The multiprocessors a persistent launch counts (0: the arch's flagship GPU's); a small number "
                    "makes each program loop over several tiles")
      .def(
          "take_report",
          [](sim::SimRuntime& runtime) -> py::object {
            std::optional<sim::Report> r = runtime.takeLastReport();
            return r ? py::object(report(*r, runtime)) : py::object(py::none());
          },
          "The last launch's report as (dict, counters table, text), or None; leaves none behind")
      .def("__repr__", [](const sim::SimRuntime& r) {
        return "<tessera emulator " + r.target() + " " + r.nativeArch() + ", checks " + r.checks().str() + ">";
      });
  m.def(
      "sim_runtime",
      [](const std::string& target, const std::string& arch, const std::string& checks) -> sim::SimRuntime& {
        return sim::simRuntime(sim::emulatedArch(target, arch), sim::Checks::parse(checks));
      },
      py::arg("target"), py::arg("arch"), py::arg("checks"), py::return_value_policy::reference,
      "The emulator for `arch` (or `target`'s default arch; '' for either means the default) running `checks` "
      "('all', 'none' or names, comma-separated)");
  m.def("sim_archs", &sim::emulatedArchs, "The archs the emulator models, the default first");
}
