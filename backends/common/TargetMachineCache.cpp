#include "backends/common/TargetMachineCache.h"

#include <map>

#include <llvm/Target/TargetMachine.h>

namespace tessera::backends {

llvm::TargetMachine& cachedTargetMachine(const std::string& key,
                                         const std::function<std::unique_ptr<llvm::TargetMachine>()>& create) {
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  std::unique_ptr<llvm::TargetMachine>& tm = machines[key];
  if (!tm) tm = create();  // create throws rather than return null
  return *tm;
}

}  // namespace tessera::backends
