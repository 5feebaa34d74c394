#include "ir/Version.h"

#ifndef TESSERA_VERSION
#error "TESSERA_VERSION comes from project(VERSION) in CMakeLists.txt (ir/CMakeLists.txt passes it)"
#endif

namespace tessera {

const char* version() { return TESSERA_VERSION; }

}  // namespace tessera
