// `--version` for every Tessera tool: "<tool> (Tessera) <version>", the version of ir/Version.h.
#pragma once

#include <cstdio>
#include <string_view>

#include "ir/Version.h"

namespace tessera::tools {

// True (after printing the version to stdout) when any argument is --version: the tool then exits with 0.
inline bool printVersionIfAsked(int argc, char** argv, const char* tool) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--version") {
      std::printf("%s (Tessera) %s\n", tool, tessera::version());
      return true;
    }
  }
  return false;
}

}  // namespace tessera::tools
