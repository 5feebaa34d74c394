// libFuzzer target: textual tile IR through the parser, the verifier and the JIT's pass pipeline.
//
// Findings, besides crashes, sanitizer reports, leaks and hangs:
//   - any exception other than tessera::Error, or a tessera::Error without a message;
//   - a valid module whose printed form does not parse back to the same text (Printer.h promises
//     print(parse(print(m))) == print(m));
//   - a pass that leaves invalid IR behind (a pass may refuse its input with an error, never corrupt it).
// Seeds: the lit tests (tests/lit), read as they are. The warp count and warp size come from a hash of the input
// so that one corpus explores every layout configuration.
#include <cstdint>
#include <functional>
#include <string>

#include "Findings.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/Pipeline.h"

namespace {

using tessera::Error;
using tessera::fuzz::accepted;
using tessera::fuzz::finding;
namespace ir = tessera::ir;

tessera::transforms::PassOptions optionsFor(const std::string& text) {
  size_t h = std::hash<std::string>{}(text);
  tessera::transforms::PassOptions options;
  options.numWarps = 1 << (h % 4);            // 1, 2, 4, 8
  options.warpSize = (h >> 2) % 2 ? 64 : 32;  // NVIDIA or AMD
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<ir::Module> module;
  if (!accepted("parseModule", [&] { module = ir::parseModule(text, "fuzz.tir"); })) return 0;
  if (!accepted("verify", [&] { ir::verify(*module); })) return 0;

  for (bool locations : {false, true}) {
    const std::string printed = ir::print(*module, {locations});
    std::unique_ptr<ir::Module> reparsed;
    if (!accepted("parseModule", [&] { reparsed = ir::parseModule(printed, "printed.tir"); }))
      finding("a verified module does not parse back after printing", printed);
    if (ir::print(*reparsed, {locations}) != printed)
      finding("print(parse(print(m))) != print(m)", printed + "\n--- became ---\n" + ir::print(*reparsed, {locations}));
  }

  const tessera::transforms::PassOptions options = optionsFor(text);
  // The default pipeline's passes, run one by one here so that a non-Error exception is seen as the finding it
  // is (PassManager::run would turn it into an Error).
  tessera::transforms::PassManager pipeline;
  tessera::transforms::addDefaultPipeline(pipeline, options);
  for (const auto& function : module->functions()) {
    ir::Function& f = *function;
    for (const std::string& name : pipeline.passNames()) {
      auto pass = tessera::transforms::createPass(name, options);
      if (!accepted(name.c_str(), [&] { pass->run(f); })) break;
      try {
        ir::verify(f);
      } catch (const Error& e) {
        finding("pass '" + name + "' left invalid IR: " + e.what(), ir::print(f));
      }
    }
  }
  return 0;
}
