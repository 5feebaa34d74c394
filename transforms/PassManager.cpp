#include "transforms/PassManager.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tessera::transforms {

PassManager::PassManager() {
  const char* env = std::getenv("TESSERA_PRINT_IR_AFTER_ALL");
  printAfterAll_ = env && std::strcmp(env, "") != 0 && std::strcmp(env, "0") != 0;
}

void PassManager::add(std::unique_ptr<Pass> p) {
  if (!p) throw Error("PassManager::add: null pass");
  passes_.push_back(std::move(p));
}

void PassManager::add(const std::string& name) {
  std::unique_ptr<Pass> p = createPass(name);
  if (!p) {
    std::string known;
    for (const std::string& n : registeredPassNames()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown pass '" + name + "' (known passes: " + known + ")");
  }
  passes_.push_back(std::move(p));
}

void PassManager::setPrintAfterAll(bool on, std::ostream* os) {
  printAfterAll_ = on;
  printStream_ = os;
}

void PassManager::run(ir::Function& f) {
  if (verifyEach_) ir::verify(f);  // blame a broken input on the input, not on the first pass
  for (const auto& pass : passes_) {
    pass->run(f);
    if (verifyEach_) {
      try {
        ir::verify(f);
      } catch (const Error& e) {
        throw Error(std::string("pass '") + pass->name() + "' left invalid IR in function @" + f.name() + ": " +
                        e.message(),
                    e.location());
      }
    }
    if (!printAfterAll_ && !callback_) continue;
    std::string text = ir::print(f);
    if (printAfterAll_) {
      std::ostream& os = printStream_ ? *printStream_ : std::cerr;
      os << "// -----// IR Dump After " << pass->name() << " //----- //\n" << text;
      if (!text.empty() && text.back() != '\n') os << '\n';
      os.flush();
    }
    if (callback_) callback_(pass->name(), text);
  }
}

void PassManager::run(ir::Module& m) {
  for (const auto& f : m.functions()) run(*f);
}

}  // namespace tessera::transforms
