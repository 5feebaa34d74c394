// Python access to the autotuner (jit/Autotuner.h): python/tessera/autotune.py builds configs and key values and
// launches through the ordinary kernel[grid](...) path; this side compiles and prunes every config in parallel
// (without the GIL) and keeps the winners in the same disk cache as C++ launches.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <iostream>
#include <map>
#include <memory>

#include "jit/AutotunedKernel.h"
#include "jit/Autotuner.h"
#include "jit/DeviceRuntime.h"
#include "jit/KernelTimer.h"
#include "jit/sim/SimRuntime.h"

namespace py = pybind11;
using namespace tessera;

Constants constantsFromPython(const KernelDef& k, const py::dict& d);  // bindings_kernel.cpp
jit::KernelArg argumentForFact(const ParamInfo& p, py::handle fact);  // bindings_jit.cpp

namespace {

// (constants, num_warps, options) as autotune.py passes each tessera.Config.
std::vector<jit::TuneConfig> configsFromPython(const KernelDef& def, const py::list& configs) {
  std::vector<jit::TuneConfig> out;
  for (py::handle c : configs) {
    auto [constants, numWarps, options] = c.cast<std::tuple<py::dict, int, std::map<std::string, int64_t>>>();
    out.push_back({constantsFromPython(def, constants), numWarps, std::move(options)});
  }
  return out;
}

const char* sourceName(jit::TuningReport::Source s) {
  switch (s) {
    case jit::TuningReport::Source::Benchmarked: return "benchmarked";
    case jit::TuningReport::Source::Cached: return "cached";
    case jit::TuningReport::Source::Fixed: return "fixed";
  }
  return "?";
}

// Tunes for a launch: compiles with the facts of its arguments for `runtime` (a CUDA or AMD GPU, or the emulator,
// which also stands for the interpreter), and benchmarks through `benchmark(index) -> ms`.
size_t selectForLaunch(jit::Autotuner& tuner, const jit::TuningKey& key, jit::JitKernel& kernel,
                       const py::sequence& facts, const py::dict& constantsDict, const std::string& backend,
                       sim::SimRuntime* simRuntime, py::object benchmark, const std::string& cannotBenchmark) {
  const KernelDef& def = kernel.definition();
  const std::vector<ParamInfo> params = def.runtimeParams();
  if (py::len(facts) != params.size()) throw py::value_error("expected one fact per runtime parameter");
  std::vector<jit::KernelArg> args;
  for (size_t i = 0; i < params.size(); ++i) args.push_back(argumentForFact(params[i], facts[i]));
  const Constants constants = constantsFromPython(def, constantsDict);
  jit::DeviceRuntime& runtime = simRuntime ? static_cast<jit::DeviceRuntime&>(*simRuntime)
                                            : kernel.runtimeFor(backend == "hip" ? "amdgpu" : "nvptx");
  jit::LaunchOptions resolved;
  resolved.target = runtime.target();
  resolved.arch = runtime.nativeArch();
  resolved.runtime = simRuntime;
  jit::TuningDevice device = jit::tuningDeviceFor(&runtime, resolved.target, resolved.arch);
  device.identity = backend + ": " + device.identity;  // the interpreter's winners are not the emulator's
  jit::TuningHooks hooks;
  hooks.prepare = jit::compileAndPrune(kernel, tuner.configs(), args, constants, resolved, device,
                                       tuner.descriptorBlocks());
  hooks.cannotBenchmark = cannotBenchmark;
  hooks.benchmark = [&](size_t i) {
    py::gil_scoped_acquire gil;
    try {
      return benchmark(i).cast<double>();
    } catch (py::error_already_set& e) {
      // A launch that fails with tessera.Error disqualifies its config; other exceptions stop the tuning.
      if (e.matches(py::module_::import("tessera._C").attr("Error"))) throw Error(py::str(e.value()));
      throw;
    }
  };
  py::gil_scoped_release release;
  return tuner.select(key, device.identity, hooks);
}

}  // namespace

void bindAutotune(py::module_& m) {
  py::class_<jit::Autotuner>(m, "Autotuner", "Picks the fastest config per key (python/tessera/autotune.py)")
      .def(py::init([](const KernelDef& def, const py::list& configs, std::vector<std::string> key,
                       std::optional<std::filesystem::path> cacheDir, std::optional<size_t> fixed,
                       std::optional<bool> progress, jit::DescriptorBlocks descriptorBlocks) {
             jit::AutotuneOptions options;
             options.descriptorBlocks = std::move(descriptorBlocks);
             if (cacheDir) options.cacheDirectory = *cacheDir;
             if (fixed) options.fixedConfig = fixed;
             if (progress) options.quiet = !*progress;
             if (progress.value_or(false)) options.progress = &std::cerr;
             return std::make_unique<jit::Autotuner>(def, configsFromPython(def, configs), std::move(key), options);
           }),
           py::arg("kernel"), py::arg("configs"), py::arg("key"), py::arg("cache_dir") = py::none(),
           py::arg("fixed") = py::none(), py::arg("progress") = py::none(),
           py::arg("descriptor_blocks") = jit::DescriptorBlocks{})
      .def("select", &selectForLaunch, py::arg("key"), py::arg("jit_kernel"), py::arg("facts"), py::arg("constants"),
           py::arg("backend"), py::arg("sim_runtime"), py::arg("benchmark"), py::arg("cannot_benchmark"))
      .def_property_readonly("last_report", [](const jit::Autotuner& t) -> py::object {
        std::optional<jit::TuningReport> r = t.lastReport();
        if (!r) return py::none();
        py::list outcomes;
        for (const jit::ConfigOutcome& o : r->outcomes)
          outcomes.append(py::dict(py::arg("rejected") = o.rejected, py::arg("ms") = o.ms));
        return py::dict(py::arg("key") = r->key, py::arg("winner") = r->winner,
                        py::arg("source") = sourceName(r->source), py::arg("outcomes") = outcomes);
      });

  m.def(
      "bench_launch",
      [](const std::function<void()>& fn, const std::string& target) {
        // One clock per GPU API (its 256 MB flush buffer and events) for the process, never destroyed: freeing
        // device memory while the driver shuts down at exit fails.
        static std::map<std::string, jit::ClockTimer*> timers;
        jit::ClockTimer*& timer = timers[target];
        if (!timer) {
          std::unique_ptr<jit::TimingClock> clock = jit::selectRuntime(target).makeTimingClock();
          if (!clock) throw Error("target '" + target + "' has no clock to time launches with");
          timer = new jit::ClockTimer(std::move(clock));
        }
        return timer->milliseconds(fn);
      },
      py::arg("fn"), py::arg("target") = "nvptx",
      "do_bench on the GPU of `target` (nvptx: CUDA, amdgpu: HIP): fn() timed with the API's events after an L2 "
      "flush, median in ms");
}
