// The one reading of the TESSERA_* on/off switches (TESSERA_DUMP_IR, TESSERA_TIMINGS, TESSERA_DUMP_LLVM, ...), so
// that every layer agrees on what "set" means.
#pragma once

#include <cstdlib>
#include <cstring>

namespace tessera {

// Whether an environment variable is set to something other than "" or "0".
inline bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace tessera
