#include "transforms/PassManager.h"

#include <chrono>
#include <iostream>
#include <optional>

#include "ir/EnvFlag.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tessera::transforms {

PassManager::PassManager() {
  dumpIR_ = envFlag("TESSERA_DUMP_IR");
}

std::vector<std::string> PassManager::passNames() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.push_back(p->name());
  return names;
}

void PassManager::add(std::unique_ptr<Pass> p) {
  if (!p) throw Error("PassManager::add: null pass");
  passes_.push_back(std::move(p));
}

void PassManager::add(const std::string& name, const PassOptions& options) {
  std::unique_ptr<Pass> p = createPass(name, options);
  if (!p) {
    std::string known;
    for (const std::string& n : registeredPassNames()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown pass '" + name + "' (known passes: " + known + ")");
  }
  passes_.push_back(std::move(p));
}

void PassManager::setDumpIR(bool on, std::ostream* os) {
  dumpIR_ = on;
  dumpStream_ = os;
}

void PassManager::dump(const std::string& header, const std::string& text) const {
  std::ostream& os = dumpStream_ ? *dumpStream_ : std::cerr;
  os << "// -----// IR Dump " << header << " //----- //\n" << text;
  if (!text.empty() && text.back() != '\n') os << '\n';
  os.flush();
}

void PassManager::run(ir::Function& f) {
  runPipeline({&f}, [&] { return ir::print(f); }, " (@" + f.name() + ")");
}

void PassManager::run(ir::Module& m) {
  std::vector<ir::Function*> functions;
  for (const auto& f : m.functions()) functions.push_back(f.get());
  runPipeline(functions, [&] { return ir::print(m); }, "");
}

void PassManager::runPipeline(const std::vector<ir::Function*>& functions, const std::function<std::string()>& print,
                              const std::string& scope) {
  if (verifyEach_)
    for (ir::Function* f : functions) ir::verify(*f);  // blame a broken input on the input, not on the first pass
  if (dumpIR_ && !passes_.empty()) dump(std::string("Before ") + passes_.front()->name() + scope, print());
  for (const auto& pass : passes_) {
    double seconds = 0;
    for (ir::Function* f : functions) {
      auto start = std::chrono::steady_clock::now();
      try {
        pass->run(*f);
      } catch (const Error& e) {
        throw Error(std::string("pass '") + pass->name() + "' failed on function @" + f->name() + ": " + e.message(),
                    e.location());
      } catch (const std::exception& e) {
        throw Error(std::string("pass '") + pass->name() + "' failed on function @" + f->name() + ": " + e.what());
      }
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!verifyEach_) continue;
      try {
        ir::verify(*f);
      } catch (const Error& e) {
        throw Error(std::string("pass '") + pass->name() + "' left invalid IR in function @" + f->name() + ": " +
                        e.message(),
                    e.location());
      }
    }
    std::optional<std::string> text;  // printed once, for the dump and the callback alike
    const PrintIR printOnce = [&] {
      if (!text) text = print();
      return *text;
    };
    if (dumpIR_) dump(std::string("After ") + pass->name() + scope, printOnce());
    if (callback_) callback_(pass->name(), seconds, printOnce);
  }
}

}  // namespace tessera::transforms
